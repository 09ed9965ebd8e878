// HTTP benchmark: the reference server (createServer from dist/server.js) side by side with a bare Fastify route that
// runs the same query written by hand, and with SAP CAP serving the same rows, on SQLite and on PostgreSQL.
//
// 1. One site of demo data (`loadDemoSite(backend, site, { rows: 115000 })`: 99,911 POLineItems among every other
//    set) in SQLite (a data directory of its own, one file per site, as the server keeps it) and in PostgreSQL (the
//    server on 127.0.0.1:5432, a schema of its own through `search_path`, dropped at the end), with the index a
//    deployment would add for the indexed filter (the filtered equality column, the ordered column, then the key).
//    CAP deploys its own table (bench/cap/bench.cds: the reference model's POLineItems) in a file (SQLite) or schema
//    (PostgreSQL) of its own, and is given the same rows and the same indexes in its collation (CAP orders strings by
//    COLLATE NOCASE on SQLite and "en-x-icu" on PostgreSQL, which the binary primary key cannot serve).
// 2. Three servers, each in a process of its own (bench/http/server.ts, child_process.fork), on 127.0.0.1:
//    - **ours**: `/<site>/ODataApi/v1/POLineItems…` with the API_KEY header (site, credential check, cached; parse,
//      validate, toSql, the query on the server's pool or reader threads, OData JSON); page size 1,000 (default 100).
//    - **bare**: Fastify, one route per shape running the query written by hand (the same 16 columns, the same order
//      with the key as tie-break, the same driver and pool size), no authentication, `JSON.stringify`.
//    - **CAP**: @sap/cds 9 with express and @cap-js/sqlite or @cap-js/postgres, NODE_ENV=production, no
//      authentication (the `dummy` strategy), `/odata/v4/bench/POLineItems…`.
// 3. Shapes (bench/http/shared.ts): filter + $orderby + $top=20 with a new price literal on every request; the same
//    with one fixed URL; key lookup with a different real key on every request; a 1,000-row page; an unindexed scan
//    (filter + order, $top=20); `/$count` of the same unindexed filter. Before timing, every server is asked the same
//    requests (five of each varying shape) and must answer the same rows as the bare route: ours must (else the run
//    stops), CAP's differences are reported.
// 4. autocannon in this process (the servers have processes of their own), 32 connections, HTTP_BENCH_SECONDS per
//    run (default 10), after a warm-up of each server on each shape. HTTP_BENCH_ROUNDS rounds (default 3): in each,
//    every shape on every server, the servers' order rotating from round to round. Per run: req/s, p99 latency, and
//    the server's CPU time per request (process.cpuUsage() of the server process, every thread, read over IPC before
//    and after the run once its last request is done, divided by the requests it finished).
// 5. Where the time goes (the fixed filter): in this process, without HTTP, CPU time per call of the service's
//    `handle` and of its parts, beside the bare query and JSON.stringify.
// Results are printed and written as markdown to bench/results/http.md.
//
// Knobs: HTTP_BENCH_SECONDS, HTTP_BENCH_ROUNDS, HTTP_BENCH_WARMUP (seconds per server and shape, default 2),
// HTTP_BENCH_SHAPES (comma list of filter-new, filter-fixed, key, page, scan, count), HTTP_BENCH_DATABASES (sqlite,
// postgres), HTTP_BENCH_SERVERS (ours, bare, cap), HTTP_BENCH_ROWS (loadDemoSite's rows, default 115000),
// HTTP_BENCH_BREAKDOWN=0 to skip the in-process breakdown.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import pg from 'pg';

import {
  CAP_ROOT,
  CAP_TABLE,
  COLUMNS,
  FIXED_PRICE,
  PAGE_ROWS,
  PG_POOL,
  SHAPE_NAMES,
  SITE,
  TABLE,
  TOP,
  databaseBound,
  postgresBare,
  shapeNote,
  shapeText,
  sqliteBare,
  target,
  type BareQueries,
  type ChildMessage,
  type CpuReading,
  type LineKey,
  type ParentMessage,
  type Row,
  type ServerConfig,
  type ServerKind,
  type ShapeName,
  type Storage,
} from './http/shared.js';
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
type SqlBackend = typeof import('../src/backends/sql/index.js');
type ServerModule = typeof import('../src/server/index.js');
type Backend = import('../src/server/index.js').Backend;
type ODataService = import('../src/server/index.js').PlantService;
type EntityType = import('../src/index.js').EntityType;

let engine: Engine;
let sqlBackend: SqlBackend;
let server: ServerModule;

const SECONDS = positiveNumber('HTTP_BENCH_SECONDS', 10);
const ROUNDS = Math.round(positiveNumber('HTTP_BENCH_ROUNDS', 3));
const WARMUP_SECONDS = positiveNumber('HTTP_BENCH_WARMUP', 2);
const DEMO_ROWS = Math.round(positiveNumber('HTTP_BENCH_ROWS', 115_000));
const BREAKDOWN = process.env['HTTP_BENCH_BREAKDOWN'] !== '0';
const CONNECTIONS = 32;
const SHAPES = listKnob('HTTP_BENCH_SHAPES', SHAPE_NAMES);
const DATABASES = listKnob('HTTP_BENCH_DATABASES', ['sqlite', 'postgres'] as const);
const SERVERS = listKnob('HTTP_BENCH_SERVERS', ['ours', 'bare', 'cap'] as const);
/** Requests of each varying shape checked to be the same on every server before timing. */
const CHECKED = 5;
const GOAL_THROUGHPUT = 0.8;
const GOAL_CPU = 1.3;
const GOAL_CAP = 3;
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const SERVER_SCRIPT = fileURLToPath(new URL('./http/server.ts', import.meta.url));

