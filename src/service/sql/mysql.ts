// MySQL and MariaDB through a mysql2 pool: each transaction on its own pooled connection, every connection set up for
// the SQL the mysql dialect emits (mysqlSessionSql: binary utf8mb4 collation, UTC, decimal division places).
//
// Budgets: every connection gets the server's own statement limit (MariaDB `max_statement_time` in seconds, MySQL
// `max_execution_time` in ms, which MySQL applies to SELECTs only); a statement stopped by it is a QueryTimeout (504).
// A caller's AbortSignal stops its running statement with `KILL QUERY <connection id>` from another connection. A
// caller never waits more than `acquireTimeoutMs` for a connection (503 with Retry-After). GET_LOCK is a session
// lock in MySQL: a transaction's locks are released when it ends, so that they behave like PostgreSQL's advisory
// transaction locks.
import mysql from 'mysql2/promise';
import { mysqlSessionSql, type SqlParam } from '../../backends/sql/index.js';
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

export type MysqlDriverOptions = PooledDriverOptions;
export type MysqlDriver = PooledDriver;
/** MariaDB ER_STATEMENT_TIMEOUT, MySQL ER_QUERY_TIMEOUT: the statement limit stopped it. */
const TIMED_OUT = new Set([1969, 3024]);
/** ER_QUERY_INTERRUPTED: KILL QUERY stopped it. */
const INTERRUPTED = 1317;

