// Where the service keeps its data: SQLite files under a data directory (the embedded default: control.db for sites,
// keys and users, and one file per site under sites/), or one PostgreSQL database for everything (DATABASE_URL),
// every row carrying its site. Both create their tables on first start.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Readiness, SqlDriver } from '../service/sql/driver.js';
import { openPostgres } from '../service/sql/postgres.js';
import { schemaSql, searchIndexFits, SqlStore } from '../service/sql/sql-store.js';
import { openSqlite } from '../service/sql/sqlite.js';
import { SqliteReadPool } from '../service/sql/sqlite-pool.js';
import { plantTables } from './collections.js';
import { plantDataModel } from './model.js';
import { Directory, type DirectoryOptions } from './tenancy.js';

export type { Readiness } from '../service/sql/driver.js';

/** The column that holds the site in a database shared by every site. */
export const SITE_COLUMN = 'site';

export interface Backend {
  readonly kind: 'sqlite' | 'postgres' | 'mysql';
  readonly directory: Directory;
  /** The store of an existing site (the caller checks that the site exists). */
  store(site: string): Promise<SqlStore>;
  /** Resolves when the database answers a trivial query; rejects when it does not, or when it is `busy`. */
  ping(): Promise<void>;
  /**
   * For `/ready`: `ready`; `busy` when a trivial read waited 500 ms without getting a connection (PostgreSQL) or
   * reader thread (SQLite), as while heavy statements hold them all; `unreachable` when the database does not answer.
   */
  readiness(): Promise<Readiness>;
  /**
   * SQLite reader threads still inside a statement stopped at its budget (0 on PostgreSQL and with reader
   * processes). Node joins every thread before the process exits, so while this is above 0 `process.exit` waits
   * for those statements to end (measured: as long as the statement would have run); a process that must stop now
   * ends itself with a signal.
   */
  stuckReaders(): number;
  close(): Promise<void>;
}

/** How long one statement may take and wait; for either database. */
export interface BudgetOptions {
  /**
   * Budget of one statement in ms (default 10,000; 0: none). Past it the statement is stopped and the call rejects
   * with `QueryTimeout` (504). PostgreSQL: `statement_timeout` of every connection, so it holds inside transactions
   * and after this process is gone. SQLite: reads outside transactions, stopped by the row checks the emitter writes
   * into them, or on a reader thread by ending it (writes and reads inside a transaction run on the site's
   * connection, and are short).
   */
  readonly queryTimeoutMs?: number;
  /**
   * Most ms a statement waits for a connection (PostgreSQL) or a reader thread (SQLite) before it is refused with
   * `ServiceUnavailable` (503, `retryAfter` in seconds on the error) (default 2,000).
   */
  readonly acquireTimeoutMs?: number;
}

export interface SqliteBackendOptions extends DirectoryOptions, BudgetOptions {
  /**
   * Reader threads for reads outside transactions (default 4). 0: reads run on the server's thread, where a statement
   * with the emitter's row checks (every read of a collection) still stops at its budget, but blocks every other
   * request until it does.
   */
  readonly readerThreads?: number;
  /** Readers as threads (default) or child processes. */
  readonly readerIsolation?: 'thread' | 'process';
  /** Reads of one site running at once (default half the reader threads, at least 1). */
  readonly readsPerSite?: number;
  /**
   * Reader threads stopped at their budget inside one native SQLite step (which they leave only when the step ends)
   * that may still run before reads are refused with 503 (default: as many as `readerThreads`).
   */
  readonly maxStuckReaders?: number;
  /** Site files each reader thread keeps open, least recently used closed first (default 16). */
  readonly sitesPerReader?: number;
  /**
   * A read first runs on the server's thread for at most this many ms (default 5); one that has not finished by then
   * is stopped (by the row checks the emitter writes into every WHERE) and run on a reader thread with the whole
   * budget. Most reads, a page by an index, take well under a millisecond, less than a reader's round trip; a large
   * answer costs as much to move to the server's thread as to read (openSqlite). 0: every read outside a transaction
   * goes to a reader.
   */
  readonly inlineReadMs?: number;
}

export interface PostgresBackendOptions extends DirectoryOptions, BudgetOptions {
  /** Connections in the pool (default 10). */
  readonly max?: number;
}

async function createTables(driver: SqlDriver, shared: boolean): Promise<void> {
  const scopeColumns = shared ? [SITE_COLUMN] : [];
  for (const sql of schemaSql(driver.dialect, { model: plantDataModel, tables: plantTables, scopeColumns }))
    await driver.run(sql);
}

/** One site's store: its own SQLite file, or its rows of the shared tables. */
function siteStore(driver: SqlDriver, site: string, shared: boolean, searchIndex = true): SqlStore {
  return new SqlStore(driver, {
    model: plantDataModel,
    tables: plantTables,
    searchIndex,
    ...(shared ? { scope: { [SITE_COLUMN]: site } } : {}),
  });
}

