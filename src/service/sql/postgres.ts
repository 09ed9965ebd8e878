// PostgreSQL through a pg pool: one database for every site (a `site` column leads every key), each transaction on
// its own pooled client.
//
// Budgets: every connection starts with `statement_timeout` (so every statement, inside transactions too, is stopped
// by the server itself at the budget, even when this process is gone) and asks the server to check every second
// whether its client is still there during a long statement (`client_connection_check_interval`, PostgreSQL 14+ on
// Linux, macOS and the BSDs; ignored where refused). A statement stopped by the budget (SQLSTATE 57014) is a
// QueryTimeout (504). A caller's AbortSignal cancels its running statement with the protocol's CancelRequest on a
// new socket (node-postgres has no public cancel API: brianc/node-postgres #2261, #773); a caller never waits more
// than `acquireTimeoutMs` for a connection (503 with Retry-After), so that a full pool surfaces instead of queueing
// requests for as long as the heaviest statements run.
import { connect as netConnect } from 'node:net';
import pg from 'pg';
import type { SqlParam } from '../../backends/sql/index.js';
import {
  abortReason,
  acquireWithin,
  poolReadiness,
  PROBE_WAIT_MS,
  type PooledDriver,
  type PooledDriverOptions,
  queryTimeout,
  type RawRow,
  type ReadOptions,
  type SqlSession,
} from './driver.js';

// Dates as their text: pg's default parser makes a local-midnight Date of a `date` column.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 1082 ? (value: string) => value : pg.types.getTypeParser(oid, format),
};

export type PostgresDriverOptions = PooledDriverOptions;
export type PostgresDriver = PooledDriver;
/** SQLSTATE query_canceled: statement_timeout, or a cancel request. */
const QUERY_CANCELED = '57014';

/** The key a backend gave its client at startup, which a CancelRequest must carry (node-postgres keeps it). */
interface BackendKey {
  readonly host: string;
  readonly port: number;
  readonly processID?: number | null;
  readonly secretKey?: number | null;
}

/**
 * Sends a CancelRequest for the backend of `client` (PostgreSQL protocol, "Canceling Requests in Progress": a new
 * connection carrying the backend's process id and secret key, answered by nothing but the close). Best effort: the
 * statement's budget still bounds it if the request is lost. Resolves when the server closed the socket.
 */
function sendCancel(client: pg.PoolClient): Promise<void> {
  const { host, port, processID, secretKey } = client as unknown as BackendKey;
  if (typeof processID !== 'number' || typeof secretKey !== 'number') return Promise.resolve();
  return new Promise((resolve) => {
    const socket = host.startsWith('/') ? netConnect(`${host}/.s.PGSQL.${port}`) : netConnect(port, host);
    const packet = Buffer.alloc(16);
    packet.writeInt32BE(16, 0);
    packet.writeInt32BE(80877102, 4); // the cancel request code: 1234 in the high 16 bits, 5678 in the low
    packet.writeInt32BE(processID, 8);
    packet.writeInt32BE(secretKey, 12);
    socket.setTimeout(5_000, () => socket.destroy());
    socket.once('connect', () => socket.end(packet));
    socket.once('error', () => resolve());
    socket.once('close', () => resolve());
  });
}

