// Paging benchmark: the 1st, 100th and 1,000th page of a 1,000,000-row entity set, as a client reaches them by
// following `@odata.nextLink`, served by the generic service (`createODataService` from dist/service.js behind the
// node:http adapter) over SQLite and PostgreSQL. Goal (the keyset paging issue): page 1,000 within 1.2× of page 1.
//
// 1. A model of its own: `Readings` (Reading: ReadingID Int32 key, Timestamp DateTimeOffset, Value Decimal(12,3),
//    Tag String(16)), PAGING_ROWS rows (default 1,000,000). Timestamp and Tag repeat: every (Tag, Timestamp) pair is
//    shared by 5 readings, so an order on them needs the key to break ties. Rows go in through the store itself
//    (`insertMany` batches in one transaction), then the index a deployment would add for the second order,
//    ("Tag", "Timestamp" DESC, "ReadingID") (PAGING_INDEX=0: none), and statistics.
//    - SQLite: `openSqlite(file)` + `openSqlStore` as `openSqliteStore(file, { model })` does (no read pool: reads
//      run on the server's thread). The file is kept in PAGING_CACHE_DIR (default the OS temp directory), named by
//      row count, and reused by later runs (PAGING_REBUILD=1 builds it again).
//    - PostgreSQL: the server at postgres://postgres@127.0.0.1:5432/test, a schema of its own (`search_path`),
//      dropped at the end; `openPostgres(url)` + `openSqlStore` as `openPostgresStore` does (pool of 10).
//    The driver is wrapped to remember the last statement it ran (nothing else): the bench shows the SQL of each
//    timed page, times it alone and prints its plan.
// 2. `createODataService({ model, store, basePath: '/odata', pageSize: PAGING_PAGE_SIZE })` (default 1,000) on
//    `createNodeServer`, 127.0.0.1, a free port. The client is in the same process (node:http, one keep-alive
//    socket, one request at a time).
// 3. For each order (PAGING_ORDERS: `key` = no $orderby, the default order by the key; `tag` =
//    `$orderby=Tag,Timestamp desc`): GET the first page, then follow `@odata.nextLink` (never a URL of our own) up to
//    the last page wanted, checking every page on the way: PAGING_PAGE_SIZE rows (fewer only on the set's last
//    page), no row twice, every row after the one before in the requested order with ties broken by the key, as the
//    binder appends it (across pages too), and, when the walk reaches the end, every row once and no next link after
//    the last page. The URLs of the wanted pages
//    (PAGING_PAGES, default 1, 100 and 1,000, i.e. 1, last/10, last) and their bodies are kept.
// 4. Timing: PAGING_WARMUP rounds (default 5), then PAGING_REPS rounds (default 40) of the kept URLs, one request
//    at a time, pages interleaved; each answer must hold the entities the walk got. After each request the page's SQL
//    (as the store ran it) runs alone on the store's driver. Per page: median and p90 latency (request sent to last
//    byte read), the ratio of medians to page 1, the median of the SQL alone, and the statement's plan (PostgreSQL:
//    EXPLAIN ANALYZE, which shows the rows the scan went through).
// Results are printed and written as markdown to bench/results/paging.md.
//
// Knobs: PAGING_QUICK=1 (20,000 rows, pages 1, 10, 20, 10 reps, 2 warm-up rounds), PAGING_ROWS, PAGING_PAGE_SIZE,
// PAGING_PAGES (comma list of page numbers), PAGING_REPS, PAGING_WARMUP, PAGING_DATABASES (sqlite, postgres),
// PAGING_ORDERS (key, tag), PAGING_INDEX=0, PAGING_CACHE_DIR, PAGING_REBUILD=1.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';

import pg from 'pg';

import {
  describeMachine,
  errorText,
  formatInt,
  formatSig,
  markdownTable,
  positiveNumber,
  postgresUnreachable,
  writeResults,
} from './util.js';

