// odata-engine/sql: a bound query as parameterized SQL for SQLite, PostgreSQL and MySQL/MariaDB (docs/backends.md).
import { ODataError } from '../../errors.js';
import type { BoundQuery } from '../../validate/bound.js';
import { dialects } from './dialects.js';
import { SqlEmitter, type RelatedLink, type SqlOptions, type SqlStatement } from './emit.js';

export type { SqlDialectName, SqlParam } from './dialect.js';
export type { RelatedLink, SqlOptions, SqlStatement, SqlTable } from './emit.js';
export { MAX_SQL_LENGTH, MAX_SQL_SUBQUERIES, escapeLike, statementColumns } from './emit.js';
export { createTableSql, columnType, decodeRow, decodeValue, encodeValue, type CreateTableOptions } from './storage.js';
export {
  registerSqliteFunctions,
  runWithDeadline,
  isStatementDeadline,
  StatementDeadlineError,
  type SqliteFunctionHost,
} from './sqlite/functions.js';
export { mysqlSessionSql } from './mysql/dialect.js';
export { isSumOverflow, toSqlApply, type SqlApply } from './apply.js';

function emitter(bound: BoundQuery, options: SqlOptions): SqlEmitter {
  return new SqlEmitter(dialects[options.dialect], options, bound.entityType);
}

/** The full SELECT: the selected columns (named after their properties), WHERE, ORDER BY and LIMIT/OFFSET. */
export function toSql(bound: BoundQuery, options: SqlOptions): SqlStatement {
  const e = emitter(bound, options);
  return e.finish(e.select(bound));
}

/**
 * The rows related to many entities (`$expand`): those whose link columns hold one of the link's tuples, with `$top`
 * and `$skip` per tuple and, for `$count`, each tuple's count in column `odata_count` (see SqlEmitter.related).
 */
export function toSqlRelated(bound: BoundQuery, options: SqlOptions, link: RelatedLink): SqlStatement {
  const e = emitter(bound, options);
  return e.finish(e.related(bound, link));
}

/**
 * The condition alone, reading the table through the alias `t0`, for a statement of your own. A filter that reads
 * through a single-valued navigation (`PurchaseOrder/VendorID`) needs a join in the FROM clause, which this cannot
 * give: it is refused (use toSql or toSqlCount).
 */
export function toSqlWhere(bound: BoundQuery, options: SqlOptions): SqlStatement {
  const e = emitter(bound, options);
  const where = e.where(bound);
  if (e.joins) {
    throw new ODataError(
      'NotImplemented',
      'toSqlWhere cannot read through a single-valued navigation: the condition needs a join (use toSql or toSqlCount)',
      { target: '$filter' },
    );
  }
  return e.finish(where);
}

/** `SELECT COUNT(*) AS count` of the rows matching the filter (and scope), for `$count`. */
export function toSqlCount(bound: BoundQuery, options: SqlOptions): SqlStatement {
  const e = emitter(bound, options);
  return e.finish(e.count(bound));
}
