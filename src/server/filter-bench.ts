// `odata-engine bench`: how fast each backend evaluates a list of $filter expressions over one entity set's rows (the
// user's data or generated), side by side in one run: the memory backend, SQLite, PostgreSQL and MySQL/MariaDB (each
// through the store the service uses, the rows loaded into a table made from the model) and hand-written JavaScript
// predicates when given. Before timing, every backend's rows are checked against the memory backend's: a benchmark of
// answers that differ measures nothing. docs/benchmarking.md.
import { randomBytes } from 'node:crypto';
import { compileQuery } from '../backends/memory/compile.js';
import { isODataError } from '../errors.js';
import type { EntityType, Model, Row } from '../model/schema.js';
import type { BoundQuery } from '../validate/bound.js';
import { parseQuery } from '../syntax/query-string.js';
import { validateQuery } from '../validate/bind.js';
import { collectionsOf, type Store, type StoreCollection } from '../service/store.js';
import type { SqlStore } from '../service/sql/sql-store.js';
import { keyOf, rowOf } from '../testing/values.js';
import { filterOf } from '../testing/filters.js';
import { checkCreateBody } from '../service/body.js';
import fc from 'fast-check';

export type BenchBackend = 'memory' | 'sqlite' | 'postgres' | 'mysql' | 'predicate';

/** A column of the results: a backend, or the name of one of `others`. */
export type BenchColumn = BenchBackend | (string & Record<never, never>);

/** Makes a row predicate from a filter's text: another implementation to time (a peer library, your own). */
export type FilterImplementation = (filter: string) => (row: Row) => unknown;

/** A hand-written predicate per filter text, over rows in row form (decimals and Int64 as text: docs/backends.md). */
export type Predicates = Readonly<Record<string, (row: Row) => boolean>>;

export interface FilterBenchOptions {
  readonly model: Model;
  /** The entity set whose rows are filtered. */
  readonly set: string;
  readonly filters: readonly string[];
  /** The rows, in row form, with distinct keys. */
  readonly rows: readonly Row[];
  /** PostgreSQL and MySQL/MariaDB servers to use (a schema or database is made there and dropped after); none: skipped. */
  readonly postgresUrl?: string;
  readonly mysqlUrl?: string;
  readonly predicates?: Predicates;
  /** SQLite too (in memory, the rows loaded into a table made from the model); default true. */
  readonly sqlite?: boolean;
  /**
   * Other implementations timed beside, by name. One that throws making a filter's predicate cannot run it; one that
   * keeps other rows than the memory backend is timed all the same, and the difference reported.
   */
  readonly others?: Readonly<Record<string, FilterImplementation>>;
  /** Timed rounds per filter and backend (the median is reported, and the spread); default 3. */
  readonly rounds?: number;
  /** Each round repeats a filter for at least this long; default 200 ms. */
  readonly roundMs?: number;
  /** What is being done, for a progress bar. */
  readonly progress?: (label: string, done: number, total: number) => void;
}

export interface BackendTiming {
  /** Rows evaluated per second in each round. */
  readonly rounds: readonly number[];
  readonly median: number;
  /** (slowest − fastest round) ÷ median. */
  readonly spread: number;
}

export interface FilterBenchEntry {
  readonly filter: string;
  /** Rows the memory backend keeps. */
  readonly matched: number;
  readonly timings: Partial<Record<BenchColumn, BackendTiming>>;
  /** A backend that refused the filter (a 400 or 501) or answered other rows than the memory backend, and why. */
  readonly problems: Partial<Record<BenchColumn, string>>;
}

export interface FilterBenchResult {
  readonly set: string;
  readonly rows: number;
  /** The backends run, and the other implementations, in column order. */
  readonly backends: readonly BenchColumn[];
  /** Backends left out, and why (a server not reachable). */
  readonly skipped: Partial<Record<BenchBackend, string>>;
  readonly entries: readonly FilterBenchEntry[];
  /** Any backend answered other rows than the memory backend. */
  readonly disagreement: boolean;
}

