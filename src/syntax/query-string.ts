// The whole query string: option names case-insensitive with or without `$` (4.01), values
// percent-decoded once, duplicates and unknown `$` options rejected, custom options kept,
// `@alias` values parsed and attached to the alias nodes that use them.
import { atPosition, collectProblem, combineErrors, errorAt, ODataError } from '../errors.js';
import { suggest } from '../values/suggest.js';
import type { ApplyTransformation, ComputeItem, ExpandItem, Expr, OrderByItem, SearchExpr, SelectItem } from './ast.js';
import { parseSearch } from './search.js';
import {
  parseApply,
  parseCompute,
  parseCount,
  parseExpand,
  parseFilter,
  parseOrderBy,
  parseSelect,
  parseSkip,
  parseTop,
  parseWith,
  type ParseOptions,
} from './parser.js';

/** The parsed query options of one request. */
export interface QueryOptions {
  readonly filter?: Expr;
  readonly select?: readonly SelectItem[];
  readonly expand?: readonly ExpandItem[];
  readonly orderBy?: readonly OrderByItem[];
  readonly top?: number;
  readonly skip?: number;
  readonly count?: boolean;
  /** `$apply`: the transformations, in order (Data Aggregation 4.0). */
  readonly apply?: readonly ApplyTransformation[];
  /** `$compute` (4.01): computed properties, `expr as Alias`, that `$select`, `$filter` and `$orderby` may name. */
  readonly compute?: readonly ComputeItem[];
  /** `$search` (4.01): words, phrases, NOT, AND and OR, matched against the properties the model marks searchable. */
  readonly search?: SearchExpr;
  /** `$format`, as given (the server decides what it accepts). */
  readonly format?: string;
  /** `$skiptoken`, opaque. */
  readonly skipToken?: string;
  /** Parameter aliases: `@name` → parsed value. */
  readonly aliases: ReadonlyMap<string, Expr>;
  /** Custom query options (not system options, not aliases), decoded. */
  readonly custom: ReadonlyMap<string, string>;
  /** The decoded text of each system option given, keyed by its canonical name (`$filter`). */
  readonly text: Readonly<Partial<Record<SystemOption, string>>>;
}

const supportedOptions = [
  '$filter',
  '$select',
  '$expand',
  '$orderby',
  '$top',
  '$skip',
  '$count',
  '$apply',
  '$compute',
  '$search',
  '$format',
  '$skiptoken',
] as const;
/** System query options of OData 4.01 that this engine recognizes but does not implement (501). */
const unsupportedOptions = ['$index', '$levels', '$schemaversion', '$deltatoken', '$id'] as const;

export type SystemOption = (typeof supportedOptions)[number];

/** Options that must keep their `$` (ABNF: `$skiptoken`, `$deltatoken` have no `$`-less form). */
const dollarRequired = new Set(['$skiptoken', '$deltatoken']);

const allSystemOptions: ReadonlySet<string> = new Set<string>([...supportedOptions, ...unsupportedOptions]);

/** Percent-decodes once; a malformed escape is a 400 naming where it is. `+` is not a space (OData ABNF). */
export function percentDecode(raw: string, target: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    const bad = /%(?![0-9A-Fa-f]{2})/.exec(raw)?.index ?? raw.indexOf('%');
    throw errorAt(
      'InvalidEncoding',
      'Malformed percent-encoding (position counted in the raw value)',
      target,
      bad,
      'write a literal % as %25 and encode text as UTF-8',
    );
  }
}

export interface RawOption {
  readonly name: string;
  readonly value: string | undefined;
}

export function splitQueryString(query: string): RawOption[] {
  const text = query.startsWith('?') ? query.slice(1) : query;
  const options: RawOption[] = [];
  for (const part of text.split('&')) {
    if (part.length === 0) continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    const name = percentDecode(rawName, rawName);
    options.push({ name, value: eq === -1 ? undefined : percentDecode(part.slice(eq + 1), name) });
  }
  return options;
}

/** The canonical `$name` of a system option given as `$Filter`, `filter`, ...; undefined for custom options. */
export function systemOptionName(name: string): string | undefined {
  const lower = name.toLowerCase();
  if (lower.startsWith('$')) return lower;
  const withDollar = `$${lower}`;
  return allSystemOptions.has(withDollar) && !dollarRequired.has(withDollar) ? withDollar : undefined;
}

export interface QueryParseOptions extends Pick<ParseOptions, 'maxDepth'> {}

/**
 * Parses a query string (`$filter=...&$top=5`, with or without `?`) or `URLSearchParams` (already
 * decoded by the caller). Every problem found is reported: the first as the error, the rest in `details`.
 */
