// The smallest database surface the site store needs, so that one SQL store serves SQLite and PostgreSQL alike.
import type { SqlDialectName, SqlParam } from '../../backends/sql/index.js';
import { ODataError } from '../../errors.js';

export type RawRow = Record<string, unknown>;

/** Per call: how a read may be stopped. Without any, the backend's budget (`queryTimeoutMs`) alone applies. */
export interface ReadOptions {
  /**
   * Aborting it stops the statement (PostgreSQL: a cancel request for its connection; SQLite: its reader thread is
   * replaced) and the call rejects with the signal's reason. The service passes one that aborts when the client
   * disconnects.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * The statement reads at most one row by a full primary key (an index seek, whatever the data): SQLite runs it on
   * the calling thread, where it costs about 8 µs, against 36–73 µs of messages through a reader thread. Never set
   * for a statement whose cost depends on a client's filter.
   */
  readonly keyLookup?: boolean;
}

/** Statements run inside one transaction: all of them land, or none does. */
export interface SqlSession {
  all(sql: string, params?: readonly SqlParam[], options?: ReadOptions): Promise<RawRow[]>;
  run(sql: string, params?: readonly SqlParam[]): Promise<number>;
}

/** How the database is doing, for `/ready`. */
export type Readiness =
  | { readonly status: 'ready' }
  /** Every connection (PostgreSQL) or reader thread (SQLite) stayed taken while the probe waited. */
  | { readonly status: 'busy'; readonly detail: string; readonly retryAfter: number }
  /** The database did not answer a trivial query. */
  | { readonly status: 'unreachable'; readonly detail: string };

export interface SqlDriver extends SqlSession {
  readonly dialect: SqlDialectName;
  /**
   * Optional: `all`'s rows as arrays of the columns' values, in the statement's order, for reads outside
   * transactions. A driver that can skip making an object per row answers faster (better-sqlite3 spends about half
   * of a 1,000-row statement's time on them); without it the store reads the objects' columns itself.
   */
  values?(sql: string, params?: readonly SqlParam[], options?: ReadOptions): Promise<unknown[][]>;
  /** Runs `work` in a transaction (serializable where the database offers it cheaply); rolls back on a throw. */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** SQLSTATE, SQLite and MySQL codes that mean "a row with this key exists". */
export function isDuplicateKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    code === '23505' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY' ||
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'ER_DUP_ENTRY'
  );
}

/** 504: a statement ran past the budget and was stopped. */
export function queryTimeout(budgetMs: number): ODataError {
  return new ODataError(
    'QueryTimeout',
    `The query did not finish within its budget of ${budgetMs} ms and was stopped; narrow the filter or page with $top`,
  );
}

/** 503 with a `Retry-After` (whole seconds) the service sends along. */
export function unavailable(message: string, retryAfter: number): ODataError & { readonly retryAfter: number } {
  return Object.assign(new ODataError('ServiceUnavailable', message), {
    retryAfter: Math.max(1, Math.ceil(retryAfter)),
  });
}

/** The rejection of a call whose signal aborted: the signal's reason, as `fetch` and node:timers do. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The pool of a database server's driver (PostgreSQL, MySQL/MariaDB). */
export interface PooledDriverOptions {
  /** Connections in the pool (default 10). */
  readonly max?: number;
  /**
   * The server's own statement limit on every connection, in ms (default 10,000; 0: none): PostgreSQL
   * `statement_timeout`, MariaDB `max_statement_time`, MySQL `max_execution_time` (SELECTs only).
   */
  readonly queryTimeoutMs?: number;
  /** Most ms a statement waits for a free connection before a 503 (default 2,000). */
  readonly acquireTimeoutMs?: number;
}

export interface PooledDriver extends SqlDriver {
  /** `ready` when a trivial query gets a connection within 500 ms and answers; `busy` or `unreachable` otherwise. */
  readiness(): Promise<Readiness>;
}

/** How long the readiness probe of a pooled driver waits for a connection. */
export const PROBE_WAIT_MS = 500;

/** What a pooled driver tells `acquireWithin` when the wait ran out: the message, and whether every connection was busy. */
export interface AcquireTimeout {
  readonly message: string;
  readonly poolFull: boolean;
}

/**
 * A connection from `connect` within `waitMs`, or a 503 (`retryAfter` 1 s, `poolFull` as `timedOut` says); the
 * caller's abort ends the wait with its reason. A connection that arrives after the wait ended is released.
 */
export function acquireWithin<C>(
  connect: () => Promise<C>,
  release: (connection: C) => void,
  waitMs: number,
  signal: AbortSignal | undefined,
  timedOut: () => AcquireTimeout,
): Promise<C> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    let done = false;
    const finish = (): boolean => {
      if (done) return false;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const timer = setTimeout(() => {
      if (!finish()) return;
      const { message, poolFull } = timedOut();
      reject(Object.assign(unavailable(message, 1), { poolFull }));
    }, waitMs);
    const onAbort = (): void => {
      if (finish()) reject(abortReason(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    connect().then(
      (connection) => (finish() ? resolve(connection) : release(connection)),
      (error: unknown) => (finish() ? reject(error) : undefined),
    );
  });
}

/**
 * `/ready` of a pooled driver: `busy` when no connection came free within the wait (every one held), `unreachable`
 * when none could be opened or it failed a trivial query, else `ready`.
 */
export async function poolReadiness<C>(
  acquire: () => Promise<C>,
  ping: (connection: C) => Promise<unknown>,
  release: (connection: C, broken: boolean) => void,
): Promise<Readiness> {
  let connection: C;
  try {
    connection = await acquire();
  } catch (error) {
    const { poolFull, retryAfter } = error as { poolFull?: unknown; retryAfter?: unknown };
    if (poolFull === true && typeof retryAfter === 'number')
      return { status: 'busy', detail: (error as Error).message, retryAfter };
    return { status: 'unreachable', detail: error instanceof Error ? error.message : String(error) };
  }
  try {
    await ping(connection);
    release(connection, false);
    return { status: 'ready' };
  } catch (error) {
    release(connection, true);
    return { status: 'unreachable', detail: error instanceof Error ? error.message : String(error) };
  }
}
