// How each EDM type is kept in each database: the column types (createTableSql), the parameter form of a literal
// (encodeLiteral), and the conversions between stored values and the row values the memory backend and the server
// use (encodeValue, decodeValue). The emitter relies on these forms; a table made some other way must match them.
//
// | EDM type       | SQLite                          | PostgreSQL          | MySQL / MariaDB                      |
// |----------------|---------------------------------|---------------------|--------------------------------------|
// | String         | TEXT (BINARY collation)         | text COLLATE "C"    | VARCHAR/LONGTEXT utf8mb4_nopad_bin   |
// | Boolean        | INTEGER 0/1                     | boolean             | BOOLEAN (0/1)                        |
// | Int32, Int64   | INTEGER                         | integer, bigint     | INT, BIGINT                          |
// | Decimal(p,s)   | INTEGER, the value × 10^s       | numeric(p,s)        | DECIMAL(p,s), else DECIMAL(38,10)    |
// | Double         | REAL                            | double precision    | DOUBLE                               |
// | Date           | TEXT YYYY-MM-DD                 | date                | DATE                                 |
// | DateTimeOffset | TEXT YYYY-MM-DDTHH:MM:SS.sssZ   | timestamptz(3)      | DATETIME(3), in UTC                  |
// | Guid           | TEXT, lower case                | uuid                | CHAR(36) ascii, lower case           |
// | Binary         | BLOB                            | bytea               | LONGBLOB                             |
//
// SQLite has no decimal type: a scaled integer is exact, orders correctly and can be indexed, so a decimal column
// in SQLite needs a scale and a precision of at most 18. Text sorts by code point in every dialect through the
// binary collations above. Instants are UTC with millisecond precision (SEMANTICS.md).
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { EntityType, Property } from '../../model/schema.js';
import type { LiteralValue } from '../../syntax/ast.js';
import { INT64_MAX, INT64_MIN } from '../../values/arithmetic.js';
import { MAX_STORABLE_INSTANT, MIN_STORABLE_INSTANT } from '../../values/calendar.js';
import { decimalToString, type Decimal } from '../../values/decimal.js';
import {
  readBinary,
  readBoolean,
  readDate,
  readDecimal,
  readGuid,
  readInstant,
  readInt64,
  readNumber,
  readTimeOfDay,
  toDecimal,
} from '../../values/read.js';
import type { SqlDialectName, SqlParam } from './dialect.js';
import { dialects } from './dialects.js';

/**
 * Literals a dialect cannot hold are refused with the reason: `unsupported` (a 501: the engine could, this database
 * cannot) or `invalid` (a 400: no value this database stores could ever match or hold it).
 */
export type EncodedLiteral = SqlParam | { readonly unsupported: string } | { readonly invalid: string };

const FOUR_DIGIT_YEAR = /^\d{4}-/;

/** The parameter value for a literal, in the form `typedParam` of the dialect expects. */
export function encodeLiteral(
  dialect: SqlDialectName,
  literal: Exclude<LiteralValue, { type: 'null' }>,
): EncodedLiteral {
  switch (literal.type) {
    case 'Edm.String':
      if (dialect === 'postgres' && literal.value.includes('\u0000')) {
        return { invalid: 'A string with the character U+0000 (PostgreSQL text cannot hold it)' };
      }
      return literal.value;
    case 'Edm.Boolean':
      return dialect === 'postgres' ? literal.value : literal.value ? 1 : 0;
    case 'Edm.Int32': // better-sqlite3 binds a number as REAL, a bigint as INTEGER
      return dialect === 'sqlite' ? BigInt(literal.value) : literal.value;
    case 'Edm.Int64':
      return dialect === 'sqlite' ? literal.value : literal.value.toString();
    case 'Edm.Decimal': {
      const text = decimalText(literal.value);
      if (dialect === 'mysql' && !fitsMysqlDecimal(text)) {
        return { unsupported: `The decimal ${literal.value} (MySQL's DECIMAL holds 65 digits, 30 after the point)` };
      }
      return text;
    }
    case 'Edm.Double': {
      const v = literal.value;
      if (Number.isNaN(v) && dialect !== 'postgres') return { unsupported: `NaN (${dialect} cannot hold it)` };
      if (!Number.isFinite(v) && dialect === 'mysql')
        return { unsupported: `${v > 0 ? 'INF' : '-INF'} (MySQL cannot hold it)` };
      if (dialect === 'postgres' && !Number.isFinite(v))
        return Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      return v;
    }
    case 'Edm.Date':
      if (!FOUR_DIGIT_YEAR.test(literal.value) || literal.value.startsWith('0000')) {
        return {
          unsupported: `The date ${literal.value} (outside 0001-01-01 … 9999-12-31, the range the databases store)`,
        };
      }
      return literal.value;
    case 'Edm.DateTimeOffset': {
      const ms = literal.epochMilliseconds;
      if (ms < MIN_STORABLE_INSTANT || ms > MAX_STORABLE_INSTANT) {
        return {
          unsupported: `The instant ${literal.value} (outside the years 0001 … 9999, the range the databases store)`,
        };
      }
      return instantText(dialect, ms);
    }
    case 'Edm.Guid':
      return literal.value.toLowerCase();
    case 'Edm.Binary':
      return Buffer.from(literal.bytes);
    case 'Edm.TimeOfDay': {
      // milliseconds since midnight, as the memory backend reads it (time() gives the same form in SQL)
      const ms = readTimeOfDay(literal.value)!;
      return dialect === 'sqlite' ? BigInt(ms) : ms;
    }
    default:
      return { unsupported: `A literal of type ${literal.type}` };
  }
}

