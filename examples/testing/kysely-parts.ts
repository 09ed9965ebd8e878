// An OData query mapped to SQL by hand through a query builder (Kysely, on SQLite): the kind of adapter a user writes
// for their ORM, and checks with `checkAgainstOracle` (test/testing/examples.test.ts, docs/testing.md). It takes the
// engine's bound query (names resolved, types known) and supports comparisons, `in`, `and`, `or`, `contains` and
// `startswith` over String, Int32 and Boolean properties, `$orderby`, `$select`, `$top`, `$skip` and `$count`.
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql, type RawBuilder } from 'kysely';
import { parseQuery, validateQuery, type BoundExpr } from '../../src/index.js';
import { Part, type PartRow } from './parts.js';

interface Tables {
  // SQLite keeps Booleans as 0 and 1
  part: Omit<PartRow, 'IsCritical'> & { IsCritical: number };
}

export function openParts(): Kysely<Tables> {
  return new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });
}

export async function createParts(db: Kysely<Tables>): Promise<void> {
  await db.schema
    .createTable('part')
    .addColumn('PartID', 'text', (c) => c.primaryKey())
    .addColumn('Description', 'text', (c) => c.notNull())
    .addColumn('Category', 'text')
    .addColumn('ReorderPoint', 'integer')
    .addColumn('IsCritical', 'integer', (c) => c.notNull())
    .execute();
}

export async function replaceParts(db: Kysely<Tables>, rows: readonly PartRow[]): Promise<void> {
  await db.deleteFrom('part').execute();
  for (const row of rows)
    await db
      .insertInto('part')
      .values({ ...row, IsCritical: row.IsCritical ? 1 : 0 })
      .execute();
}

type Condition = RawBuilder<unknown>;

/** The SQL of a bound expression: a value, or a condition that is true, false or (for SQL) unknown. */
function expression(e: BoundExpr): Condition {
  switch (e.kind) {
    case 'property':
      return e.type === 'Edm.Boolean' ? sql`(${sql.ref(e.property.name)} = 1)` : sql.ref(e.property.name);
    case 'literal':
      if (e.value.type === 'null') return sql`NULL`;
      if (e.value.type === 'Edm.Boolean') return sql.lit(e.value.value ? 1 : 0);
      if (e.value.type === 'Edm.String' || e.value.type === 'Edm.Int32') return sql.val(e.value.value);
      break;
    case 'comparison': {
      const [l, r] = [expression(e.left), expression(e.right)];
      // OData's eq and ne treat null as a value (null eq null is true): SQLite's IS and IS NOT do the same
      if (e.operator === 'eq') return sql`(${l} IS ${r})`;
      if (e.operator === 'ne') return sql`(${l} IS NOT ${r})`;
      const op = { gt: '>', ge: '>=', lt: '<', le: '<=' }[e.operator];
      // with a null operand the comparison is unknown in SQL and false in OData: both drop the row
      return sql`(${l} ${sql.raw(op)} ${r})`;
    }
    case 'logical':
      return sql`(${expression(e.left)} ${sql.raw(e.operator === 'and' ? 'AND' : 'OR')} ${expression(e.right)})`;
    case 'in':
      return sql`(${expression(e.left)} IN (${sql.join(e.items.map(expression))}))`;
    case 'call': {
      const [a, b] = e.args.map(expression);
      // instr and substr count characters, as OData does; no LIKE, so % and _ are plain characters
      if (e.name === 'contains') return sql`(instr(${a}, ${b}) > 0)`;
      if (e.name === 'startswith') return sql`(substr(${a}, 1, length(${b})) = ${b})`;
      break;
    }
    default:
      break;
  }
  throw new Error(`not supported by this adapter: ${e.kind}`);
}

export interface PartsAnswer {
  readonly rows: Record<string, unknown>[];
  readonly count?: number;
}

/** Answers an OData query string over the table, as a service's read would. */
export async function queryParts(db: Kysely<Tables>, queryText: string): Promise<PartsAnswer> {
  const bound = validateQuery(parseQuery(queryText), Part);
  let query = db.selectFrom('part').select(bound.select.map((p) => sql.ref(p.name).as(p.name)));
  if (bound.filter !== undefined) query = query.where(expression(bound.filter) as RawBuilder<boolean>);
  for (const item of bound.orderBy) query = query.orderBy(expression(item.expr), item.direction);
  // SQLite takes OFFSET only after a LIMIT: -1 is none
  if (bound.top !== undefined || bound.skip !== undefined) query = query.limit(bound.top ?? -1);
  if (bound.skip !== undefined) query = query.offset(bound.skip);
  const rows = (await query.execute()) as Record<string, unknown>[];
  if (!bound.count) return { rows };
  let counting = db.selectFrom('part').select(sql<number>`count(*)`.as('n'));
  if (bound.filter !== undefined) counting = counting.where(expression(bound.filter) as RawBuilder<boolean>);
  const { n } = await counting.executeTakeFirstOrThrow();
  return { rows, count: n };
}
