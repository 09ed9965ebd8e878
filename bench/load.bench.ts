// Load benchmark: the reference server as its own process (`node dist/cli.js serve`), driven over loopback by a mix of
// reads, writes and actions, and a paged read of a million rows, each against SQLite and against PostgreSQL.
//
// 1. Mixed load. The server starts with `--demo --log-level warn --rate-limit 0` (SQLite files in a temporary data
//    directory, or PostgreSQL on 127.0.0.1:5432 in a schema of its own through `search_path`, dropped at the end).
//    The keys of the demo records are read first (work orders, purchase requests and orders, lines, meters), then
//    every kind of request of the mix is sent once and must answer 2xx (a broken mix fails here, with the request
//    and the answer). autocannon (in this process: the server has a process and a core of its own) then opens
//    LOAD_CONNECTIONS connections (200) for a warm-up of LOAD_WARMUP_SECONDS (10) and the timed run of LOAD_SECONDS
//    (60). Every request is drawn from the weighted mix below (a seeded PRNG: the same run each time): reads with
//    $filter, $orderby, $top, $select and $count on several sets, by key, through navigation, /$count; POST and
//    PATCH on purchase requests, orders and their lines, POST MeterReadings; the AddComment action. Status codes are
//    counted by class and by kind of request, and socket errors (timeouts among them) apart. The server's RSS is read
//    from /proc/<pid>/status every second; "after the warm-up" and "at the end" are medians of the last 5 s of
//    readings; its peak (VmHWM) is reset when the timed run starts. The server runs with node's --trace-gc, so that
//    the live heap after each full collection tells a growing heap from V8 merely keeping more memory.
//    Goals: no 5xx, no socket error (and no 4xx: the mix is valid), RSS at the end within 20% of RSS after the
//    warm-up.
// 2. A million rows. `odata-engine sites create big` and `odata-engine seed big --rows LOAD_BIG_ROWS` (Parts gets
//    exactly that many rows; the other sets proportionally many, about 9.8 million rows in all), timed. Then a server
//    on that data (no --demo, `--page-size LOAD_BIG_PAGE_SIZE`) and one client: first `Parts?$top=10000` (one page
//    and a next link) and `Parts?$top=<rows>` (beyond the service's $top limit: a 400), then `Parts` and every
//    @odata.nextLink after it (the server pages by $skip) until no link is left: every row exactly once, in key
//    order. The server's RSS before, its peak during (VmHWM, reset first) and after; the time per page at the start
//    and at the end (OFFSET makes deep pages slower). Goal: the peak at most 100 MiB above the RSS before (the whole
//    result is hundreds of MB of JSON: a server that buffered it would be far beyond).
// Results are printed and written as markdown to bench/results/load.md; a missed goal prints a FAIL line and makes
// the run exit non-zero.
//
// Environment: LOAD_SECONDS (60), LOAD_WARMUP_SECONDS (10), LOAD_CONNECTIONS (200), LOAD_STORAGES (sqlite,postgres;
// none skips part 1), LOAD_BIG_ROWS (1000000; 0 skips part 2), LOAD_BIG_STORAGES (sqlite,postgres), LOAD_BIG_PAGE_SIZE
// (1000: at the server's default of 100, a million rows are 10,000 OFFSET pages, far too long on PostgreSQL),
// LOAD_BIG_MAX_SECONDS (600: a read that takes longer stops there and counts as a failure), LOAD_SERVER_LOG (a file
// for every line the server and CLI processes print), LOAD_NODE_ARGS (node options for them, e.g. --trace-gc).
// For a quick check:
// `LOAD_SECONDS=10 LOAD_WARMUP_SECONDS=3 LOAD_BIG_ROWS=50000 npm run bench -- load`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';
import pg from 'pg';

import {
  describeMachine,
  errorText,
  postgresUnreachable,
  formatInt,
  formatSig,
  markdownTable,
  positiveNumber,
  writeResults,
} from './util.js';

const SECONDS = positiveNumber('LOAD_SECONDS', 60);
const WARMUP_SECONDS = positiveNumber('LOAD_WARMUP_SECONDS', 10);
const CONNECTIONS = Math.round(positiveNumber('LOAD_CONNECTIONS', 200));
const STORAGES = storageList('LOAD_STORAGES');
const BIG_ROWS = Math.round(positiveNumber('LOAD_BIG_ROWS', 1_000_000, true));
const BIG_STORAGES = storageList('LOAD_BIG_STORAGES');
/** The server's --page-size for part 2 (its default is 100: ten thousand OFFSET pages would take too long here). */
const BIG_PAGE_SIZE = Math.round(positiveNumber('LOAD_BIG_PAGE_SIZE', 1000));
const BIG_MAX_SECONDS = positiveNumber('LOAD_BIG_MAX_SECONDS', 600);
/** A file that gets every line the child processes print (for diagnosis: the JSON logs, --trace-gc lines). */
const SERVER_LOG = process.env['LOAD_SERVER_LOG'] || undefined;
/** Node options for the child processes (for diagnosis: `--trace-gc`, which NODE_OPTIONS may not carry). */
const NODE_ARGS = (process.env['LOAD_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
/** RSS at the end of the timed run may exceed RSS after the warm-up by this share at most. */
const RSS_GROWTH_LIMIT = 0.2;
/**
 * RSS "after the warm-up" and "at the end" are the medians of the samples of the last 5 s (one a second) and one
 * taken at that instant: under this load V8's heap alone swings by tens of MiB between full collections, so a single
 * reading lands anywhere in that cycle.
 */
const RSS_WINDOW_MS = 5000;
/** During the million-row read the server's peak RSS may exceed its RSS before by this much at most. */
const BIG_RSS_LIMIT_MIB = 100;
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const SITE = 'demo';
const BIG_SITE = 'big';
const MiB = 1024;

type Storage = 'sqlite' | 'postgres';

function storageList(name: string): Storage[] {
  const text = process.env[name];
  if (text === undefined || text === '') return ['sqlite', 'postgres'];
  if (text.trim().toLowerCase() === 'none') return [];
  const list = text.split(',').map((s) => s.trim().toLowerCase());
  for (const s of list) if (s !== 'sqlite' && s !== 'postgres') throw new Error(`${name}: unknown storage ${s}`);
  return list as Storage[];
}

const storageName = (s: Storage): string => (s === 'sqlite' ? 'SQLite' : 'PostgreSQL');
const mib = (kib: number): string => (kib / MiB).toFixed(1);
const loadAverage = (): string => (os.loadavg()[0] ?? Number.NaN).toFixed(2);
const percent = (share: number): string => `${(share * 100).toFixed(0)}%`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

// ── The server process ──────────────────────────────────────────────────────

/** What a child process said, kept short: the last lines, and the lines that look like errors. */
class LogTail {
  readonly last: string[] = [];
  readonly errors: string[] = [];
  errorCount = 0;
  lines = 0;

  add(line: string, fromStderr: boolean): void {
    this.lines++;
    this.last.push(line);
    if (this.last.length > 40) this.last.shift();
    // stderr is for trouble; JSON log lines on stdout carry a pino level (50 error, 60 fatal)
    const level = /"level":\s*(\d+)/.exec(line)?.[1];
    if ((fromStderr && line.trim() !== '') || (level !== undefined && Number(level) >= 50)) {
      this.errorCount++;
      if (this.errors.length < 20) this.errors.push(line.slice(0, 600));
    }
  }
}

interface Child {
  readonly process: ChildProcess;
  readonly pid: number;
  readonly log: LogTail;
  /** Set when the process has exited: its exit code or signal. */
  exit: string | undefined;
  /** Resolves when the process has exited. */
  readonly exited: Promise<void>;
  /** Full collections reported by --trace-gc: when (this process's clock) and the live heap after it, MiB. */
  readonly gcs: { at: number; liveMiB: number }[];
}

/** A --trace-gc line: `[pid:0x…]   5176 ms: Mark-Compact 81.3 (111.7) -> 26.1 (98.5) MB, …`. */
const TRACE_GC = /^\[\d+:0x[0-9a-f]+\]\s+[\d.]+ ms: /;
const FULL_GC = /Mark-Compact(?: \(reduce\))? [\d.]+ \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB/;

function startChild(args: readonly string[], onLine?: (line: string) => void, nodeArgs: string[] = []): Child {
  const child = spawn(process.execPath, [...nodeArgs, ...NODE_ARGS, CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`Could not start node ${CLI} ${args.join(' ')}`);
  const log = new LogTail();
  const record: Child = {
    process: child,
    pid: child.pid,
    log,
    exit: undefined,
    gcs: [],
    exited: new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        record.exit = signal === null ? `exit code ${code}` : `signal ${signal}`;
        resolve();
      });
    }),
  };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (TRACE_GC.test(line)) {
      const live = FULL_GC.exec(line)?.[1];
      if (live !== undefined) record.gcs.push({ at: performance.now(), liveMiB: Number(live) });
    } else log.add(line, false);
    if (SERVER_LOG !== undefined) appendFileSync(SERVER_LOG, `${child.pid} ${line}\n`);
    onLine?.(line);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    log.add(line, true);
    if (SERVER_LOG !== undefined) appendFileSync(SERVER_LOG, `${child.pid} stderr ${line}\n`);
  });
  return record;
}