function listKnob<T extends string>(name: string, known: readonly T[]): T[] {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return [...known];
  const wanted = text.split(',').map((s) => s.trim());
  const unknown = wanted.filter((w) => !(known as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`${name}: unknown ${unknown.join(', ')}; known: ${known.join(', ')}`);
  return known.filter((k) => wanted.includes(k));
}

const SERVER_NAMES: Record<ServerKind, string> = { ours: 'ours', bare: 'bare Fastify route', cap: 'CAP' };

// ── Server processes ────────────────────────────────────────────────────────

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;

class Child {
  private next = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(
    readonly kind: ServerKind,
    private readonly child: ChildProcess,
    readonly origin: string,
    readonly label: string,
  ) {
    child.on('message', (message: ChildMessage) => {
      if (message.op === 'ready') return;
      const waiter = this.waiting.get(message.id);
      if (waiter === undefined) return;
      this.waiting.delete(message.id);
      if (message.op === 'answer') waiter.resolve(message.result);
      else waiter.reject(new Error(`${kind} server: ${message.error}`));
    });
    child.on('exit', (code, signal) => {
      for (const waiter of this.waiting.values())
        waiter.reject(new Error(`The ${kind} server exited (${signal ?? code})`));
      this.waiting.clear();
    });
  }

  static start(config: ServerConfig): Promise<Child> {
    const child = fork(SERVER_SCRIPT, [], {
      execArgv: ['--import', 'tsx'],
      env: {
        ...process.env,
        HTTP_BENCH_SERVER: JSON.stringify(config),
        ...(config.kind === 'cap' ? { NODE_ENV: 'production' } : {}),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill();
        reject(new Error(`The ${config.kind} server did not start within 180 s`));
      }, 180_000);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`The ${config.kind} server exited while starting (${signal ?? code})`));
      });
      child.on('message', (message: ChildMessage) => {
        if (message.op !== 'ready') return;
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve(new Child(config.kind, child, `http://127.0.0.1:${message.port}`, message.label));
      });
    });
  }

  ask(message: { op: 'cpu' }): Promise<CpuReading>;
  ask(message: WithoutId<Exclude<ParentMessage, { op: 'cpu' }>>): Promise<unknown>;
  ask(message: WithoutId<ParentMessage>): Promise<unknown> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ ...message, id } as ParentMessage);
    });
  }

  /** Closes the server, then lets the process end (killed if it has not within 10 s). */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    try {
      await Promise.race([this.ask({ op: 'close' }), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    } catch {
      // exited already
    }
    if (this.child.connected) this.child.disconnect();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

// ── Databases ───────────────────────────────────────────────────────────────

interface Setup {
  readonly storage: Storage;
  readonly label: string;
  readonly backend: Backend;
  readonly key: string;
  readonly loadMs: number;
  readonly lines: number;
  /** The index added for the indexed filter, and CAP's. */
  readonly indexes: readonly string[];
  readonly capIndexes: readonly string[];
  /** How each server process is started. */
  readonly configs: Record<ServerKind, ServerConfig>;
  /** The hand-written queries, in this process. */
  readonly bare: BareQueries;
  /** EXPLAIN of a statement: one line. */
  readonly plan: (sql: string, params: readonly unknown[]) => Promise<string>;
  readonly dir: string;
  /** Closes what is open in this process (the servers are stopped first). */
  readonly closeLocal: () => Promise<void>;
  readonly close: () => Promise<void>;
}

async function setupSqlite(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'odata-http-bench-'));
  let backend: Backend | undefined;
  let bare: BareQueries | undefined;
  let explainDb: Database.Database | undefined;
  const closeLocal = async (): Promise<void> => {
    explainDb?.close();
    explainDb = undefined;
    await bare?.close();
    bare = undefined;
    await backend?.close();
    backend = undefined;
  };
  try {
    backend = await server.openSqliteBackend(dir);
    const started = performance.now();
    const { key } = await server.loadDemoSite(backend, SITE, { rows: DEMO_ROWS });
    const loadMs = performance.now() - started;
    const store = await backend.store(SITE);
    const index = `CREATE INDEX "${TABLE}_Status_DueDate" ON "${TABLE}" ("Status", "DueDate" DESC, "PONumber", "LineNumber")`;
    await store.driver.run(index);
    await store.driver.run('ANALYZE');
    const file = join(dir, 'sites', `${SITE}.db`);
    bare = sqliteBare(file);
    explainDb = new Database(file, { readonly: true });
    const db = explainDb;
    const version = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
    return {
      storage: 'sqlite',
      label: `SQLite ${version} (better-sqlite3, file per site, WAL)`,
      backend,
      key,
      loadMs,
      lines: Number((db.prepare(`SELECT count(*) AS n FROM "${TABLE}"`).get() as { n: number }).n),
      indexes: [index],
      capIndexes: [
        `CREATE INDEX cap_Status_DueDate ON ${CAP_TABLE} (Status, DueDate DESC, PONumber COLLATE NOCASE, LineNumber)`,
        `CREATE INDEX cap_Key_NoCase ON ${CAP_TABLE} (PONumber COLLATE NOCASE, LineNumber)`,
      ],
      configs: {
        ours: { kind: 'ours', storage: 'sqlite', dataDir: dir },
        bare: { kind: 'bare', storage: 'sqlite', file },
        cap: { kind: 'cap', storage: 'sqlite', file: join(dir, 'cap.db') },
      },
      bare,
      plan: async (sql, params) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[])
          .map((r) => r.detail)
          .join(' → '),
      dir,
      closeLocal,
      close: async () => {
        await closeLocal();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await closeLocal();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

async function setupPostgres(): Promise<Setup> {
  const schema = `odata_http_bench_${process.pid}_${randomBytes(3).toString('hex')}`;
  const capSchema = `${schema}_cap`;
  const dir = mkdtempSync(join(tmpdir(), 'odata-http-bench-'));
  const admin = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 5000 });
  await admin.connect();
  const version = ((await admin.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.query(`CREATE SCHEMA "${capSchema}"`);
  const url = `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  let backend: Backend | undefined;
  let bare: BareQueries | undefined;
  const closeLocal = async (): Promise<void> => {
    await bare?.close();
    bare = undefined;
    await backend?.close();
    backend = undefined;
  };
  const close = async (): Promise<void> => {
    try {
      await closeLocal();
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.query(`DROP SCHEMA IF EXISTS "${capSchema}" CASCADE`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
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
    const icu = (await admin.query(`SELECT 1 FROM pg_collation WHERE collname = 'en-x-icu'`)).rowCount === 1;
    // CAP orders by its keys (and breaks ties by them) with ASC NULLS FIRST, strings in the request's locale
    const collate = icu ? ' COLLATE "en-x-icu"' : '';
    bare = postgresBare(url);
    const lines = Number(
      ((await admin.query(`SELECT count(*) AS n FROM "${TABLE}" WHERE "site" = $1`, [SITE])).rows[0] as { n: string })
        .n,
    );
    return {
      storage: 'postgres',
      label: `PostgreSQL ${version} server (127.0.0.1:5432, schema ${schema}, pool of ${PG_POOL})`,
      backend,
      key,
      loadMs,
      lines,
      indexes: [index],
      capIndexes: [
        `CREATE INDEX cap_Status_DueDate ON ${CAP_TABLE} (Status, DueDate DESC NULLS LAST, PONumber${collate} ASC NULLS FIRST, LineNumber ASC NULLS FIRST)`,
        `CREATE INDEX cap_Key_Collated ON ${CAP_TABLE} (PONumber${collate} ASC NULLS FIRST, LineNumber ASC NULLS FIRST)`,
      ],
      configs: {
        ours: { kind: 'ours', storage: 'postgres', url },
        bare: { kind: 'bare', storage: 'postgres', url },
        cap: { kind: 'cap', storage: 'postgres', url: POSTGRES, capSchema },
      },
      bare,
      plan: async (sql, params) =>
        (await admin.query(`EXPLAIN (COSTS OFF) ${sql}`, params as unknown[])).rows
          .map((r: Record<string, unknown>) => String(r['QUERY PLAN']))
          .filter((line) => !/^\s*(Sort Key|Filter|Index Cond|Rows Removed|Presorted Key)/.test(line))
          .map((line) => line.replace(/^\s*(->\s*)?/, ''))
          .join(' → '),
      dir,
      closeLocal,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The site's lines in the reference server's own decoding (decimals as text), for CAP's table. */
async function linesForCap(setup: Setup, lineType: EntityType): Promise<Row[]> {
  const store = await setup.backend.store(SITE);
  const columns = COLUMNS.map((c) => `"${c}"`).join(', ');
  const raw =
    setup.storage === 'sqlite'
      ? await store.driver.all(`SELECT ${columns} FROM "${TABLE}"`, [])
      : await store.driver.all(`SELECT ${columns} FROM "${TABLE}" WHERE "site" = $1`, [SITE]);
  const properties = [...lineType.properties.values()];
  return raw.map((r) => sqlBackend.decodeRow(setup.storage, properties, r));
}

/** Every key of the site in a fixed pseudo-random order. */
async function shuffledKeys(setup: Setup): Promise<LineKey[]> {
  const store = await setup.backend.store(SITE);
  const raw =
    setup.storage === 'sqlite'
      ? await store.driver.all(`SELECT "PONumber", "LineNumber" FROM "${TABLE}"`, [])
      : await store.driver.all(`SELECT "PONumber", "LineNumber" FROM "${TABLE}" WHERE "site" = $1`, [SITE]);
  const keys = raw.map((r) => ({ po: String(r['PONumber']), line: Number(r['LineNumber']) }));
  let seed = 0x2545f491;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return keys;
}

// ── Same answers ────────────────────────────────────────────────────────────

function urlOf(kind: ServerKind, child: Child, shape: ShapeName, n: number, keys: readonly LineKey[]): string {
  const t = target(shape, n, keys);
  if (kind === 'bare') return `${child.origin}${t.bare}`;
  if (kind === 'cap') return `${child.origin}${CAP_ROOT}/${t.odata}`;
  return `${child.origin}/${SITE}/ODataApi/v1/${t.odata}`;
}

function headersOf(kind: ServerKind, setup: Setup): Record<string, string> {
  return kind === 'ours' ? { api_key: setup.key } : {};
}

/** One value as text, whatever form a server gives it in (numbers as text or numbers, Booleans as 0/1). */
function canonical(column: string, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (column) {
    case 'LineNumber':
    case 'QuantityOrdered':
    case 'QuantityReceived':
    case 'UnitPrice':
    case 'ExtendedPrice':
      return String(Number(value));
    case 'IsTaxable':
      return String(value === true || value === 1);
    case 'CreatedDate':
    case 'LastModifiedDate':
      return new Date(String(value)).toISOString();
    default:
      return String(value);
  }
}

function canonicalRow(row: Row): string {
  return COLUMNS.map((c) => canonical(c, row[c])).join('|');
}

interface Answer {
  readonly bytes: number;
  /** The rows (or the count) as comparable text, one line each. */
  readonly lines: readonly string[];
  readonly nextLink: boolean;
}

async function answer(url: string, headers: Record<string, string>, shape: ShapeName): Promise<Answer> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  const bytes = Buffer.byteLength(text);
  if (shape === 'count') return { bytes, lines: [String(Number(text.trim()))], nextLink: false };
  const body = JSON.parse(text) as Row & { value?: Row[] };
  if (shape === 'key') return { bytes, lines: [canonicalRow(body)], nextLink: false };
  if (!Array.isArray(body.value)) throw new Error(`${url} answered no value array`);
  return { bytes, lines: body.value.map(canonicalRow), nextLink: '@odata.nextLink' in body };
}

/** Where two answers part, or undefined when they are the same. */
function difference(a: readonly string[], b: readonly string[]): string | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) {
      const cut = (s: string | undefined): string => (s === undefined ? 'none' : s.slice(0, 160));
      return `${a.length} rows against ${b.length}; row ${i + 1}: ${cut(a[i])} against ${cut(b[i])}`;
    }
  }
  return undefined;
}

interface Check {
  readonly shape: ShapeName;
  /** Rows of the first request (the count for `count`). */
  readonly rows: number;
  readonly bytes: Partial<Record<ServerKind, number>>;
  /** How CAP's answers differ from the bare route's, when they do. */
  readonly capDiffers?: string;
  readonly summary: string;
}

async function checkShape(
  setup: Setup,
  children: Partial<Record<ServerKind, Child>>,
  shape: ShapeName,
  keys: readonly LineKey[],
): Promise<Check> {
  const requests = shape === 'filter-new' || shape === 'key' ? CHECKED : 1;
  const bytes: Partial<Record<ServerKind, number>> = {};
  let capDiffers: string | undefined;
  let rows = 0;
  let summary = '';
  for (let n = 0; n < requests; n++) {
    const answers: Partial<Record<ServerKind, Answer>> = {};
    for (const [kind, child] of Object.entries(children) as [ServerKind, Child][]) {
      answers[kind] = await answer(urlOf(kind, child, shape, n, keys), headersOf(kind, setup), shape);
      if (n === 0) bytes[kind] = answers[kind].bytes;
    }
    const reference = answers.bare ?? answers.ours;
    if (reference === undefined) throw new Error('Neither ours nor the bare route is running');
    if (answers.ours !== undefined && answers.bare !== undefined) {
      const d = difference(answers.ours.lines, answers.bare.lines);
      if (d !== undefined) throw new Error(`${shape}, request ${n + 1}: ours and the bare route differ: ${d}`);
    }
    if (answers.ours?.nextLink === true) throw new Error(`${shape}: ours answered a next link`);
    if (answers.cap !== undefined && capDiffers === undefined) {
      const d = difference(answers.cap.lines, reference.lines);
      if (d !== undefined) capDiffers = `request ${n + 1}: ${d}`;
    }
    if (n === 0) {
      rows = shape === 'count' ? Number(reference.lines[0]) : reference.lines.length;
      const first = reference.lines[0]?.split('|').slice(0, 2).join('/') ?? 'none';
      summary =
        shape === 'count'
          ? `count ${formatInt(rows)}`
          : `${rows} row(s), first ${first}${rows > 1 ? `, last ${reference.lines.at(-1)!.split('|').slice(0, 2).join('/')}` : ''}`;
    }
    if (shape === 'page' && reference.lines.length !== PAGE_ROWS)
      throw new Error(`page: ${reference.lines.length} rows, not ${PAGE_ROWS}`);
    if ((shape === 'filter-new' || shape === 'filter-fixed') && reference.lines.length !== TOP)
      throw new Error(`${shape}, request ${n + 1}: ${reference.lines.length} rows, not ${TOP}`);
  }
  return { shape, rows, bytes, ...(capDiffers === undefined ? {} : { capDiffers }), summary };
}

// ── Plans ───────────────────────────────────────────────────────────────────

interface Plans {
  readonly shape: ShapeName;
  readonly ours?: string;
  readonly bare?: string;
  readonly cap?: string;
}

async function plansOf(
  setup: Setup,
  children: Partial<Record<ServerKind, Child>>,
  lineType: EntityType,
  keys: readonly LineKey[],
): Promise<Plans[]> {
  const out: Plans[] = [];
  const statements = setup.bare.statements;
  const shapes: [ShapeName, keyof typeof statements][] = [
    ['filter-fixed', 'filter'],
    ['page', 'page'],
    ['scan', 'scan'],
  ];
  for (const [shape, name] of shapes) {
    if (!SHAPES.includes(shape)) continue;
    const plans: { -readonly [K in keyof Plans]: Plans[K] } = { shape };
    try {
      const query = target(shape, 0, keys).odata.split('?')[1]!;
      const statement = sqlBackend.toSql(engine.validateQuery(engine.parseQuery(query), lineType), {
        dialect: setup.storage,
        table: TABLE,
        scope: setup.storage === 'postgres' ? { site: SITE } : {},
      });
      plans.ours = await setup.plan(
        statement.sql,
        statement.params.map((p) => (typeof p === 'bigint' ? Number(p) : p)),
      );
    } catch (error) {
      plans.ours = `(not explained: ${errorText(error)})`;
    }
    plans.bare = await setup.plan(statements[name].sql, statements[name].params);
    const cap = children.cap;
    if (cap !== undefined) {
      try {
        await cap.ask({ op: 'capture', on: true });
        await answer(urlOf('cap', cap, shape, 0, keys), {}, shape);
        const explained = (await cap.ask({ op: 'explain' })) as { sql: string; plan: string[] } | undefined;
        plans.cap =
          explained === undefined
            ? '(no statement captured)'
            : explained.plan
                .filter((line) => !/^\s*(Sort Key|Filter|Index Cond|Rows Removed|Presorted Key)/.test(line))
                .map((line) => line.replace(/^\s*(->\s*)?/, ''))
                .join(' → ');
      } catch (error) {
        plans.cap = `(not explained: ${errorText(error)})`;
      }
    }
    out.push(plans);
  }
  return out;
}

// ── Load ────────────────────────────────────────────────────────────────────

interface Run {
  readonly kind: ServerKind;
  readonly round: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  /** Server CPU µs (user + system, every thread of its process) per request it finished during the run. */
  readonly cpuUs: number;
  /** Share of one core the server used during the run. */
  readonly cores: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly loadAverage: number;
}

/** The varying shapes' requests continue from run to run (a literal never comes back within 1,000,000 requests). */
const counters = new Map<ShapeName, number>();

function autocannonOptions(
  kind: ServerKind,
  child: Child,
  setup: Setup,
  shape: ShapeName,
  keys: readonly LineKey[],
  seconds: number,
): autocannon.Options {
  const headers = headersOf(kind, setup);
  const base = { connections: CONNECTIONS, duration: seconds, headers };
  if (shape !== 'filter-new' && shape !== 'key') return { ...base, url: urlOf(kind, child, shape, 0, keys) };
  const path = (n: number): string => urlOf(kind, child, shape, n, keys).slice(child.origin.length);
  return {
    ...base,
    url: child.origin,
    requests: [
      {
        method: 'GET',
        setupRequest: (request) => {
          const n = counters.get(shape) ?? 0;
          counters.set(shape, n + 1);
          return { ...request, path: path(n) };
        },
      },
    ],
  };
}

async function timedRun(
  kind: ServerKind,
  child: Child,
  setup: Setup,
  shape: ShapeName,
  keys: readonly LineKey[],
  round: number,
  seconds: number,
): Promise<Run> {
  const loadAverage = os.loadavg()[0] ?? Number.NaN;
  const before = await child.ask({ op: 'cpu' });
  const started = performance.now();
  const result = await autocannon(autocannonOptions(kind, child, setup, shape, keys, seconds));
  const after = await child.ask({ op: 'cpu' });
  const wallUs = (performance.now() - started) * 1000;
  const cpuUs = after.userUs + after.systemUs - (before.userUs + before.systemUs);
  const finished = after.finished - before.finished;
  return {
    kind,
    round,
    // 2xx only: an error answered fast must not count as throughput (the non-2xx are in the table)
    reqPerSec: result['2xx'] / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    cpuUs: finished > 0 ? cpuUs / finished : Number.NaN,
    cores: cpuUs / wallUs,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    loadAverage,
  };
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

async function breakdown(setup: Setup, lineType: EntityType, keys: readonly LineKey[]): Promise<Step[]> {
  const service: ODataService = server.createPlantService({ backend: setup.backend, pageSize: PAGE_ROWS });
  const calls = setup.storage === 'sqlite' ? 3000 : 1000;
  const store = await setup.backend.store(SITE);
  const dialect = setup.storage;
  const sqlOptions = { dialect, table: TABLE, scope: setup.storage === 'postgres' ? { site: SITE } : {} } as const;
  const odata = target('filter-fixed', 0, keys).odata;
  const query = odata.split('?')[1]!;
  const request = {
    method: 'GET',
    url: `/${SITE}/ODataApi/v1/${odata}`,
    headers: { host: '127.0.0.1', api_key: setup.key },
  };
  const bound = engine.validateQuery(engine.parseQuery(query), lineType);
  const statement = sqlBackend.toSql(bound, sqlOptions);
  const raw = await store.driver.all(statement.sql, statement.params);
  const steps: Step[] = [];
  steps.push(
    await measure('ours: `service.handle` (everything below HTTP)', calls, async () => {
      const response = await service.handle(request);
      if (response.status !== 200) throw new Error(`handle answered ${response.status}: ${String(response.body)}`);
      sink = response;
    }),
  );
  steps.push(
    await measure('site lookup + credential check (cached)', calls, async () => {
      sink = await setup.backend.directory.site(SITE);
      sink = await setup.backend.directory.authenticate(SITE, setup.key, undefined);
    }),
  );
  steps.push(await measure('parseQuery', calls, () => (sink = engine.parseQuery(query))));
  const parsed = engine.parseQuery(query);
  steps.push(await measure('validateQuery', calls, () => (sink = engine.validateQuery(parsed, lineType))));
  steps.push(await measure('toSql', calls, () => (sink = sqlBackend.toSql(bound, sqlOptions))));
  steps.push(
    await measure("the query on the server's connection (driver.all)", calls, async () => {
      sink = await store.driver.all(statement.sql, statement.params);
    }),
  );
  const properties = [...lineType.properties.values()];
  steps.push(
    await measure(
      `decodeRow × ${TOP}`,
      calls,
      () => (sink = raw.map((r) => sqlBackend.decodeRow(dialect, properties, r))),
    ),
  );
  steps.push(
    await measure('bare: hand-written query + JSON.stringify', calls, async () => {
      sink = JSON.stringify({ value: await setup.bare.filter(FIXED_PRICE) });
    }),
  );
  const handRows = await setup.bare.filter(FIXED_PRICE);
  steps.push(await measure('bare: JSON.stringify alone', calls, () => (sink = JSON.stringify({ value: handRows }))));
  return steps;
}

// ── Run ─────────────────────────────────────────────────────────────────────

interface Outcome {
  readonly setup: Pick<Setup, 'storage' | 'label' | 'loadMs' | 'lines' | 'indexes' | 'capIndexes'>;
  readonly servers: Partial<Record<ServerKind, string>>;
  readonly capLoadMs?: number;
  readonly checks: readonly Check[];
  readonly plans: readonly Plans[];
  readonly runs: ReadonlyMap<ShapeName, readonly Run[]>;
  readonly steps: readonly Step[];
  readonly keys: readonly LineKey[];
  readonly notes: readonly string[];
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const k = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function benchStorage(storage: Storage, lineType: EntityType): Promise<Outcome> {
  const name = storageName(storage);
  console.log(`${name}: loading the demo site (rows: ${formatInt(DEMO_ROWS)}) …`);
  const setup = storage === 'sqlite' ? await setupSqlite() : await setupPostgres();
  const children: Partial<Record<ServerKind, Child>> = {};
  const notes: string[] = [];
  try {
    console.log(`  ${setup.label}: loaded in ${formatInt(setup.loadMs)} ms, ${formatInt(setup.lines)} POLineItems`);
    const keys = await shuffledKeys(setup);
    const capRowsFile = join(setup.dir, 'cap-rows.json');
    if (SERVERS.includes('cap')) writeFileSync(capRowsFile, JSON.stringify(await linesForCap(setup, lineType)));

    let steps: Step[] = [];
    if (BREAKDOWN && SHAPES.includes('filter-fixed')) {
      console.log('  where the time goes (in process, no HTTP, the fixed filter) …');
      steps = await breakdown(setup, lineType, keys);
      for (const s of steps) console.log(`    ${s.name}: ${formatSig(s.cpuUs)} µs CPU, ${formatSig(s.wallUs)} µs wall`);
    }

    for (const kind of SERVERS) {
      try {
        children[kind] = await Child.start(setup.configs[kind]);
        console.log(`  ${SERVER_NAMES[kind]} started (${children[kind].label}) at ${children[kind].origin}`);
      } catch (error) {
        if (kind !== 'cap') throw error;
        const why = `CAP could not be started on ${name}: ${errorText(error, 400)}`;
        console.log(`  ${why}`);
        notes.push(why);
      }
    }
    let capLoadMs: number | undefined;
    if (children.cap !== undefined) {
      const started = performance.now();
      try {
        const loaded = await children.cap.ask({ op: 'load', file: capRowsFile, indexes: setup.capIndexes });
        capLoadMs = performance.now() - started;
        console.log(
          `  CAP: ${formatInt(Number(loaded))} rows inserted (cds INSERT) and indexed in ${formatInt(capLoadMs)} ms`,
        );
      } catch (error) {
        const why = `CAP could not load the rows on ${name}: ${errorText(error, 400)}`;
        console.log(`  ${why}`);
        notes.push(why);
        await children.cap.stop();
        delete children.cap;
      }
    }
    // the parent's own connections are done with: only the servers touch the database from here
    const plans = await plansOf(setup, children, lineType, keys);
    for (const p of plans)
      console.log(
        `  plan, ${p.shape}: ours ${p.ours}\n    bare ${p.bare}${p.cap === undefined ? '' : `\n    CAP ${p.cap}`}`,
      );

    const checks: Check[] = [];
    for (const shape of SHAPES) {
      const check = await checkShape(setup, children, shape, keys);
      checks.push(check);
      console.log(
        `  ${shape}: the same answers from ours and bare (${check.summary})` +
          (children.cap === undefined
            ? ''
            : check.capDiffers === undefined
              ? ', CAP too'
              : `; CAP differs: ${check.capDiffers}`),
      );
    }
    await setup.closeLocal();

    const kinds = SERVERS.filter((k) => children[k] !== undefined);
    console.log(`  warm-up: ${WARMUP_SECONDS} s per server and shape …`);
    for (const shape of SHAPES)
      for (const kind of kinds)
        await autocannon(autocannonOptions(kind, children[kind]!, setup, shape, keys, WARMUP_SECONDS));

    const runs = new Map<ShapeName, Run[]>(SHAPES.map((s) => [s, []]));
    for (let round = 0; round < ROUNDS; round++) {
      console.log(`  round ${round + 1} of ${ROUNDS}, ${CONNECTIONS} connections, ${SECONDS} s per run …`);
      for (const shape of SHAPES) {
        for (const kind of rotate(kinds, round)) {
          const run = await timedRun(kind, children[kind]!, setup, shape, keys, round, SECONDS);
          runs.get(shape)!.push(run);
          console.log(`    ${shape.padEnd(12)} ${SERVER_NAMES[kind].padEnd(18)} ${describeRun(run)}`);
        }
      }
    }
    const servers: Partial<Record<ServerKind, string>> = {};
    for (const kind of kinds) servers[kind] = children[kind]!.label;
    return {
      setup,
      servers,
      ...(capLoadMs === undefined ? {} : { capLoadMs }),
      checks,
      plans,
      runs,
      steps,
      keys,
      notes,
    };
  } finally {
    for (const child of Object.values(children)) await child.stop();
    await setup.close();
  }
}

function describeRun(r: Run): string {
  const failures = r.non2xx + r.errors;
  return (
    `${formatInt(r.reqPerSec).padStart(6)} req/s, p99 ${formatSig(r.p99)} ms, ${formatSig(r.cpuUs)} µs CPU/request ` +
    `(${r.cores.toFixed(2)} cores)${failures > 0 ? `, non-2xx ${r.non2xx}, errors ${r.errors} (timeouts ${r.timeouts})` : ''}`
  );
}

// ── Report ──────────────────────────────────────────────────────────────────

function storageName(storage: Storage): string {
  return storage === 'sqlite' ? 'SQLite' : 'PostgreSQL';
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median, and the spread of the rounds in parentheses. */
function spread(values: readonly number[], format: (n: number) => string): string {
  if (values.length === 0) return '';
  if (values.length === 1) return format(values[0]!);
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

function percent(ratio: number): string {
  return `${(ratio * 100).toFixed(0)}%`;
}

function times(ratio: number): string {
  return `${ratio.toFixed(2)}×`;
}

/** Per round, ours against another server: the ratio of a measure. */
function ratios(runs: readonly Run[], other: ServerKind, measure: (r: Run) => number): number[] {
  const out: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const ours = runs.find((r) => r.kind === 'ours' && r.round === round);
    const them = runs.find((r) => r.kind === other && r.round === round);
    if (ours !== undefined && them !== undefined) out.push(measure(ours) / measure(them));
  }
  return out;
}

function measurementsTable(o: Outcome): string {
  const header = ['shape', 'server', 'req/s', 'p99 ms', 'CPU µs/request', 'cores', 'non-2xx', 'errors', 'body bytes'];
  const rows: string[][] = [];
  for (const shape of SHAPES) {
    const runs = o.runs.get(shape) ?? [];
    const check = o.checks.find((c) => c.shape === shape);
    for (const kind of ['ours', 'bare', 'cap'] as const) {
      const mine = runs.filter((r) => r.kind === kind);
      if (mine.length === 0) continue;
      rows.push([
        shape,
        SERVER_NAMES[kind] + (kind === 'cap' && check?.capDiffers !== undefined ? ' (answer differs)' : ''),
        spread(
          mine.map((r) => r.reqPerSec),
          formatInt,
        ),
        spread(
          mine.map((r) => r.p99),
          formatSig,
        ),
        spread(
          mine.map((r) => r.cpuUs),
          formatSig,
        ),
        median(mine.map((r) => r.cores)).toFixed(2),
        String(mine.reduce((s, r) => s + r.non2xx, 0)),
        String(mine.reduce((s, r) => s + r.errors, 0)),
        check?.bytes[kind] === undefined ? '' : formatInt(check.bytes[kind]),
      ]);
    }
  }
  return markdownTable(header, rows, ['left', 'left']);
}

function ratiosTable(o: Outcome): string {
  const header = [
    'shape',
    'ours ÷ bare req/s',
    `≥ ${percent(GOAL_THROUGHPUT)}`,
    'ours ÷ bare CPU/request',
    `≤ ${GOAL_CPU}×`,
    'ours ÷ CAP req/s',
    `≥ ${GOAL_CAP}×`,
    'ours ÷ CAP CPU/request',
  ];
  const rows: string[][] = [];
  const mark = (ok: boolean): string => (ok ? '✓' : '✗');
  for (const shape of SHAPES) {
    const runs = o.runs.get(shape) ?? [];
    const throughput = ratios(runs, 'bare', (r) => r.reqPerSec);
    const cpu = ratios(runs, 'bare', (r) => r.cpuUs);
    const cap = ratios(runs, 'cap', (r) => r.reqPerSec);
    const capCpu = ratios(runs, 'cap', (r) => r.cpuUs);
    const capGoal =
      cap.length === 0 ? '' : databaseBound(shape) ? 'n/a (database-bound)' : mark(median(cap) >= GOAL_CAP);
    rows.push([
      shape,
      spread(throughput, percent),
      throughput.length === 0 ? '' : mark(median(throughput) >= GOAL_THROUGHPUT),
      spread(cpu, times),
      cpu.length === 0 ? '' : mark(median(cpu) <= GOAL_CPU),
      spread(cap, times),
      capGoal,
      spread(capCpu, times),
    ]);
  }
  return markdownTable(header, rows, ['left']);
}

function stepsTable(outcomes: readonly Outcome[]): string {
  const withSteps = outcomes.filter((o) => o.steps.length > 0);
  const names = withSteps[0]?.steps.map((s) => s.name) ?? [];
  const header = ['step', ...withSteps.flatMap((o) => [`${storageName(o.setup.storage)} CPU µs`, 'wall µs'])];
  const rows = names.map((name, i) => [
    name,
    ...withSteps.flatMap((o) => [formatSig(o.steps[i]!.cpuUs), formatSig(o.steps[i]!.wallUs)]),
  ]);
  return markdownTable(header, rows, ['left']);
}

export async function run(): Promise<void> {
  const startedAt = performance.now();
  engine = (await import('../dist/index.js' as string)) as Engine;
  sqlBackend = (await import('../dist/sql.js' as string)) as SqlBackend;
  server = (await import('../dist/server.js' as string)) as ServerModule;
  const lineType = server.plantDataModel.entitySets.get(TABLE);
  if (lineType === undefined) throw new Error(`plantDataModel has no entity set ${TABLE}`);
  const notes: string[] = [];
  const outcomes: Outcome[] = [];

  const storages: Storage[] = [];
  for (const storage of DATABASES) {
    if (storage === 'postgres') {
      const unreachable = await postgresUnreachable(POSTGRES);
      if (unreachable !== undefined) {
        console.log(`PostgreSQL server unreachable (${unreachable}); its part is skipped`);
        notes.push(`PostgreSQL server unreachable (${unreachable}); its part was skipped.`);
        continue;
      }
    }
    storages.push(storage);
  }
  console.log(
    `Shapes: ${SHAPES.join(', ')}; servers: ${SERVERS.join(', ')}; ${ROUNDS} round(s) of ${SECONDS} s per run, ` +
      `${CONNECTIONS} connections`,
  );
  for (const storage of storages) outcomes.push(await benchStorage(storage, lineType));

  const totalS = (performance.now() - startedAt) / 1000;
  const md: string[] = [
    '# The reference server over HTTP',
    '',
    `Run of ${new Date().toISOString().slice(0, 10)} (\`npm run bench -- http\`, ${Math.round(totalS)} s in all).`,
    `Machine: ${describeMachine()}.`,
    `dist/ built from ${builtFrom()}.`,
    '',
    'The reference server (**ours**: `createServer` + `createPlantService` from `dist/server.js`, API_KEY header) side',
    'by side with a **bare** Fastify route per shape that runs the same query written by hand (the same 16 columns,',
    'the same order with the key as tie-break, the same driver and pool size, no authentication, `JSON.stringify`),',
    `and with **CAP** (${capLabel(outcomes)}) serving the same rows from its own table (\`bench/cap/bench.cds\`, the`,
    "reference model's POLineItems). Each server runs in a process of its own; the load generator (autocannon",
    `${autocannonVersion()}) runs in the parent process: ${CONNECTIONS} connections, ${SECONDS} s per run after a`,
    `${WARMUP_SECONDS} s warm-up of each server on each shape, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}; in each round every shape on every`,
    "server, the servers' order rotating from round to round; loopback only.",
    '',
    `Demo site: \`loadDemoSite(backend, '${SITE}', { rows: ${DEMO_ROWS} })\` plus the index a deployment would add`,
    'for the indexed filter (below). The reference server runs with `pageSize: 1000` (its default page is 100 entities;',
    'no maximum applies), so that the 1,000-row page is one page; CAP pages at 1,000 by default.',
    '',
    '**Shapes** (OData request; the bare route answers the same from its own URL):',
    '',
    ...SHAPES.map(
      (s) => `- \`${s}\`: \`${shapeText(s, outcomes[0]?.keys ?? [{ po: 'PO-000001', line: 1 }])}\`: ${shapeNote(s)}`,
    ),
    '',
    '**Measures**: req/s = 2xx responses ÷ run time (autocannon); p99 = 99th percentile latency (autocannon, whole ms);',
    'CPU µs/request = CPU time (user + system, every thread) of the server process over the run, read with',
    "`process.cpuUsage()` inside it over IPC before the run and after it once the server's last request is finished,",
    "÷ the requests it finished; cores = that CPU time ÷ the run's wall time. Each cell: the median of the rounds and",
    '(min–max). Ratios are taken round by round (ours against the server run beside it in the same round), then the',
    "median and (min–max) of the rounds. PostgreSQL runs in processes of its own: its CPU is in no server's figure;",
    "SQLite's work is inside the server process (ours: its reader threads too).",
    '',
    `Goals: ours at least ${percent(GOAL_THROUGHPUT)} of the bare route's req/s and at most ${GOAL_CPU}× its CPU per`,
    `request on every shape; at least ${GOAL_CAP}× CAP's req/s on every shape where the database is not the`,
    'bottleneck (all but the unindexed `scan` and `count`).',
    '',
    '**CAP**: @sap/cds 9 (cds 10 needs Node 22), NODE_ENV=production, the `dummy` authentication strategy (none),',
    'log levels at warn (CAP logs every request at info), express from the project; @cap-js/sqlite with its default',
    'pool of one connection, @cap-js/postgres with its default pool of 10. CAP deploys its own table (`cds.deploy`)',
    'and writes its own SQL (a JSON-building subquery; the order by its keys as tie-break, strings COLLATE NOCASE on',
    'SQLite and "en-x-icu" on PostgreSQL); it is given the indexes those statements can use (below).',
    '',
    '**Machine**: 2 shared cores. The load generator takes about one of them, the server under load the other (and',
    'PostgreSQL shares them too): absolute req/s are bounded by that; the ratios, measured side by side, are what to',
    'compare. The idle servers wait in their own processes meanwhile.',
    '',
  ];
  for (const o of outcomes) {
    md.push(`## ${storageName(o.setup.storage)}`, '', ratiosTable(o), '', measurementsTable(o), '');
    const loads = [...o.runs.values()].flat().map((r) => r.loadAverage);
    md.push(
      `- ${o.setup.label}: demo site loaded in ${formatInt(o.setup.loadMs)} ms; ${formatInt(o.setup.lines)} POLineItems.`,
      `- servers: ${Object.entries(o.servers)
        .map(([k, label]) => `${SERVER_NAMES[k as ServerKind]}: ${label}`)
        .join('; ')}.`,
      `- 1-minute load average of the machine before the runs: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}.`,
      `- index: \`${o.setup.indexes.join('`, `')}\``,
    );
    if (o.servers.cap !== undefined) {
      md.push(
        `- CAP: the same ${formatInt(o.setup.lines)} rows inserted with \`cds.ql.INSERT\` and indexed in ${formatInt(o.capLoadMs ?? 0)} ms; indexes \`${o.setup.capIndexes.join('`, `')}\``,
      );
    }
    md.push('- same answers, checked before timing (five requests of each varying shape):');
    for (const c of o.checks) {
      md.push(
        `  - \`${c.shape}\`: ours = bare (${c.summary})` +
          (o.servers.cap === undefined
            ? ''
            : c.capDiffers === undefined
              ? ', CAP the same'
              : `; **CAP differs**: ${c.capDiffers}`),
      );
    }
    if (o.plans.length > 0) {
      md.push('- plans (ours: `toSql` of the same query options; CAP: the statement it ran, captured):');
      for (const p of o.plans) {
        md.push(`  - \`${p.shape}\`: ours ${p.ours}; bare ${p.bare}${p.cap === undefined ? '' : `; CAP ${p.cap}`}`);
      }
    }
    for (const n of o.notes) md.push(`- ${n}`);
    md.push('');
  }
  if (outcomes.some((o) => o.steps.length > 0)) {
    md.push(
      '## Where the time goes',
      '',
      'The fixed filter, in the parent process, no HTTP, one call after another (after 200 warm-up calls): CPU time',
      'of the process per call (user + system), and wall time. `service.handle` is the whole service below the HTTP',
      'adapter (site, credentials, parse, validate, toSql, the query, decoding, OData JSON); the lines under it are',
      'its parts, measured alone (SQLite: `service.handle` runs its query through the read pool, `driver.all` on the',
      "server's own connection).",
      '',
      stepsTable(outcomes),
      '',
    );
  }
  if (notes.length > 0) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  const text = md.join('\n');
  console.log(
    `\n${outcomes.map((o) => `${storageName(o.setup.storage)}\n${ratiosTable(o)}\n\n${measurementsTable(o)}`).join('\n\n')}\n`,
  );
  await writeResults('http', text);
}

function capLabel(outcomes: readonly Outcome[]): string {
  const label = outcomes.map((o) => o.servers.cap).find((l) => l !== undefined);
  return label ?? 'not running: see the notes';
}

/** The commit the working tree is at, and whether src/ has changes beside it (tsup builds dist/ from the tree). */
function builtFrom(): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { encoding: 'utf8' }).trim();
    const commit = git('rev-parse', '--short', 'HEAD');
    const changed = git('status', '--porcelain', '--', 'src').split('\n').filter(Boolean).length;
    return `the working tree at ${commit}${changed > 0 ? ` (with ${changed} uncommitted change(s) under src/)` : ''}`;
  } catch {
    return 'the working tree (git not available)';
  }
}

function autocannonVersion(): string {
  try {
    const file = new URL('../node_modules/autocannon/package.json', import.meta.url);
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '';
  }
}