export const backendLabels: Readonly<Record<BenchBackend, string>> = {
  memory: 'memory',
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
  mysql: 'MySQL/MariaDB',
  predicate: 'hand-written',
};

/** A store with its rows, and how to let it go. */
interface Loaded {
  readonly store: Store;
  close(): Promise<void>;
}

const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 200);

/** Binds a filter to the set's entity type, reading only its key too when `keysOnly`. */
function bind(entityType: EntityType, filter: string, keysOnly: boolean): BoundQuery {
  const select = keysOnly ? `&$select=${entityType.key.map((k) => k.name).join(',')}` : '';
  return validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}${select}`), entityType);
}

async function fill(store: SqlStore, collection: StoreCollection, rows: readonly Row[], progress: Progress) {
  await store.transaction(async (tx) => {
    for (let n = 0; n < rows.length; n++) {
      await tx.insert(collection, rows[n]!);
      if ((n + 1) % 1000 === 0 || n + 1 === rows.length) progress(n + 1, rows.length);
    }
  });
}

type Progress = (done: number, total: number) => void;

/** Opens a SQL store of each kind asked for and loads the rows; a server that cannot be reached is skipped. */
async function loadStores(
  options: FilterBenchOptions,
  collection: StoreCollection,
  skipped: Partial<Record<BenchBackend, string>>,
): Promise<Map<BenchBackend, Loaded>> {
  const loaded = new Map<BenchBackend, Loaded>();
  const { model, rows } = options;
  const progress =
    (label: string): Progress =>
    (done, total) =>
      options.progress?.(label, done, total);
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  if (options.sqlite !== false) {
    const { openSqliteStore } = await import('../service/sqlite.js');
    const store = await openSqliteStore(':memory:', { model });
    await fill(store, collection, rows, progress('loading SQLite'));
    loaded.set('sqlite', { store, close: () => store.close() });
  }
  if (options.postgresUrl !== undefined) {
    const { default: pg } = await import('pg');
    const admin = new pg.Client({ connectionString: options.postgresUrl, connectionTimeoutMillis: 3000 });
    try {
      await admin.connect();
      const schema = `odata_bench_${suffix}`;
      await admin.query(`CREATE SCHEMA "${schema}"`);
      const url = new URL(options.postgresUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const { openPostgresStore } = await import('../service/postgres.js');
      const store = await openPostgresStore(url.href, { model, driver: { max: 2 } });
      const close = async () => {
        await store.close();
        await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
        await admin.end();
      };
      try {
        await fill(store, collection, rows, progress('loading PostgreSQL'));
        await store.driver.run('ANALYZE');
      } catch (error) {
        await close();
        throw error;
      }
      loaded.set('postgres', { store, close });
    } catch (error) {
      skipped.postgres = `${options.postgresUrl}: ${oneLine(error)}`;
      await admin.end().catch(() => undefined);
    }
  }
  if (options.mysqlUrl !== undefined) {
    const { default: mysql } = await import('mysql2/promise');
    let admin: Awaited<ReturnType<typeof mysql.createConnection>> | undefined;
    try {
      admin = await mysql.createConnection({ uri: options.mysqlUrl, connectTimeout: 3000 });
      const database = `odata_bench_${suffix}`;
      await admin.query(`CREATE DATABASE \`${database}\``);
      const url = new URL(options.mysqlUrl);
      url.pathname = `/${database}`;
      const { openMysqlStore } = await import('../service/mysql.js');
      const store = await openMysqlStore(url.href, { model, driver: { max: 2 } });
      const connection = admin;
      const close = async () => {
        await store.close();
        await connection.query(`DROP DATABASE \`${database}\``);
        await connection.end();
      };
      try {
        await fill(store, collection, rows, progress('loading MySQL/MariaDB'));
      } catch (error) {
        await close();
        throw error;
      }
      loaded.set('mysql', { store, close });
    } catch (error) {
      skipped.mysql = `${options.mysqlUrl}: ${oneLine(error)}`;
      await admin?.end().catch(() => undefined);
    }
  }
  return loaded;
}