export function parseQuery(query: string | URLSearchParams, options: QueryParseOptions = {}): QueryOptions {
  const raw: RawOption[] =
    typeof query === 'string'
      ? splitQueryString(query)
      : [...query.entries()].map(([name, value]) => ({ name, value }));

  const system = new Map<string, string>();
  const aliasTexts = new Map<string, string>();
  const custom = new Map<string, string>();
  const problems: ODataError[] = [];

  for (const { name, value } of raw) {
    if (name.startsWith('@')) {
      if (aliasTexts.has(name)) {
        problems.push(
          new ODataError('DuplicateOption', `Parameter alias ${name} is given more than once`, { target: name }),
        );
      } else if (value === undefined) {
        problems.push(errorAt('InvalidSyntax', `Parameter alias ${name} has no value`, name, 0, `write ${name}=value`));
      } else aliasTexts.set(name, value);
      continue;
    }
    const option = systemOptionName(name);
    if (option === undefined) {
      custom.set(name, value ?? '');
      continue;
    }
    const space = name.search(/\s/);
    if (space !== -1 && allSystemOptions.has(systemOptionName(name.trim()) ?? '')) {
      problems.push(
        new ODataError(
          'InvalidSyntax',
          atPosition(
            `Unexpected space in the option name '${name}'`,
            space,
            name,
            `write ${name.trim()}=value with no spaces around '='`,
          ),
          { target: name, position: space },
        ),
      );
      continue;
    }
    if (!allSystemOptions.has(option)) {
      const guess = suggest(option, supportedOptions);
      problems.push(
        new ODataError(
          'UnknownOption',
          `Unknown system query option '${name}'; ${guess === undefined ? 'supported' : `did you mean '${guess}'? Supported`}: ${supportedOptions.join(', ')}`,
          { target: name },
        ),
      );
      continue;
    }
    if ((unsupportedOptions as readonly string[]).includes(option)) {
      problems.push(
        new ODataError('NotImplemented', `The system query option ${option} is not supported by this service`, {
          target: option,
        }),
      );
      continue;
    }
    if (system.has(option)) {
      problems.push(
        new ODataError('DuplicateOption', `The query option ${option} is given more than once`, { target: option }),
      );
      continue;
    }
    if (value === undefined) {
      problems.push(errorAt('InvalidSyntax', `${option} has no value`, option, 0, `write ${option}=value`));
      continue;
    }
    system.set(option, value);
  }

  const attempt = <T>(parse: () => T): T | undefined => collectProblem(problems, parse);

  // Alias values first, so the alias nodes in $filter/$orderby carry them; an alias used in another
  // alias's value is parsed before it (a cycle leaves the later one unresolved, that is null).
  const aliases = new Map<string, Expr>();
  const aliasOptions: ParseOptions = { ...options, aliases };
  for (const name of dependencyOrder(aliasTexts)) {
    const expr = attempt(() => parseWith('commonExpr', aliasTexts.get(name)!, name, aliasOptions));
    if (expr !== undefined) aliases.set(name, expr);
  }
  const exprOptions: ParseOptions = { ...options, aliases };

  const result: { -readonly [K in keyof QueryOptions]: QueryOptions[K] } = {
    aliases,
    custom,
    text: Object.fromEntries(system) as Partial<Record<SystemOption, string>>,
  };
  for (const [option, text] of system) {
    switch (option as SystemOption) {
      case '$filter': {
        const filter = attempt(() => parseFilter(text, exprOptions));
        if (filter !== undefined) result.filter = filter;
        break;
      }
      case '$select': {
        const select = attempt(() => parseSelect(text, exprOptions));
        if (select !== undefined) result.select = select;
        break;
      }
      case '$expand': {
        const expand = attempt(() => parseExpand(text, exprOptions));
        if (expand !== undefined) result.expand = expand;
        break;
      }
      case '$orderby': {
        const orderBy = attempt(() => parseOrderBy(text, exprOptions));
        if (orderBy !== undefined) result.orderBy = orderBy;
        break;
      }
      case '$top': {
        const top = attempt(() => parseTop(text));
        if (top !== undefined) result.top = top;
        break;
      }
      case '$skip': {
        const skip = attempt(() => parseSkip(text));
        if (skip !== undefined) result.skip = skip;
        break;
      }
      case '$count': {
        const count = attempt(() => parseCount(text));
        if (count !== undefined) result.count = count;
        break;
      }
      case '$apply': {
        const apply = attempt(() => parseApply(text, exprOptions));
        if (apply !== undefined) result.apply = apply;
        break;
      }
      case '$compute': {
        const compute = attempt(() => parseCompute(text, exprOptions));
        if (compute !== undefined) result.compute = compute;
        break;
      }
      case '$search': {
        const search = attempt(() => parseSearch(text, exprOptions));
        if (search !== undefined) result.search = search;
        break;
      }
      case '$format':
        result.format = text;
        break;
      case '$skiptoken':
        result.skipToken = text;
        break;
    }
  }
  if (problems.length > 0) throw combineErrors(problems);
  return result;
}

/** Alias names ordered so that an alias comes after the aliases its value mentions. */
function dependencyOrder(texts: ReadonlyMap<string, string>): string[] {
  const ordered: string[] = [];
  const seen = new Set<string>();
  // depth-first with an explicit stack: a chain of thousands of aliases must not exhaust the call stack
  for (const start of texts.keys()) {
    if (seen.has(start)) continue;
    seen.add(start);
    const stack: { name: string; references: string[] }[] = [{ name: start, references: referencesOf(texts, start) }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const next = top.references.pop();
      if (next === undefined) {
        ordered.push(top.name);
        stack.pop();
      } else if (!seen.has(next)) {
        seen.add(next);
        stack.push({ name: next, references: referencesOf(texts, next) });
      }
    }
  }
  return ordered;
}

function referencesOf(texts: ReadonlyMap<string, string>, name: string): string[] {
  return [...texts.get(name)!.matchAll(/@[A-Za-z_][A-Za-z0-9_]*/g)]
    .map(([reference]) => reference)
    .filter((r) => texts.has(r))
    .reverse();
}