export async function openSqliteBackend(dataDir: string, options: SqliteBackendOptions = {}): Promise<Backend> {
  mkdirSync(join(dataDir, 'sites'), { recursive: true });
  const controlFile = join(dataDir, 'control.db');
  const control = openSqlite(controlFile);
  const directory = new Directory(control, options);
  await directory.init();
  const threads = options.readerThreads ?? 4;
  const reads =
    threads === 0
      ? undefined
      : new SqliteReadPool({
          threads,
          ...(options.readerIsolation === undefined ? {} : { isolation: options.readerIsolation }),
          ...(options.readsPerSite === undefined ? {} : { perSite: options.readsPerSite }),
          ...(options.maxStuckReaders === undefined ? {} : { maxStuck: options.maxStuckReaders }),
          ...(options.sitesPerReader === undefined ? {} : { sitesPerThread: options.sitesPerReader }),
          ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
          ...(options.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: options.acquireTimeoutMs }),
        });
  const stores = new Map<string, Promise<SqlStore>>();
  const ping = async (): Promise<void> => {
    await control.all('SELECT 1');
  };
  return {
    kind: 'sqlite',
    directory,
    store: (site) => {
      let store = stores.get(site);
      if (store === undefined) {
        store = (async () => {
          // opened (in WAL mode) before any reader thread opens the file read-only
          const driver = openSqlite(join(dataDir, 'sites', `${site}.db`), {
            ...(reads === undefined ? {} : { reads }),
            ...(options.inlineReadMs === undefined ? {} : { inlineReadMs: options.inlineReadMs }),
            ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
          });
          await createTables(driver, false);
          return siteStore(driver, site, false);
        })();
        stores.set(site, store);
      }
      return store;
    },
    ping: async () => {
      await ping();
      const state = reads === undefined ? undefined : await reads.probe(controlFile);
      if (state !== undefined && state.status !== 'ready') throw readinessError(state);
    },
    readiness: async () => {
      try {
        await ping();
      } catch (error) {
        return { status: 'unreachable', detail: error instanceof Error ? error.message : String(error) };
      }
      return reads === undefined ? { status: 'ready' } : reads.probe(controlFile);
    },
    stuckReaders: () => (reads === undefined ? 0 : reads.state.stopping),
    close: async () => {
      // reader connections first: the last connection to close a file checkpoints its WAL and removes it
      await reads?.close();
      for (const store of stores.values()) await (await store).driver.close();
      await control.close();
    },
  };
}

export async function openPostgresBackend(databaseUrl: string, options: PostgresBackendOptions = {}): Promise<Backend> {
  const driver = openPostgres(databaseUrl, driverOptions(options));
  return openSharedBackend('postgres', driver, options);
}

/** MySQL or MariaDB (`mysql://` or `mariadb://`), like PostgreSQL: one database, every row carrying its site. */
export async function openMysqlBackend(databaseUrl: string, options: PostgresBackendOptions = {}): Promise<Backend> {
  // loaded only for this storage: the others never load mysql2
  const { openMysql } = await import('../service/sql/mysql.js');
  const driver = openMysql(databaseUrl.replace(/^mariadb:/i, 'mysql:'), driverOptions(options));
  return openSharedBackend('mysql', driver, options);
}

function driverOptions(options: PostgresBackendOptions): PostgresBackendOptions {
  return {
    ...(options.max === undefined ? {} : { max: options.max }),
    ...(options.queryTimeoutMs === undefined ? {} : { queryTimeoutMs: options.queryTimeoutMs }),
    ...(options.acquireTimeoutMs === undefined ? {} : { acquireTimeoutMs: options.acquireTimeoutMs }),
  };
}

/** One database server for every site: the directory's tables and the sites' shared tables in it. */
async function openSharedBackend(
  kind: Backend['kind'],
  driver: SqlDriver & { readiness(): Promise<Readiness> },
  options: DirectoryOptions,
): Promise<Backend> {
  const directory = new Directory(driver, options);
  await directory.init();
  await createTables(driver, true);
  const searchIndex = await searchIndexFits(driver);
  const stores = new Map<string, SqlStore>();
  return {
    kind,
    directory,
    store: async (site) => {
      let store = stores.get(site);
      if (store === undefined) stores.set(site, (store = siteStore(driver, site, true, searchIndex)));
      return store;
    },
    ping: async () => {
      const state = await driver.readiness();
      if (state.status !== 'ready') throw readinessError(state);
    },
    readiness: () => driver.readiness(),
    stuckReaders: () => 0,
    close: () => driver.close(),
  };
}

function readinessError(state: Exclude<Readiness, { status: 'ready' }>): Error {
  return Object.assign(new Error(`The database is ${state.status}: ${state.detail}`), state);
}

/**
 * A database server when a URL is given (`postgres://…` or `postgresql://…` PostgreSQL, `mysql://…` or `mariadb://…`
 * MySQL/MariaDB), SQLite files under `dataDir` otherwise.
 */
export function openBackend(
  options: { readonly dataDir?: string; readonly databaseUrl?: string } & SqliteBackendOptions & PostgresBackendOptions,
): Promise<Backend> {
  const { dataDir, databaseUrl, readerThreads, readsPerSite, maxStuckReaders, sitesPerReader, max, ...common } =
    options;
  if (databaseUrl !== undefined && databaseUrl !== '') {
    const server = { ...common, ...(max === undefined ? {} : { max }) };
    if (/^(mysql|mariadb):/i.test(databaseUrl)) return openMysqlBackend(databaseUrl, server);
    if (/^postgres(ql)?:/i.test(databaseUrl)) return openPostgresBackend(databaseUrl, server);
    throw new Error(
      `The database URL must begin with postgres://, mysql:// or mariadb://, not ${databaseUrl.split(':')[0]}:`,
    );
  }
  return openSqliteBackend(dataDir ?? 'data', {
    ...common,
    ...(readerThreads === undefined ? {} : { readerThreads }),
    ...(readsPerSite === undefined ? {} : { readsPerSite }),
    ...(maxStuckReaders === undefined ? {} : { maxStuckReaders }),
    ...(sitesPerReader === undefined ? {} : { sitesPerReader }),
  });
}
