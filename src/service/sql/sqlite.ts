// SQLite through better-sqlite3: one database file per site (WAL, synchronous=FULL so that an acknowledged write
// survives a crash or power loss), the engine's functions registered on every connection. With a read pool, reads
// outside transactions run on its reader threads under its budget (sqlite-pool.ts), except that a statement the
// emitter wrote with deadline checks is first tried here for a couple of milliseconds (most reads end well within
// that; the others are stopped by their own row check and go to a reader). Writes, and reads inside a transaction
// (which must see its uncommitted rows), run on this connection on the calling thread: they are short.
import Database from 'better-sqlite3';
import {
  isStatementDeadline,
  registerSqliteFunctions,
  runWithDeadline,
  type SqlParam,
} from '../../backends/sql/index.js';
import { queryTimeout } from './driver.js';
import type { RawRow, ReadOptions, SqlDriver, SqlSession } from './driver.js';
import type { SqliteReadPool } from './sqlite-pool.js';

export interface SqliteDriverOptions {
  /**
   * Where reads outside transactions run. Without one they run here, inline: a statement with deadline checks (the
   * emitter's `deadlineChecks`) stops at `queryTimeoutMs`, any other runs to its end.
   */
  readonly reads?: SqliteReadPool;
  /**
   * With a pool: a read whose statement has deadline checks first runs here for at most this many ms (default 5);
   * one that has not finished by then is stopped and run on a reader with the whole budget. Most reads (a page by an
   * index) finish in a fraction of a millisecond, and a reader thread's round trip costs more than that; moving a
   * large answer costs as much as reading it (1,000 rows of 16 columns: 1.8 ms here, 3.6 ms through a reader), so a
   * read of a few ms is cheaper here too (docs/reliability.md, section 7). 0: every read goes to a reader.
   */
  readonly inlineReadMs?: number;
  /** The budget of a read run here without a pool (default 10,000; 0: none). */
  readonly queryTimeoutMs?: number;
}

/**
 * What the inline tries of one site may cost the server's thread when they fail. A statement that failed its last
 * two tries goes straight to a reader for the next 10 s (the last 256 remembered; one failure may only have been a
 * cold cache), and the time failed tries took is bounded per second, so that a client sending ever new heavy
 * queries costs the event loop at most 50 ms a second per site.
 */
class InlineTries {
  private static readonly WASTE_PER_SECOND_MS = 50;
  private static readonly REMEMBER_MS = 10_000;
  /** Statement → its failed tries in a row, and until when it goes straight to a reader once they are two. */
  private readonly slow = new Map<string, { failures: number; until: number }>();
  private allowance = InlineTries.WASTE_PER_SECOND_MS;
  private refilledAt = performance.now();

  constructor(private readonly tryMs: number) {}

  worthTrying(sql: string): boolean {
    const now = performance.now();
    const slow = this.slow.get(sql);
    if (slow !== undefined && slow.failures >= 2) {
      if (now < slow.until) return false;
      this.slow.delete(sql);
    }
    const limit = InlineTries.WASTE_PER_SECOND_MS;
    this.allowance = Math.min(limit, this.allowance + ((now - this.refilledAt) * limit) / 1000);
    this.refilledAt = now;
    return this.allowance >= this.tryMs;
  }

  succeeded(sql: string): void {
    if (this.slow.size > 0) this.slow.delete(sql);
  }

  failed(sql: string, tookMs: number): void {
    this.allowance -= tookMs;
    const failures = (this.slow.get(sql)?.failures ?? 0) + 1;
    this.slow.delete(sql);
    if (this.slow.size >= 256) this.slow.delete(this.slow.keys().next().value!);
    this.slow.set(sql, { failures, until: performance.now() + InlineTries.REMEMBER_MS });
  }
}

/** The row check the emitter writes into statements it may stop (the sqlite dialect's `rowCheck`). */
const ROW_CHECK = 'odata_deadline()';

