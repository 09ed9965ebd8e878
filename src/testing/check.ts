// checkAgainstOracle: random rows and random queries, each answered by the implementation under test and by the
// oracle (the memory backend); the first difference is shrunk by fast-check to a small case and reported with the
// seed, the query, the rows, both answers, the differences and why the oracle kept or dropped each row in question.
import fc from 'fast-check';
import type { EntityType, Property, Row } from '../model/schema.js';
import { comparer } from '../values/compare.js';
import { ClosureCompiler } from '../backends/memory/closures.js';
import { comparatorOf, sortKeysOf } from '../backends/memory/order.js';
import type { BoundExpand, BoundQuery } from '../validate/bound.js';
import { oracle, type OracleAnswer } from './oracle.js';
import { queryOf, type GeneratedQuery, type QueryArbitraryOptions } from './queries.js';
import { dataSetOf, keyOf, readAs, rowsOf, typesWithin, valueText, type DataSet, type RowsOptions } from './values.js';

/** What an implementation answers: the rows of the page, or the rows with `$count=true`'s count. */
export type ImplementationAnswer = readonly Row[] | { readonly rows: readonly Row[]; readonly count?: number };

/**
 * Runs one query over the rows last loaded (or, for a function over rows, over the rows given). With `navigation`,
 * `related` holds the rows navigations lead to, by entity type name.
 */
export type QueryRunner = (
  query: GeneratedQuery,
  rows: readonly Row[],
  related: Readonly<Record<string, readonly Row[]>>,
) => ImplementationAnswer | Promise<ImplementationAnswer>;

/** An implementation under test: how it answers a query, and how it is given the rows of each run. */
export interface Implementation {
  /**
   * Stores the rows of a run before its queries (a table emptied and filled, a service's set replaced). With
   * `navigation`, also the related rows: each entity type's by its name (a navigation back to the entity type itself
   * finds `rows`), linked by their foreign keys as the model declares.
   */
  load?(rows: readonly Row[], related: Readonly<Record<string, readonly Row[]>>): void | Promise<void>;
  run: QueryRunner;
}

export interface CheckOptions extends QueryArbitraryOptions {
  readonly entityType: EntityType;
  /**
   * The rows: how to generate them (default up to 12 rows a run), or the rows the implementation already holds (a
   * remote service that cannot be written): then only queries are generated, with literals from these rows.
   */
  readonly rows?: RowsOptions | readonly Row[];
  /** With `navigation`: whether a generated foreign key may name no row (default true; see DataSetOptions). */
  readonly danglingKeys?: boolean;
  /** With fixed `rows` and `navigation`: the rows the implementation holds of the related entity types, by name. */
  readonly related?: Readonly<Record<string, readonly Row[]>>;
  /** Runs (data sets) to try; default 100. */
  readonly numRuns?: number;
  /** Queries per run; default 20. */
  readonly queriesPerRun?: number;
  /** Replays a reported failure: the seed and path of its report. */
  readonly seed?: number;
  readonly path?: string;
  /** Time limit per run in milliseconds (fast-check's `timeout`); default none. */
  readonly timeout?: number;
}

export interface CheckReport {
  readonly runs: number;
  readonly queries: number;
  readonly seed: number;
}

/** A difference between the implementation and the oracle, shrunk; `message` is the whole report. */
export class OracleMismatchError extends Error {
  override readonly name = 'OracleMismatchError';
  constructor(
    message: string,
    readonly seed: number,
    readonly path: string | undefined,
    readonly query: GeneratedQuery | undefined,
    readonly rows: readonly Row[] | undefined,
  ) {
    super(message);
  }
}

/** A difference found by one query: thrown inside the property so that fast-check shrinks it. */
class Difference extends Error {
  constructor(
    readonly report: string,
    readonly query: GeneratedQuery,
    readonly rows: readonly Row[],
  ) {
    super(report);
  }
}

