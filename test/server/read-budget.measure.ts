// The measurements behind the SQLite read budget (src/service/sql/sqlite-pool.ts), printed as lines of figures:
//   node --import tsx test/server/read-budget.measure.ts [stop|cost|guard|http|exit] (default: all but http)
// stop:  how soon worker.terminate() ends a thread inside JavaScript (an odata_* function per row) and inside one
//        native SQLite step; how soon a child process dies of SIGKILL in the same step.
// cost:  CPU and latency per read of the same statements inline, through a reader thread and a reader process.
// guard: what a JavaScript function called once per row costs SQLite (the per-row deadline check proposed for the
//        SQL emitter), and that throwing from it ends a native-heavy statement at once.
// http:  requests per second of the built server (npm run build first; in a process of its own; 50 connections,
//        8 s) for a 20-row page and a key read, with reads inline, on reader threads and on reader processes; RSS.
// exit:  how long process.exit() waits for a thread still inside a native step (Node joins its threads at exit).
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { registerSqliteFunctions, type SqlParam } from '../../src/backends/sql/index.js';
import { openSqliteBackend, type SqliteBackendOptions } from '../../src/server/backend.js';
import { loadDemoSite } from '../../src/server/demo-site.js';
import { collection } from '../../src/server/collections.js';
import { parseQuery } from '../../src/syntax/query-string.js';
import { validateQuery } from '../../src/validate/bind.js';
import type { EntitySetName } from '../../src/server/model.js';

const NATIVE = (rows: number): string =>
  `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows}) SELECT count(*) AS n FROM c`;
const PER_ROW_JS = (rows: number): string =>
  `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows}) SELECT count(*) AS n FROM c WHERE odata_lower('X' || n) <> 'y'`;
const sections = process.argv.slice(2);
const wanted = (name: string): boolean => (sections.length === 0 ? name !== 'http' : sections.includes(name));
const line = (...parts: unknown[]): void => console.log(parts.join(' '));

/** A reader thread from sources (what the pool starts under tsx), running `sql` on an in-memory database. */
const threadCode = (sql: string): string => `
  const { parentPort } = require('node:worker_threads');
  require(${JSON.stringify(fileURLToPath(import.meta.resolve('tsx/cjs/api')))}).register();
  const { registerSqliteFunctions } = require(${JSON.stringify(fileURLToPath(new URL('../../src/backends/sql/sqlite/functions.ts', import.meta.url)))});
  const Database = require('better-sqlite3');
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  parentPort.postMessage('started');
  setInterval(() => undefined, 1 << 30);
  db.prepare(${JSON.stringify(sql)}).all();
  parentPort.postMessage('finished');`;

