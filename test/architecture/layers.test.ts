// docs/architecture.md: layers import only downwards (values ← syntax ← model ← validate ← backends ← service ←
// server), the two backends are siblings, and a SQL dialect's name is tested only in that dialect's own files.
import { describe, expect, it } from 'vitest';
import {
  dialectViolations,
  floorOf,
  importsOf,
  layerViolations,
  readSource,
  repositoryRoot,
  sourceFiles,
} from './layers.js';

const files = sourceFiles(repositoryRoot, 'src');

describe('the layers of src/', () => {
  it('finds the source files and every one is on a floor', () => {
    expect(files.length).toBeGreaterThan(40);
    for (const file of files) expect(() => floorOf(file)).not.toThrow();
  });

  it('no file imports from a floor above its own, or from its sibling backend', () => {
    const violations = files.flatMap((file) => layerViolations(file, readSource(repositoryRoot, file)));
    expect(violations.map((v) => `${v.file}:${v.line} ${v.rule}`)).toEqual([]);
  });

  it('no dialect name is compared outside src/backends/sql/<dialect>', () => {
    const violations = files.flatMap((file) => dialectViolations(file, readSource(repositoryRoot, file)));
    expect(violations.map((v) => `${v.file}:${v.line} ${v.rule}`)).toEqual([]);
  });
});

// The checks themselves, on made-up sources: each rule must be able to fail.
describe('the layer checks', () => {
  it('reads static, type-only, re-exported, side-effect and dynamic imports', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "export * from './d.js';",
      "import './e.js';",
      "const f = await import('./f.js');",
      "import { readFileSync } from 'node:fs';",
      "import {\n  g,\n  h,\n} from './gh.js';",
    ].join('\n');
    expect(importsOf(source)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', './gh.js']);
  });

  it('finds an import that runs up a floor', () => {
    const violations = layerViolations('src/syntax/parser.ts', "import { suggest } from '../validate/suggest.js';");
    expect(violations).toHaveLength(1);
    expect(violations[0]!.rule).toMatch(/syntax may not import validate/);
    expect(layerViolations('src/values/text.ts', "import type { Row } from '../server/json.js';")).toHaveLength(1);
    expect(layerViolations('src/server/body.ts', "import { x } from '../values/text.js';")).toEqual([]);
    // the generic service may not reach into the application
    expect(layerViolations('src/service/json.ts', "import { plantDataModel } from '../server/model.js';")).toHaveLength(
      1,
    );
  });

  it('finds an import across the sibling backends', () => {
    const violations = layerViolations('src/backends/sql/functions.ts', "import { x } from '../memory/compile.js';");
    expect(violations.map((v) => v.rule)).toEqual([expect.stringMatching(/siblings/)]);
  });

  it('finds a dialect name compared outside its home, but not in comments or in its home', () => {
    const source = [
      "if (dialect === 'sqlite') x();",
      "const y = 'postgres' !== d.name;",
      "switch (d) { case 'mysql': break; }",
      "// when dialect === 'sqlite' this is prose",
      "const name = 'sqlite';",
    ].join('\n');
    expect(dialectViolations('src/server/json.ts', source).map((v) => v.line)).toEqual([1, 2, 3]);
    expect(dialectViolations('src/backends/sql/sqlite/storage.ts', "if (d === 'sqlite') x();")).toEqual([]);
    expect(dialectViolations('src/backends/sql/sqlite.ts', "if (d === 'sqlite') x();")).toEqual([]);
  });
});