/**
 * Checks an implementation against the oracle over random rows and queries; resolves with what was run, or rejects
 * with an OracleMismatchError whose message reports the smallest failing case. Works in any test runner.
 */
export async function checkAgainstOracle(
  implementation: Implementation | QueryRunner,
  options: CheckOptions,
): Promise<CheckReport> {
  const impl: Implementation = typeof implementation === 'function' ? { run: implementation } : implementation;
  const { entityType } = options;
  const fixedRows = Array.isArray(options.rows) ? (options.rows as readonly Row[]) : undefined;
  const queriesPerRun = options.queriesPerRun ?? 20;
  const steps = options.navigation ?? 0;
  const fixed: DataSet | undefined =
    fixedRows === undefined ? undefined : { rows: fixedRows, related: options.related ?? {} };
  const queryOptions: QueryArbitraryOptions =
    fixed === undefined ? options : { ...options, values: valuesOf(entityType, fixed, options) };
  const rowsOptions = { ...options, ...(options.rows as RowsOptions | undefined) };
  const dataArbitrary: fc.Arbitrary<DataSet> =
    fixed !== undefined
      ? fc.constant(fixed)
      : steps > 0
        ? dataSetOf(entityType, {
            ...rowsOptions,
            navigation: steps,
            ...(options.danglingKeys === undefined ? {} : { danglingKeys: options.danglingKeys }),
          })
        : rowsOf(entityType, rowsOptions).map((rows) => ({ rows, related: {} }));
  let queries = 0;
  let loaded: DataSet | undefined;
  const property = fc.asyncProperty(
    dataArbitrary,
    fc.array(queryOf(entityType, queryOptions), { minLength: 1, maxLength: queriesPerRun, size: 'max' }),
    async (data, generated) => {
      if (impl.load !== undefined && loaded !== data) {
        await impl.load(data.rows, data.related);
        loaded = data;
      }
      for (const query of generated) {
        queries++;
        await compareOne(impl, entityType, data, query);
      }
    },
  );
  const details = await fc.check(property, {
    numRuns: options.numRuns ?? 100,
    ...(options.seed === undefined ? {} : { seed: options.seed }),
    ...(options.path === undefined ? {} : { path: options.path }),
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
  });
  if (!details.failed) return { runs: details.numRuns, queries, seed: details.seed };
  const error = details.errorInstance;
  const replay = `rerun with { seed: ${details.seed}, path: ${JSON.stringify(details.counterexamplePath)} }`;
  const head = `checkAgainstOracle: ${entityType.name}: the implementation differs from the oracle after ${details.numRuns} runs and ${details.numShrinks} shrinks (${replay})`;
  if (error instanceof Difference)
    throw new OracleMismatchError(
      `${head}\n${error.report}`,
      details.seed,
      details.counterexamplePath ?? undefined,
      error.query,
      error.rows,
    );
  throw new OracleMismatchError(
    `${head}\n${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    details.seed,
    details.counterexamplePath ?? undefined,
    undefined,
    undefined,
  );
}

/**
 * Each property's distinct values among fixed rows (the entity type's, then the related types'; by property name, the
 * first type that has it), for literals that select some of them.
 */
function valuesOf(entityType: EntityType, data: DataSet, options: CheckOptions): Record<string, unknown[]> {
  const values: Record<string, unknown[]> = { ...(options.values as Record<string, unknown[]> | undefined) };
  for (const type of typesWithin(entityType, options.navigation ?? 0)) {
    const rows = type === entityType ? data.rows : (data.related[type.name] ?? []);
    for (const property of type.properties.values()) {
      if (values[property.name] !== undefined) continue;
      const seen = new Map<string, unknown>();
      for (const row of rows) {
        const value = row[property.name];
        if (value !== null && value !== undefined) seen.set(valueText(property, value), value);
        if (seen.size >= 24) break;
      }
      if (seen.size > 0) values[property.name] = [...seen.values()];
    }
  }
  return values;
}

async function compareOne(impl: Implementation, entityType: EntityType, data: DataSet, query: GeneratedQuery) {
  const { rows, related } = data;
  let expected: OracleAnswer;
  try {
    expected = oracle(entityType, rows, query.text, related);
  } catch (error) {
    // the generator made a query the engine refuses, or the engine failed: a bug of this library, not the user's
    throw new Error(`the oracle failed on ${query.text} (a bug in odata-engine, please report it): ${String(error)}`, {
      cause: error,
    });
  }
  let answer: ImplementationAnswer;
  try {
    answer = await impl.run(query, rows, related);
  } catch (error) {
    throw new Difference(
      report(query, data, expected, undefined, [
        `the implementation threw: ${error instanceof Error ? error.message : String(error)}`,
      ]),
      query,
      rows,
    );
  }
  const actual = Array.isArray(answer)
    ? { rows: answer as readonly Row[] }
    : (answer as Exclude<ImplementationAnswer, readonly Row[]>);
  const differences = differencesOf(entityType, expected, actual, query);
  if (differences.length > 0)
    throw new Difference(report(query, data, expected, actual.rows, differences, entityType), query, rows);
}

function sameValue(property: Property, a: unknown, b: unknown): boolean {
  const x = readAs(property, a);
  const y = readAs(property, b);
  if (x === null || y === null) return x === y;
  return comparer(property.type)(x, y) === 0;
}

/** The differences between the oracle's answer and the implementation's, rows matched by key within each tie. */
function differencesOf(
  entityType: EntityType,
  expected: OracleAnswer,
  actual: { readonly rows: readonly Row[]; readonly count?: number },
  query: GeneratedQuery,
): string[] {
  const out: string[] = [];
  if (query.options.$count !== undefined && actual.count !== undefined && actual.count !== expected.count)
    out.push(`$count: the oracle counts ${expected.count}, the implementation ${actual.count}`);
  // what `$apply` gives has no key of the entity type's: a row is then told by all its values
  const { bound } = expected;
  const rowKey =
    bound.apply === undefined
      ? (row: Row) => keyOf(entityType, row)
      : (row: Row) => bound.select.map((p) => `${p.name}=${valueText(p, row[p.name])}`).join(',');
  out.push(...rowDifferences(bound, rowKey, expected.tie, expected.rows, actual.rows, ''));
  return out;
}

/**
 * The differences between two answers to one query (the whole query's, or an expansion's related rows under `at`):
 * the same rows matched by `rowKey`, each in the oracle's place up to rows that `tie`, with the same selected values
 * and the same expansions.
 */
function rowDifferences(
  bound: BoundQuery,
  rowKey: (row: Row) => string,
  tie: (a: Row, b: Row) => boolean,
  expected: readonly Row[],
  actual: readonly Row[],
  at: string,
): string[] {
  const out: string[] = [];
  const byKey = new Map(actual.map((row) => [rowKey(row), row]));
  const expectedKeys = new Set(expected.map((row) => rowKey(row)));
  for (const row of expected) {
    const key = rowKey(row);
    if (!byKey.has(key)) out.push(`${at}(${key}) is in the oracle's answer only`);
  }
  for (const row of actual) {
    const key = rowKey(row);
    if (!expectedKeys.has(key)) out.push(`${at}(${key}) is in the implementation's answer only`);
  }
  if (actual.length !== byKey.size) out.push(`${at}the implementation answers a row more than once`);
  if (out.length > 0) return out;
  // the same rows: each in the oracle's place, up to rows that tie on the requested order
  for (let start = 0; start < expected.length;) {
    let end = start + 1;
    while (end < expected.length && tie(expected[start]!, expected[end]!)) end++;
    const group = new Set(expected.slice(start, end).map((row) => rowKey(row)));
    for (let i = start; i < end; i++) {
      const key = rowKey(actual[i]!);
      if (!group.has(key))
        out.push(
          `${at}position ${i}: the implementation has (${key}), the oracle one of ${[...group].map((k) => `(${k})`).join(', ')}`,
        );
    }
    start = end;
  }
  for (const row of expected) {
    const key = rowKey(row);
    const other = byKey.get(key)!;
    for (const property of bound.select) {
      if (!(property.name in other)) out.push(`${at}(${key}) ${property.name}: missing from the implementation's row`);
      else if (!sameValue(property, row[property.name], other[property.name]))
        out.push(
          `${at}(${key}) ${property.name}: the oracle has ${show(row[property.name])}, the implementation ${show(other[property.name])}`,
        );
    }
    for (const item of bound.expand ?? []) out.push(...expansionDifferences(item, row, other, `${at}(${key})/`));
  }
  return out;
}

