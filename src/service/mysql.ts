// odata-engine/service/mysql: a store in a MySQL or MariaDB database (mysql2), its tables made from the model.
import { openMysql, type MysqlDriverOptions } from './sql/mysql.js';
import { openSqlStore, type SqlStore, type SqlStoreOptions } from './sql/sql-store.js';

export { openMysql, type MysqlDriverOptions } from './sql/mysql.js';

/** A store in the MySQL/MariaDB database at `uri` (`mysql://user@host:3306/db`). */
export function openMysqlStore(
  uri: string,
  options: SqlStoreOptions & { readonly driver?: MysqlDriverOptions },
): Promise<SqlStore> {
  const { driver, ...store } = options;
  return openSqlStore(openMysql(uri, driver), store);
}