/** Ends a child that this bench started: SIGTERM, then SIGKILL after 10 s. */
async function stopChild(child: Child): Promise<void> {
  if (child.exit !== undefined) return;
  child.process.kill('SIGTERM');
  const killed = await Promise.race([child.exited.then(() => false), sleep(10_000).then(() => true)]);
  if (killed) {
    child.process.kill('SIGKILL');
    await child.exited;
  }
}

/** A command of the CLI to its end: output, time, and the largest RSS seen (sampled every 500 ms). */
async function runCli(args: readonly string[]): Promise<{ stdout: string; ms: number; peakKiB: number }> {
  const stdout: string[] = [];
  const started = performance.now();
  const child = startChild(args, (line) => stdout.push(line));
  const sampler = new RssSampler(child.pid, 500);
  await child.exited;
  sampler.stop();
  const ms = performance.now() - started;
  if (child.exit !== 'exit code 0') {
    throw new Error(
      `odata-engine ${args.join(' ')} ended with ${child.exit}: ${child.log.last.slice(-5).join(' | ').slice(0, 600)}`,
    );
  }
  return { stdout: stdout.join('\n'), ms, peakKiB: sampler.maxKiB };
}

interface Server {
  readonly child: Child;
  readonly origin: string;
  /** The demo site's key (with --demo). */
  readonly key: string | undefined;
}

async function startServer(args: readonly string[], wantKey: boolean): Promise<Server> {
  let origin: string | undefined;
  let key: string | undefined;
  let ready: () => void = () => undefined;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  const child = startChild(
    ['serve', '--port', '0', '--host', '127.0.0.1', ...args],
    (line) => {
      origin ??= /odata-engine serving on (http:\/\/[^\s]+)/.exec(line)?.[1];
      key ??= /a new API key for it: (\S+)/.exec(line)?.[1];
      if (origin !== undefined && (key !== undefined || !wantKey)) ready();
    },
    // every full collection's live heap: whether the JavaScript heap grows, apart from how much RSS V8 keeps
    ['--trace-gc'],
  );
  const outcome = await Promise.race([
    isReady.then(() => 'ready' as const),
    child.exited.then(() => 'exited' as const),
    sleep(120_000).then(() => 'timeout' as const),
  ]);
  if (outcome !== 'ready') {
    await stopChild(child);
    throw new Error(
      `The server did not start (${outcome === 'exited' ? child.exit : 'no address after 120 s'}): ` +
        child.log.last.slice(-8).join(' | ').slice(0, 800),
    );
  }
  return { child, origin: origin!, key };
}

// ── RSS ─────────────────────────────────────────────────────────────────────

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the fields after the command name in parentheses: state is field 3, utime 14, stime 15
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** VmRSS and VmHWM (peak RSS) of a process, in KiB; undefined once it has gone. */
function memoryOf(pid: number): { rssKiB: number; hwmKiB: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

function rssOf(pid: number): number {
  const memory = memoryOf(pid);
  if (memory === undefined) throw new Error(`Process ${pid} has gone`);
  return memory.rssKiB;
}

/** Resets a process's VmHWM to its current RSS (Linux: `echo 5 > /proc/<pid>/clear_refs`); false if not allowed. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

class RssSampler {
  readonly samples: { atMs: number; kib: number }[] = [];
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number,
    intervalMs: number,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    const memory = memoryOf(this.pid);
    if (memory !== undefined) this.samples.push({ atMs: performance.now() - this.started, kib: memory.rssKiB });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The median of the samples of the last `ms` milliseconds and one taken now: RSS at this point of the load. */
  recentKiB(ms: number): number {
    this.sample();
    const now = performance.now() - this.started;
    const recent = this.samples
      .filter((s) => s.atMs >= now - ms)
      .map((s) => s.kib)
      .sort((a, b) => a - b);
    return recent[Math.floor((recent.length - 1) / 2)]!;
  }

  get maxKiB(): number {
    return this.samples.reduce((max, s) => Math.max(max, s.kib), 0);
  }

  /** The samples nearest to every `everyMs`, in MiB: a short timeline. */
  timeline(everyMs: number): string {
    const points: string[] = [];
    let next = 0;
    for (const s of this.samples) {
      if (s.atMs + 500 >= next) {
        points.push(mib(s.kib));
        next += everyMs;
      }
    }
    return points.join(', ');
  }
}

// ── PostgreSQL schemas ──────────────────────────────────────────────────────

interface Database {
  readonly label: string;
  /** The CLI's storage arguments: --data DIR or --database-url URL. */
  readonly args: readonly string[];
  readonly drop: () => Promise<void>;
}

