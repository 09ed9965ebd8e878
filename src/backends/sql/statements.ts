// The statements on stored rows whose text is the same in every dialect but for its names, placeholders and column
// types: each dialect builds its `statements` from these and adds what only it has (dialect.ts, Statements).
import type { ColumnFacets, Statements, TableName } from './dialect.js';

/** What the shared statements take from a dialect. */
export interface StatementParts {
  quoteIdentifier(name: string): string;
  placeholder(index: number): string;
  columnType(property: ColumnFacets): string;
  /** Text after CREATE TABLE's column list ('' for none). */
  readonly tableOptions: string;
}

export type SharedStatements = Omit<Statements, 'increment' | 'transactionLock' | 'analyze'>;

/** A table name, quoted (a schema-qualified one part by part). */
export function quoteTable(quoteIdentifier: (name: string) => string, name: TableName): string {
  return typeof name === 'string' ? quoteIdentifier(name) : name.map(quoteIdentifier).join('.');
}

/** A table name without its schema, and a name in the same schema as a table. */
export const unqualified = (name: TableName): string => (typeof name === 'string' ? name : name[1]);
export const besideTable = (table: TableName, name: string): TableName =>
  typeof table === 'string' ? name : [table[0], name];

export function sharedStatements(parts: StatementParts): SharedStatements {
  const q = parts.quoteIdentifier;
  const table = (name: TableName): string => quoteTable(q, name);
  /** `a = ?, b = ?` (or AND-ed), the placeholders numbered from `from`. */
  const equal = (columns: readonly string[], from: number, separator: string): string =>
    columns.map((c, i) => `${q(c)} = ${parts.placeholder(from + i)}`).join(separator);
  const where = (columns: readonly string[] | undefined, from = 0): string =>
    columns === undefined || columns.length === 0 ? '' : ` WHERE ${equal(columns, from, ' AND ')}`;
  return {
    createTable: (definition, options = {}) => {
      const columns = definition.columns.map(
        (c) => `${q(c.name)} ${parts.columnType(c)}${c.nullable ? '' : ' NOT NULL'}`,
      );
      columns.push(`PRIMARY KEY (${definition.key.map(q).join(', ')})`);
      return `CREATE TABLE${options.ifNotExists === true ? ' IF NOT EXISTS' : ''} ${table(definition.name)} (${columns.join(', ')})${parts.tableOptions}`;
    },
    select: (name, columns, conditions, orderBy) =>
      `SELECT ${columns.map(q).join(', ')} FROM ${table(name)}${where(conditions)}${orderBy === undefined || orderBy.length === 0 ? '' : ` ORDER BY ${orderBy.map(q).join(', ')}`}`,
    exists: (name, conditions) => `SELECT 1 AS ${q('x')} FROM ${table(name)}${where(conditions)} LIMIT 1`,
    max: (name, column, conditions) =>
      `SELECT MAX(${q(column)}) AS ${q('max')} FROM ${table(name)}${where(conditions)}`,
    insert: (name, columns, rows = 1) => {
      const tuples: string[] = [];
      for (let row = 0; row < rows; row++) {
        tuples.push(`(${columns.map((_, i) => parts.placeholder(row * columns.length + i)).join(', ')})`);
      }
      return `INSERT INTO ${table(name)} (${columns.map(q).join(', ')}) VALUES ${tuples.join(', ')}`;
    },
    update: (name, set, conditions) =>
      `UPDATE ${table(name)} SET ${equal(set, 0, ', ')}${where(conditions, set.length)}`,
    delete: (name, conditions) => `DELETE FROM ${table(name)}${where(conditions)}`,
  };
}