export function openMysql(uri: string, options: MysqlDriverOptions = {}): MysqlDriver {
  const max = options.max ?? 10;
  const budget = Math.max(0, options.queryTimeoutMs ?? 10_000);
  const acquireTimeoutMs = Math.max(1, options.acquireTimeoutMs ?? 2_000);
  const pool = mysql.createPool({
    uri,
    connectionLimit: max,
    // exact values as text: BIGINT and DECIMAL never through a double, DATE and DATETIME never through a local Date
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    connectTimeout: acquireTimeoutMs + 1_000,
  });
  /** Statements each new connection runs first (the budget's form depends on the server). */
  let setup: Promise<readonly string[]> | undefined;
  const setupSql = (connection: mysql.PoolConnection): Promise<readonly string[]> =>
    (setup ??= (async () => {
      const [rows] = await connection.query('SELECT VERSION() AS version');
      const mariadb = /mariadb/i.test(String((rows as RawRow[])[0]?.['version']));
      const limit =
        budget === 0
          ? []
          : mariadb
            ? [`SET max_statement_time = ${budget / 1000}`]
            : [`SET max_execution_time = ${budget}`];
      return [...mysqlSessionSql, ...limit];
    })());
  const ready = new WeakSet<object>();

  /** A free, set-up connection within `waitMs`, or a 503; the caller's abort ends the wait. */
  const acquire = (waitMs: number, signal?: AbortSignal): Promise<mysql.PoolConnection> =>
    acquireWithin(
      async () => {
        const connection = await pool.getConnection();
        if (!ready.has(connection.connection)) {
          try {
            for (const sql of await setupSql(connection)) await connection.query(sql);
          } catch (error) {
            connection.destroy();
            throw error;
          }
          ready.add(connection.connection);
        }
        return connection;
      },
      (connection) => connection.release(),
      waitMs,
      signal,
      () => ({ poolFull: true, message: `No database connection became free within ${waitMs} ms; retry later` }),
    );

  const translate = (error: unknown): unknown => {
    const errno = (error as { errno?: unknown } | null)?.errno;
    return typeof errno === 'number' && TIMED_OUT.has(errno) && budget > 0 ? queryTimeout(budget) : error;
  };

  /**
   * One statement on `connection`; if `signal` aborts meanwhile, KILL QUERY stops it and the call ends with the
   * signal's reason. `unknown`: the kill may arrive after the statement and stop the connection's next one (the
   * caller destroys the connection).
   */
  const statement = async (
    connection: mysql.PoolConnection,
    sql: string,
    params: readonly SqlParam[],
    signal: AbortSignal | undefined,
    /** Rows as arrays of the columns' values (SqlDriver.values). */
    arrays = false,
  ): Promise<{ rows?: unknown; cancelled: 'no' | 'consumed' | 'unknown'; error?: unknown }> => {
    if (signal?.aborted) return { cancelled: 'no', error: abortReason(signal) };
    let kill: Promise<unknown> | undefined;
    const onAbort = (): void => {
      kill = pool.query(`KILL QUERY ${Number(connection.threadId)}`).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const [rows] = arrays
        ? await connection.execute({ sql, rowsAsArray: true }, params as SqlParam[])
        : await connection.execute(sql, params as SqlParam[]);
      if (kill === undefined) return { rows, cancelled: 'no' };
      await kill;
      return { cancelled: 'unknown', error: abortReason(signal!) };
    } catch (error) {
      if (kill === undefined) return { cancelled: 'no', error: translate(error) };
      await kill;
      const consumed = (error as { errno?: unknown } | null)?.errno === INTERRUPTED;
      return { cancelled: consumed ? 'consumed' : 'unknown', error: abortReason(signal!) };
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  };

  const release = (connection: mysql.PoolConnection, destroy: boolean): void => {
    if (destroy) connection.destroy();
    else connection.release();
  };

  const once = async (
    sql: string,
    params: readonly SqlParam[],
    signal?: AbortSignal,
    arrays = false,
  ): Promise<unknown> => {
    const connection = await acquire(acquireTimeoutMs, signal);
    const outcome = await statement(connection, sql, params, signal, arrays);
    release(connection, outcome.cancelled === 'unknown');
    if (outcome.error !== undefined) throw outcome.error;
    return outcome.rows;
  };

  const poisoned = new WeakSet<mysql.PoolConnection>();
  const on = (connection: mysql.PoolConnection): SqlSession => {
    const run = async (sql: string, params: readonly SqlParam[], signal?: AbortSignal): Promise<unknown> => {
      const outcome = await statement(connection, sql, params, signal);
      if (outcome.error !== undefined) {
        if (outcome.cancelled === 'unknown') poisoned.add(connection);
        throw outcome.error;
      }
      return outcome.rows;
    };
    return {
      all: async (sql, params = [], read: ReadOptions = {}) => rowsOf(await run(sql, params, read.signal)),
      run: async (sql, params = []) => affectedRows(await run(sql, params)),
    };
  };

  return {
    dialect: 'mysql',
    all: async (sql, params = [], read: ReadOptions = {}) => rowsOf(await once(sql, params, read.signal)),
    values: async (sql, params = [], read: ReadOptions = {}) =>
      rowsOf(await once(sql, params, read.signal, true)) as unknown as unknown[][],
    run: async (sql, params = []) => affectedRows(await once(sql, params)),
    transaction: async <T>(work: (s: SqlSession) => Promise<T>): Promise<T> => {
      const connection = await acquire(acquireTimeoutMs);
      let broken = false;
      try {
        await connection.query('START TRANSACTION');
        const result = await work(on(connection));
        await connection.query('COMMIT');
        return result;
      } catch (error) {
        await connection.query('ROLLBACK').catch(() => (broken = true));
        throw translate(error);
      } finally {
        // the transaction's GET_LOCKs end with it
        if (!broken) await connection.query('DO RELEASE_ALL_LOCKS()').catch(() => (broken = true));
        release(connection, broken || poisoned.has(connection));
      }
    },
    readiness: () =>
      poolReadiness(
        () => acquire(PROBE_WAIT_MS),
        (connection) => connection.query('SELECT 1'),
        (connection, broken) => release(connection, broken),
      ),
    close: () => pool.end(),
  };
}

/** A statement's rows; none for one that answers with a count (an INSERT run through `all`). */
function rowsOf(result: unknown): RawRow[] {
  return Array.isArray(result) ? (result as RawRow[]) : [];
}

function affectedRows(result: unknown): number {
  const affected = (result as { affectedRows?: unknown } | null)?.affectedRows;
  return typeof affected === 'number' ? affected : 0;
}