/** An instant in the text form the dialect stores or casts from. */
function instantText(dialect: SqlDialectName, ms: number): string {
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ within 0001…9999
  return dialect === 'mysql' ? `${iso.slice(0, 10)} ${iso.slice(11, 23)}` : iso;
}

/** A decimal literal's exact digits in plain form (no exponent, no leading `+`). */
function decimalText(value: string): string {
  const decimal = toDecimal(value);
  return decimal === null ? value : decimalToString(decimal);
}

/** MySQL's DECIMAL holds at most 65 digits, at most 30 of them after the point. */
function fitsMysqlDecimal(text: string): boolean {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  return whole.replace(/^0+/, '').length + fraction.length <= 65 && fraction.length <= 30;
}

// ── tables ──────────────────────────────────────────────────────────────────

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
  const d = dialects[options.dialect];
  const name =
    typeof options.table === 'string'
      ? d.quoteIdentifier(options.table)
      : options.table.map((p) => d.quoteIdentifier(p)).join('.');
  const column = (property: string): string => d.quoteIdentifier(options.columns?.[property] ?? property);
  const definitions: string[] = [];
  const key: string[] = [];
  for (const [scopeColumn, type] of Object.entries(options.scopeColumns ?? {})) {
    definitions.push(
      `${d.quoteIdentifier(scopeColumn)} ${columnType(options.dialect, { type, name: scopeColumn, isKey: true, maxLength: 100 })} NOT NULL`,
    );
    key.push(d.quoteIdentifier(scopeColumn));
  }
  for (const property of entityType.properties.values()) {
    definitions.push(
      `${column(property.name)} ${columnType(options.dialect, property)}${property.nullable ? '' : ' NOT NULL'}`,
    );
  }
  key.push(...(options.parentKey ?? []).map(column), ...entityType.key.map((p) => column(p.name)));
  definitions.push(`PRIMARY KEY (${key.join(', ')})`);
  const suffix = options.dialect === 'mysql' ? ' DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin' : '';
  return `CREATE TABLE${options.ifNotExists === true ? ' IF NOT EXISTS' : ''} ${name} (${definitions.join(', ')})${suffix}`;
}