type Counter = (rows: readonly Row[], predicate: (row: Row) => unknown) => number;

/**
 * A counting loop of its own for each implementation and filter (a new function, so new type feedback): its call
 * site stays monomorphic and the JIT may inline the predicate, as in a program with that one filter. A loop shared by
 * every filter would make each predicate pay for the others'.
 */
function newCounter(): Counter {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(
    'rows',
    'predicate',
    'let n = 0; for (let i = 0; i < rows.length; i++) if (predicate(rows[i])) n++; return n;',
  ) as Counter;
}

/** Seconds per run of `work`, repeated for at least `ms` (at least once). */
async function timeOnce(work: () => unknown, ms: number): Promise<number> {
  let runs = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    const result = work();
    if (result instanceof Promise) await result;
    runs++;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return elapsed / 1000 / runs;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The keys of rows, in one text each, sorted: two answers are the same rows when these are equal. */
function keysOf(entityType: EntityType, rows: Iterable<Row>): string[] {
  const keys: string[] = [];
  for (const row of rows) keys.push(keyOf(entityType, row));
  return keys.sort();
}

function describeDifference(expected: readonly string[], actual: readonly string[]): string {
  const have = new Set(actual);
  const want = new Set(expected);
  const missing = expected.filter((k) => !have.has(k));
  const extra = actual.filter((k) => !want.has(k));
  const show = (keys: string[]) =>
    keys
      .slice(0, 3)
      .map((k) => `(${k})`)
      .join(', ') + (keys.length > 3 ? ', …' : '');
  const parts = [`${actual.length} rows where the memory backend keeps ${expected.length}`];
  if (missing.length > 0) parts.push(`without ${show(missing)}`);
  if (extra.length > 0) parts.push(`with ${show(extra)}`);
  return parts.join('; ');
}

/** Runs the benchmark: every filter on every backend, checked against the memory backend, then timed. */
export async function runFilterBench(options: FilterBenchOptions): Promise<FilterBenchResult> {
  const { model, set, rows, filters } = options;
  const entityType = model.entitySets.get(set);
  if (entityType === undefined) throw new Error(`The model has no entity set ${set}`);
  const collection = collectionsOf(model).get(set);
  if (collection === undefined) throw new Error(`${set} is no collection of the model`);
  const rounds = Math.max(1, options.rounds ?? 3);
  const roundMs = options.roundMs ?? 200;
  const skipped: Partial<Record<BenchBackend, string>> = {};
  const stores = await loadStores(options, collection, skipped);
  const others = Object.entries(options.others ?? {});
  const backends: BenchColumn[] = ['memory', ...stores.keys()];
  if (options.predicates !== undefined) backends.push('predicate');
  for (const [name] of others) {
    if (backends.includes(name)) throw new Error(`${name} names a backend: give the other implementation another name`);
    backends.push(name);
  }
  const entries: FilterBenchEntry[] = [];
  let disagreement = false;
  try {
    for (let f = 0; f < filters.length; f++) {
      const filter = filters[f]!;
      options.progress?.('filters', f, filters.length);
      const problems: Partial<Record<BenchColumn, string>> = {};
      const bound = bind(entityType, filter, false);
      const keysBound = bind(entityType, filter, true);
      const { matches } = compileQuery(bound);
      const expected = keysOf(
        entityType,
        rows.filter((row) => matches(row)),
      );
      // what each backend runs when timed: a count of the rows its filter keeps
      const runs = new Map<BenchColumn, () => unknown>();
      const counting = (predicate: (row: Row) => unknown): (() => number) => {
        const count = newCounter();
        return () => count(rows, predicate);
      };
      runs.set('memory', counting(matches));
      for (const [name, { store }] of stores) {
        try {
          const answer = await store.read(collection, keysBound);
          const actual = keysOf(entityType, answer.rows);
          if (actual.join('\n') !== expected.join('\n')) {
            problems[name] = describeDifference(expected, actual);
            disagreement = true;
            continue;
          }
          const count = store.prepareCount?.(collection, bound);
          runs.set(name, count === undefined ? () => store.count(collection, bound) : () => count.run());
        } catch (error) {
          if (!isODataError(error)) throw error;
          problems[name] = `refused (${error.status}): ${oneLine(error)}`;
        }
      }
      const predicate = options.predicates?.[filter];
      if (options.predicates !== undefined) {
        if (predicate === undefined) problems.predicate = 'no predicate given for this filter';
        else {
          const actual = keysOf(
            entityType,
            rows.filter((row) => predicate(row)),
          );
          if (actual.join('\n') !== expected.join('\n')) {
            problems.predicate = describeDifference(expected, actual);
            disagreement = true;
          } else runs.set('predicate', counting(predicate));
        }
      }
      for (const [name, implementation] of others) {
        let predicate: (row: Row) => unknown;
        try {
          predicate = implementation(filter);
          const actual = keysOf(
            entityType,
            rows.filter((row) => predicate(row)),
          );
          if (actual.join('\n') !== expected.join('\n')) problems[name] = describeDifference(expected, actual);
        } catch (error) {
          problems[name] = `cannot run it: ${oneLine(error)}`;
          continue;
        }
        runs.set(name, counting(predicate));
      }
      // rounds interleave the backends, so that a slow moment of the machine falls on all of them
      const perRound = new Map<BenchColumn, number[]>();
      for (let round = 0; round < rounds; round++) {
        for (const [name, run] of runs) {
          const seconds = await timeOnce(run, roundMs);
          const list = perRound.get(name) ?? [];
          list.push(rows.length / seconds);
          perRound.set(name, list);
        }
      }
      const timings: Partial<Record<BenchColumn, BackendTiming>> = {};
      for (const [name, list] of perRound) {
        const middle = median(list);
        timings[name] = { rounds: list, median: middle, spread: (Math.max(...list) - Math.min(...list)) / middle };
      }
      entries.push({ filter, matched: expected.length, timings, problems });
    }
    options.progress?.('filters', filters.length, filters.length);
  } finally {
    for (const { close } of stores.values()) await close();
  }
  return { set, rows: rows.length, backends, skipped, entries, disagreement };
}

// ── data ───────────────────────────────────────────────────────────────────────────────────────────────────────────

/** A key value for the n-th row, of the key property's type (distinct for distinct n). */
function keyValue(type: string, maxLength: number | undefined, n: number): unknown {
  switch (type) {
    case 'Edm.String': {
      const text = `R${n}`;
      if (maxLength !== undefined && text.length > maxLength)
        throw new Error(`a key of ${maxLength} characters cannot number ${n} rows`);
      return text;
    }
    case 'Edm.Int16':
    case 'Edm.Int32':
    case 'Edm.Int64':
    case 'Edm.Byte':
    case 'Edm.SByte':
      return type === 'Edm.Int64' ? String(n) : n;
    case 'Edm.Decimal':
      return String(n);
    case 'Edm.Guid':
      return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
    default:
      throw new Error(`rows cannot be numbered by a key of type ${type}: give them in a file (--data)`);
  }
}

/**
 * `count` rows of the entity type from the testing kit's generators (values fitted to each property's facets, edge
 * values and nulls among them, the same values often enough that filters keep some rows and drop others), the first
 * key property numbering them.
 */
export function generatedRows(entityType: EntityType, count: number, seed: number): Row[] {
  const rows = count === 0 ? [] : fc.sample(rowOf(entityType), { numRuns: count, seed });
  const [first] = entityType.key;
  if (first === undefined) return rows;
  return rows.map((row, n) => ({ ...row, [first.name]: keyValue(first.type, first.maxLength, n + 1) }));
}

/**
 * Filters from the testing kit's generator, `count` of them, each keeping some of the rows and dropping others (a
 * filter that keeps all or none measures little), at most two levels deep: readable in a table.
 */
export function generatedFilters(entityType: EntityType, rows: readonly Row[], count: number, seed: number): string[] {
  const chosen: string[] = [];
  const candidates = fc.sample(filterOf(entityType, { depth: 2 }), { numRuns: count * 40, seed });
  const sample = rows.slice(0, 2000);
  for (const filter of candidates) {
    if (chosen.length >= count) break;
    if (chosen.includes(filter)) continue;
    const { matches } = compileQuery(bind(entityType, filter, false));
    const kept = sample.filter((row) => matches(row)).length;
    if (kept > 0 && kept < sample.length) chosen.push(filter);
  }
  return chosen;
}

/**
 * Records read from a file (JSON values, or CSV text as parseRecords gives it) in row form, each checked against the
 * entity type like a create body, computed properties included: a mistake names the record.
 */
export function rowsFromRecords(entityType: EntityType, records: readonly Row[]): Row[] {
  return records.map((record, n) => {
    try {
      return checkCreateBody(entityType, record, { acceptComputed: true });
    } catch (error) {
      if (!isODataError(error)) throw error;
      throw new Error(`Record ${n + 1}: ${oneLine(error)}`);
    }
  });
}

// ── reporting ──────────────────────────────────────────────────────────────────────────────────────────────────────

/** Rows per second, short: `12.3 M`, `850 k`, `999`. */
export function formatRate(rate: number): string {
  if (rate >= 1e9) return `${(rate / 1e9).toPrecision(3)} G`;
  if (rate >= 1e6) return `${(rate / 1e6).toPrecision(3)} M`;
  if (rate >= 1e3) return `${(rate / 1e3).toPrecision(3)} k`;
  return rate.toPrecision(3);
}

function table(header: readonly string[], body: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...body.map(line)].join('\n');
}

