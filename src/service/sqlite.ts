// odata-engine/service/sqlite: a store in one SQLite file (better-sqlite3), its tables made from the model.
import { openSqlStore, type SqlStore, type SqlStoreOptions } from './sql/sql-store.js';
import { openSqlite, type SqliteDriverOptions } from './sql/sqlite.js';

export { openSqlite, type SqliteDriverOptions } from './sql/sqlite.js';

/** A store in the SQLite file `file` (`:memory:` for one that lives as long as the process). */
export function openSqliteStore(
  file: string,
  options: SqlStoreOptions & { readonly driver?: SqliteDriverOptions },
): Promise<SqlStore> {
  const { driver, ...store } = options;
  return openSqlStore(openSqlite(file, driver), store);
}