export function columnType(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'name' | 'maxLength' | 'precision' | 'scale' | 'isKey'>,
): string {
  const { type } = property;
  switch (dialect) {
    case 'sqlite':
      switch (type) {
        case 'Edm.String':
        case 'Edm.Date':
        case 'Edm.DateTimeOffset':
        case 'Edm.Guid':
          return 'TEXT';
        case 'Edm.Double':
          return 'REAL';
        case 'Edm.Binary':
          return 'BLOB';
        default:
          return 'INTEGER';
      }
    case 'postgres':
      switch (type) {
        case 'Edm.String':
          return property.maxLength === undefined ? 'text COLLATE "C"' : `varchar(${property.maxLength}) COLLATE "C"`;
        case 'Edm.Boolean':
          return 'boolean';
        case 'Edm.Int32':
          return 'integer';
        case 'Edm.Int64':
          return 'bigint';
        case 'Edm.Decimal':
          return property.precision === undefined
            ? 'numeric'
            : `numeric(${property.precision}, ${property.scale ?? 0})`;
        case 'Edm.Double':
          return 'double precision';
        case 'Edm.Date':
          return 'date';
        case 'Edm.DateTimeOffset':
          return 'timestamptz(3)';
        case 'Edm.Guid':
          return 'uuid';
        case 'Edm.Binary':
          return 'bytea';
        default:
          return 'text';
      }
    case 'mysql':
      switch (type) {
        case 'Edm.String':
          // keys and bounded strings are VARCHAR (indexable); unbounded text is LONGTEXT
          return property.maxLength !== undefined && property.maxLength <= 16_000
            ? `VARCHAR(${property.maxLength}) COLLATE utf8mb4_nopad_bin`
            : property.isKey
              ? 'VARCHAR(768) COLLATE utf8mb4_nopad_bin'
              : 'LONGTEXT COLLATE utf8mb4_nopad_bin';
        case 'Edm.Boolean':
          return 'BOOLEAN';
        case 'Edm.Int32':
          return 'INT';
        case 'Edm.Int64':
          return 'BIGINT';
        case 'Edm.Decimal': {
          const { precision, scale } = decimalColumn('mysql', property)!;
          return `DECIMAL(${precision}, ${scale})`;
        }
        case 'Edm.Double':
          return 'DOUBLE';
        case 'Edm.Date':
          return 'DATE';
        case 'Edm.DateTimeOffset':
          return 'DATETIME(3)';
        case 'Edm.Guid':
          return 'CHAR(36) CHARACTER SET ascii COLLATE ascii_bin';
        case 'Edm.Binary':
          return 'LONGBLOB';
        default:
          return 'LONGTEXT';
      }
  }
}

// ── row values ──────────────────────────────────────────────────────────────

/**
 * A row value (the forms docs/backends.md lists for the memory backend) as the parameter that stores it. Returns
 * undefined for a value the type cannot hold (the caller reports it).
 */
export function encodeValue(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'scale' | 'name'> & Partial<Pick<Property, 'precision'>>,
  value: unknown,
): SqlParam | undefined {
  if (value === null || value === undefined) return null;
  switch (property.type) {
    case 'Edm.String':
      // PostgreSQL text cannot hold U+0000 and SQLite's text functions stop at it
      return typeof value !== 'string' || (dialect !== 'mysql' && value.includes('\u0000')) ? undefined : value;
    case 'Edm.Boolean': {
      const b = readBoolean(value);
      return b === null ? undefined : dialect === 'postgres' ? b : b ? 1 : 0;
    }
    case 'Edm.Int32': {
      const n = readNumber(value);
      return n === null || !Number.isInteger(n) ? undefined : n;
    }
    case 'Edm.Int64': {
      const n = readInt64(value);
      return n === null ? undefined : dialect === 'sqlite' ? n : n.toString();
    }
    case 'Edm.Decimal': {
      const raw = readDecimal(value);
      const d = raw === null ? null : toDecimal(raw);
      if (d === null) return undefined;
      // a value the column would round or cannot hold is refused, never stored changed (createTableSql's columns)
      const digits = decimalColumn(dialect, property);
      if (digits !== undefined && !fits(d, digits.precision, digits.scale)) return undefined;
      if (dialect !== 'sqlite') return decimalToString(d);
      const scaled = d.coefficient * 10n ** BigInt(d.exponent + (property.scale ?? 0));
      return scaled < INT64_MIN || scaled > INT64_MAX ? undefined : scaled;
    }
    case 'Edm.Double': {
      const n = readNumber(value);
      return n === null ? undefined : n;
    }
    case 'Edm.Date':
      return readDate(value) ?? undefined;
    case 'Edm.DateTimeOffset': {
      const ms = readInstant(value);
      return ms === null || ms < MIN_STORABLE_INSTANT || ms > MAX_STORABLE_INSTANT
        ? undefined
        : instantText(dialect, ms);
    }
    case 'Edm.Guid':
      return readGuid(value)?.toLowerCase() ?? undefined;
    case 'Edm.Binary': {
      const bytes = readBinary(value);
      return bytes === null ? undefined : Buffer.from(bytes);
    }
    default:
      return undefined;
  }
}

/**
 * The digits a decimal column of createTableSql holds, or undefined for PostgreSQL's unbounded `numeric`. MySQL's
 * DECIMAL(p,s) and PostgreSQL's numeric(p,s) round a value with more places (MariaDB with only a Note, even in strict
 * mode), so a value must fit both the places and the integer digits; SQLite's scaled integer keeps `scale` places.
 */
