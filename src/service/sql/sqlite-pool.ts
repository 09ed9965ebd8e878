// Reads of SQLite site files run on a pool of readers (threads by default, or child processes), so that no read
// blocks the event loop, and a read that runs past its budget is stopped: its caller gets QueryTimeout (504) at the
// deadline and the reader is terminated and replaced.
//
// Measured on 2 shared cores (load 3–4), Node 20, better-sqlite3 12.11; `node --import tsx
// test/server/read-budget.measure.ts [stop|cost|guard|http|exit]` prints the same figures again:
// - better-sqlite3 has no sqlite3_interrupt and no progress handler (WiseLibs/better-sqlite3 #568, #707): on the
//   server's thread a statement cannot be stopped at all.
// - worker.terminate() ends a thread within 3–4 ms when it runs JavaScript (an odata_* function per row; before the
//   linear-time matcher, a catastrophic regex too). Inside one native sqlite3_step (a recursive CTE, a cross join,
//   nested EXISTS of nested lambdas) it does nothing: the thread runs on until SQLite finishes the step (4.0 s more
//   of a 30 M-row CTE), and Node joins every thread before the process exits, so `process.exit` waits as long. Such
//   threads are counted as stopping: at most `maxStuck` at once (no replacement beyond it; a read that finds no
//   reader is refused at once with 503 and Retry-After), each holding its site's share until it exits, so one site
//   cannot use them up for the others.
// - A child process dies of SIGKILL at once, native step or not (gone 4 ms after the kill).
// - Per read, µs of CPU in all (latency; on the main thread), against the same statement inline: 21-row page 92–99
//   inline, thread 213–227 (216–230; 72–77), process 333–347 (330–343; 118–122); 51 rows 202–235, 345–360 (86–94
//   on the main thread), 495–504 (154); key lookup 7.1–7.4, 28–34 (15–16), 71–77 (34–39); COUNT 5.2–5.4, 28–29,
//   56–69. Rows as arrays instead of objects saved nothing consistent. Start: a thread 23–43 ms (150–350 from
//   TypeScript sources under tsx), a process 100–200 ms.
// - The built server over HTTP (50 connections, 20-row page, 20,000 demo rows): inline 2,460–2,970 req/s, threads
//   1,890–2,550 (9–23% fewer), processes 1,730–2,280 (28–39% fewer) and 274 MiB more RSS for 4 readers; key reads
//   (inline in every mode) 5,300–6,100 either way.
// Threads are the default: they cost a third less than processes and no memory to speak of; processes
// (`isolation: 'process'`) are the choice where native-heavy reads must stop at their budget whatever they are.
// A per-row check in the SQL would stop native steps on threads too (a JavaScript function called per row costs
// 118 ns a row and ends the statement at once when it throws) but needs the SQL emitter to place it in every WHERE.
// piscina and tinypool were considered: both run a task per message well, but neither stops one task by ending its
// thread while counting threads that do not exit, keeps a per-site share, or routes a site to the reader that has its
// connection open; what would be left of them here is the message loop.
//
// Scheduling: reads wait in one queue (FIFO) for an idle reader, at most `perSite` of one file at once (running or
// stopping), at most `acquireTimeoutMs` (then 503 with Retry-After; readers still starting do not count as busy). A
// reader keeps up to `sitesPerThread` read-only connections open (least recently used closed first), each with its
// prepared statements; a read goes to an idle reader that has its file open when there is one. From the first read
// on, the pool keeps its readers started.
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { isStatementDeadline, type SqlParam } from '../../backends/sql/index.js';
import { abortReason, queryTimeout, unavailable, type RawRow, type Readiness } from './driver.js';
import { unpackSafeIntegers } from './reader-rows.js';

/** What a reader thread is started with. */
export interface ReaderSetup {
  readonly maxConnections: number;
}

export interface ReaderRequest {
  readonly file: string;
  readonly sql: string;
  readonly params: readonly SqlParam[];
  /** The read's budget, for the statement's own deadline checks (0: none). */
  readonly budgetMs: number;
  /** Rows as arrays of the columns' values (SqlDriver.values), not objects. */
  readonly values?: boolean;
}

/**
 * How much later than the budget the pool terminates a reader: a statement with deadline checks stops itself at
 * the budget and answers within a millisecond, and its reader is kept; one without is terminated.
 */
const TERMINATE_GRACE_MS = 100;