async function stop(): Promise<void> {
  const cases: [string, string][] = [
    ['odata_lower per row (JavaScript)', PER_ROW_JS(100_000_000)],
    ['recursive CTE, 30 M rows (native)', NATIVE(30_000_000)],
  ];
  for (const [name, sql] of cases) {
    const worker = new Worker(threadCode(sql), { eval: true });
    let finished = false;
    worker.on('error', (error) => line('stop:', name, 'failed:', String(error)));
    await new Promise((resolve) => worker.once('message', resolve));
    worker.on('message', () => (finished = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    if (finished) line('stop:', name, 'finished within 500 ms: not measured');
    const start = performance.now();
    await worker.terminate();
    line(
      'stop:',
      name,
      '— terminate() 500 ms into the statement: the thread exited after',
      (performance.now() - start).toFixed(1),
      'ms',
    );
  }
  const child = `
    const Database = require('better-sqlite3');
    const db = new Database(':memory:');
    process.stdout.write('started\\n');
    db.prepare(${JSON.stringify(NATIVE(30_000_000))}).all();`;
  const start = performance.now();
  const result = spawnSync(process.execPath, ['-e', `${child}`, ''], { timeout: 500, killSignal: 'SIGKILL' });
  line(
    'stop: recursive CTE, 30 M rows (native) in a child process — SIGKILL at 500 ms: gone after',
    (performance.now() - start).toFixed(0),
    'ms, signal',
    result.signal,
  );
}

async function cost(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'odata-measure-'));
  const reads: [string, EntitySetName, string][] = [
    ['21-row page', 'POLineItems', '$filter=QuantityOrdered gt 1&$top=21'],
    ['51-row page', 'POLineItems', '$top=101'],
    [
      '1 row, functions in the filter',
      'WorkOrders',
      "$filter=contains(tolower(Description),'pump') and Priority le 3&$top=21",
    ],
  ];
  const backends: [string, SqliteBackendOptions][] = [
    ['inline', { readerThreads: 0 }],
    ['thread', { readerIsolation: 'thread', readerThreads: 1 }],
    ['process', { readerIsolation: 'process', readerThreads: 1 }],
  ];
  const setup = await openSqliteBackend(dir, { readerThreads: 0 });
  await loadDemoSite(setup, 'demo');
  await setup.close();
  const rounds = 3000;
  for (const [label, options] of backends) {
    const backend = await openSqliteBackend(dir, options);
    const store = await backend.store('demo');
    const statements: [string, string, readonly SqlParam[]][] = reads.map(([name, set, query]) => {
      const c = collection(set);
      const { sql, params } = store.readStatements(c, validateQuery(parseQuery(query), c.entityType)).rows;
      return [name, sql, params];
    });
    statements.push([
      'key lookup',
      'SELECT * FROM "POLineItems" WHERE "PONumber" = ? AND "LineNumber" = ?',
      ['PO-000001', 1],
    ]);
    statements.push(['COUNT', 'SELECT count(*) AS n FROM "POLineItems" WHERE "QuantityOrdered" > ?', [10000n]]);
    for (const [name, sql, params] of statements) {
      for (let i = 0; i < 300; i++) await store.driver.all(sql, params);
      const readers = label === 'process' ? childCpuMs() : 0;
      const cpu = process.cpuUsage();
      const loop = performance.eventLoopUtilization();
      const start = performance.now();
      for (let i = 0; i < rounds; i++) await store.driver.all(sql, params);
      const wall = performance.now() - start;
      const used = process.cpuUsage(cpu);
      const main = performance.eventLoopUtilization(loop).active;
      // a reader process's own CPU is not in ours: from /proc
      const children = label === 'process' ? childCpuMs() - readers : 0;
      line(
        `cost: ${label.padEnd(7)} ${name.padEnd(32)}`,
        `${((wall / rounds) * 1000).toFixed(1)} µs latency,`,
        `${((main / rounds) * 1000).toFixed(1)} µs on the main thread,`,
        `${((((used.user + used.system) / 1000 + children) / rounds) * 1000).toFixed(1)} µs CPU in all threads and processes`,
      );
    }
    await backend.close();
  }
  rmSync(dir, { recursive: true, force: true });
}

/** CPU ms of this process's children (the reader process), from /proc (clock ticks of 10 ms). */
function childCpuMs(): number {
  const pids = execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' })
    .split('\n')
    .filter((l) => l.trim() !== '');
  let ticks = 0;
  for (const pid of pids) {
    if (!existsSync(`/proc/${pid.trim()}/stat`)) continue; // ps itself, gone by now
    const fields = readFileSync(`/proc/${pid.trim()}/stat`, 'utf8').split(') ')[1]!.split(' ');
    ticks += Number(fields[11]) + Number(fields[12]); // utime and stime
  }
  return ticks * 10;
}

async function guard(): Promise<void> {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  const flag = new Int32Array(new SharedArrayBuffer(4));
  db.function('odata_deadline', { safeIntegers: true }, (_row: unknown) => {
    if (Atomics.load(flag, 0) !== 0) throw new Error('deadline');
    return 1n;
  });
  const rows = 10_000_000;
  const time = (sql: string): number => {
    const start = performance.now();
    db.prepare(sql).all();
    return performance.now() - start;
  };
  const plain = time(NATIVE(rows));
  const checked = time(
    `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows}) SELECT count(*) AS n FROM c WHERE odata_deadline(n)`,
  );
  line(
    'guard:',
    `${rows / 1e6} M rows: ${plain.toFixed(0)} ms plain, ${checked.toFixed(0)} ms with odata_deadline(n) per row:`,
    (((checked - plain) / rows) * 1e6).toFixed(0),
    'ns a row',
  );
  flag[0] = 1;
  const start = performance.now();
  try {
    db.prepare(
      `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ${rows}) SELECT count(*) AS n FROM c WHERE odata_deadline(n)`,
    ).all();
  } catch (error) {
    line(
      'guard: with the flag set the statement ends after',
      (performance.now() - start).toFixed(2),
      'ms:',
      String(error),
    );
  }
}