async function createDatabase(storage: Storage, purpose: string): Promise<Database> {
  if (storage === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `odata-load-${purpose}-`));
    return {
      label: `SQLite files under ${dir}`,
      args: ['--data', dir],
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `odata_load_${purpose}_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    const version = ((await admin.query('SHOW server_version')).rows[0] as { server_version: string }).server_version;
    await admin.query(`CREATE SCHEMA "${schema}"`);
    return {
      label: `PostgreSQL ${version} on 127.0.0.1:5432, schema ${schema}`,
      args: ['--database-url', `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`],
      drop: async () => {
        const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 5000 });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}

// ── The mix ─────────────────────────────────────────────────────────────────

interface Request {
  readonly method: 'GET' | 'POST' | 'PATCH';
  /** Path and query string, percent-encoded. */
  readonly path: string;
  readonly body?: string;
}

/** A request of the mix and the name of its kind. */
interface Sent extends Request {
  readonly kind: string;
}

interface Kind {
  readonly name: string;
  readonly group: 'read' | 'write' | 'action';
  readonly weight: number;
  readonly make: (rng: Rng, n: number) => Request;
}

/** mulberry32: a small seeded PRNG, so that every run draws the same requests. */
class Rng {
  constructor(private state: number) {}

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
}

/** Keys of the demo site that the mix addresses. */
interface DemoKeys {
  readonly workOrders: string[];
  readonly purchaseRequests: string[];
  readonly purchaseOrders: string[];
  readonly poLines: { PONumber: string; LineNumber: number }[];
  readonly meters: string[];
}

/** A query string or path as a client sends it: spaces and quotes percent-encoded. */
function encode(text: string): string {
  return text.replace(/ /g, '%20').replace(/'/g, '%27');
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

const WO_STATUSES = ['REQ', 'APPR', 'SCHED', 'INPRG', 'HOLD', 'COMP', 'CLOSED', 'CAN'];
const PO_STATUSES = ['Draft', 'Approved', 'Issued', 'PartiallyReceived', 'Received', 'Closed'];
const PR_STATUSES = ['Draft', 'Submitted', 'Approved', 'Ordered'];
const PART_WORDS = ['Valve', 'Bearing', 'Filter', 'Belt', 'Seal', 'Motor', 'Pump', 'Fuse'];
/** A small attachment: 1 KiB of bytes, base64. */
const ATTACHMENT = randomBytes(1024).toString('base64');

function buildMix(root: string, keys: DemoKeys): Kind[] {
  const get = (path: string): Request => ({ method: 'GET', path: `${root}/${encode(path)}` });
  const send = (method: 'POST' | 'PATCH', path: string, body: Record<string, unknown>): Request => ({
    method,
    path: `${root}/${encode(path)}`,
    body: JSON.stringify(body),
  });
  const wo = (rng: Rng) => literal(rng.pick(keys.workOrders));
  const today = (): string => new Date().toISOString();
  return [
    // reads: 70%
    {
      name: 'GET WorkOrders $filter $orderby $top $select',
      group: 'read',
      weight: 10,
      make: (rng) =>
        get(
          `WorkOrders?$filter=Status eq '${rng.pick(WO_STATUSES)}' and Priority le ${rng.int(1, 5)}` +
            '&$orderby=RequestedDate desc&$top=20&$select=WorkOrderID,Description,Status,Priority,RequestedDate',
        ),
    },
    {
      name: 'GET WorkOrders date and Boolean $filter',
      group: 'read',
      weight: 4,
      make: (rng) =>
        get(
          `WorkOrders?$filter=RequestedDate ge 2025-0${rng.int(1, 9)}-01T00:00:00Z and IsOpen eq true` +
            '&$orderby=Priority,RequestedDate desc&$top=25',
        ),
    },
    {
      name: 'GET POLineItems $filter $orderby $top',
      group: 'read',
      weight: 8,
      make: (rng) =>
        get(
          `POLineItems?$filter=UnitPrice gt ${rng.pick([10, 50, 100, 500])} and Status eq 'Open'&$orderby=DueDate desc&$top=20`,
        ),
    },
    {
      name: 'GET Parts contains() $select',
      group: 'read',
      weight: 5,
      make: (rng) =>
        get(
          `Parts?$filter=contains(Description,'${rng.pick(PART_WORDS)}')&$select=PartID,Description,UnitCost,QuantityOnHand&$orderby=PartID&$top=25`,
        ),
    },
    {
      name: 'GET PurchaseOrders $filter $count=true',
      group: 'read',
      weight: 5,
      make: (rng) =>
        get(`PurchaseOrders?$filter=Status eq '${rng.pick(PO_STATUSES)}'&$orderby=OrderDate desc&$top=10&$count=true`),
    },
    {
      name: 'GET Accounts $filter IsActive',
      group: 'read',
      weight: 3,
      make: () => get('Accounts?$filter=IsActive eq true&$orderby=Account&$top=50'),
    },
    {
      name: 'GET PRLineItems of a request',
      group: 'read',
      weight: 4,
      make: (rng) =>
        get(
          `PRLineItems?$filter=PRNumber eq ${literal(rng.pick(keys.purchaseRequests))}&$orderby=LineNumber desc&$top=10`,
        ),
    },
    {
      name: "GET WorkOrders('…') by key",
      group: 'read',
      weight: 8,
      make: (rng) => get(`WorkOrders(${wo(rng)})`),
    },
    {
      name: 'GET POLineItems(PONumber=…,LineNumber=…) by key',
      group: 'read',
      weight: 4,
      make: (rng) => {
        const line = rng.pick(keys.poLines);
        return get(`POLineItems(PONumber=${literal(line.PONumber)},LineNumber=${line.LineNumber})`);
      },
    },
    {
      name: "GET WorkOrders('…')/Comments",
      group: 'read',
      weight: 7,
      make: (rng) => get(`WorkOrders(${wo(rng)})/Comments?$orderby=CommentID desc&$top=20`),
    },
    {
      name: "GET WorkOrders('…')/ActualLabor",
      group: 'read',
      weight: 3,
      make: (rng) => get(`WorkOrders(${wo(rng)})/ActualLabor`),
    },
    {
      name: "GET MeterReadings('…')/History",
      group: 'read',
      weight: 3,
      make: (rng) => get(`MeterReadings(${literal(rng.pick(keys.meters))})/History?$top=10`),
    },
    {
      name: 'GET …/$count',
      group: 'read',
      weight: 6,
      make: (rng) =>
        rng.next() < 0.5
          ? get(`PurchaseRequests/$count?$filter=Status eq '${rng.pick(PR_STATUSES)}'`)
          : get(`WorkOrders/$count?$filter=IsOpen eq true`),
    },
    // writes: 25%
    {
      name: 'POST PurchaseRequests',
      group: 'write',
      weight: 4,
      make: (rng, n) =>
        send('POST', 'PurchaseRequests', {
          Description: `Load test request ${n}`,
          RequestedBy: 'loadbench',
          Priority: rng.int(1, 5),
          RequiredDate: '2026-03-01',
          WorkOrderID: rng.pick(keys.workOrders),
          Notes: 'created by bench/load.bench.ts',
        }),
    },
    {
      name: 'POST PRLineItems',
      group: 'write',
      weight: 5,
      make: (rng, n) =>
        send('POST', 'PRLineItems', {
          PRNumber: rng.pick(keys.purchaseRequests),
          Description: `Gasket kit ${n}`,
          Quantity: rng.int(1, 20),
          UnitOfMeasure: 'EA',
          EstimatedUnitCost: 12.5,
        }),
    },
    {
      name: 'POST POLineItems',
      group: 'write',
      weight: 3,
      make: (rng, n) =>
        send('POST', 'POLineItems', {
          PONumber: rng.pick(keys.purchaseOrders),
          Description: `Bearing 6204 ${n}`,
          QuantityOrdered: rng.int(1, 12),
          UnitOfMeasure: 'EA',
          UnitPrice: '19.99',
          DueDate: '2026-02-15',
        }),
    },
    {
      name: 'POST POAttachments (1 KiB)',
      group: 'write',
      weight: 1,
      make: (rng, n) =>
        send('POST', 'POAttachments', {
          PONumber: rng.pick(keys.purchaseOrders),
          FileName: `quote-${n}.pdf`,
          ContentType: 'application/pdf',
          DocumentType: 'Quote',
          ContentBase64: ATTACHMENT,
        }),
    },
    {
      name: "PATCH PurchaseRequests('…')",
      group: 'write',
      weight: 4,
      make: (rng, n) =>
        send('PATCH', `PurchaseRequests(${literal(rng.pick(keys.purchaseRequests))})`, {
          Priority: rng.int(1, 5),
          Notes: `touched ${n}`,
        }),
    },
    {
      name: 'PATCH PurchaseOrders (key in the body)',
      group: 'write',
      weight: 2,
      make: (rng, n) =>
        send('PATCH', 'PurchaseOrders', {
          PONumber: rng.pick(keys.purchaseOrders),
          Notes: `touched ${n}`,
        }),
    },
    {
      name: 'PATCH POLineItems(…)',
      group: 'write',
      weight: 2,
      make: (rng) => {
        const line = rng.pick(keys.poLines);
        return send('PATCH', `POLineItems(PONumber=${literal(line.PONumber)},LineNumber=${line.LineNumber})`, {
          DueDate: `2026-0${rng.int(2, 9)}-1${rng.int(0, 9)}`,
        });
      },
    },
    {
      name: 'POST MeterReadings',
      group: 'write',
      weight: 4,
      make: (rng) =>
        send('POST', 'MeterReadings', {
          MeterID: rng.pick(keys.meters),
          MeterReading: rng.int(1000, 99999) / 10,
          ReadingDate: today(),
          Event: 'bench',
        }),
    },
    // actions: 5%
    {
      name: "POST WorkOrders('…')/AddComment",
      group: 'action',
      weight: 5,
      make: (rng, n) =>
        send('POST', `WorkOrders(${wo(rng)})/AddComment`, {
          Comment: `Checked under load (${n})`,
          Username: 'loadbench',
        }),
    },
  ];
}

/** Draws requests from the mix by weight: kind of each Sent is the kind's name. */
function drawer(mix: readonly Kind[], seed: number): () => Sent {
  const rng = new Rng(seed);
  const total = mix.reduce((sum, k) => sum + k.weight, 0);
  let n = 0;
  return () => {
    let r = rng.next() * total;
    let kind = mix[mix.length - 1]!;
    for (const k of mix) {
      r -= k.weight;
      if (r < 0) {
        kind = k;
        break;
      }
    }
    return { ...kind.make(rng, ++n), kind: kind.name };
  };
}

async function readKeys(origin: string, key: string): Promise<DemoKeys> {
  const rows = async (query: string): Promise<Record<string, unknown>[]> => {
    const response = await fetch(`${origin}/${SITE}/ODataApi/v1/${encode(query)}`, { headers: { API_KEY: key } });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`GET ${query} answered ${response.status}: ${text.slice(0, 300)}`);
    const value = (JSON.parse(text) as { value: Record<string, unknown>[] }).value;
    if (value.length === 0) throw new Error(`GET ${query} returned no rows: the demo site is empty`);
    return value;
  };
  return {
    workOrders: (await rows('WorkOrders?$select=WorkOrderID&$top=100')).map((r) => String(r['WorkOrderID'])),
    purchaseRequests: (await rows('PurchaseRequests?$select=PRNumber&$top=100')).map((r) => String(r['PRNumber'])),
    purchaseOrders: (await rows('PurchaseOrders?$select=PONumber&$top=100')).map((r) => String(r['PONumber'])),
    poLines: (await rows('POLineItems?$select=PONumber,LineNumber&$top=100')).map((r) => ({
      PONumber: String(r['PONumber']),
      LineNumber: Number(r['LineNumber']),
    })),
    meters: (await rows('MeterReadings?$select=MeterID&$top=100')).map((r) => String(r['MeterID'])),
  };
}

function headersFor(key: string, sent: Request): Record<string, string> {
  return sent.body === undefined ? { API_KEY: key } : { API_KEY: key, 'Content-Type': 'application/json' };
}

/** Every kind once, in order; each must answer 2xx. Returns the problems (empty when the mix is sound). */
async function preflight(origin: string, key: string, mix: readonly Kind[]): Promise<string[]> {
  const rng = new Rng(7);
  const problems: string[] = [];
  for (const kind of mix) {
    const sent = kind.make(rng, 0);
    const response = await fetch(`${origin}${sent.path}`, {
      method: sent.method,
      headers: headersFor(key, sent),
      ...(sent.body === undefined ? {} : { body: sent.body }),
    });
    const text = await response.text();
    if (response.status < 200 || response.status >= 300) {
      problems.push(
        `${kind.name}: ${sent.method} ${sent.path}${sent.body === undefined ? '' : ` ${sent.body.slice(0, 300)}`} → ` +
          `${response.status} ${text.slice(0, 400)}`,
      );
    }
  }
  return problems;
}

// ── Driving the load ────────────────────────────────────────────────────────

interface KindStats {
  readonly name: string;
  readonly group: Kind['group'];
  requests: number;
  s2xx: number;
  s4xx: number;
  s5xx: number;
  other: number;
  readonly latencies: number[];
}

interface Failure {
  readonly sent: Sent;
  readonly status: number;
  readonly response: string;
}

interface LoadResult {
  readonly seconds: number;
  readonly requests: number;
  readonly reqPerSec: number;
  /** autocannon's latencies (2xx answers), ms. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly s2xx: number;
  readonly s3xx: number;
  readonly s4xx: number;
  readonly s5xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly errorCodes: Map<string, number>;
  readonly statusCodes: Map<number, number>;
  readonly kinds: KindStats[];
  readonly failures: Failure[];
  /** Requests that took a second or more: what, how long, and when they were sent (s into the run). */
  readonly slowest: { sent: Sent; ms: number; atS: number }[];
  readonly loadAverage: string;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function drive(origin: string, key: string, mix: readonly Kind[], seconds: number, seed: number) {
  const next = drawer(mix, seed);
  const kinds = new Map<string, KindStats>(
    mix.map((k) => [
      k.name,
      { name: k.name, group: k.group, requests: 0, s2xx: 0, s4xx: 0, s5xx: 0, other: 0, latencies: [] },
    ]),
  );
  const failures: Failure[] = [];
  const failuresByKind = new Map<string, number>();
  const slowest: LoadResult['slowest'] = [];
  const started = performance.now();
  const errorCodes = new Map<string, number>();
  const statusCodes = new Map<number, number>();
  /** The request whose answer onResponse saw last: autocannon's 'response' event follows it at once. */
  let answered: Sent | undefined;
  const url = new URL(origin);
  const load = loadAverage();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: origin,
        connections: CONNECTIONS,
        duration: seconds,
        timeout: 10,
        requests: [
          {
            setupRequest: (request, context) => {
              const sent = next();
              (context as { sent?: Sent }).sent = sent;
              // a headers object of its own: autocannon adds Content-Length to it
              return {
                ...request,
                method: sent.method,
                path: sent.path,
                headers: { host: url.host, ...headersFor(key, sent) },
                body: sent.body ?? '',
              };
            },
            onResponse: (status, body, context) => {
              const sent = (context as { sent?: Sent }).sent;
              answered = sent;
              statusCodes.set(status, (statusCodes.get(status) ?? 0) + 1);
              if (sent === undefined) return;
              const stats = kinds.get(sent.kind)!;
              stats.requests++;
              if (status >= 200 && status < 300) stats.s2xx++;
              else if (status >= 400 && status < 500) stats.s4xx++;
              else if (status >= 500) stats.s5xx++;
              else stats.other++;
              if (status >= 300) {
                const seen = failuresByKind.get(sent.kind) ?? 0;
                if (seen < 3) {
                  failuresByKind.set(sent.kind, seen + 1);
                  failures.push({ sent, status, response: body.slice(0, 500) });
                }
              }
            },
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => (error ? reject(error) : resolve(result)),
    );
    // the typings name three arguments; autocannon passes the client first
    (instance as NodeJS.EventEmitter).on(
      'response',
      (_client: unknown, _status: number, _bytes: number, ms: number) => {
        if (answered !== undefined) {
          kinds.get(answered.kind)!.latencies.push(ms);
          if (ms >= 1000 && slowest.length < 200)
            slowest.push({ sent: answered, ms, atS: (performance.now() - started) / 1000 - ms / 1000 });
        }
        answered = undefined;
      },
    );
    instance.on('reqError', (error: unknown) => {
      const code = (error as { code?: string } | null)?.code ?? errorText(error, 60);
      errorCodes.set(code, (errorCodes.get(code) ?? 0) + 1);
    });
  });
  for (const stats of kinds.values()) stats.latencies.sort((a, b) => a - b);
  const outcome: LoadResult = {
    seconds: result.duration,
    requests: result.requests.total,
    reqPerSec: result.requests.total / result.duration,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    s2xx: result['2xx'],
    s3xx: result['3xx'],
    s4xx: result['4xx'],
    s5xx: result['5xx'],
    errors: result.errors,
    timeouts: result.timeouts,
    errorCodes,
    statusCodes,
    kinds: [...kinds.values()],
    failures,
    slowest: slowest.sort((a, b) => b.ms - a.ms),
    loadAverage: load,
  };
  return outcome;
}

function describeLoad(l: LoadResult): string {
  return (
    `${formatInt(l.reqPerSec)} req/s, p50 ${l.p50} ms, p90 ${l.p90} ms, p99 ${l.p99} ms, max ${l.max} ms; ` +
    `${formatInt(l.requests)} requests: 2xx ${l.s2xx}, 3xx ${l.s3xx}, 4xx ${l.s4xx}, 5xx ${l.s5xx}; ` +
    `socket errors ${l.errors} (timeouts ${l.timeouts})${l.errorCodes.size > 0 ? ` ${describeCodes(l.errorCodes)}` : ''}; ` +
    `load average before ${l.loadAverage}`
  );
}

function describeSlowest(l: LoadResult): string {
  if (l.slowest.length === 0) return 'no request of the timed run took a second or more.';
  const when = l.slowest.map((x) => x.atS);
  return (
    `${l.slowest.length}${l.slowest.length === 200 ? '+' : ''} requests of the timed run took a second or more, sent ` +
    `between ${formatSig(Math.min(...when))} s and ${formatSig(Math.max(...when))} s into it; the slowest: ` +
    l.slowest
      .slice(0, 5)
      .map((x) => `${x.sent.kind} ${formatInt(x.ms)} ms (sent at ${formatSig(x.atS)} s)`)
      .join('; ') +
    '.'
  );
}

function describeCodes(codes: ReadonlyMap<string | number, number>): string {
  return [...codes]
    .sort((a, b) => b[1] - a[1])
    .map(([code, n]) => `${code}×${n}`)
    .join(', ');
}

/** The live heap after full collections: the last of the warm-up, and the first, last, least and most of the run. */
function describeHeap(heap: { readonly warmup: readonly number[]; readonly run: readonly number[] }): string {
  if (heap.run.length === 0) return 'no full collection during the timed run';
  const f = (x: number | undefined): string => (x === undefined ? '–' : x.toFixed(1));
  return (
    `live JS heap after each full GC: ${f(heap.warmup[heap.warmup.length - 1])} MiB at the end of the warm-up; ` +
    `during the run ${f(heap.run[0])} first, ${f(heap.run[heap.run.length - 1])} last, ` +
    `${f(Math.min(...heap.run))}–${f(Math.max(...heap.run))} MiB over ${heap.run.length} collections`
  );
}

interface MixOutcome {
  readonly storage: Storage;
  readonly label: string;
  readonly warmup: LoadResult;
  readonly run: LoadResult;
  /** RSS after the warm-up and at the end: medians of the samples of the last RSS_WINDOW_MS, and the single readings. */
  readonly rssWarmKiB: number;
  readonly rssWarmPointKiB: number;
  readonly rssEndPointKiB: number;
  /** The live heap after each full collection (MiB) during the warm-up and during the timed run. */
  readonly heap: { readonly warmup: number[]; readonly run: number[] };
  readonly rssEndKiB: number;
  readonly rssMaxKiB: number;
  readonly rssIdleKiB: number;
  readonly rssStartKiB: number;
  readonly peakFromKernel: boolean;
  readonly timeline: string;
  readonly serverErrors: string[];
  readonly serverErrorCount: number;
  readonly serverExit: string | undefined;
  /** CPU used during the timed run, in cores: the server process, and this process (autocannon). */
  readonly serverCpu: number;
  readonly benchCpu: number;
}

async function mixedLoad(storage: Storage): Promise<MixOutcome> {
  const db = await createDatabase(storage, 'mix');
  try {
    const server = await startServer([...db.args, '--demo', '--log-level', 'warn', '--rate-limit', '0'], true);
    try {
      const key = server.key!;
      const pid = server.child.pid;
      const rssStartKiB = rssOf(pid);
      const keys = await readKeys(server.origin, key);
      const mix = buildMix(`/${SITE}/ODataApi/v1`, keys);
      console.log(
        `  ${db.label}; server pid ${pid} at ${server.origin}, RSS ${mib(rssStartKiB)} MiB; demo site: ` +
          `${keys.workOrders.length} work orders, ${keys.purchaseRequests.length} purchase requests, ` +
          `${keys.purchaseOrders.length} purchase orders, ${keys.meters.length} meters`,
      );
      const problems = await preflight(server.origin, key, mix);
      if (problems.length > 0) {
        throw new Error(
          `The mix is broken: ${problems.length} kinds of request failed:\n    ${problems.join('\n    ')}`,
        );
      }
      console.log(
        `  every kind of request answered 2xx once; warm-up ${WARMUP_SECONDS} s, ${CONNECTIONS} connections …`,
      );
      const sampler = new RssSampler(pid, 1000);
      const warmup = await drive(server.origin, key, mix, WARMUP_SECONDS, 1);
      console.log(`    ${describeLoad(warmup)}`);
      const rssWarmPointKiB = rssOf(pid);
      const rssWarmKiB = sampler.recentKiB(RSS_WINDOW_MS);
      const runStartedAt = performance.now();
      const peakFromKernel = resetPeak(pid);
      const runSampler = new RssSampler(pid, 1000);
      console.log(
        `  RSS after the warm-up ${mib(rssWarmKiB)} MiB; timed run ${SECONDS} s, ${CONNECTIONS} connections …`,
      );
      const serverCpuBefore = cpuSecondsOf(pid);
      const benchCpuBefore = process.cpuUsage();
      const runStarted = performance.now();
      const run = await drive(server.origin, key, mix, SECONDS, 2);
      const rssEndPointKiB = rssOf(pid);
      const rssEndKiB = runSampler.recentKiB(RSS_WINDOW_MS);
      const runEndedAt = performance.now();
      const wallS = (performance.now() - runStarted) / 1000;
      const serverCpu = (cpuSecondsOf(pid) - serverCpuBefore) / wallS;
      const benchUsage = process.cpuUsage(benchCpuBefore);
      const benchCpu = (benchUsage.user + benchUsage.system) / 1e6 / wallS;
      runSampler.stop();
      const memory = memoryOf(pid)!;
      const rssMaxKiB = peakFromKernel ? memory.hwmKiB : Math.max(runSampler.maxKiB, rssEndPointKiB);
      console.log(`    ${describeLoad(run)}`);
      console.log(
        `  CPU during the timed run: server ${percent(serverCpu)} of a core, autocannon (this process) ${percent(benchCpu)}`,
      );
      await sleep(5000);
      const rssIdleKiB = rssOf(pid);
      sampler.stop();
      const gcs = server.child.gcs;
      const heap = {
        warmup: gcs.filter((g) => g.at < runStartedAt).map((g) => g.liveMiB),
        run: gcs.filter((g) => g.at >= runStartedAt && g.at <= runEndedAt).map((g) => g.liveMiB),
      };
      console.log(
        `  RSS (median of the last ${RSS_WINDOW_MS / 1000} s): after warm-up ${mib(rssWarmKiB)} MiB, end ${mib(rssEndKiB)} MiB ` +
          `(×${(rssEndKiB / rssWarmKiB).toFixed(2)}); at those instants ${mib(rssWarmPointKiB)} and ${mib(rssEndPointKiB)} MiB; ` +
          `max ${mib(rssMaxKiB)} MiB, 5 s later ${mib(rssIdleKiB)} MiB; ${describeHeap(heap)}`,
      );
      return {
        storage,
        label: db.label,
        warmup,
        run,
        rssStartKiB,
        rssWarmKiB,
        rssEndKiB,
        rssWarmPointKiB,
        rssEndPointKiB,
        heap,
        rssMaxKiB,
        rssIdleKiB,
        peakFromKernel,
        timeline: sampler.timeline(5000),
        serverErrors: server.child.log.errors,
        serverErrorCount: server.child.log.errorCount,
        serverExit: server.child.exit,
        serverCpu,
        benchCpu,
      };
    } finally {
      await stopChild(server.child);
    }
  } finally {
    await db.drop();
  }
}

// ── A million rows ──────────────────────────────────────────────────────────

interface BigOutcome {
  readonly storage: Storage;
  readonly label: string;
  readonly seedRecords: number;
  readonly seedMs: number;
  readonly seedPeakKiB: number;
  readonly pageSize: number;
  readonly pages: number;
  readonly rows: number;
  readonly bytes: number;
  readonly readMs: number;
  readonly complete: boolean;
  readonly inOrder: boolean;
  readonly firstPagesMs: number;
  readonly lastPagesMs: number;
  readonly slowestPageMs: number;
  /** Mean page time by tenth of the read. */
  readonly tenths: number[];
  readonly rssBeforeKiB: number;
  readonly rssMaxKiB: number;
  readonly rssAfterKiB: number;
  readonly timeline: string;
  readonly serverErrors: string[];
  readonly serverExit: string | undefined;
  readonly note: string | undefined;
  /** What a read with a $top far beyond the page size answered. */
  readonly topCheck: string;
}

/**
 * One read with a large $top: the server answers one page and a next link for the rest (and refuses a $top beyond
 * its limit). Also opens the site's store and plans the first query before RSS counts.
 */
async function largeTop(root: string, key: string, pageSize: number): Promise<string> {
  const said: string[] = [];
  for (const top of [10_000, BIG_ROWS]) {
    const response = await fetch(`${root}/Parts?$top=${top}`, { headers: { API_KEY: key } });
    const text = await response.text();
    if (response.status === 200) {
      const body = JSON.parse(text) as { value: unknown[]; '@odata.nextLink'?: string };
      const link = body['@odata.nextLink'];
      said.push(
        `$top=${top}: 200 with ${body.value.length} rows (page size ${pageSize}) and ` +
          (link === undefined ? 'no next link' : `a next link to ${link.slice(link.indexOf('?'))}`),
      );
    } else {
      const error = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      said.push(`$top=${top}: ${response.status} ${error?.code ?? ''} (${error?.message ?? text.slice(0, 120)})`);
    }
  }
  return `Parts?${said.join('; Parts?')}`;
}

async function millionRows(storage: Storage): Promise<BigOutcome> {
  const db = await createDatabase(storage, 'big');
  try {
    await runCli(['sites', 'create', BIG_SITE, ...db.args]);
    console.log(`  ${db.label}: seeding ${formatInt(BIG_ROWS)} rows per large set (load average ${loadAverage()}) …`);
    const seed = await runCli(['seed', BIG_SITE, '--rows', String(BIG_ROWS), ...db.args]);
    const seedRecords = Number(/with (\d+) records/.exec(seed.stdout)?.[1] ?? NaN);
    console.log(
      `    ${formatInt(seedRecords)} records in ${formatSig(seed.ms / 1000)} s ` +
        `(${formatInt(seedRecords / (seed.ms / 1000))} rows/s), seed process peak RSS ${mib(seed.peakKiB)} MiB`,
    );
    const created = await runCli(['keys', 'create', BIG_SITE, '--label', 'load bench', ...db.args]);
    const key = created.stdout.trim().split('\n').pop()!.trim();
    const pageSize = BIG_PAGE_SIZE;
    const server = await startServer(
      [...db.args, '--log-level', 'warn', '--rate-limit', '0', '--page-size', String(pageSize)],
      false,
    );
    try {
      const pid = server.child.pid;
      const root = `${server.origin}/${BIG_SITE}/ODataApi/v1`;
      const topCheck = await largeTop(root, key, pageSize);
      console.log(`  ${topCheck}`);
      await sleep(1000);
      const rssBeforeKiB = rssOf(pid);
      const peakFromKernel = resetPeak(pid);
      const sampler = new RssSampler(pid, 500);
      console.log(
        `  reading Parts and every @odata.nextLink, page size ${pageSize} (load average ${loadAverage()}); ` +
          `server RSS before ${mib(rssBeforeKiB)} MiB …`,
      );
      const pageMs: number[] = [];
      let url: string | undefined = `${root}/Parts`;
      let rows = 0;
      let bytes = 0;
      let previous = '';
      let inOrder = true;
      let note: string | undefined;
      const started = performance.now();
      let reported = started;
      while (url !== undefined) {
        if (performance.now() - started > BIG_MAX_SECONDS * 1000) {
          note = `stopped after ${BIG_MAX_SECONDS} s (LOAD_BIG_MAX_SECONDS) at page ${pageMs.length}`;
          break;
        }
        const t0 = performance.now();
        const response = await fetch(url, { headers: { API_KEY: key } });
        const text = await response.text();
        pageMs.push(performance.now() - t0);
        if (response.status !== 200) {
          note = `page ${pageMs.length} (${url}) answered ${response.status}: ${text.slice(0, 300)}`;
          break;
        }
        bytes += Buffer.byteLength(text);
        const body = JSON.parse(text) as { value: { PartID: string }[]; '@odata.nextLink'?: string };
        if (body.value.length > pageSize) {
          note = `page ${pageMs.length} has ${body.value.length} rows, more than the page size ${pageSize}`;
          inOrder = false;
        }
        for (const row of body.value) {
          if (!(row.PartID > previous)) inOrder = false;
          previous = row.PartID;
        }
        rows += body.value.length;
        url = body['@odata.nextLink'];
        if (performance.now() - reported > 15_000) {
          reported = performance.now();
          const recent = pageMs.slice(-20);
          console.log(
            `    ${formatInt(rows)} rows, ${pageMs.length} pages, ${formatSig((reported - started) / 1000)} s; ` +
              `last pages ${formatSig(recent.reduce((a, b) => a + b, 0) / recent.length)} ms each; ` +
              `server RSS ${mib(rssOf(pid))} MiB`,
          );
        }
      }
      const readMs = performance.now() - started;
      const rssEndKiB = rssOf(pid);
      sampler.stop();
      const rssMaxKiB = peakFromKernel ? memoryOf(pid)!.hwmKiB : Math.max(sampler.maxKiB, rssEndKiB);
      await sleep(2000);
      const rssAfterKiB = rssOf(pid);
      const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
      const edge = Math.max(1, Math.min(10, Math.floor(pageMs.length / 10)));
      const tenths = Array.from({ length: 10 }, (_, i) =>
        mean(pageMs.slice(Math.floor((i * pageMs.length) / 10), Math.floor(((i + 1) * pageMs.length) / 10))),
      );
      const outcome: BigOutcome = {
        storage,
        label: db.label,
        seedRecords,
        seedMs: seed.ms,
        seedPeakKiB: seed.peakKiB,
        pageSize,
        pages: pageMs.length,
        rows,
        bytes,
        readMs,
        complete: rows === BIG_ROWS && url === undefined && note === undefined,
        inOrder,
        firstPagesMs: mean(pageMs.slice(0, edge)),
        lastPagesMs: mean(pageMs.slice(-edge)),
        slowestPageMs: Math.max(...pageMs),
        tenths,
        rssBeforeKiB,
        rssMaxKiB,
        rssAfterKiB,
        timeline: sampler.timeline(10_000),
        serverErrors: server.child.log.errors,
        serverExit: server.child.exit,
        note,
        topCheck,
      };
      console.log(
        `    ${formatInt(rows)} rows (${formatInt(bytes / 2 ** 20)} MiB of JSON) in ${pageMs.length} pages, ` +
          `${formatSig(readMs / 1000)} s; first ${edge} pages ${formatSig(outcome.firstPagesMs)} ms each, last ${edge} ` +
          `${formatSig(outcome.lastPagesMs)} ms; server RSS before ${mib(rssBeforeKiB)} MiB, max ${mib(rssMaxKiB)} MiB, ` +
          `after ${mib(rssAfterKiB)} MiB${note === undefined ? '' : `; ${note}`}`,
      );
      return outcome;
    } finally {
      await stopChild(server.child);
    }
  } finally {
    await db.drop();
  }
}

// ── Report ──────────────────────────────────────────────────────────────────

function verdicts(mixes: readonly MixOutcome[], bigs: readonly BigOutcome[], errors: readonly string[]): string[] {
  const fails: string[] = [...errors];
  for (const m of mixes) {
    const name = storageName(m.storage);
    for (const [phase, l] of [
      ['warm-up', m.warmup],
      ['timed run', m.run],
    ] as const) {
      if (l.s5xx > 0) fails.push(`${name} ${phase}: ${l.s5xx} answers 5xx`);
      if (l.errors > 0) fails.push(`${name} ${phase}: ${l.errors} socket errors (${describeCodes(l.errorCodes)})`);
      if (l.s4xx > 0) fails.push(`${name} ${phase}: ${l.s4xx} answers 4xx (the mix sends only valid requests)`);
    }
    const growth = m.rssEndKiB / m.rssWarmKiB - 1;
    if (growth > RSS_GROWTH_LIMIT)
      fails.push(
        `${name}: RSS grew ${(growth * 100).toFixed(0)}% during the timed run (${mib(m.rssWarmKiB)} → ${mib(m.rssEndKiB)} MiB; limit ${RSS_GROWTH_LIMIT * 100}%)`,
      );
    if (m.serverExit !== undefined) fails.push(`${name}: the server exited during the run (${m.serverExit})`);
  }
  for (const b of bigs) {
    const name = storageName(b.storage);
    if (!b.complete)
      fails.push(
        `${name}: the million-row read is incomplete (${formatInt(b.rows)} rows; ${b.note ?? 'link chain ended early'})`,
      );
    if (!b.inOrder)
      fails.push(`${name}: the million-row read returned rows out of key order, twice, or pages over the page size`);
    const growthMiB = (b.rssMaxKiB - b.rssBeforeKiB) / MiB;
    if (growthMiB > BIG_RSS_LIMIT_MIB)
      fails.push(
        `${name}: server RSS rose ${growthMiB.toFixed(0)} MiB during the million-row read (limit ${BIG_RSS_LIMIT_MIB} MiB)`,
      );
  }
  return fails;
}

function mixTable(mixes: readonly MixOutcome[]): string {
  const header = [
    'database',
    'req/s',
    'p50 ms',
    'p90 ms',
    'p99 ms',
    'max ms',
    'requests',
    '2xx',
    '4xx',
    '5xx',
    'socket errors',
    'RSS after warm-up MiB',
    'RSS end MiB',
    'RSS max MiB',
    'end ÷ warm-up',
  ];
  const rows = mixes.map((m) => [
    storageName(m.storage),
    formatInt(m.run.reqPerSec),
    formatSig(m.run.p50),
    formatSig(m.run.p90),
    formatSig(m.run.p99),
    formatSig(m.run.max),
    formatInt(m.run.requests),
    formatInt(m.run.s2xx),
    String(m.run.s4xx),
    String(m.run.s5xx),
    m.run.timeouts > 0 ? `${m.run.errors} (${m.run.timeouts} timeouts)` : String(m.run.errors),
    mib(m.rssWarmKiB),
    mib(m.rssEndKiB),
    mib(m.rssMaxKiB),
    `${(m.rssEndKiB / m.rssWarmKiB).toFixed(2)} ${m.rssEndKiB / m.rssWarmKiB - 1 <= RSS_GROWTH_LIMIT ? '✓' : '✗'}`,
  ]);
  return markdownTable(header, rows, ['left']);
}

function kindsTable(mixes: readonly MixOutcome[], mix: readonly Kind[]): string {
  const total = mix.reduce((sum, k) => sum + k.weight, 0);
  const header = [
    'request',
    'share',
    ...mixes.flatMap((m) => {
      const n = storageName(m.storage);
      return [`${n} requests`, '2xx / 4xx / 5xx', 'p50 ms', 'p99 ms'];
    }),
  ];
  const rows = mix.map((k) => [
    k.name,
    `${((k.weight / total) * 100).toFixed(0)}%`,
    ...mixes.flatMap((m) => {
      const s = m.run.kinds.find((x) => x.name === k.name)!;
      return [
        formatInt(s.requests),
        `${s.s2xx} / ${s.s4xx} / ${s.s5xx}`,
        formatSig(percentile(s.latencies, 50)),
        formatSig(percentile(s.latencies, 99)),
      ];
    }),
  ]);
  return markdownTable(header, rows, ['left']);
}

/**
 * What OFFSET costs: the time a page gains per skipped row (last pages against first), and what reading the same rows
 * would take at the server's default page size of 100, where every page pays for the rows before it.
 */
function offsetCost(b: BigOutcome): string {
  if (b.pages < 20) return 'too few pages to tell what OFFSET costs.';
  const skippedAtEnd = b.rows - (b.pageSize * Math.min(10, Math.floor(b.pages / 10))) / 2;
  const msPerRow = (b.lastPagesMs - b.firstPagesMs) / skippedAtEnd;
  const pages100 = b.rows / 100;
  // page i skips i × 100 rows: Σ over the pages is rows² / (2 × 100)
  const estimate100 = (pages100 * b.firstPagesMs * 100) / b.pageSize + (msPerRow * b.rows * b.rows) / 200;
  return (
    `deep pages pay for the rows they skip: about ${formatSig(msPerRow * 1e6)} µs more per 1,000 rows of $skip ` +
    `(${formatSig(b.lastPagesMs / b.firstPagesMs)}× the first pages' time at the end); read in pages of 100 (the ` +
    `server's default), the same ${formatInt(b.rows)} rows would take roughly ${formatInt(estimate100 / 1000)} s.`
  );
}

