// The layering rules of docs/architecture.md as code: which floor a source file is on, and the imports and dialect
// tests that break the rules. Used by layers.test.ts over src/ and over small made-up sources.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';

/** The floors from the ground up; a file may import its own floor or those below, never one above. */
export const floors = [
  { name: 'values', paths: ['src/values/', 'src/errors.ts'] },
  { name: 'syntax', paths: ['src/syntax/'] },
  { name: 'model', paths: ['src/model/'] },
  // src/index.ts, the core's public API, re-exports the floors up to validate and is read as one of them
  { name: 'validate', paths: ['src/validate/', 'src/index.ts'] },
  { name: 'backends', paths: ['src/backends/'] },
  // the OData service for any model: it knows no application (nothing in it imports src/server/)
  { name: 'service', paths: ['src/service/'] },
  // the testing kit: generators, the memory backend as oracle, checkAgainstOracle
  { name: 'testing', paths: ['src/testing/'] },
  // the reference server, the plant application
  { name: 'server', paths: ['src/server/'] },
] as const;

/** Siblings on one floor that must not import each other. */
export const siblings: readonly (readonly [string, string])[] = [['src/backends/memory/', 'src/backends/sql/']];

/** Where a dialect's own code lives; its name is compared nowhere else. */
export const dialectHomes: Readonly<Record<string, string>> = {
  sqlite: 'src/backends/sql/sqlite',
  postgres: 'src/backends/sql/postgres',
  mysql: 'src/backends/sql/mysql',
};

export function floorOf(file: string): number {
  const index = floors.findIndex((floor) => floor.paths.some((p) => file === p || file.startsWith(p)));
  if (index === -1) throw new Error(`${file} is on no floor: add it to test/architecture/layers.ts`);
  return index;
}

/** Relative module specifiers of static imports, re-exports and dynamic imports (type-only imports included). */
export function importsOf(source: string): string[] {
  const found: string[] = [];
  const pattern =
    /(?:^|\n)\s*(?:import|export)\b[^'";]*?\bfrom\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)|(?:^|\n)\s*import\s*'([^']+)'/g;
  for (const match of source.matchAll(pattern)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier !== undefined && specifier.startsWith('.')) found.push(specifier);
  }
  return found;
}

/** `from` importing `specifier`, as a repository path ending in .ts. */
export function resolveImport(from: string, specifier: string): string {
  return posix.normalize(posix.join(posix.dirname(from), specifier)).replace(/\.js$/, '.ts');
}

export interface Violation {
  readonly file: string;
  readonly line: number;
  readonly rule: string;
}

/** Imports that run up the floors or across siblings. */
export function layerViolations(file: string, source: string): Violation[] {
  const violations: Violation[] = [];
  const own = floorOf(file);
  for (const specifier of importsOf(source)) {
    const target = resolveImport(file, specifier);
    const line = lineOf(source, `'${specifier}'`);
    if (!target.startsWith('src/')) {
      violations.push({ file, line, rule: `imports ${target}, outside src/` });
      continue;
    }
    const floor = floorOf(target);
    if (floor > own) {
      violations.push({
        file,
        line,
        rule: `imports ${target}: ${floors[own]!.name} may not import ${floors[floor]!.name}, a floor above it`,
      });
    }
    for (const [a, b] of siblings) {
      if ((file.startsWith(a) && target.startsWith(b)) || (file.startsWith(b) && target.startsWith(a)))
        violations.push({ file, line, rule: `imports ${target}: ${a} and ${b} are siblings` });
    }
  }
  return violations;
}

/** Comparisons with a dialect's name (`=== 'sqlite'`, `'mysql' !==`, `case 'postgres':`) outside that dialect's home. */
export function dialectViolations(file: string, source: string): Violation[] {
  const violations: Violation[] = [];
  const code = withoutComments(source);
  const names = Object.keys(dialectHomes).join('|');
  const pattern = new RegExp(`[!=]==?\\s*'(${names})'|'(${names})'\\s*[!=]==?|\\bcase\\s+'(${names})'\\s*:`, 'g');
  for (const match of code.matchAll(pattern)) {
    const name = match[1] ?? match[2] ?? match[3]!;
    if (file.startsWith(dialectHomes[name]!)) continue;
    const line = code.slice(0, match.index).split('\n').length;
    violations.push({ file, line, rule: `compares the dialect name '${name}' outside ${dialectHomes[name]}` });
  }
  return violations;
}

/** The source with comments blanked (strings kept), so that prose about a dialect is not a comparison. */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (comment) => comment.replace(/[^\n]/g, ' '));
}

function lineOf(source: string, text: string): number {
  const at = source.indexOf(text);
  return at === -1 ? 0 : source.slice(0, at).split('\n').length;
}

/** Every .ts file under `dir` (repository-relative, forward slashes). */
export function sourceFiles(root: string, dir: string): string[] {
  const files: string[] = [];
  const walk = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts')) files.push(relative(root, full).split('\\').join('/'));
    }
  };
  walk(join(root, dir));
  return files.sort();
}

export function readSource(root: string, file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

export const repositoryRoot = join(dirname(new URL(import.meta.url).pathname), '..', '..');
