// Where the service keeps its data: SQLite files under a data directory (the embedded default: control.db for sites,
// keys and users, and one file per site under sites/), or one PostgreSQL database for everything (DATABASE_URL),
// every row carrying its site. Both create their tables on first start.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlDriver } from './store/driver.js';
import { openPostgres } from './store/postgres.js';
import { SiteStore } from './store/site-store.js';
import { openSqlite } from './store/sqlite.js';
import { Directory, type DirectoryOptions } from './tenancy.js';

export interface Backend {
  readonly kind: 'sqlite' | 'postgres';
  readonly directory: Directory;
  /** The store of an existing site (the caller checks that the site exists). */
  store(site: string): Promise<SiteStore>;
  /** Resolves when the database answers a trivial query (`/ready`). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

async function createTables(driver: SqlDriver, shared: boolean): Promise<void> {
  for (const sql of SiteStore.schemaSql(driver.dialect, shared)) await driver.run(sql);
}

export async function openSqliteBackend(dataDir: string, options: DirectoryOptions = {}): Promise<Backend> {
  mkdirSync(join(dataDir, 'sites'), { recursive: true });
  const control = openSqlite(join(dataDir, 'control.db'));
  const directory = new Directory(control, options);
  await directory.init();
  const stores = new Map<string, Promise<SiteStore>>();
  return {
    kind: 'sqlite',
    directory,
    store: (site) => {
      let store = stores.get(site);
      if (store === undefined) {
        store = (async () => {
          const driver = openSqlite(join(dataDir, 'sites', `${site}.db`));
          await createTables(driver, false);
          return new SiteStore(driver, site, false);
        })();
        stores.set(site, store);
      }
      return store;
    },
    ping: async () => {
      await control.all('SELECT 1');
    },
    close: async () => {
      for (const store of stores.values()) await (await store).driver.close();
      await control.close();
    },
  };
}

export async function openPostgresBackend(
  databaseUrl: string,
  options: { readonly max?: number } & DirectoryOptions = {},
): Promise<Backend> {
  const driver = openPostgres(databaseUrl, options.max === undefined ? {} : { max: options.max });
  const directory = new Directory(driver, options);
  await directory.init();
  await createTables(driver, true);
  const stores = new Map<string, SiteStore>();
  return {
    kind: 'postgres',
    directory,
    store: async (site) => {
      let store = stores.get(site);
      if (store === undefined) stores.set(site, (store = new SiteStore(driver, site, true)));
      return store;
    },
    ping: async () => {
      await driver.all('SELECT 1');
    },
    close: () => driver.close(),
  };
}

/** PostgreSQL when a database URL is given, SQLite files under `dataDir` otherwise. */
export function openBackend(
  options: { readonly dataDir?: string; readonly databaseUrl?: string } & DirectoryOptions,
): Promise<Backend> {
  const { dataDir, databaseUrl, ...directory } = options;
  return databaseUrl !== undefined && databaseUrl !== ''
    ? openPostgresBackend(databaseUrl, directory)
    : openSqliteBackend(dataDir ?? 'data', directory);
}
