// Where the service keeps its data: SQLite files under a data directory (the embedded default: control.db for sites,
// keys and users, and one file per site under sites/), or one PostgreSQL database for everything (DATABASE_URL),
// every row carrying its site. Both create their tables on first start.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { SqlDriver } from './store/driver.js';
import { openPostgres } from './store/postgres.js';
import { SiteStore } from './store/site-store.js';
import { openSqlite } from './store/sqlite.js';
import { Directory } from './tenancy.js';

export interface Backend {
  readonly kind: 'sqlite' | 'postgres';
  readonly directory: Directory;
  /** The store of an existing site (the caller checks that the site exists). */
  store(site: string): Promise<SiteStore>;
  close(): Promise<void>;
}

async function createTables(driver: SqlDriver, shared: boolean): Promise<void> {
  for (const sql of SiteStore.schemaSql(driver.dialect, shared)) await driver.run(sql);
}

export async function openSqliteBackend(dataDir: string): Promise<Backend> {
  mkdirSync(join(dataDir, 'sites'), { recursive: true });
  const control = openSqlite(join(dataDir, 'control.db'));
  const directory = new Directory(control);
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
    close: async () => {
      for (const store of stores.values()) await (await store).driver.close();
      await control.close();
    },
  };
}

export async function openPostgresBackend(databaseUrl: string, options: { max?: number } = {}): Promise<Backend> {
  const driver = openPostgres(databaseUrl, options);
  const directory = new Directory(driver);
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
    close: () => driver.close(),
  };
}

/** PostgreSQL when a database URL is given, SQLite files under `dataDir` otherwise. */
export function openBackend(options: { dataDir?: string; databaseUrl?: string }): Promise<Backend> {
  return options.databaseUrl !== undefined && options.databaseUrl !== ''
    ? openPostgresBackend(options.databaseUrl)
    : openSqliteBackend(options.dataDir ?? 'data');
}
