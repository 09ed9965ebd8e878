// The dialects by name: the one place a name becomes the dialect that knows its database.
import type { Dialect, SqlDialectName } from './dialect.js';
import { mysqlDialect } from './mysql/dialect.js';
import { postgresDialect } from './postgres/dialect.js';
import { sqliteDialect } from './sqlite/dialect.js';

export const dialects: Readonly<Record<SqlDialectName, Dialect>> = {
  sqlite: sqliteDialect,
  postgres: postgresDialect,
  mysql: mysqlDialect,
};
