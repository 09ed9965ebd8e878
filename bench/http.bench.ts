// HTTP benchmark: the reference server (createServer from dist/server.js) under load beside a bare Fastify route
// that runs the same query, written by hand, on the same database.
//
// 1. One site of demo data (`loadDemoSite(backend, site, { rows: 20000 })`: about 17,400 POLineItems among every
//    other set) in SQLite (a data directory of its own, one file per site, as the server keeps it) and in
//    PostgreSQL (the server on 127.0.0.1:5432, a schema of its own through `search_path`, dropped at the end), with
//    the index a deployment would add for this read: the filtered equality column, then the ordered column, then the
//    key, so that the database walks the index in the order asked for and stops after the page.
// 2. Two servers per database, on 127.0.0.1, port 0:
//    - **ours**: `GET /<site>/ODataApi/v1/POLineItems?$filter=UnitPrice gt 100 and Status eq 'Open'&$orderby=DueDate
//      desc&$top=20` with the API_KEY header: site lookup, credential check (cached), parse, validate, toSql, the
//      query on the server's own connection (pool), OData JSON.
//    - **bare**: a Fastify app with one route that runs the same query written by hand (the same 16 columns, the
//      same order with the key as tie-break, the same driver and pool size), no authentication, and answers
//      `JSON.stringify({ value: rows })`.
//    Before timing, both are asked once and must return the same 20 rows (keys, due dates, statuses and prices, in
//    the same order).
// 3. autocannon in a worker thread (so that the load generator does not share the servers' event loop), 50
//    connections, HTTP_BENCH_SECONDS seconds each (default 20) after a warm-up of 2 seconds.
// 4. Where the time goes: in process, without HTTP, CPU time per call of the service's `handle` and of its parts
//    (credential check, parse, validate, toSql, the query, decoding the rows), beside the bare route's query and
//    JSON.stringify.
// Results are printed and written as markdown to bench/results/http.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';

import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import Fastify, { type FastifyInstance } from 'fastify';
import pg from 'pg';

import {
  describeMachine,
  errorText,
  postgresUnreachable,
  formatInt,
  formatSig,
  markdownTable,
  writeResults,
} from './util.js';

// the built bundles, typed by the sources so that type-checking does not need a build first
type Engine = typeof import('../src/index.js');
type SqlBackend = typeof import('../src/backends/sql/index.js');
type Server = typeof import('../src/server/index.js');
type Backend = import('../src/server/index.js').Backend;
type ODataService = import('../src/server/index.js').PlantService;
type EntityType = import('../src/index.js').EntityType;
type SqlParam = import('../src/backends/sql/index.js').SqlParam;

let engine: Engine;
let sqlBackend: SqlBackend;
let server: Server;