/** The differences in one expanded navigation of a row both answers hold. */
function expansionDifferences(item: BoundExpand, expected: Row, actual: Row, at: string): string[] {
  const { name, collection } = item.navigation;
  const label = `${at}${name}`;
  if (!(name in actual)) return [`${label}: missing from the implementation's row`];
  const mine = expected[name];
  const theirs = actual[name];
  const list = (value: unknown): readonly Row[] | undefined =>
    collection ? (Array.isArray(value) ? (value as Row[]) : undefined) : value === null ? [] : [value as Row];
  const want = list(mine)!;
  const have = list(theirs);
  if (have === undefined || (!collection && theirs !== null && (typeof theirs !== 'object' || Array.isArray(theirs))))
    return [`${label}: the implementation has ${show(theirs)}, not ${collection ? 'an array' : 'an entity or null'}`];
  const target = item.navigation.target();
  const order = comparatorOf(
    sortKeysOf(
      item.query.orderBy.filter((o) => !o.tieBreak),
      new ClosureCompiler(),
    ),
  );
  return rowDifferences(
    item.query,
    (row) => keyOf(target, row),
    (a, b) => order(a, b) === 0,
    want,
    have,
    `${label}/`,
  );
}

function show(value: unknown): string {
  return (
    JSON.stringify(value, (_, v: unknown) =>
      typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `binary:${Buffer.from(v).toString('base64url')}` : v,
    ) ?? 'undefined'
  );
}