// the built bundles, typed by the sources so that type-checking does not need a build first
type Engine = typeof import('../src/index.js');
type ServiceModule = typeof import('../src/service/index.js');
type NodeModule = typeof import('../src/service/node-http.js');
type SqliteModule = typeof import('../src/service/sqlite.js');
type PostgresModule = typeof import('../src/service/postgres.js');
type Model = import('../src/index.js').Model;
type SqlStore = import('../src/service/index.js').SqlStore;
type SqlDriver = import('../src/service/index.js').SqlDriver;
type SqlParam = import('../src/backends/sql/index.js').SqlParam;
type Row = Record<string, unknown>;

interface Modules {
  readonly engine: Engine;
  readonly service: ServiceModule;
  readonly node: NodeModule;
  readonly sqlite: SqliteModule;
  readonly postgres: PostgresModule;
}

const QUICK = process.env['PAGING_QUICK'] === '1';
const ROWS = Math.round(positiveNumber('PAGING_ROWS', QUICK ? 20_000 : 1_000_000));
const PAGE_SIZE = Math.round(positiveNumber('PAGING_PAGE_SIZE', 1_000));
const LAST_PAGE = Math.ceil(ROWS / PAGE_SIZE);
const PAGES = pagesKnob();
const REPS = Math.round(positiveNumber('PAGING_REPS', QUICK ? 10 : 40));
const WARMUP = Math.round(positiveNumber('PAGING_WARMUP', QUICK ? 2 : 5, true));
const DATABASES = listKnob('PAGING_DATABASES', ['sqlite', 'postgres'] as const);
const ORDERS = listKnob('PAGING_ORDERS', ['key', 'tag'] as const);
const INDEX = process.env['PAGING_INDEX'] !== '0';
const CACHE_DIR = process.env['PAGING_CACHE_DIR'] || tmpdir();
const REBUILD = process.env['PAGING_REBUILD'] === '1';
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const GOAL = 1.2;
/** Readings that share one (Tag, Timestamp): the second order's ties, which only the key breaks. */
const TIES = 5;
const TAGS = 50;
/** Bump when the rows or the table change, so that a cached SQLite file of an older kind is not reused. */
const DATA_VERSION = 1;
const TABLE = 'Readings';
const INDEX_NAME = 'Readings_Tag_Timestamp';

type Database = 'sqlite' | 'postgres';
type Order = 'key' | 'tag';

const ORDER_QUERY: Record<Order, string> = { key: '', tag: '$orderby=Tag,Timestamp desc' };
const ORDER_NAMES: Record<Order, string> = {
  key: 'default order (the key)',
  tag: '`$orderby=Tag,Timestamp desc`',
};
const DATABASE_NAMES: Record<Database, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