/** A column's name in tables and charts. */
export function columnLabel(column: BenchColumn): string {
  return column in backendLabels ? backendLabels[column as BenchBackend] : column;
}

/** The baseline of the ratios: the hand-written predicates when given, else the memory backend. */
export function baselineOf(result: FilterBenchResult): BenchBackend {
  return result.backends.includes('predicate') ? 'predicate' : 'memory';
}

/** The result as markdown: rows per second with the spread, then each backend's time as a ratio to the baseline. */
export function formatFilterBench(result: FilterBenchResult): string {
  const base = baselineOf(result);
  const header = ['filter', 'kept', ...result.backends.map((b) => `${columnLabel(b)} rows/s`)];
  const rates = result.entries.map((entry) => [
    entry.filter,
    String(entry.matched),
    ...result.backends.map((b) => {
      const timing = entry.timings[b];
      if (timing === undefined) return entry.problems[b] === undefined ? '' : '✗ see below';
      // (timed, but its rows differ: the comparison is not like for like)
      const differs = entry.problems[b] === undefined ? '' : ' †';
      return `${formatRate(timing.median)} ±${Math.round((timing.spread / 2) * 100)}%${differs}`;
    }),
  ]);
  const others = result.backends.filter((b) => b !== base);
  const ratioRows = result.entries.map((entry) => [
    entry.filter,
    ...others.map((b) => {
      const mine = entry.timings[b];
      const theirs = entry.timings[base];
      return mine === undefined || theirs === undefined ? '' : `${(theirs.median / mine.median).toFixed(2)}×`;
    }),
  ]);
  // the geometric mean of each backend's ratios, over the filters both ran
  ratioRows.push([
    '**geometric mean**',
    ...others.map((b) => {
      const ratios = result.entries
        .filter((e) => e.timings[b] !== undefined && e.timings[base] !== undefined)
        .map((e) => e.timings[base]!.median / e.timings[b]!.median);
      if (ratios.length === 0) return '';
      return `**${Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length).toFixed(2)}×**`;
    }),
  ]);
  const parts = [
    `${result.rows.toLocaleString('en-US')} rows of ${result.set}; rows evaluated per second (median of the rounds, ± half their spread):`,
    '',
    table(header, rates),
  ];
  if (others.length > 0)
    parts.push(
      '',
      `Time per filter as a multiple of ${backendLabels[base]}'s (lower is faster):`,
      '',
      table(['filter', ...others.map(columnLabel)], ratioRows),
    );
  const problems = (timed: boolean) =>
    result.entries.flatMap((entry) =>
      Object.entries(entry.problems)
        .filter(([b]) => (entry.timings[b] !== undefined) === timed)
        .map(([b, why]) => `- ${entry.filter}: ${columnLabel(b)} ${why}`),
    );
  if (problems(false).length > 0) parts.push('', 'Not timed:', ...problems(false));
  if (problems(true).length > 0)
    parts.push('', 'Timed, but other rows than the memory backend (†):', ...problems(true));
  const skipped = Object.entries(result.skipped).map(([b, why]) => `- ${columnLabel(b)}: ${why}`);
  if (skipped.length > 0) parts.push('', 'Skipped (not reachable):', ...skipped);
  return parts.join('\n');
}

