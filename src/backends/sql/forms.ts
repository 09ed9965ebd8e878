// Storage forms every dialect shares: the types each database keeps alike (Int32, Double, Date, Guid, Binary), the
// reading of driver values back into row form, and the checks of what a decimal column keeps. Each dialect's
// storage.ts says what differs and hands the rest to these.
import type { LiteralValue } from '../../syntax/ast.js';
import { MAX_STORABLE_INSTANT, MIN_STORABLE_INSTANT, readDateText } from '../../values/calendar.js';
import { decimalToString, type Decimal } from '../../values/decimal.js';
import { isCanonicalInstant } from '../../values/temporal.js';
import {
  readBinary,
  readDate,
  readDecimal,
  readGuid,
  readInstant,
  readNumber,
  readTimeOfDay,
  toDecimal,
} from '../../values/read.js';
import type { EncodedLiteral, SqlParam, ValueFacets } from './dialect.js';

type Literal = Exclude<LiteralValue, { type: 'null' }>;

/** The parameter of a literal of a type every dialect binds alike (the others are the dialect's). */
export function encodeLiteralAlike(literal: Literal): EncodedLiteral {
  switch (literal.type) {
    case 'Edm.String':
      return literal.value;
    case 'Edm.Int32':
      return literal.value;
    case 'Edm.Date':
      if (typeof readDateText(literal.value, true) !== 'number') {
        return {
          unsupported: `The date ${literal.value} (outside 0001-01-01 … 9999-12-31, the range the databases store)`,
        };
      }
      return literal.value;
    case 'Edm.Guid':
      return literal.value.toLowerCase();
    case 'Edm.Binary':
      return Buffer.from(literal.bytes);
    case 'Edm.TimeOfDay':
      // milliseconds since midnight, as the memory backend reads it (time() gives the same form in SQL)
      return readTimeOfDay(literal.value)!;
    default:
      return { unsupported: `A literal of type ${literal.type}` };
  }
}

/** An instant literal's epoch milliseconds, or the 501 for one outside the years every database stores. */
export function storableInstant(literal: Extract<Literal, { type: 'Edm.DateTimeOffset' }>): number | EncodedLiteral {
  const ms = literal.epochMilliseconds;
  if (ms < MIN_STORABLE_INSTANT || ms > MAX_STORABLE_INSTANT) {
    return {
      unsupported: `The instant ${literal.value} (outside the years 0001 … 9999, the range the databases store)`,
    };
  }
  return ms;
}

/** A decimal literal's exact digits in plain form (no exponent, no leading `+`). */
export function decimalLiteralText(value: string): string {
  const decimal = toDecimal(value);
  return decimal === null ? value : decimalToString(decimal);
}

/** A row value of a type every dialect stores alike, as its parameter; undefined when it cannot be stored. */
export function encodeAlike(property: ValueFacets, value: unknown): SqlParam | undefined {
  switch (property.type) {
    case 'Edm.Int32': {
      const n = readNumber(value);
      return n === null || !Number.isInteger(n) ? undefined : n;
    }
    case 'Edm.Double': {
      const n = readNumber(value);
      return n === null ? undefined : n;
    }
    case 'Edm.Date':
      return readDate(value) ?? undefined;
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

/** A row value of an instant, as epoch milliseconds within the years every database stores, or null. */
export function storableInstantValue(value: unknown): number | null {
  const ms = readInstant(value);
  return ms === null || ms < MIN_STORABLE_INSTANT || ms > MAX_STORABLE_INSTANT ? null : ms;
}

/** An instant within 0001…9999 as `YYYY-MM-DDTHH:MM:SS.sssZ`. */
export function isoInstant(ms: number): string {
  return new Date(ms).toISOString();
}

/** A row value of a decimal as an exact decimal, or null when it is not one. */
export function decimalValue(value: unknown): Decimal | null {
  const raw = readDecimal(value);
  return raw === null ? null : toDecimal(raw);
}

/** Whether a decimal has at most `scale` places and `precision − scale` integer digits. */
export function fitsDigits(d: Decimal, precision: number, scale: number): boolean {
  if (d.coefficient === 0n) return true;
  if (d.exponent < -scale) return false;
  const digits = (d.coefficient < 0n ? -d.coefficient : d.coefficient).toString().length;
  return digits + d.exponent <= precision - scale;
}

/**
 * A value as a driver returned it, in the row form of docs/backends.md (decimals and Int64 as exact text): the
 * drivers' forms of every type, decimals as the text of a native decimal column (a dialect that keeps decimals
 * otherwise decodes them itself).
 */
export function decodeAlike(property: ValueFacets, raw: unknown): unknown {
  if (raw === null || raw === undefined) return null;
  switch (property.type) {
    case 'Edm.Boolean':
      return typeof raw === 'boolean' ? raw : Number(raw) !== 0;
    case 'Edm.Int64':
      return typeof raw === 'bigint' ? raw.toString() : String(raw);
    case 'Edm.Int32':
    case 'Edm.Double':
      return typeof raw === 'number' ? raw : Number(raw);
    case 'Edm.Decimal':
      return decimalTextAlike(raw) ?? raw;
    case 'Edm.Date':
      if (raw instanceof Date) {
        // drivers that parse DATE make a local midnight
        return `${String(raw.getFullYear()).padStart(4, '0')}-${String(raw.getMonth() + 1).padStart(2, '0')}-${String(raw.getDate()).padStart(2, '0')}`;
      }
      return String(raw).slice(0, 10);
    case 'Edm.DateTimeOffset': {
      // SQLite stores the canonical form already; other drivers' text (MySQL's DATETIME: UTC, a space, no zone) and
      // Date objects are read as row values are
      if (isCanonicalInstant(raw)) return raw;
      const ms = readInstant(raw);
      return ms === null ? raw : new Date(ms).toISOString();
    }
    case 'Edm.Guid':
      return String(raw).toLowerCase();
    case 'Edm.Binary':
      return raw instanceof Uint8Array ? new Uint8Array(raw) : raw;
    default:
      return raw;
  }
}

/** A native decimal column's value (numeric, DECIMAL: exact text) as canonical text, or undefined (NaN). */
export function decimalTextAlike(raw: unknown): string | undefined {
  // numeric/DECIMAL text keeps the column's trailing zeros ('12.3400'): the canonical form drops them
  const text = String(raw);
  if (PLAIN_DECIMAL.test(text)) return trimFraction(text);
  const d = toDecimal(text);
  return d === null ? undefined : decimalToString(d);
}

const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** '12.3400' → '12.34', '5.000' → '5', '-0.00' → '0'. */
export function trimFraction(text: string): string {
  if (!text.includes('.')) return text === '-0' ? '0' : text;
  let end = text.length;
  while (text.charCodeAt(end - 1) === 48) end--; // '0'
  if (text.charCodeAt(end - 1) === 46) end--; // '.'
  const trimmed = text.slice(0, end);
  return trimmed === '-0' ? '0' : trimmed;
}