function listKnob<T extends string>(name: string, known: readonly T[]): T[] {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return [...known];
  const wanted = text.split(',').map((s) => s.trim());
  const unknown = wanted.filter((w) => !(known as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return known.filter((k) => wanted.includes(k));
}

/** PAGING_PAGES, or 1, last/10 and last (1, 100, 1,000 for a million rows; 1, 10, 20 in quick mode). */
function pagesKnob(): number[] {
  const text = process.env['PAGING_PAGES'];
  const pages =
    text !== undefined && text.trim() !== ''
      ? text.split(',').map((s) => Number(s.trim()))
      : QUICK
        ? [1, Math.max(1, Math.round(LAST_PAGE / 2)), LAST_PAGE]
        : [1, Math.max(1, Math.round(LAST_PAGE / 10)), LAST_PAGE];
  for (const p of pages)
    if (!Number.isInteger(p) || p < 1 || p > LAST_PAGE)
      throw new Error(`PAGING_PAGES: ${p} is not a page of ${formatInt(ROWS)} rows in pages of ${PAGE_SIZE}`);
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  if (sorted[0] !== 1) sorted.unshift(1); // page 1 is what the others are compared with
  return sorted;
}

// ── Model and rows ──────────────────────────────────────────────────────────

function readingsModel(engine: Engine): Model {
  const Reading = engine.defineEntityType({
    name: 'Reading',
    key: ['ReadingID'],
    properties: {
      ReadingID: { type: 'Edm.Int32' },
      Timestamp: { type: 'Edm.DateTimeOffset', nullable: false },
      Value: { type: 'Edm.Decimal', precision: 12, scale: 3 },
      Tag: { type: 'Edm.String', maxLength: 16, nullable: false },
    },
  });
  return engine.defineModel({ namespace: 'Bench', entitySets: { Readings: Reading } });
}

const BASE_MS = Date.UTC(2024, 0, 1);

/**
 * Reading `id` (1 … ROWS). Readings `span` apart share their Timestamp and their Tag (TIES of each pair); 1% have no
 * Value.
 */
function reading(id: number): Row {
  const span = Math.ceil(ROWS / TIES);
  const slot = id % span;
  const thousandths = (id * 7_919) % 10_000_000;
  return {
    ReadingID: id,
    Timestamp: new Date(BASE_MS + slot * 60_000).toISOString(),
    Value: id % 100 === 0 ? null : `${Math.floor(thousandths / 1000)}.${String(thousandths % 1000).padStart(3, '0')}`,
    Tag: `T-${String((slot * 7_919) % TAGS).padStart(2, '0')}`,
  };
}

/** Every row through the store: `insertMany` batches in one transaction. */
async function loadRows(store: SqlStore, model: Model, service: ServiceModule): Promise<void> {
  const c = service.collectionsOf(model).get(TABLE)!;
  const size = store.batchRows(c);
  await store.transaction(async (tx) => {
    for (let first = 1; first <= ROWS; first += size) {
      const batch: Row[] = [];
      for (let id = first; id < first + size && id <= ROWS; id++) batch.push(reading(id));
      await tx.insertMany(c, batch);
    }
  });
}

// ── Stores ──────────────────────────────────────────────────────────────────

/** The statement a driver ran last, with its parameters. */
interface Recorder {
  last?: { readonly sql: string; readonly params: readonly SqlParam[] } | undefined;
}

/** `driver`, remembering the last statement it was given in `recorder` (nothing else changes). */
function recording(driver: SqlDriver, recorder: Recorder): SqlDriver {
  const values = driver.values?.bind(driver);
  return {
    ...driver,
    all: (sql, params = [], options) => {
      recorder.last = { sql, params: [...params] };
      return driver.all(sql, params, options);
    },
    ...(values === undefined
      ? {}
      : {
          values: (sql: string, params: readonly SqlParam[] = [], options?: Parameters<typeof values>[2]) => {
            recorder.last = { sql, params: [...params] };
            return values(sql, params, options);
          },
        }),
  };
}

interface Opened {
  readonly label: string;
  readonly store: SqlStore;
  readonly driver: SqlDriver;
  readonly recorder: Recorder;
  /** How the rows came to be there. */
  readonly loaded: string;
  /** The plan of a statement, on one line. */
  plan(sql: string, params: readonly SqlParam[]): Promise<string>;
  close(): Promise<void>;
}

function indexSql(dialect: Database, schema?: string): string {
  const table = schema === undefined ? `"${TABLE}"` : `"${schema}"."${TABLE}"`;
  return `CREATE INDEX IF NOT EXISTS "${INDEX_NAME}" ON ${table} ("Tag", "Timestamp" DESC, "ReadingID")`;
}

async function openSqliteReadings(m: Modules, model: Model): Promise<Opened> {
  mkdirSync(CACHE_DIR, { recursive: true });
  const file = join(CACHE_DIR, `odata-paging-bench-v${DATA_VERSION}-${ROWS}.sqlite`);
  const count = async (driver: SqlDriver): Promise<number> =>
    Number((await driver.all(`SELECT count(*) AS n FROM "${TABLE}"`))[0]?.['n'] ?? 0);
  let loaded: string;
  let reused = false;
  if (existsSync(file) && !REBUILD) {
    const driver = m.sqlite.openSqlite(file);
    try {
      await m.service.openSqlStore(driver, { model });
      reused = (await count(driver)) === ROWS;
    } finally {
      await driver.close();
    }
  }
  if (reused) loaded = `reused ${file}`;
  else {
    const building = `${file}.building-${process.pid}`;
    const removeBuilding = (): void => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${building}${suffix}`, { force: true });
    };
    removeBuilding();
    const started = performance.now();
    const driver = m.sqlite.openSqlite(building);
    try {
      const store = await m.service.openSqlStore(driver, { model });
      await loadRows(store, model, m.service);
      const rowsMs = performance.now() - started;
      if (INDEX) await driver.run(indexSql('sqlite'));
      await driver.run('ANALYZE');
      await driver.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
      renameSync(building, file);
      loaded = `built in ${formatSig((performance.now() - started) / 1000)} s (rows ${formatSig(rowsMs / 1000)} s, then index and ANALYZE), kept as ${file}`;
    } catch (error) {
      await driver.close().catch(() => undefined);
      removeBuilding();
      throw error;
    }
  }
  const recorder: Recorder = {};
  const driver = m.sqlite.openSqlite(file);
  // the index as PAGING_INDEX says (a cached file may have been built with the other setting)
  await driver.run(INDEX ? indexSql('sqlite') : `DROP INDEX IF EXISTS "${INDEX_NAME}"`);
  const store = await m.service.openSqlStore(recording(driver, recorder), { model });
  const version = String((await driver.all('SELECT sqlite_version() AS v'))[0]?.['v'] ?? '?');
  if ((await count(driver)) !== ROWS) throw new Error(`${file} does not hold ${ROWS} readings`);
  return {
    label: `SQLite ${version} (better-sqlite3, a file, no read pool)`,
    store,
    driver,
    recorder,
    loaded,
    plan: async (sql, params) =>
      (await driver.all(`EXPLAIN QUERY PLAN ${sql}`, params)).map((r) => String(r['detail'])).join(' → '),
    close: () => store.close(),
  };
}

async function openPostgresReadings(m: Modules, model: Model): Promise<Opened> {
  const schema = `odata_paging_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 5000 });
  await admin.connect();
  let store: SqlStore | undefined;
  const close = async (): Promise<void> => {
    try {
      await store?.close();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  };
  try {
    const version = ((await admin.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
    await admin.query(`CREATE SCHEMA "${schema}"`);
    const url = `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const recorder: Recorder = {};
    const driver = m.postgres.openPostgres(url);
    store = await m.service.openSqlStore(recording(driver, recorder), { model });
    const started = performance.now();
    await loadRows(store, model, m.service);
    const rowsMs = performance.now() - started;
    if (INDEX) await admin.query(indexSql('postgres', schema));
    await admin.query(`VACUUM (ANALYZE) "${schema}"."${TABLE}"`);
    const loaded = `loaded in ${formatSig((performance.now() - started) / 1000)} s (rows ${formatSig(rowsMs / 1000)} s, then index and VACUUM ANALYZE)`;
    const opened = store;
    return {
      label: `PostgreSQL ${version} server (127.0.0.1:5432, schema ${schema}, pool of 10)`,
      store: opened,
      driver,
      recorder,
      loaded,
      plan: async (sql, params) =>
        (await driver.all(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ${sql}`, params))
          .map((r) =>
            String(r['QUERY PLAN'])
              .trim()
              .replace(/^->\s*/, ''),
          )
          .join(' → '),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

// ── HTTP ────────────────────────────────────────────────────────────────────

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly ms: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET, timed from the request's start to the last byte of the answer. */
function get(url: URL): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get(url, { agent, headers: { accept: 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          ms: performance.now() - started,
        }),
      );
    });
    request.on('error', reject);
  });
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// ── Walk, check, time ───────────────────────────────────────────────────────