export function openPostgres(connectionString: string, options: PostgresDriverOptions = {}): PostgresDriver {
  const max = options.max ?? 10;
  const budget = Math.max(0, options.queryTimeoutMs ?? 10_000);
  const acquireTimeoutMs = Math.max(1, options.acquireTimeoutMs ?? 2_000);
  const pool = new pg.Pool({
    connectionString,
    max,
    types,
    ...(budget > 0 ? { statement_timeout: budget } : {}),
    // pg-pool drops a waiter at this bound too (our own timer answers first): abandoned waits do not pile up, and
    // opening a connection to an unreachable server is bounded as well
    connectionTimeoutMillis: acquireTimeoutMs + 1_000,
  });
  pool.on('connect', (client) => {
    // queued before any statement of the caller; a server that refuses it (before 14, or Windows) just does not check
    client.query('SET client_connection_check_interval = 1000').catch(() => undefined);
  });
  // an idle client whose server went away: pg-pool drops it; without a listener the error would end the process
  pool.on('error', () => undefined);

  /** A free connection within `waitMs`, or a 503; the caller's abort ends the wait. */
  const acquire = (waitMs: number, signal?: AbortSignal): Promise<pg.PoolClient> =>
    acquireWithin(
      () => pool.connect(),
      (client) => client.release(),
      waitMs,
      signal,
      () => {
        // every connection in use (or being opened, which an unreachable server can make look the same)
        const poolFull = pool.totalCount >= max && pool.idleCount === 0;
        return {
          poolFull,
          message: poolFull
            ? `Every one of the ${max} database connections stayed busy for ${waitMs} ms; retry later`
            : `The database did not accept a connection within ${waitMs} ms; retry later`,
        };
      },
    );

  /** 57014 is the budget's (statement_timeout) unless the statement was cancelled for its caller's abort. */
  const translate = (error: unknown): unknown =>
    (error as { code?: unknown } | null)?.code === QUERY_CANCELED && budget > 0 ? queryTimeout(budget) : error;

  /**
   * Runs one statement on `client`; if `signal` aborts meanwhile, cancels it and ends with the signal's reason.
   * `cancelled`: `consumed` when the cancel ended the statement (the connection is clean), `unknown` when it may
   * still arrive and stop the connection's next statement (the caller destroys the connection).
   */
  const query = async (
    client: pg.PoolClient,
    sql: string,
    params: readonly SqlParam[],
    signal: AbortSignal | undefined,
    /** Rows as arrays of the columns' values (SqlDriver.values). */
    arrays = false,
  ): Promise<{ result?: pg.QueryResult; cancelled: 'no' | 'consumed' | 'unknown'; error?: unknown }> => {
    if (signal?.aborted) return { cancelled: 'no', error: abortReason(signal) };
    const running = arrays
      ? client.query({ text: sql, values: params as unknown[], rowMode: 'array' })
      : client.query(sql, params as unknown[]);
    if (signal === undefined) {
      try {
        return { result: await running, cancelled: 'no' };
      } catch (error) {
        return { cancelled: 'no', error: translate(error) };
      }
    }
    let cancel: Promise<void> | undefined;
    const onAbort = (): void => void (cancel = sendCancel(client));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await running;
      if (cancel === undefined) return { result, cancelled: 'no' };
      // the statement finished before the cancel arrived: the cancel may still hit this backend's next statement
      await cancel;
      return { cancelled: 'unknown', error: abortReason(signal) };
    } catch (error) {
      if (cancel === undefined) return { cancelled: 'no', error: translate(error) };
      await cancel;
      const consumed = (error as { code?: unknown } | null)?.code === QUERY_CANCELED;
      return { cancelled: consumed ? 'consumed' : 'unknown', error: abortReason(signal) };
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  };

  /** One statement on a connection of its own (outside transactions). */
  const once = async (
    sql: string,
    params: readonly SqlParam[],
    signal?: AbortSignal,
    arrays = false,
  ): Promise<pg.QueryResult> => {
    const client = await acquire(acquireTimeoutMs, signal);
    const outcome = await query(client, sql, params, signal, arrays);
    // a cancel that did not end a statement may be delivered later, to whatever runs next: destroy that connection
    client.release(outcome.cancelled === 'unknown' ? true : undefined);
    if (outcome.error !== undefined || outcome.result === undefined) throw outcome.error;
    return outcome.result;
  };

  const on = (client: pg.PoolClient): SqlSession => {
    const statement = async (sql: string, params: readonly SqlParam[], signal?: AbortSignal) => {
      const outcome = await query(client, sql, params, signal);
      if (outcome.error !== undefined || outcome.result === undefined) {
        // the transaction's client is released by `transaction`: mark it for destruction there
        if (outcome.cancelled === 'unknown') poisoned.add(client);
        throw outcome.error;
      }
      return outcome.result;
    };
    return {
      all: async (sql, params = [], read: ReadOptions = {}) =>
        (await statement(sql, params, read.signal)).rows as RawRow[],
      run: async (sql, params = []) => (await statement(sql, params)).rowCount ?? 0,
    };
  };
  const poisoned = new WeakSet<pg.PoolClient>();

  return {
    dialect: 'postgres',
    all: async (sql, params = [], read: ReadOptions = {}) => (await once(sql, params, read.signal)).rows as RawRow[],
    values: async (sql, params = [], read: ReadOptions = {}) =>
      (await once(sql, params, read.signal, true)).rows as unknown[][],
    run: async (sql, params = []) => (await once(sql, params)).rowCount ?? 0,
    transaction: async <T>(work: (s: SqlSession) => Promise<T>): Promise<T> => {
      const client = await acquire(acquireTimeoutMs);
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await work(on(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => (broken = true));
        throw translate(error);
      } finally {
        client.release(broken || poisoned.has(client) ? true : undefined);
      }
    },
    readiness: () =>
      poolReadiness(
        () => acquire(PROBE_WAIT_MS),
        (client) => client.query('SELECT 1'),
        (client, broken) => client.release(broken ? true : undefined),
      ),
    close: async () => pool.end(),
  };
}