function decimalColumn(
  dialect: SqlDialectName,
  property: Pick<Property, 'scale'> & Partial<Pick<Property, 'precision'>>,
): { precision: number; scale: number } | undefined {
  const { precision, scale } = property;
  switch (dialect) {
    case 'sqlite':
      return { precision: Number.POSITIVE_INFINITY, scale: scale ?? 0 };
    case 'postgres':
      return precision === undefined ? undefined : { precision, scale: scale ?? 0 };
    case 'mysql':
      return { precision: precision ?? 38, scale: scale ?? (precision === undefined ? 10 : 0) };
  }
}

/** Whether a decimal has at most `scale` places and `precision − scale` integer digits. */
function fits(d: Decimal, precision: number, scale: number): boolean {
  if (d.coefficient === 0n) return true;
  if (d.exponent < -scale) return false;
  const digits = (d.coefficient < 0n ? -d.coefficient : d.coefficient).toString().length;
  return digits + d.exponent <= precision - scale;
}

/** A value as a driver returned it, in the row form of docs/backends.md (decimals and Int64 as exact text). */
export function decodeValue(
  dialect: SqlDialectName,
  property: Pick<Property, 'type' | 'scale'>,
  raw: unknown,
): unknown {
  if (raw === null || raw === undefined) return null;
  switch (property.type) {
    case 'Edm.Boolean':
      return typeof raw === 'boolean' ? raw : Number(raw) !== 0;
    case 'Edm.Int64':
      return typeof raw === 'bigint' ? raw.toString() : String(raw);
    case 'Edm.Int32':
    case 'Edm.Double':
      return typeof raw === 'number' ? raw : Number(raw);
    case 'Edm.Decimal': {
      if (dialect === 'sqlite') return scaledToText(BigInt(raw as number | bigint), property.scale ?? 0);
      // numeric/DECIMAL text keeps the column's trailing zeros ('12.3400'): the canonical form drops them
      const text = String(raw);
      return /^-?\d+(\.\d+)?$/.test(text)
        ? trimFraction(text)
        : (() => {
            const d = toDecimal(text);
            return d === null ? raw : decimalToString(d);
          })();
    }
    case 'Edm.Date':
      if (raw instanceof Date) {
        // drivers that parse DATE make a local midnight
        return `${String(raw.getFullYear()).padStart(4, '0')}-${String(raw.getMonth() + 1).padStart(2, '0')}-${String(raw.getDate()).padStart(2, '0')}`;
      }
      return String(raw).slice(0, 10);
    case 'Edm.DateTimeOffset': {
      if (raw instanceof Date) return raw.toISOString();
      const text = String(raw);
      // SQLite stores the canonical form already
      if (text.length === 24 && STORED_INSTANT.test(text)) return text;
      // MySQL's DATETIME text is UTC without a zone
      return /[zZ]|[+-]\d\d:?\d\d$/.test(text)
        ? new Date(text).toISOString()
        : new Date(`${text.replace(' ', 'T')}Z`).toISOString();
    }
    case 'Edm.Guid':
      return String(raw).toLowerCase();
    case 'Edm.Binary':
      return raw instanceof Uint8Array ? new Uint8Array(raw) : raw;
    default:
      return raw;
  }
}

const STORED_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** '12.3400' → '12.34', '5.000' → '5', '-0.00' → '0'. */
function trimFraction(text: string): string {
  if (!text.includes('.')) return text === '-0' ? '0' : text;
  let end = text.length;
  while (text.charCodeAt(end - 1) === 48) end--; // '0'
  if (text.charCodeAt(end - 1) === 46) end--; // '.'
  const trimmed = text.slice(0, end);
  return trimmed === '-0' ? '0' : trimmed;
}

/** A scaled integer (SQLite's decimal column) as canonical decimal text: 123450 at scale 4 → '12.345'. */
function scaledToText(scaled: bigint, scale: number): string {
  if (scale === 0) return scaled.toString();
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(scale + 1, '0');
  const text = trimFraction(`${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`);
  return negative && text !== '0' ? `-${text}` : text;
}

/** A whole row from the driver into row form, for the given properties (keyed by property name). */
export function decodeRow(
  dialect: SqlDialectName,
  properties: readonly Property[],
  raw: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const property of properties) row[property.name] = decodeValue(dialect, property, raw[property.name]);
  return row;
}