export function openSqlite(file: string, options: SqliteDriverOptions = {}): SqlDriver {
  const { reads } = options;
  const inlineReadMs = Math.max(0, options.inlineReadMs ?? 5);
  const queryTimeoutMs = Math.max(0, options.queryTimeoutMs ?? 10_000);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  const statements = new Map<string, Database.Statement>();
  const prepare = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      if (statements.size > 500) statements.clear();
      statements.set(sql, statement);
    }
    return statement;
  };
  /** A statement's rows, as objects or as arrays of the columns' values (`values`: no object made per row). */
  const rowsOf = (statement: Database.Statement, params: readonly unknown[], values: boolean): unknown[] =>
    statement.reader ? statement.raw(values).all(...(params as SqlParam[])) : [];
  const allNow = (sql: string, params: readonly unknown[], values = false): RawRow[] =>
    rowsOf(prepare(sql), params, values) as RawRow[];
  const session: SqlSession = {
    all: async (sql, params = []) => allNow(sql, params),
    run: async (sql, params = []) => Number(prepare(sql).run(...(params as SqlParam[])).changes),
  };
  // better-sqlite3 is synchronous, but a transaction's work awaits: every operation on this connection goes through
  // one queue, so that no other request's statement runs inside (or reads the uncommitted rows of) an open
  // transaction. SQLite has one writer per database anyway, and these statements are short.
  let queue: Promise<unknown> = Promise.resolve();
  /** Operations queued or running; when none is, a statement runs at once (no transaction can be open then). */
  let pending = 0;
  const enqueue = <T>(run: () => Promise<T>): Promise<T> => {
    pending++;
    const next = queue.then(run, run).finally(() => pending--);
    queue = next.catch(() => undefined);
    return next;
  };
  const now = <T>(run: () => Promise<T>): Promise<T> => (pending === 0 ? run() : enqueue(run));
  const inline = new InlineTries(inlineReadMs);
  /** A read outside a transaction: here, briefly, where it can be; else on a reader thread. */
  const read = (
    sql: string,
    params: readonly SqlParam[],
    options: ReadOptions,
    values: boolean,
  ): Promise<unknown[]> => {
    if (options.keyLookup === true) return now(async () => allNow(sql, params, values));
    const checked = sql.includes(ROW_CHECK);
    if (reads === undefined) {
      if (!checked || queryTimeoutMs === 0) return now(async () => allNow(sql, params, values));
      return now(async () => {
        try {
          return runWithDeadline(queryTimeoutMs, () => allNow(sql, params, values));
        } catch (error) {
          throw isStatementDeadline(error) ? queryTimeout(queryTimeoutMs) : error;
        }
      });
    }
    // first here, briefly, when no transaction is open on this connection (its rows must not be seen)
    if (checked && inlineReadMs > 0 && pending === 0 && inline.worthTrying(sql)) {
      const started = performance.now();
      try {
        const statement = prepare(sql); // compiling is not the statement's work: outside the deadline
        const rows = runWithDeadline(inlineReadMs, () => rowsOf(statement, params, values));
        inline.succeeded(sql);
        return Promise.resolve(rows);
      } catch (error) {
        if (!isStatementDeadline(error)) return Promise.reject(error as Error);
        inline.failed(sql, performance.now() - started);
      }
    }
    return values ? reads.readValues(file, sql, params, options.signal) : reads.read(file, sql, params, options.signal);
  };
  return {
    dialect: 'sqlite',
    // a committed write is in the WAL before its transaction resolves, so a reader thread's next statement sees it
    all: (sql, params = [], options = {}) => read(sql, params, options, false) as Promise<RawRow[]>,
    values: (sql, params = [], options = {}) => read(sql, params, options, true) as Promise<unknown[][]>,
    run: (sql, params) => now(() => session.run(sql, params)),
    transaction: <T>(work: (s: SqlSession) => Promise<T>): Promise<T> =>
      enqueue(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await work(session);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: async () => {
      await queue;
      db.close();
    },
  };
}