/** The `value` of an answer's body, as JSON text. */
function entitiesOf(body: string): string {
  return JSON.stringify((JSON.parse(body) as { value?: unknown }).value);
}

/** < 0 when `a` comes before `b` in the order (ties of the requested order broken by the key, as the binder does). */
function comparator(order: Order): (a: Row, b: Row) => number {
  const id = (a: Row, b: Row): number => Number(a['ReadingID']) - Number(b['ReadingID']);
  if (order === 'key') return id;
  return (a, b) => {
    const ta = String(a['Tag']);
    const tb = String(b['Tag']);
    if (ta !== tb) return ta < tb ? -1 : 1;
    const time = Date.parse(String(b['Timestamp'])) - Date.parse(String(a['Timestamp']));
    return time !== 0 ? time : id(a, b);
  };
}

interface KeptPage {
  readonly page: number;
  readonly url: URL;
  readonly body: string;
  /** The body's `value`, as JSON text. */
  readonly entities: string;
  readonly sql: { readonly sql: string; readonly params: readonly SqlParam[] } | undefined;
  /** The next link this page gave, for the report (its form: $skip or $skiptoken). */
  readonly nextLink: string | undefined;
}

interface Walk {
  readonly kept: KeptPage[];
  readonly pagesWalked: number;
  readonly walkMs: number;
  readonly complete: boolean;
}

