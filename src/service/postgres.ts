// odata-engine/service/postgres: a store in a PostgreSQL database (pg), its tables made from the model.
import { openPostgres, type PostgresDriverOptions } from './sql/postgres.js';
import { openSqlStore, type SqlStore, type SqlStoreOptions } from './sql/sql-store.js';

export { openPostgres, type PostgresDriverOptions } from './sql/postgres.js';

/** A store in the PostgreSQL database at `connectionString` (`postgres://user@host:5432/db`). */
export function openPostgresStore(
  connectionString: string,
  options: SqlStoreOptions & { readonly driver?: PostgresDriverOptions },
): Promise<SqlStore> {
  const { driver, ...store } = options;
  return openSqlStore(openPostgres(connectionString, driver), store);
}