function report(
  query: GeneratedQuery,
  data: DataSet,
  expected: OracleAnswer,
  actual: readonly Row[] | undefined,
  differences: readonly string[],
  entityType?: EntityType,
): string {
  const { rows } = data;
  const lines = [
    `query: ${query.text}`,
    ...Object.entries(query.options).map(([name, value]) => `  ${name} = ${value}`),
    `rows (${rows.length}):`,
    ...rows.map((row) => `  ${show(row)}`),
    ...Object.entries(data.related).flatMap(([name, related]) => [
      `related ${name} rows (${related.length}):`,
      ...related.map((row) => `  ${show(row)}`),
    ]),
    `oracle (${expected.rows.length} rows${expected.count === undefined ? '' : `, count ${expected.count}`}):`,
    ...expected.rows.map((row) => `  ${show(row)}`),
  ];
  if (actual !== undefined)
    lines.push(`implementation (${actual.length} rows):`, ...actual.map((row) => `  ${show(row)}`));
  lines.push('differences:', ...differences.map((d) => `  - ${d}`));
  if (entityType !== undefined && expected.bound.filter !== undefined) {
    // why the oracle kept or dropped each row the two answers disagree on
    const named = new Set(differences.map((d) => /^\(([^)]*)\)/.exec(d)?.[1]).filter((k) => k !== undefined));
    const explained = rows.filter((row) => named.has(keyOf(entityType, row)));
    if (explained.length > 0) lines.push('why (the oracle):', ...explained.map((row) => expected.explain(row)));
  }
  return lines.join('\n');
}