/** A server from the build (dist/server.js) in a process of its own, as `serve` runs: its port and key. */
async function serveBuilt(
  dir: string,
  options: SqliteBackendOptions,
): Promise<{ child: ChildProcess; port: number; key: string }> {
  const server = new URL('../../dist/server.js', import.meta.url).href;
  const code = `
    import Database from 'better-sqlite3';
    import * as server from ${JSON.stringify(server)};
    const backend = await server.openSqliteBackend(${JSON.stringify(dir)}, ${JSON.stringify(options)});
    const { key } = await server.loadDemoSite(backend, 'bench', { rows: 20000 });
    const index = new Database(${JSON.stringify(join(dir, 'sites', 'bench.db'))});
    index.exec('CREATE INDEX IF NOT EXISTS po_status_due ON "POLineItems" ("Status", "DueDate", "PONumber", "LineNumber")');
    index.close();
    const app = server.createServer({ service: server.createPlantService({ backend }) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    console.log(JSON.stringify({ port: app.server.address().port, key }));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise<string>((resolve) =>
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString())),
  );
  const { port, key } = JSON.parse(first) as { port: number; key: string };
  return { child, port, key };
}

async function http(): Promise<void> {
  for (const [label, options] of [
    ['inline', { readerThreads: 0 }],
    ['thread', { readerIsolation: 'thread' }],
    ['process', { readerIsolation: 'process' }],
  ] as [string, SqliteBackendOptions][]) {
    const dir = mkdtempSync(join(tmpdir(), 'odata-measure-http-'));
    const { child, port, key } = await serveBuilt(dir, options);
    const root = `http://127.0.0.1:${port}/bench/ODataApi/v1`;
    for (const [name, path] of [
      [
        '20-row page',
        "/POLineItems?$filter=UnitPrice%20gt%20100%20and%20Status%20eq%20'Open'&$orderby=DueDate%20desc&$top=20",
      ],
      ['key read', "/POLineItems(PONumber='PO-000001',LineNumber=1)"],
    ] as const) {
      const run = (duration: number) =>
        autocannon({ url: `${root}${path}`, headers: { API_KEY: key }, connections: 50, duration, workers: 1 });
      await run(2);
      const result = await run(8);
      line(
        `http: ${label.padEnd(7)} ${name.padEnd(12)}`,
        Math.round(result.requests.average),
        'req/s, p50',
        result.latency.p50,
        'ms, p99',
        result.latency.p99,
        'ms, non-2xx',
        result.non2xx,
      );
    }
    const kib = (args: string[]): number =>
      execFileSync('ps', ['-o', 'rss=', ...args], { encoding: 'utf8' })
        .split('\n')
        .reduce((sum, l) => sum + (Number(l.trim()) || 0), 0);
    line(
      `http: ${label.padEnd(7)} RSS of the server`,
      (kib(['-p', String(child.pid)]) / 1024).toFixed(0),
      'MiB, of its reader processes',
      label === 'process' ? (kib(['--ppid', String(child.pid)]) / 1024).toFixed(0) : 0,
      'MiB',
    );
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function exit(): Promise<void> {
  const code = `
    const { Worker } = require('node:worker_threads');
    const worker = new Worker(${JSON.stringify(`const Database = require('better-sqlite3'); const db = new Database(':memory:'); require('node:worker_threads').parentPort.postMessage('go'); db.prepare(${JSON.stringify(NATIVE(30_000_000))}).all();`)}, { eval: true });
    worker.once('message', () => setTimeout(() => { worker.terminate(); process.exit(0); }, 200));`;
  const start = performance.now();
  spawnSync(process.execPath, ['-e', code], { timeout: 120_000 });
  line(
    'exit: process.exit(0) 200 ms into a native step of a terminated thread returned after',
    (performance.now() - start).toFixed(0),
    'ms (the step alone takes about as long)',
  );
}

if (wanted('stop')) await stop();
if (wanted('cost')) await cost();
if (wanted('guard')) await guard();
if (wanted('http')) await http();
if (wanted('exit')) await exit();