/** From page 1, the next links up to the last wanted page, every page checked; the wanted pages kept. */
async function walk(origin: string, order: Order, recorder: Recorder): Promise<Walk> {
  const compare = comparator(order);
  const seen = new Uint8Array(ROWS + 1);
  const last = PAGES[PAGES.length - 1]!;
  const kept: KeptPage[] = [];
  const query = ORDER_QUERY[order];
  let url: URL | undefined = new URL(`${origin}/odata/${TABLE}${query === '' ? '' : `?${query}`}`);
  let previous: Row | undefined;
  let rowsSeen = 0;
  let page = 0;
  const started = performance.now();
  let progressAt = started;
  while (url !== undefined && page < last) {
    page++;
    recorder.last = undefined;
    const answer = await get(url);
    if (answer.status !== 200)
      throw new Error(`page ${page} (${url.href}): ${answer.status} ${answer.body.slice(0, 300)}`);
    const body = JSON.parse(answer.body) as { value?: Row[]; '@odata.nextLink'?: string };
    const rows = body.value;
    if (!Array.isArray(rows)) throw new Error(`page ${page}: no value array`);
    const nextLink = body['@odata.nextLink'];
    const expected = page < LAST_PAGE ? PAGE_SIZE : ROWS - (LAST_PAGE - 1) * PAGE_SIZE;
    if (rows.length !== expected) throw new Error(`page ${page}: ${rows.length} rows, not ${expected}`);
    for (const row of rows) {
      const id = Number(row['ReadingID']);
      if (!Number.isInteger(id) || id < 1 || id > ROWS) throw new Error(`page ${page}: a reading ${id}`);
      if (seen[id] === 1) throw new Error(`page ${page}: reading ${id} again (pages overlap)`);
      seen[id] = 1;
      if (previous !== undefined && compare(previous, row) >= 0)
        throw new Error(
          `page ${page}: reading ${id} ${JSON.stringify(row)} comes after ${JSON.stringify(previous)} (out of order)`,
        );
      previous = row;
    }
    rowsSeen += rows.length;
    if (PAGES.includes(page))
      kept.push({ page, url, body: answer.body, entities: JSON.stringify(rows), sql: recorder.last, nextLink });
    if (page === LAST_PAGE && nextLink !== undefined) throw new Error(`the last page has a next link: ${nextLink}`);
    if (page < LAST_PAGE && nextLink === undefined) throw new Error(`page ${page} of ${LAST_PAGE} has no next link`);
    url = nextLink === undefined ? undefined : new URL(nextLink, url);
    if (performance.now() - progressAt > 15_000) {
      progressAt = performance.now();
      console.log(
        `    … page ${formatInt(page)} of ${formatInt(last)} (${formatSig((progressAt - started) / 1000)} s)`,
      );
    }
  }
  if (page !== last) throw new Error(`the walk ended at page ${page}, before page ${last}`);
  const complete = last === LAST_PAGE;
  if (complete && rowsSeen !== ROWS) throw new Error(`the pages held ${rowsSeen} readings, not ${ROWS}`);
  return { kept, pagesWalked: page, walkMs: performance.now() - started, complete };
}