const COLORS: Readonly<Record<BenchBackend, string>> = {
  memory: '#4477aa',
  sqlite: '#66ccee',
  postgres: '#228833',
  mysql: '#ccbb44',
  predicate: '#ee6677',
};
/** The other implementations' bars, in turn. */
const OTHER_COLORS = ['#aa3377', '#bbbbbb', '#999933', '#882255'] as const;

const escapeXml = (text: string): string =>
  text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);

/** A bar chart of rows per second (logarithmic axis), one group of bars per filter, one bar per backend. */
export function filterBenchSvg(result: FilterBenchResult): string {
  const rates = result.entries.flatMap((e) =>
    Object.values(e.timings).flatMap((t) => (t === undefined ? [] : [t.median])),
  );
  const low = Math.floor(Math.log10(Math.max(1, Math.min(...rates, 1e6))));
  const high = Math.ceil(Math.log10(Math.max(...rates, 10)));
  const left = 130;
  const width = 860;
  const plot = width - left - 90;
  const bar = 14;
  const headerHeight = 40;
  const x = (rate: number): number => left + ((Math.log10(Math.max(rate, 1)) - low) / (high - low)) * plot;
  const out: string[] = [];
  let y = headerHeight;
  for (const entry of result.entries) {
    out.push(
      `<text x="8" y="${y + 12}" font-weight="bold">${escapeXml(entry.filter.length > 110 ? `${entry.filter.slice(0, 109)}…` : entry.filter)}</text>`,
    );
    y += 18;
    for (const backend of result.backends) {
      const timing = entry.timings[backend];
      const color =
        backend in COLORS
          ? COLORS[backend as BenchBackend]
          : OTHER_COLORS[result.backends.indexOf(backend) % OTHER_COLORS.length]!;
      out.push(`<text x="${left - 6}" y="${y + bar - 3}" text-anchor="end">${escapeXml(columnLabel(backend))}</text>`);
      if (timing === undefined) {
        out.push(`<text x="${left + 4}" y="${y + bar - 3}" fill="#aa3333">not timed</text>`);
      } else {
        const end = x(timing.median);
        out.push(
          `<rect x="${left}" y="${y}" width="${Math.max(1, end - left).toFixed(1)}" height="${bar}" fill="${color}"/>`,
          `<text x="${(end + 4).toFixed(1)}" y="${y + bar - 3}">${formatRate(timing.median)}</text>`,
        );
      }
      y += bar + 3;
    }
    y += 10;
  }
  const axis: string[] = [];
  for (let p = low; p <= high; p++) {
    const at = x(10 ** p).toFixed(1);
    axis.push(
      `<line x1="${at}" y1="${headerHeight - 6}" x2="${at}" y2="${y}" stroke="#dddddd"/>`,
      `<text x="${at}" y="${headerHeight - 10}" text-anchor="middle">${formatRate(10 ** p).replace(/\.0+(?= |$)/, '')}</text>`,
    );
  }
  const title = `${escapeXml(result.set)}: rows evaluated per second, ${result.rows.toLocaleString('en-US')} rows (log scale)`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y + 10}" viewBox="0 0 ${width} ${y + 10}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="8" y="16" font-size="13" font-weight="bold">${title}</text>`,
    ...axis,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
