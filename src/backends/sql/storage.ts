// The storage forms by dialect name (odata-engine/sql): each dialect's storage.ts says how its database keeps each
// EDM type (the table of docs/backends.md), these functions ask it. The emitter relies on these forms; a table made
// some other way must match them.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { EntityType, Property } from '../../model/schema.js';
import type { ColumnDefinition, SqlDialectName, SqlParam } from './dialect.js';
import { dialects } from './dialects.js';

export interface CreateTableOptions {
  readonly dialect: SqlDialectName;
  readonly table: string | readonly [string, string];
  readonly columns?: Readonly<Record<string, string>>;
  /** Columns in front of the entity's own (the tenant's site): they lead the primary key. */
  readonly scopeColumns?: Readonly<Record<string, EdmPrimitiveType>>;
  /**
   * Properties that lead the key after the scope: a contained entity's parent key (a work-order comment's
   * CommentID is unique within its work order, so the table's key is WorkOrderID, CommentID).
   */
  readonly parentKey?: readonly string[];
  /** `CREATE TABLE IF NOT EXISTS`. */
  readonly ifNotExists?: boolean;
}

/** `CREATE TABLE` for an entity type in the storage forms the emitter expects. */
export function createTableSql(entityType: EntityType, options: CreateTableOptions): string {
  const column = (property: string): string => options.columns?.[property] ?? property;
  const columns: ColumnDefinition[] = [];
  const key: string[] = [];
  for (const [name, type] of Object.entries(options.scopeColumns ?? {})) {
    columns.push({ name, type, isKey: true, maxLength: 100, nullable: false });
    key.push(name);
  }
  for (const property of entityType.properties.values()) {
    columns.push({ ...property, name: column(property.name) });
  }
  key.push(...(options.parentKey ?? []).map(column), ...entityType.key.map((p) => column(p.name)));
  return dialects[options.dialect].statements.createTable(
    { name: options.table, columns, key },
    { ifNotExists: options.ifNotExists === true },
  );
}

export function columnType(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'name' | 'maxLength' | 'precision' | 'scale' | 'isKey'>,
): string {
  return dialects[dialect].storage.columnType(property);
}

/**
 * A row value (the forms docs/backends.md lists for the memory backend) as the parameter that stores it. Returns
 * undefined for a value the type cannot hold (the caller reports it): a decimal its column would round or cannot
 * hold is refused, never stored changed.
 */
export function encodeValue(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'scale' | 'name'> & Partial<Pick<Property, 'precision'>>,
  value: unknown,
): SqlParam | undefined {
  return dialects[dialect].storage.encode(property, value);
}

/** A value as a driver returned it, in the row form of docs/backends.md (decimals and Int64 as exact text). */
export function decodeValue(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'scale'>,
  raw: unknown,
): unknown {
  return dialects[dialect].storage.decode(property, raw);
}

/** A whole row from the driver into row form, for the given properties (keyed by property name). */
export function decodeRow(
  dialect: SqlDialectName,
  properties: readonly Property[],
  raw: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const { storage } = dialects[dialect];
  const row: Record<string, unknown> = {};
  for (const property of properties) row[property.name] = storage.decode(property, raw[property.name]);
  return row;
}