const SECONDS = positiveNumber('HTTP_BENCH_SECONDS', 20);
const WARMUP_SECONDS = Math.min(2, SECONDS);
const CONNECTIONS = 50;
const DEMO_ROWS = positiveNumber('HTTP_BENCH_ROWS', 20_000);
const SITE = 'bench';
const TABLE = 'POLineItems';
const QUERY_TEXT = "$filter=UnitPrice gt 100 and Status eq 'Open'&$orderby=DueDate desc&$top=20";
/** The query string as a client sends it (spaces and quotes percent-encoded). */
const QUERY = QUERY_TEXT.replace(/ /g, '%20').replace(/'/g, '%27');
const PAGE = 20;
const GOAL = 0.8;
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
/** The server's pool size for PostgreSQL (openPostgresBackend's default); the bare route gets the same. */
const PG_POOL = 10;
/** SQLite keeps Decimal(18,4) as an INTEGER scaled by 10^4 (createTableSql), so the hand-written query says so. */
const SQLITE_PRICE_SCALE = 10_000;
const COLUMNS = [
  'PONumber',
  'LineNumber',
  'PartID',
  'Description',
  'QuantityOrdered',
  'QuantityReceived',
  'UnitOfMeasure',
  'UnitPrice',
  'ExtendedPrice',
  'IsTaxable',
  'Account',
  'WorkOrderID',
  'DueDate',
  'Status',
  'CreatedDate',
  'LastModifiedDate',
] as const;
const columnList = COLUMNS.map((c) => `"${c}"`).join(', ');

function positiveNumber(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got ${text}`);
  return value;
}

/** Dates as their text, as the server's pool reads them (pg's default parser makes a local-midnight Date). */
const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 1082 ? (value: string) => value : pg.types.getTypeParser(oid, format),
};

// ── Databases ───────────────────────────────────────────────────────────────

type Storage = 'sqlite' | 'postgres';

interface Setup {
  readonly storage: Storage;
  readonly label: string;
  readonly backend: Backend;
  readonly key: string;
  readonly loadMs: number;
  /** POLineItems of the site, and how many of them the filter keeps. */
  readonly lines: number;
  readonly matching: number;
  /** The index added for this read. */
  readonly index: string;
  /** The hand-written query: rows as the driver gives them. */
  readonly hand: () => Promise<Record<string, unknown>[]>;
  /** The query plans of ours' and the hand-written statement, one line each. */
  readonly plans: (oursSql: string, oursParams: readonly SqlParam[]) => Promise<{ ours: string; hand: string }>;
  readonly close: () => Promise<void>;
}

async function setupSqlite(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'odata-http-bench-'));
  const backend = await server.openSqliteBackend(dir);
  try {
    return await fillSqlite(dir, backend);
  } catch (error) {
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function fillSqlite(dir: string, backend: Backend): Promise<Setup> {
  const started = performance.now();
  const { key } = await server.loadDemoSite(backend, SITE, { rows: DEMO_ROWS });
  const loadMs = performance.now() - started;
  const store = await backend.store(SITE);
  const index = `CREATE INDEX "${TABLE}_Status_DueDate" ON "${TABLE}" ("Status", "DueDate" DESC, "PONumber", "LineNumber")`;
  await store.driver.run(index);
  await store.driver.run('ANALYZE');
  // the bare route: its own better-sqlite3 connection to the site's file, one prepared statement
  const db = new Database(join(dir, 'sites', `${SITE}.db`), { readonly: true });
  const handSql =
    `SELECT ${columnList} FROM "${TABLE}" WHERE "UnitPrice" > ? AND "Status" = ? ` +
    `ORDER BY "DueDate" DESC, "PONumber", "LineNumber" LIMIT ?`;
  const handParams = [100 * SQLITE_PRICE_SCALE, 'Open', PAGE];
  const statement = db.prepare(handSql);
  const count = (where: string, params: readonly unknown[]): number =>
    Number((db.prepare(`SELECT count(*) AS n FROM "${TABLE}"${where}`).get(...params) as { n: number }).n);
  const plan = (sql: string, params: readonly unknown[]): string =>
    (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map((r) => r.detail).join(' → ');
  return {
    storage: 'sqlite',
    label: `SQLite ${String((db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v)} (better-sqlite3, file per site, WAL)`,
    backend,
    key,
    loadMs,
    index,
    lines: count('', []),
    matching: count(' WHERE "UnitPrice" > ? AND "Status" = ?', handParams.slice(0, 2)),
    hand: async () => statement.all(...handParams) as Record<string, unknown>[],
    plans: async (oursSql, oursParams) => ({
      ours: plan(
        oursSql,
        oursParams.map((p) => (typeof p === 'bigint' ? Number(p) : p)),
      ),
      hand: plan(handSql, handParams),
    }),
    close: async () => {
      db.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function setupPostgres(): Promise<Setup> {
  const schema = `odata_http_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 5000 });
  await admin.connect();
  const version = ((await admin.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const url = `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let backend: Backend | undefined;
  let pool: pg.Pool | undefined;
  const close = async (): Promise<void> => {
    try {
      await pool?.end();
      await backend?.close();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  };
  try {
    backend = await server.openPostgresBackend(url, { max: PG_POOL });
    const started = performance.now();
    const { key } = await server.loadDemoSite(backend, SITE, { rows: DEMO_ROWS });
    const loadMs = performance.now() - started;
    // every site shares the table (a `site` column leads the key), so the index leads with it too; NULLS LAST
    // because the OData order puts nulls last in a descending order (DueDate is nullable)
    const index = `CREATE INDEX "${TABLE}_Status_DueDate" ON "${TABLE}" ("site", "Status", "DueDate" DESC NULLS LAST, "PONumber", "LineNumber")`;
    await admin.query(`SET search_path = "${schema}"`);
    await admin.query(index);
    await admin.query(`VACUUM (ANALYZE) "${schema}"."${TABLE}"`);
    pool = new pg.Pool({ connectionString: url, max: PG_POOL, types: pgTypes });
    const handSql =
      `SELECT ${columnList} FROM "${TABLE}" WHERE "site" = $1 AND "UnitPrice" > $2 AND "Status" = $3 ` +
      `ORDER BY "DueDate" DESC NULLS LAST, "PONumber", "LineNumber" LIMIT $4`;
    const handParams = [SITE, 100, 'Open', PAGE];
    const handPool = pool;
    const count = async (where: string, params: readonly unknown[]): Promise<number> =>
      Number(
        (
          (await handPool.query(`SELECT count(*) AS n FROM "${TABLE}" WHERE "site" = $1${where}`, [SITE, ...params]))
            .rows[0] as { n: string }
        ).n,
      );
    const plan = async (sql: string, params: readonly unknown[]): Promise<string> =>
      (await handPool.query(`EXPLAIN (COSTS OFF) ${sql}`, params as unknown[])).rows
        .map((r: Record<string, unknown>) => String(r['QUERY PLAN']))
        .filter((line) => !/^\s*(Sort Key|Filter|Index Cond|Rows Removed)/.test(line))
        .map((line) => line.replace(/^\s*(->\s*)?/, ''))
        .join(' → ');
    return {
      storage: 'postgres',
      label: `PostgreSQL ${version} server (127.0.0.1:5432, schema ${schema}, pool of ${PG_POOL})`,
      backend,
      key,
      loadMs,
      index,
      lines: await count('', []),
      matching: await count(' AND "UnitPrice" > $2 AND "Status" = $3', [100, 'Open']),
      hand: async () => (await handPool.query(handSql, handParams)).rows as Record<string, unknown>[],
      plans: async (oursSql, oursParams) => ({
        ours: await plan(oursSql, oursParams),
        hand: await plan(handSql, handParams),
      }),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

// ── Servers ─────────────────────────────────────────────────────────────────

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address !== 'object') throw new Error('The server has no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

function bareApp(setup: Setup): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get(`/bare/${TABLE}`, async (_request, reply) => {
    const rows = await setup.hand();
    void reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({ value: rows });
  });
  return app;
}

// ── Same rows ───────────────────────────────────────────────────────────────

interface Fetched {
  readonly status: number;
  readonly bytes: number;
  readonly rows: Record<string, unknown>[];
}

async function fetchRows(url: string, headers: Record<string, string>): Promise<Fetched> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { value?: Record<string, unknown>[] };
  if (!Array.isArray(body.value)) throw new Error(`${url} answered no value array`);
  return { status: response.status, bytes: Buffer.byteLength(text), rows: body.value };
}

/** The same rows in the same order: keys, due dates and statuses equal, prices equal as numbers. */
function compareRows(
  storage: Storage,
  ours: readonly Record<string, unknown>[],
  bare: readonly Record<string, unknown>[],
) {
  const summary = (r: Record<string, unknown>, price: number): string =>
    `${String(r['PONumber'])}/${Number(r['LineNumber'])} ${String(r['DueDate'])} ${String(r['Status'])} ${price}`;
  const oursText = ours.map((r) => summary(r, Number(r['UnitPrice'])));
  const bareText = bare.map((r) =>
    summary(r, storage === 'sqlite' ? Number(r['UnitPrice']) / SQLITE_PRICE_SCALE : Number(r['UnitPrice'])),
  );
  if (ours.length !== PAGE) throw new Error(`ours returned ${ours.length} rows, not ${PAGE}`);
  for (let i = 0; i < Math.max(oursText.length, bareText.length); i++) {
    if (oursText[i] !== bareText[i])
      throw new Error(`Row ${i} differs: ours ${oursText[i] ?? 'none'}, bare ${bareText[i] ?? 'none'}`);
  }
  for (const r of ours) {
    if (r['Status'] !== 'Open' || !(Number(r['UnitPrice']) > 100)) throw new Error(`ours returned ${summary(r, 0)}`);
  }
  return oursText;
}

// ── Load ────────────────────────────────────────────────────────────────────

interface Load {
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly seconds: number;
  /** The machine's 1-minute load average just before the run (other processes share its cores). */
  readonly loadAverage: number;
}

async function load(url: string, headers: Record<string, string>, seconds: number): Promise<Load> {
  const loadAverage = os.loadavg()[0] ?? Number.NaN;
  // one worker thread: the load generator gets an event loop (and a core) of its own
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: seconds, workers: 1 });
  return {
    reqPerSec: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    seconds: result.duration,
    loadAverage,
  };
}

/** `n` requests at once to a server that has answered none yet, and again once it has: the slowest of each. */
async function burst(url: string, headers: Record<string, string>, n: number): Promise<number> {
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: n }, async () => {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  const bad = statuses.filter((s) => s !== 200).length;
  if (bad > 0) throw new Error(`${bad} of ${n} burst requests failed`);
  return performance.now() - started;
}

// ── Where the time goes ─────────────────────────────────────────────────────

interface Step {
  readonly name: string;
  /** CPU µs per call of this process (user + system), calls run one after the other. */
  readonly cpuUs: number;
  /** Wall µs per call. */
  readonly wallUs: number;
}

async function measure(name: string, calls: number, fn: () => unknown): Promise<Step> {
  for (let i = 0; i < Math.min(200, calls); i++) await fn();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < calls; i++) await fn();
  const wall = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { name, cpuUs: (used.user + used.system) / calls, wallUs: (wall * 1000) / calls };
}

let sink: unknown;

async function breakdown(setup: Setup, service: ODataService, lineType: EntityType): Promise<Step[]> {
  const calls = setup.storage === 'sqlite' ? 3000 : 1000;
  const store = await setup.backend.store(SITE);
  const dialect = setup.storage;
  const sqlOptions = {
    dialect,
    table: TABLE,
    scope: setup.storage === 'postgres' ? { site: SITE } : {},
  } as const;
  const request = {
    method: 'GET',
    url: `/${SITE}/ODataApi/v1/${TABLE}?${QUERY}`,
    headers: { host: '127.0.0.1', api_key: setup.key },
  };
  const bound = engine.validateQuery(engine.parseQuery(QUERY), lineType);
  const statement = sqlBackend.toSql(bound, sqlOptions);
  const raw = await store.driver.all(statement.sql, statement.params);
  const steps: Step[] = [];
  steps.push(
    await measure('ours: `service.handle` (everything below HTTP)', calls, async () => {
      const response = await service.handle(request);
      if (response.status !== 200) throw new Error(`handle answered ${response.status}: ${response.body}`);
      sink = response;
    }),
  );
  steps.push(
    await measure('site lookup + credential check (cached)', calls, async () => {
      sink = await setup.backend.directory.site(SITE);
      sink = await setup.backend.directory.authenticate(SITE, setup.key, undefined);
    }),
  );
  steps.push(await measure('parseQuery', calls, () => (sink = engine.parseQuery(QUERY))));
  const parsed = engine.parseQuery(QUERY);
  steps.push(await measure('validateQuery', calls, () => (sink = engine.validateQuery(parsed, lineType))));
  steps.push(await measure('toSql', calls, () => (sink = sqlBackend.toSql(bound, sqlOptions))));
  steps.push(
    await measure("the query on the server's connection", calls, async () => {
      sink = await store.driver.all(statement.sql, statement.params);
    }),
  );
  const properties = [...lineType.properties.values()];
  steps.push(
    await measure('decodeRow × 20', calls, () => (sink = raw.map((r) => sqlBackend.decodeRow(dialect, properties, r)))),
  );
  // what no line above covers: mostly the OData JSON of the 20 entities (entityMembers), and routing
  const [whole, ...parts] = steps;
  steps.push({
    name: 'the rest: OData JSON, routing (handle − the lines above)',
    cpuUs: whole!.cpuUs - parts.reduce((sum, step) => sum + step.cpuUs, 0),
    wallUs: whole!.wallUs - parts.reduce((sum, step) => sum + step.wallUs, 0),
  });
  steps.push(
    await measure('bare: hand-written query + JSON.stringify', calls, async () => {
      sink = JSON.stringify({ value: await setup.hand() });
    }),
  );
  const handRows = await setup.hand();
  steps.push(await measure('bare: JSON.stringify alone', calls, () => (sink = JSON.stringify({ value: handRows }))));
  return steps;
}

// ── Run ─────────────────────────────────────────────────────────────────────

interface Outcome {
  readonly setup: Pick<Setup, 'storage' | 'label' | 'loadMs' | 'lines' | 'matching' | 'index'>;
  readonly ours: Load;
  readonly bare: Load;
  readonly oursBytes: number;
  readonly bareBytes: number;
  readonly coldBurstMs: number;
  readonly warmBurstMs: number;
  readonly plans: { ours: string; hand: string };
  readonly steps: Step[];
}

async function benchStorage(setup: Setup, lineType: EntityType): Promise<Outcome> {
  const service = server.createPlantService({ backend: setup.backend });
  const oursApp = server.createServer({ service });
  const bare = bareApp(setup);
  try {
    const oursOrigin = await listen(oursApp);
    const bareOrigin = await listen(bare);
    const oursUrl = `${oursOrigin}/${SITE}/ODataApi/v1/${TABLE}?${QUERY}`;
    const bareUrl = `${bareOrigin}/bare/${TABLE}?${QUERY}`;
    const oursHeaders = { api_key: setup.key };

    // before anything else: 50 requests at once to a server that has verified no credential yet
    const coldBurstMs = await burst(oursUrl, oursHeaders, CONNECTIONS);
    const warmBurstMs = await burst(oursUrl, oursHeaders, CONNECTIONS);
    console.log(
      `  ${CONNECTIONS} requests at once: ${formatInt(coldBurstMs)} ms on a fresh server, ${formatInt(warmBurstMs)} ms once warm`,
    );

    const oursFetched = await fetchRows(oursUrl, oursHeaders);
    const bareFetched = await fetchRows(bareUrl, {});
    const rows = compareRows(setup.storage, oursFetched.rows, bareFetched.rows);
    console.log(`  same ${rows.length} rows from both (first ${rows[0]}, last ${rows[rows.length - 1]})`);
    const statement = sqlBackend.toSql(engine.validateQuery(engine.parseQuery(QUERY), lineType), {
      dialect: setup.storage,
      table: TABLE,
      scope: setup.storage === 'postgres' ? { site: SITE } : {},
    });
    const plans = await setup.plans(statement.sql, statement.params);
    console.log(`  plan, ours: ${plans.ours}\n  plan, hand: ${plans.hand}`);

    console.log(`  warm-up ${WARMUP_SECONDS} s each …`);
    await load(oursUrl, oursHeaders, WARMUP_SECONDS);
    await load(bareUrl, {}, WARMUP_SECONDS);
    console.log(`  ours, ${CONNECTIONS} connections, ${SECONDS} s …`);
    const ours = await load(oursUrl, oursHeaders, SECONDS);
    console.log(`    ${describeLoad(ours)}`);
    console.log(`  bare, ${CONNECTIONS} connections, ${SECONDS} s …`);
    const bareLoad = await load(bareUrl, {}, SECONDS);
    console.log(`    ${describeLoad(bareLoad)}`);
    console.log(`  ours ÷ bare: ${percent(ours.reqPerSec / bareLoad.reqPerSec)}`);

    console.log('  where the time goes (in process, no HTTP) …');
    const steps = await breakdown(setup, service, lineType);
    for (const s of steps) console.log(`    ${s.name}: ${formatSig(s.cpuUs)} µs CPU, ${formatSig(s.wallUs)} µs wall`);
    return {
      setup,
      ours,
      bare: bareLoad,
      oursBytes: oursFetched.bytes,
      bareBytes: bareFetched.bytes,
      coldBurstMs,
      warmBurstMs,
      plans,
      steps,
    };
  } finally {
    await oursApp.close();
    await bare.close();
  }
}

function describeLoad(l: Load): string {
  return (
    `${formatInt(l.reqPerSec)} req/s, p50 ${l.p50} ms, p99 ${l.p99} ms, max ${l.max} ms, ` +
    `${formatInt(l.requests)} requests, non-2xx ${l.non2xx}, errors ${l.errors} (timeouts ${l.timeouts}), ` +
    `load average before ${l.loadAverage.toFixed(2)}`
  );
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(0)}%`;
}

function ms(value: number): string {
  return formatSig(value);
}

function resultsTable(outcomes: readonly Outcome[]): string {
  const header = [
    'database',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'requests',
    'non-2xx',
    'errors',
    'body bytes',
    'ours ÷ bare',
  ];
  const rows: string[][] = [];
  for (const o of outcomes) {
    const ratio = o.ours.reqPerSec / o.bare.reqPerSec;
    const db = o.setup.storage === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const row = (name: string, l: Load, bytes: number, last: string): string[] => [
      db,
      name,
      formatInt(l.reqPerSec),
      ms(l.p50),
      ms(l.p99),
      ms(l.max),
      formatInt(l.requests),
      String(l.non2xx),
      l.timeouts > 0 ? `${l.errors} (${l.timeouts} timeouts)` : String(l.errors),
      formatInt(bytes),
      last,
    ];
    rows.push(row('ours', o.ours, o.oursBytes, `**${percent(ratio)}** ${ratio >= GOAL ? '✓' : '✗'}`));
    rows.push(row('bare Fastify route', o.bare, o.bareBytes, ''));
  }
  return markdownTable(header, rows, ['left', 'left']);
}

function stepsTable(outcomes: readonly Outcome[]): string {
  const names = outcomes[0]?.steps.map((s) => s.name) ?? [];
  const header = [
    'step',
    ...outcomes.flatMap((o) => [`${o.setup.storage === 'sqlite' ? 'SQLite' : 'PostgreSQL'} CPU µs`, 'wall µs']),
  ];
  const rows = names.map((name, i) => [
    name,
    ...outcomes.flatMap((o) => [formatSig(o.steps[i]!.cpuUs), formatSig(o.steps[i]!.wallUs)]),
  ]);
  return markdownTable(header, rows, ['left']);
}

export async function run(): Promise<void> {
  const startedAt = performance.now();
  engine = (await import('../dist/index.js' as string)) as Engine;
  sqlBackend = (await import('../dist/sql.js' as string)) as SqlBackend;
  server = (await import('../dist/server.js' as string)) as Server;
  const lineType = server.plantDataModel.entitySets.get(TABLE);
  if (lineType === undefined) throw new Error(`plantDataModel has no entity set ${TABLE}`);
  const notes: string[] = [];
  const outcomes: Outcome[] = [];

  const storages: Storage[] = ['sqlite'];
  const pgUnavailable = await postgresUnreachable(POSTGRES);
  if (pgUnavailable === undefined) storages.push('postgres');
  else {
    console.log(`PostgreSQL server unreachable (${pgUnavailable}); its part is skipped`);
    notes.push(`PostgreSQL server unreachable (${pgUnavailable}); its part was skipped.`);
  }

  for (const storage of storages) {
    console.log(
      `${storage === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: loading the demo site (rows: ${formatInt(DEMO_ROWS)}) …`,
    );
    const setup = storage === 'sqlite' ? await setupSqlite() : await setupPostgres();
    try {
      console.log(`  ${setup.label}: loaded in ${formatInt(setup.loadMs)} ms`);
      outcomes.push(await benchStorage(setup, lineType));
    } finally {
      await setup.close();
    }
  }

  const totalS = (performance.now() - startedAt) / 1000;
  const table = resultsTable(outcomes);
  const steps = stepsTable(outcomes);
  console.log(`\n${table}\n\n${steps}\n`);

  const md: string[] = [
    '# The reference server over HTTP',
    '',
    `Run of ${new Date().toISOString().slice(0, 10)} (\`npm run bench -- http\`, ${Math.round(totalS)} s in all).`,
    `Machine: ${describeMachine()}.`,
    '',
    `\`GET /${SITE}/ODataApi/v1/${TABLE}?${QUERY_TEXT}\` with the API_KEY header, against the reference server`,
    '(`createServer` from `dist/server.js`), beside a bare Fastify route that runs the same query written by hand on the',
    'same database (same rows, same driver and pool size, no authentication, `JSON.stringify({ value: rows })`).',
    `autocannon ${autocannonVersion()} in a worker thread, ${CONNECTIONS} connections, ${SECONDS} s per run after a`,
    `${WARMUP_SECONDS} s warm-up of each server; loopback only. Demo site: \`loadDemoSite(backend, '${SITE}', { rows: ${DEMO_ROWS} })\``,
    'plus the index a deployment would add for this read (below).',
    '',
    table,
    '',
    `Goal: ours at least ${percent(GOAL)} of the bare route's throughput.`,
    '',
    '## Databases',
    '',
    ...outcomes.flatMap((o) => [
      `- ${o.setup.label}: demo site loaded in ${formatInt(o.setup.loadMs)} ms; ${formatInt(o.setup.lines)} POLineItems, ${formatInt(o.setup.matching)} of them match the filter.`,
      `  - 1-minute load average of the machine just before the timed runs: ${o.ours.loadAverage.toFixed(2)} (ours), ${o.bare.loadAverage.toFixed(2)} (bare).`,
      `  - index: \`${o.setup.index}\``,
      `  - plan, ours: ${o.plans.ours}`,
      `  - plan, hand-written: ${o.plans.hand}`,
      `  - ${CONNECTIONS} requests at once to a fresh server (no credential verified yet): ${formatInt(o.coldBurstMs)} ms; the same burst once warm: ${formatInt(o.warmBurstMs)} ms.`,
    ]),
    '',
    '## Where the time goes',
    '',
    'In process, no HTTP, one call after another (after 200 warm-up calls): CPU time of this process per call (user +',
    'system), and wall time. `service.handle` is the whole service below the HTTP adapter (site, credentials, parse,',
    'validate, toSql, the query, decoding, OData JSON); the lines under it are its parts, measured alone.',
    '',
    steps,
    '',
  ];
  if (notes.length > 0) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  await writeResults('http', md.join('\n'));
}

function autocannonVersion(): string {
  try {
    const file = new URL('../node_modules/autocannon/package.json', import.meta.url);
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '';
  }
}