export type ReaderReply =
  | 'ready'
  /** `safeIntegers`: where the rows are arrays, the BigInts sent as numbers (reader-rows.ts). */
  | { readonly rows: unknown[]; readonly safeIntegers?: Int32Array }
  | { readonly error: { readonly name: string; readonly message: string; readonly code?: string } };

export interface SqliteReadPoolOptions {
  /** Readers are threads of this process (default), or child processes. */
  readonly isolation?: 'thread' | 'process';
  /** Reader threads (default 4). */
  readonly threads?: number;
  /** Reads of one site file running (or stopping) at once (default half the threads, at least 1). */
  readonly perSite?: number;
  /** Threads terminated in native code that may still run before reads are refused (default: `threads`). */
  readonly maxStuck?: number;
  /** Site files one thread keeps open (default 16). */
  readonly sitesPerThread?: number;
  /** Budget of one read once a thread runs it, in ms (default 10,000; 0: none). */
  readonly queryTimeoutMs?: number;
  /** Most ms a read waits for a thread before a 503 (default 2,000). */
  readonly acquireTimeoutMs?: number;
}

interface Job {
  readonly request: ReaderRequest;
  /** Whether the site's share applies (not to the readiness probe). */
  readonly shared: boolean;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (rows: unknown[]) => void;
  readonly reject: (error: unknown) => void;
  waitTimer?: NodeJS.Timeout;
  onAbort?: () => void;
}

/** A reader thread or process, as the pool drives it. */
interface ReaderHandle {
  send(message: ReaderRequest | 'close'): void;
  /** Stops it: terminate() for a thread (JavaScript only), SIGKILL for a process. */
  kill(): void;
  ref(): void;
  unref(): void;
}

interface Reader {
  readonly worker: ReaderHandle;
  ready: boolean;
  job: Job | undefined;
  runTimer: NodeJS.Timeout | undefined;
  /** The files its connections are open on, least recently used first (the thread's own LRU, mirrored). */
  readonly files: Map<string, true>;
  /** The file of the read it was terminated in. */
  stoppedIn?: string;
  readonly exited: Promise<void>;
  failure?: Error;
}

/** How long the readiness probe waits for a thread. */
const PROBE_WAIT_MS = 500;

/**
 * Starts a reader thread: the built `sqlite-worker.js` next to this module, or from TypeScript sources through tsx.
 * Without the server's own Node flags (a thread inherits them by default, and some are refused in a thread, such
 * as `--input-type`): a reader needs none.
 */
function startThread(setup: ReaderSetup): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts'))
    return new Worker(new URL('./sqlite-worker.js', here), { workerData: setup, execArgv: [] });
  // From sources (vitest, tsx) the worker is TypeScript too: tsx's require hook compiles it. Node 20 runs no .ts
  // file by itself, and a worker does not inherit the loader of its parent.
  const require = createRequire(here);
  const worker = fileURLToPath(new URL('./sqlite-worker.ts', here));
  const code = `require(${JSON.stringify(require.resolve('tsx/cjs/api'))}).register();require(${JSON.stringify(worker)});`;
  return new Worker(code, { eval: true, workerData: setup, execArgv: [] });
}

interface Events {
  message(reply: ReaderReply): void;
  error(error: Error): void;
  exit(): void;
}