interface PageTiming {
  readonly page: number;
  readonly http: number[];
  readonly sql: number[];
  readonly plan: string;
  readonly sqlText: string;
  readonly nextLink: string | undefined;
  readonly bytes: number;
}

interface Outcome {
  readonly database: Database;
  readonly order: Order;
  readonly walk?: Walk;
  readonly pages?: PageTiming[];
  readonly error?: string;
}

async function timePages(origin: string, opened: Opened, w: Walk): Promise<PageTiming[]> {
  const values = opened.driver.values?.bind(opened.driver);
  const timings = w.kept.map((kept) => {
    const statement = kept.sql;
    // the page's statement alone, on the driver the store runs it with (as the store does: values when it has them)
    const runSql =
      statement === undefined
        ? undefined
        : (): Promise<unknown> =>
            values !== undefined
              ? values(statement.sql, statement.params)
              : opened.driver.all(statement.sql, statement.params);
    return { kept, runSql, http: [] as number[], sql: [] as number[] };
  });
  for (let round = 0; round < WARMUP + REPS; round++) {
    // interleaved, starting from another page each round; each request followed by its statement alone, so that
    // both see the same load on the machine
    for (let i = 0; i < timings.length; i++) {
      const t = timings[(round + i) % timings.length]!;
      const answer = await get(t.kept.url);
      // the same entities (the next link may differ, if a server's tokens are not deterministic)
      if (answer.status !== 200 || (answer.body !== t.kept.body && entitiesOf(answer.body) !== t.kept.entities))
        throw new Error(`page ${t.kept.page} answered differently when asked again (${answer.status})`);
      if (round >= WARMUP) t.http.push(answer.ms);
      if (t.runSql === undefined) continue;
      const started = performance.now();
      await t.runSql();
      if (round >= WARMUP) t.sql.push(performance.now() - started);
    }
  }
  const result: PageTiming[] = [];
  for (const t of timings) {
    const statement = t.kept.sql;
    const plan =
      statement === undefined
        ? 'n/a (no statement seen)'
        : await opened.plan(statement.sql, statement.params).catch((error: unknown) => `n/a (${errorText(error)})`);
    result.push({
      page: t.kept.page,
      http: t.http,
      sql: t.sql,
      plan,
      sqlText:
        statement === undefined
          ? 'n/a'
          : `${statement.sql} -- ${JSON.stringify(statement.params, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v))}`,
      nextLink: t.kept.nextLink,
      bytes: Buffer.byteLength(t.kept.body),
    });
  }
  return result;
}

function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (at - low);
}

const loadAverage = (): string => os.loadavg()[0]!.toFixed(2);
const median = (values: readonly number[]): number => quantile(values, 0.5);
const ratio = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–');

/** `…?$skip=1000` or the token, shortened, with the origin taken out. */
function linkForm(link: string | undefined): string {
  if (link === undefined) return '(none: the last page)';
  const url = new URL(link, 'http://x');
  const text = decodeURIComponent(`${url.pathname}${url.search}`);
  return text.length > 120 ? `${text.slice(0, 119)}…` : text;
}

// ── Main ────────────────────────────────────────────────────────────────────