function bigTable(bigs: readonly BigOutcome[]): string {
  const header = [
    'database',
    'seeded records',
    'seed s',
    'page size',
    'pages',
    'rows read',
    'read s',
    'rows/s',
    'first pages ms',
    'last pages ms',
    'RSS before MiB',
    'RSS max MiB',
    'RSS after MiB',
    'max − before',
  ];
  const rows = bigs.map((b) => [
    storageName(b.storage),
    formatInt(b.seedRecords),
    formatSig(b.seedMs / 1000),
    formatInt(b.pageSize),
    formatInt(b.pages),
    formatInt(b.rows),
    formatSig(b.readMs / 1000),
    formatInt(b.rows / (b.readMs / 1000)),
    formatSig(b.firstPagesMs),
    formatSig(b.lastPagesMs),
    mib(b.rssBeforeKiB),
    mib(b.rssMaxKiB),
    mib(b.rssAfterKiB),
    `${mib(b.rssMaxKiB - b.rssBeforeKiB)} MiB ${(b.rssMaxKiB - b.rssBeforeKiB) / MiB <= BIG_RSS_LIMIT_MIB ? '✓' : '✗'}`,
  ]);
  return markdownTable(header, rows, ['left']);
}

export async function run(): Promise<void> {
  const startedAt = performance.now();
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run bench -- load\` (it builds dist first)`);
  const notes: string[] = [];
  const errors: string[] = [];
  const pgUnavailable =
    STORAGES.includes('postgres') || BIG_STORAGES.includes('postgres')
      ? await postgresUnreachable(POSTGRES)
      : undefined;
  const usable = (s: Storage): boolean => s === 'sqlite' || pgUnavailable === undefined;
  if (pgUnavailable !== undefined) {
    console.log(`PostgreSQL server unreachable (${pgUnavailable}); its part is skipped`);
    notes.push(`PostgreSQL server unreachable (${pgUnavailable}); its part was skipped.`);
  }

  const mixes: MixOutcome[] = [];
  for (const storage of STORAGES.filter(usable)) {
    console.log(`${storageName(storage)}: mixed load`);
    try {
      mixes.push(await mixedLoad(storage));
    } catch (error) {
      const message = `${storageName(storage)} mixed load: ${error instanceof Error ? error.message : String(error)}`;
      console.log(`  FAIL ${message}`);
      errors.push(message);
    }
  }

  const bigs: BigOutcome[] = [];
  if (BIG_ROWS > 0) {
    for (const storage of BIG_STORAGES.filter(usable)) {
      console.log(`${storageName(storage)}: ${formatInt(BIG_ROWS)} rows`);
      try {
        bigs.push(await millionRows(storage));
      } catch (error) {
        const message = `${storageName(storage)} million-row read: ${error instanceof Error ? error.message : String(error)}`;
        console.log(`  FAIL ${message}`);
        errors.push(message);
      }
    }
  }

  const totalS = (performance.now() - startedAt) / 1000;
  const fails = verdicts(mixes, bigs, errors);
  const mix = buildMix('', {
    workOrders: ['x'],
    purchaseRequests: ['x'],
    purchaseOrders: ['x'],
    poLines: [{ PONumber: 'x', LineNumber: 1 }],
    meters: ['x'],
  });
  const tables: string[] = [];
  if (mixes.length > 0) tables.push(mixTable(mixes), kindsTable(mixes, mix));
  if (bigs.length > 0) tables.push(bigTable(bigs));
  console.log(`\n${tables.join('\n\n')}\n`);

  const md: string[] = [
    '# Load: a mix of reads, writes and actions, and a million-row paged read',
    '',
    `Run of ${new Date().toISOString().slice(0, 10)} (\`npm run bench -- load\`${describeEnv()}, ${Math.round(totalS)} s in all).`,
    `Machine: ${describeMachine()} (shared: other processes may have run beside it; the 1-minute load average before`,
    'each phase is given below).',
    '',
    'The server is its own process, `node dist/cli.js serve --port 0 --demo --log-level warn --rate-limit 0` with',
    '`--data DIR` (SQLite, a file per site) or `--database-url` (PostgreSQL on 127.0.0.1:5432, a schema of its own,',
    `dropped at the end); loopback only. autocannon ${autocannonVersion()} in the bench process, ${CONNECTIONS} connections,`,
    `a warm-up of ${WARMUP_SECONDS} s, then the timed run of ${SECONDS} s; every request drawn from the weighted mix in the`,
    'second table (a seeded PRNG), with valid bodies: 2xx is the only right answer. RSS is VmRSS of the server',
    'process from /proc/<pid>/status, read every second; "after warm-up" and "end" are the medians of the readings',
    "of the last 5 s (V8's heap alone swings by tens of MiB between full collections under this load; the single",
    'readings are under Details, with the live heap after each full GC from `--trace-gc`); "max" is the kernel\'s',
    "peak (VmHWM), reset when the timed run starts. Latencies are autocannon's (2xx answers); the per-request ones",
    'are measured from the same events.',
    '',
  ];
  if (mixes.length > 0) {
    md.push('## Mixed load', '', tables[0]!, '', '## By kind of request (timed run)', '', tables[1]!, '');
    md.push('Details:', '');
    for (const m of mixes) {
      const n = storageName(m.storage);
      md.push(
        `- ${n} (${m.label.replace(/ under \/.*$/, '')}): load average before the timed run ${m.run.loadAverage}; ` +
          `CPU during the timed run: the server ${percent(m.serverCpu)} of a core, autocannon ${percent(m.benchCpu)}; ` +
          `server RSS at start ${mib(m.rssStartKiB)} MiB, 5 s after the run ${mib(m.rssIdleKiB)} MiB; ` +
          `RSS every 5 s from the warm-up on (MiB): ${m.timeline}.`,
        `  - RSS readings at the end of the warm-up and of the run, alone: ${mib(m.rssWarmPointKiB)} and ` +
          `${mib(m.rssEndPointKiB)} MiB (×${(m.rssEndPointKiB / m.rssWarmPointKiB).toFixed(2)}); ${describeHeap(m.heap)}.`,
        `  - warm-up: ${describeLoad(m.warmup)}.`,
        `  - status codes of the timed run: ${describeCodes(m.run.statusCodes)}.`,
        `  - ${describeSlowest(m.run)}`,
      );
      for (const f of [...m.warmup.failures, ...m.run.failures].slice(0, 10)) {
        md.push(
          `  - answer ${f.status} to \`${f.sent.method} ${f.sent.path}\`${f.sent.body === undefined ? '' : ` \`${f.sent.body.slice(0, 200)}\``}: \`${f.response.replace(/`/g, "'").slice(0, 300)}\``,
        );
      }
      if (m.serverErrorCount > 0) {
        md.push(`  - the server logged ${m.serverErrorCount} error lines; the first:`);
        for (const line of m.serverErrors.slice(0, 5)) md.push(`    \`${line.replace(/`/g, "'").slice(0, 300)}\``);
      }
    }
    md.push('');
  }
  if (bigs.length > 0) {
    md.push(
      `## ${formatInt(BIG_ROWS)} rows, paged`,
      '',
      `\`odata-engine seed ${BIG_SITE} --rows ${BIG_ROWS}\` (Parts gets ${formatInt(BIG_ROWS)} rows, the other sets`,
      'proportionally many: "seeded records" counts them all), then a server on that data with',
      `\`--page-size ${BIG_PAGE_SIZE}\` and one client: \`Parts?$top=10000\` and \`Parts?$top=${BIG_ROWS}\` once each (below),`,
      'then `Parts` and every @odata.nextLink after it to the end (the server pages by $skip: each page is an OFFSET',
      'query), checking that every row comes once and in key order. "First/last pages": mean time of the first and',
      'last ten pages. RSS "max" is the server\'s peak (VmHWM) during the read.',
      '',
      tables[tables.length - 1]!,
      '',
      'Details:',
      '',
    );
    for (const b of bigs) {
      md.push(
        `- ${storageName(b.storage)} (${b.label.replace(/ under \/.*$/, '')}): ${formatInt(b.bytes / 2 ** 20)} MiB of JSON read; ` +
          `seed process peak RSS ${mib(b.seedPeakKiB)} MiB; slowest page ${formatSig(b.slowestPageMs)} ms; ` +
          `mean page time by tenth of the read (ms): ${b.tenths.map((t) => formatSig(t)).join(', ')}; ` +
          `server RSS every 10 s (MiB): ${b.timeline}.${b.note === undefined ? '' : ` ${b.note}.`}`,
        `  - ${b.topCheck}.`,
        `  - ${offsetCost(b)}`,
      );
      for (const line of b.serverErrors.slice(0, 5))
        md.push(`  - server log: \`${line.replace(/`/g, "'").slice(0, 300)}\``);
    }
    md.push('');
  }
  md.push(
    '## Goals',
    '',
    `- Mixed load: no 5xx, no socket error (and no 4xx: the mix is valid), RSS at the end within ${RSS_GROWTH_LIMIT * 100}% of RSS after the warm-up.`,
    `- ${formatInt(BIG_ROWS)} rows: every row read once, in order, with the server's peak RSS at most ${BIG_RSS_LIMIT_MIB} MiB above its RSS before.`,
    '',
    fails.length === 0 ? 'All met.' : fails.map((f) => `- **FAIL** ${f}`).join('\n'),
    '',
  );
  if (notes.length > 0) md.push('## Notes', '', ...notes.map((n) => `- ${n}`), '');
  await writeResults('load', md.join('\n'));

  if (fails.length === 0) console.log('PASS: every goal of the load bench is met');
  for (const f of fails) console.log(`FAIL: ${f}`);
  if (fails.length > 0) process.exitCode = 1;
}

function describeEnv(): string {
  const set = [
    'LOAD_SECONDS',
    'LOAD_WARMUP_SECONDS',
    'LOAD_CONNECTIONS',
    'LOAD_STORAGES',
    'LOAD_BIG_ROWS',
    'LOAD_BIG_STORAGES',
    'LOAD_BIG_PAGE_SIZE',
    'LOAD_BIG_MAX_SECONDS',
  ].filter((name) => process.env[name] !== undefined && process.env[name] !== '');
  return set.length === 0 ? '' : ` with ${set.map((name) => `${name}=${process.env[name]}`).join(' ')}`;
}

function autocannonVersion(): string {
  try {
    const file = new URL('../node_modules/autocannon/package.json', import.meta.url);
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return '';
  }
}
