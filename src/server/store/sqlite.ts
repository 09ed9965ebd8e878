// SQLite through better-sqlite3: one database file per site (WAL, synchronous=FULL so that an acknowledged write
// survives a crash or power loss), the engine's functions registered on every connection. With a read pool, reads
// outside transactions run on its reader threads under its budget (sqlite-pool.ts); writes, and reads inside a
// transaction (which must see its uncommitted rows), run on this connection on the calling thread: they are short.
import Database from 'better-sqlite3';
import { registerSqliteFunctions, type SqlParam } from '../../backends/sql/index.js';
import type { RawRow, SqlDriver, SqlSession } from './driver.js';
import type { SqliteReadPool } from './sqlite-pool.js';

export interface SqliteDriverOptions {
  /** Where reads outside transactions run; without one they run here, inline and without a budget. */
  readonly reads?: SqliteReadPool;
}

export function openSqlite(file: string, options: SqliteDriverOptions = {}): SqlDriver {
  const { reads } = options;
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
  const session: SqlSession = {
    all: async (sql, params = []) => {
      const statement = prepare(sql);
      return (statement.reader ? statement.all(...(params as SqlParam[])) : []) as RawRow[];
    },
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
  return {
    dialect: 'sqlite',
    // a committed write is in the WAL before its transaction resolves, so a reader thread's next statement sees it
    all: (sql, params = [], read = {}) =>
      reads === undefined || read.keyLookup === true
        ? now(() => session.all(sql, params))
        : reads.read(file, sql, params, read.signal),
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