export async function run(): Promise<void> {
  const startedAt = performance.now();
  const loadStart = loadAverage();
  const m: Modules = {
    engine: (await import('../dist/index.js' as string)) as Engine,
    service: (await import('../dist/service.js' as string)) as ServiceModule,
    node: (await import('../dist/service-node.js' as string)) as NodeModule,
    sqlite: (await import('../dist/service-sqlite.js' as string)) as SqliteModule,
    postgres: (await import('../dist/service-postgres.js' as string)) as PostgresModule,
  };
  const model = readingsModel(m.engine);
  console.log(
    `${formatInt(ROWS)} readings, pages of ${formatInt(PAGE_SIZE)} (${formatInt(LAST_PAGE)} pages); timed pages ${PAGES.join(', ')}; ` +
      `${WARMUP} warm-up + ${REPS} timed rounds; databases ${DATABASES.join(', ')}; orders ${ORDERS.join(', ')}`,
  );
  const outcomes: Outcome[] = [];
  const notes: string[] = [];
  const labels: string[] = [];
  for (const database of DATABASES) {
    if (database === 'postgres') {
      const unreachable = await postgresUnreachable(POSTGRES);
      if (unreachable !== undefined) {
        console.log(`PostgreSQL server unreachable (${unreachable}); its part is skipped`);
        notes.push(`PostgreSQL server unreachable (${unreachable}); its part was skipped.`);
        continue;
      }
    }
    console.log(`\n${DATABASE_NAMES[database]}: loading …`);
    let opened: Opened;
    try {
      opened = database === 'sqlite' ? await openSqliteReadings(m, model) : await openPostgresReadings(m, model);
    } catch (error) {
      console.log(`  ${DATABASE_NAMES[database]} failed to load: ${errorText(error, 400)}`);
      for (const order of ORDERS) outcomes.push({ database, order, error: `load: ${errorText(error, 400)}` });
      continue;
    }
    console.log(`  ${opened.label}: ${opened.loaded}`);
    labels.push(`${opened.label}: ${opened.loaded}.`);
    const server = m.node.createNodeServer(
      m.service.createODataService({ model, store: opened.store, basePath: '/odata', pageSize: PAGE_SIZE }),
    );
    try {
      const origin = await listen(server);
      for (const order of ORDERS) {
        try {
          console.log(
            `  ${ORDER_NAMES[order]}: walking the next links to page ${formatInt(PAGES[PAGES.length - 1]!)} …`,
          );
          const w = await walk(origin, order, opened.recorder);
          console.log(
            `    ${formatInt(w.pagesWalked)} pages checked in ${formatSig(w.walkMs / 1000)} s` +
              `${w.complete ? ' (every reading once, in order)' : ''}; next link of page 1: ${linkForm(w.kept[0]?.nextLink)}`,
          );
          const pages = await timePages(origin, opened, w);
          const first = median(pages[0]!.http);
          for (const p of pages)
            console.log(
              `    page ${String(p.page).padStart(5)}: median ${formatSig(median(p.http))} ms, p90 ${formatSig(quantile(p.http, 0.9))} ms, ` +
                `${ratio(median(p.http) / first)} page 1; SQL alone ${formatSig(median(p.sql))} ms`,
            );
          outcomes.push({ database, order, walk: w, pages });
        } catch (error) {
          console.log(`    FAILED: ${errorText(error, 400)}`);
          outcomes.push({ database, order, error: errorText(error, 400) });
        }
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await opened.close();
    }
  }
  agent.destroy();

  // ── Report ──
  const detail: string[] = [];
  const summaryRows: string[][] = [];
  const middle = PAGES.length > 2 ? PAGES[1]! : undefined;
  const last = PAGES[PAGES.length - 1]!;
  for (const o of outcomes) {
    const name = `${DATABASE_NAMES[o.database]}, ${ORDER_NAMES[o.order]}`;
    if (o.pages === undefined || o.walk === undefined) {
      summaryRows.push([
        DATABASE_NAMES[o.database],
        ORDER_NAMES[o.order],
        '–',
        '–',
        '–',
        '–',
        `**failed**: ${o.error ?? '?'}`,
      ]);
      continue;
    }
    const first = o.pages[0]!;
    const firstMs = median(first.http);
    const firstSql = median(first.sql);
    const ofPage = (page: number | undefined): PageTiming | undefined => o.pages!.find((p) => p.page === page);
    const lastRatio = median(ofPage(last)!.http) / firstMs;
    const mid = ofPage(middle);
    summaryRows.push([
      DATABASE_NAMES[o.database],
      ORDER_NAMES[o.order],
      `${formatSig(firstMs)} ms`,
      mid === undefined ? '–' : ratio(median(mid.http) / firstMs),
      ratio(lastRatio),
      ratio(median(ofPage(last)!.sql) / firstSql),
      lastRatio <= GOAL ? 'met' : '**not met**',
    ]);
    detail.push(
      `### ${name}`,
      '',
      `Walked ${formatInt(o.walk.pagesWalked)} pages by their next links in ${formatSig(o.walk.walkMs / 1000)} s, every page checked` +
        `${o.walk.complete ? ' (every reading once, in order, and no next link after the last page)' : ''}. ` +
        `Next link of page 1: \`${linkForm(first.nextLink)}\`.`,
      '',
      markdownTable(
        [
          'page',
          'rows before it',
          'median ms',
          'p90 ms',
          '÷ page 1',
          'SQL alone median ms',
          'SQL ÷ page 1',
          'body bytes',
        ],
        o.pages.map((p) => [
          formatInt(p.page),
          formatInt((p.page - 1) * PAGE_SIZE),
          formatSig(median(p.http)),
          formatSig(quantile(p.http, 0.9)),
          ratio(median(p.http) / firstMs),
          formatSig(median(p.sql)),
          ratio(median(p.sql) / firstSql),
          formatInt(p.bytes),
        ]),
      ),
      '',
      ...o.pages.flatMap((p) => [
        `- page ${formatInt(p.page)}: \`${p.sqlText.length > 400 ? `${p.sqlText.slice(0, 399)}…` : p.sqlText}\``,
        `  - plan: ${p.plan}`,
      ]),
      '',
    );
  }
  const summary = markdownTable(
    [
      'database',
      'order',
      'page 1 median',
      middle === undefined ? 'middle ÷ page 1' : `page ${formatInt(middle)} ÷ page 1`,
      `page ${formatInt(last)} ÷ page 1`,
      `SQL alone: page ${formatInt(last)} ÷ page 1`,
      `goal: page ${formatInt(last)} ≤ ${GOAL}× page 1`,
    ],
    summaryRows,
    ['left', 'left', 'right', 'right', 'right', 'right', 'left'],
  );
  const totalS = (performance.now() - startedAt) / 1000;
  const md = [
    '# Paging: page 1 against pages far in, by next links',
    '',
    `Run of ${new Date().toISOString().slice(0, 10)} (\`npm run bench -- paging\`, ${Math.round(totalS)} s in all).`,
    `Machine: ${describeMachine()}.`,
    '',
    `\`GET /odata/${TABLE}\` (and with \`$orderby=Tag,Timestamp desc\`) from the generic service (\`createODataService\`,`,
    `\`pageSize: ${PAGE_SIZE}\`, node:http adapter) over ${formatInt(ROWS)} readings (ReadingID Int32 key, Timestamp, Value`,
    `Decimal(12,3), Tag; every (Tag, Timestamp) shared by ${TIES} readings). Index${INDEX ? `es: the primary key and ("Tag", "Timestamp" DESC, "ReadingID")` : ': the primary key only'}.`,
    'The client follows `@odata.nextLink` from page 1 (never a URL of its own), checks every page (its size, no',
    'reading twice, the order across pages), keeps the URLs of the timed pages and then asks for each ' +
      `${REPS} times after ${WARMUP} warm-up rounds, one request at a time, pages interleaved, in the same process as the server.`,
    'Latency: request sent to last byte read. SQL alone: the statement the store ran for that page, run again on its',
    'driver after each timed request; its plan below each table (PostgreSQL: EXPLAIN ANALYZE, with the rows scanned).',
    `Load average (1 min) at the start and the end: ${loadStart} and ${loadAverage()}.`,
    '',
    ...labels.map((l) => `- ${l}`),
    ...notes.map((n) => `- ${n}`),
    '',
    summary,
    '',
    ...detail,
  ].join('\n');
  console.log(`\n${summary}`);
  await writeResults('paging', md);
  if (outcomes.some((o) => o.error !== undefined)) process.exitCode = 1;
}