function startReader(isolation: 'thread' | 'process', setup: ReaderSetup, on: Events): ReaderHandle {
  if (isolation === 'thread') {
    const worker = startThread(setup);
    worker.on('message', on.message);
    worker.on('error', on.error);
    worker.once('exit', on.exit);
    return {
      send: (message) => worker.postMessage(message),
      kill: () => void worker.terminate(),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
    };
  }
  const here = import.meta.url;
  const fromSources = here.endsWith('.ts');
  const file = fileURLToPath(new URL(fromSources ? './sqlite-worker.ts' : './sqlite-worker.js', here));
  const loader = fromSources ? ['--import', pathToFileURL(createRequire(here).resolve('tsx')).href] : [];
  const child = fork(file, [JSON.stringify(setup)], {
    serialization: 'advanced',
    execArgv: loader,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (reply) => on.message(reply as ReaderReply));
  child.on('error', on.error);
  child.once('exit', on.exit);
  return {
    send: (message) => void child.send(message),
    kill: () => void child.kill('SIGKILL'),
    ref: () => {
      child.ref();
      child.channel?.ref();
    },
    unref: () => {
      child.unref();
      child.channel?.unref();
    },
  };
}

/**
 * Structured clone turns Buffers into plain Uint8Arrays: give BLOBs back as the Buffers better-sqlite3 returns (in
 * rows as objects and as arrays alike).
 */
function asRows(rows: unknown[]): unknown[] {
  const buffer = (value: unknown): unknown =>
    value instanceof Uint8Array && !Buffer.isBuffer(value)
      ? Buffer.from(value.buffer, value.byteOffset, value.byteLength)
      : value;
  for (const row of rows) {
    if (Array.isArray(row)) {
      // (an indexed loop: `for...in` over an array walks its indices as strings)
      for (let i = 0; i < row.length; i++) if (typeof row[i] === 'object' && row[i] !== null) row[i] = buffer(row[i]);
    } else {
      const object = row as RawRow;
      for (const name in object) object[name] = buffer(object[name]);
    }
  }
  return rows;
}

function asError(error: { readonly name: string; readonly message: string; readonly code?: string }): Error {
  if (error.name === 'SqliteError' && error.code !== undefined)
    return new Database.SqliteError(error.message, error.code);
  return Object.assign(
    new Error(error.message),
    { name: error.name },
    error.code === undefined ? {} : { code: error.code },
  );
}

export class SqliteReadPool {
  private readonly isolation: 'thread' | 'process';
  private readonly threads: number;
  private readonly perSite: number;
  private readonly maxStuck: number;
  private readonly setup: ReaderSetup;
  private readonly queryTimeoutMs: number;
  private readonly acquireTimeoutMs: number;
  /** Why the last reader to start exited before it was ready: no more start until the next read asks. */
  private startFailure: Error | undefined;
  /** Live threads: starting, idle or running a read. */
  private readonly readers: Reader[] = [];
  /** Terminated threads that have not exited yet (inside a native step). */
  private readonly stopping = new Set<Reader>();
  private readonly queue: Job[] = [];
  /** Reads per file running or stopping. */
  private readonly inFlight = new Map<string, number>();
  private closed = false;

  constructor(options: SqliteReadPoolOptions = {}) {
    this.isolation = options.isolation ?? 'thread';
    this.threads = Math.max(1, options.threads ?? 4);
    this.perSite = Math.max(1, options.perSite ?? Math.floor(this.threads / 2));
    this.maxStuck = Math.max(0, options.maxStuck ?? this.threads);
    this.setup = { maxConnections: Math.max(1, options.sitesPerThread ?? 16) };
    this.queryTimeoutMs = Math.max(0, options.queryTimeoutMs ?? 10_000);
    this.acquireTimeoutMs = Math.max(1, options.acquireTimeoutMs ?? 2_000);
  }

  /** Runs a read of `file` on a reader thread. */
  read(file: string, sql: string, params: readonly SqlParam[], signal?: AbortSignal): Promise<RawRow[]> {
    return this.submit(
      { file, sql, params, budgetMs: this.queryTimeoutMs },
      true,
      this.acquireTimeoutMs,
      signal,
    ) as Promise<RawRow[]>;
  }

  /** Runs a read of `file` on a reader thread; its rows as arrays of the columns' values (SqlDriver.values). */
  readValues(file: string, sql: string, params: readonly SqlParam[], signal?: AbortSignal): Promise<unknown[][]> {
    const request = { file, sql, params, budgetMs: this.queryTimeoutMs, values: true };
    return this.submit(request, true, this.acquireTimeoutMs, signal) as Promise<unknown[][]>;
  }

  /**
   * `ready` when a trivial read of `file` gets a thread within 500 ms (outside any site's share), `busy` otherwise.
   */
  async probe(file: string): Promise<Readiness> {
    try {
      await this.submit({ file, sql: 'SELECT 1', params: [], budgetMs: 0 }, false, PROBE_WAIT_MS, undefined);
      return { status: 'ready' };
    } catch (error) {
      const retryAfter = (error as { retryAfter?: unknown }).retryAfter;
      if (typeof retryAfter === 'number') return { status: 'busy', detail: (error as Error).message, retryAfter };
      return { status: 'unreachable', detail: String(error) };
    }
  }

  /** Threads running reads, idle, and stopping (terminated inside a native step); reads waiting. */
  get state(): { readonly running: number; readonly idle: number; readonly stopping: number; readonly queued: number } {
    const running = this.readers.filter((r) => r.job !== undefined).length;
    return { running, idle: this.readers.length - running, stopping: this.stopping.size, queued: this.queue.length };
  }

  /**
   * Refuses new reads, stops the running ones (503), lets idle threads close their connections and exit, and waits
   * up to a second for threads still inside a native step (they cannot be stopped; the process's exit ends them).
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) this.settle(job).reject(unavailable('The server is closing', 1));
    const exits: Promise<unknown>[] = [];
    for (const reader of [...this.readers, ...this.stopping]) {
      exits.push(reader.exited);
      if (reader.job !== undefined) this.stop(reader, unavailable('The server is closing', 1));
      else if (this.readers.includes(reader)) reader.worker.send('close');
    }
    // keeps the process alive while it waits (the readers are unref'd)
    const limit = new Promise((resolve) => setTimeout(resolve, 1_000));
    await Promise.race([Promise.all(exits), limit]);
    for (const reader of [...this.readers, ...this.stopping]) reader.worker.kill();
  }

  private submit(request: ReaderRequest, shared: boolean, waitMs: number, signal?: AbortSignal): Promise<unknown[]> {
    return new Promise<unknown[]>((resolve, reject) => {
      if (signal?.aborted) return reject(abortReason(signal));
      if (this.closed) return reject(unavailable('The server is closing', 1));
      this.startFailure = undefined;
      const job: Job = { request, shared, signal, resolve, reject };
      const expire = (): void => {
        const at = this.queue.indexOf(job);
        if (at < 0) return;
        // readers still starting are not busy ones: the bound is for waiting on reads, not on a start (23–43 ms
        // built; 150–350 ms from sources under tsx, more on a loaded machine)
        if (this.readers.some((r) => !r.ready)) {
          job.waitTimer = setTimeout(expire, waitMs);
          return;
        }
        this.queue.splice(at, 1);
        this.settle(job).reject(this.busy(job));
      };
      job.waitTimer = setTimeout(expire, waitMs);
      if (signal !== undefined) {
        job.onAbort = () => {
          const at = this.queue.indexOf(job);
          if (at >= 0) {
            this.queue.splice(at, 1);
            this.settle(job).reject(abortReason(signal));
            return;
          }
          const reader = this.readers.find((r) => r.job === job);
          if (reader !== undefined) this.stop(reader, abortReason(signal));
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** The 503 of a read that waited too long: for its site's share, or for any thread. */
  private busy(job: Job): Error {
    const stopping = this.stopping.size;
    if (job.shared && (this.inFlight.get(job.request.file) ?? 0) >= this.perSite)
      return unavailable(
        `This site's reads already take their ${this.perSite} of the server's ${this.threads} SQLite readers; retry later`,
        1,
      );
    return unavailable(
      `Every SQLite reader stayed busy for ${this.acquireTimeoutMs} ms` +
        (stopping > 0 ? ` (${stopping} still finishing statements stopped at their budget)` : '') +
        '; retry later',
      stopping > 0 ? this.queryTimeoutMs / 1000 : 1,
    );
  }

  /** Clears a job's timers and listener; returns it for the resolve or reject that follows. */
  private settle(job: Job): Job {
    clearTimeout(job.waitTimer);
    if (job.onAbort !== undefined) job.signal?.removeEventListener('abort', job.onAbort);
    return job;
  }

  private canStart(): boolean {
    return (
      this.readers.length < this.threads && this.readers.length + this.stopping.size < this.threads + this.maxStuck
    );
  }

  private dispatch(): void {
    if (this.closed) return;
    if (this.readers.length === 0 && !this.canStart()) {
      // every thread is stuck in a statement that ran past its budget: refuse at once rather than start more
      for (const job of this.queue.splice(0)) {
        this.settle(job).reject(
          unavailable(
            `${this.stopping.size} SQLite readers are still finishing statements stopped at their budget; retry later`,
            this.queryTimeoutMs / 1000,
          ),
        );
      }
      return;
    }
    // from the first read on, the pool keeps its readers started (a replacement starts as soon as one is stopped),
    // so that a burst does not wait for threads to start (23–43 ms each; a process 100–200 ms)
    if (this.startFailure === undefined) while (this.canStart()) this.start();
    const idle = this.readers.filter((r) => r.ready && r.job === undefined);
    const taken = new Map(this.inFlight);
    for (let i = 0; i < this.queue.length && idle.length > 0;) {
      const job = this.queue[i]!;
      const file = job.request.file;
      if (job.shared && (taken.get(file) ?? 0) >= this.perSite) {
        i++;
        continue;
      }
      if (job.shared) taken.set(file, (taken.get(file) ?? 0) + 1);
      const at = Math.max(
        0,
        idle.findIndex((r) => r.files.has(file)),
      );
      const reader = idle.splice(at, 1)[0]!;
      this.queue.splice(i, 1);
      this.run(reader, job);
    }
  }

  private run(reader: Reader, job: Job): void {
    clearTimeout(job.waitTimer);
    const file = job.request.file;
    reader.job = job;
    if (job.shared) this.inFlight.set(file, (this.inFlight.get(file) ?? 0) + 1);
    reader.files.delete(file);
    reader.files.set(file, true);
    if (reader.files.size > this.setup.maxConnections) reader.files.delete(reader.files.keys().next().value!);
    reader.worker.ref();
    if (this.queryTimeoutMs > 0)
      reader.runTimer = setTimeout(
        () => this.stop(reader, queryTimeout(this.queryTimeoutMs)),
        this.queryTimeoutMs + TERMINATE_GRACE_MS,
      );
    reader.worker.send(job.request);
  }

  private start(): void {
    let exited!: () => void;
    const reader: Reader = {
      worker: undefined as unknown as ReaderHandle,
      ready: false,
      job: undefined,
      runTimer: undefined,
      files: new Map(),
      exited: new Promise<void>((resolve) => (exited = resolve)),
    };
    (reader as { worker: ReaderHandle }).worker = startReader(this.isolation, this.setup, {
      message: (reply) => {
        if (reply === 'ready') {
          reader.ready = true;
          this.dispatch();
          return;
        }
        const job = reader.job;
        if (job === undefined) return;
        this.done(reader, job);
        if ('rows' in reply) {
          if (reply.safeIntegers !== undefined) unpackSafeIntegers(reply.rows as unknown[][], reply.safeIntegers);
          job.resolve(asRows(reply.rows));
        } else if (isStatementDeadline(reply.error)) job.reject(queryTimeout(this.queryTimeoutMs));
        else job.reject(asError(reply.error));
        this.dispatch();
      },
      error: (error) => (reader.failure = error),
      exit: () => {
        exited();
        this.onExit(reader);
      },
    });
    this.readers.push(reader);
    reader.worker.unref();
  }

  private onExit(reader: Reader): void {
    if (this.stopping.delete(reader)) {
      const file = reader.stoppedIn;
      if (file !== undefined) this.release(file);
    } else {
      // an exit nobody asked for (the reader failed, or closed after 'close'): its read fails with the reason
      const at = this.readers.indexOf(reader);
      if (at >= 0) this.readers.splice(at, 1);
      const job = reader.job;
      const failure = reader.failure ?? new Error('An SQLite reader exited');
      if (job !== undefined) {
        this.done(reader, job);
        job.reject(failure);
      }
      if (!reader.ready && !this.closed) {
        // it never started (a missing worker file, say): the reads waiting for it would only time out, and starting
        // another at once would only fail again
        this.startFailure = failure;
        for (const waiting of this.queue.splice(0)) this.settle(waiting).reject(failure);
      }
    }
    if (!this.closed) this.dispatch();
  }

  /** A read's end on a live thread. */
  private done(reader: Reader, job: Job): void {
    clearTimeout(reader.runTimer);
    reader.job = undefined;
    reader.worker.unref();
    this.settle(job);
    if (job.shared) this.release(job.request.file);
  }

  private release(file: string): void {
    const left = (this.inFlight.get(file) ?? 1) - 1;
    if (left > 0) this.inFlight.set(file, left);
    else this.inFlight.delete(file);
  }

  /** Ends a running read with `error` and terminates its thread; the file's share is held until the thread exits. */
  private stop(reader: Reader, error: unknown): void {
    const job = reader.job;
    if (job === undefined) return;
    clearTimeout(reader.runTimer);
    reader.job = undefined;
    this.settle(job);
    this.readers.splice(this.readers.indexOf(reader), 1);
    if (job.shared) reader.stoppedIn = job.request.file;
    this.stopping.add(reader);
    job.reject(error);
    reader.worker.kill();
    this.dispatch();
  }
}
