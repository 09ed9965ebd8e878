// Reading row values into their working representation, per EDM type: what the memory backend evaluates and the
// SQL storage encodes. Rows come from JSON bodies, database drivers or the caller's own objects, so each type
// accepts the forms those naturally give (docs/backends.md lists them); anything unreadable counts as null.
import { DAY, formatDate } from './calendar.js';
import type { EdmPrimitiveType } from './edm.js';
import { parseDecimal, type Decimal } from './decimal.js';
import { parseDuration, readInstantText, readTimeOfDayText } from './temporal.js';

/** Working values: Int64 as bigint, Decimal as the raw number/string or a Decimal, instants and durations in ms. */
export type Value = string | number | boolean | bigint | Decimal | Uint8Array | null;

/** Int64: a bigint, a safe integer number, or decimal digits (PostgreSQL's int8 comes as a string). */
export function readInt64(value: unknown): bigint | null {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : null;
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return BigInt(value);
  return null;
}

/** Int32 and Double: numbers (a numeric string from a driver is read too). */
export function readNumber(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isNaN(n) && value !== 'NaN' ? null : n;
  }
  if (typeof value === 'bigint') return Number(value);
  return null;
}

/** Decimal: kept as given when it is a number or decimal text (compared exactly later); anything else null. */
export function readDecimal(value: unknown): number | string | Decimal | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string') return parseDecimal(value) === undefined ? null : value;
  if (typeof value === 'bigint') return value.toString();
  if (isDecimal(value)) return value;
  return null;
}

export function isDecimal(value: unknown): value is Decimal {
  return typeof value === 'object' && value !== null && 'coefficient' in value && 'exponent' in value;
}

/** Any Decimal-typed working value as a Decimal (allocates; used off the fast paths). */
export function toDecimal(value: number | string | bigint | Decimal): Decimal | null {
  if (isDecimal(value)) return value;
  return parseDecimal(value) ?? null;
}

export function readBoolean(value: unknown): boolean | null {
  return typeof value === 'boolean' ? value : null;
}

export function readString(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** Guid: compared by its lower-case text. */
export function readGuid(value: unknown): string | null {
  return typeof value === 'string' ? value.toLowerCase() : null;
}

/** Date: `YYYY-MM-DD` text, or a JavaScript Date (its UTC calendar day). */
export function readDate(value: unknown): string | null {
  if (typeof value === 'string') {
    // the common case, `YYYY-MM-DD` with a four-digit year, needs no pattern test
    if (value.length === 10 && value.charCodeAt(4) === 45 && value.charCodeAt(7) === 45) return value;
    return /^-?\d{4,}-\d{2}-\d{2}$/.test(value) ? value : value.length >= 10 ? value.slice(0, 10) : null;
  }
  if (value instanceof Date)
    return Number.isNaN(value.getTime()) ? null : formatDate(Math.floor(value.getTime() / DAY));
  return null;
}

/**
 * DateTimeOffset: an instant in epoch milliseconds, from a Date, a number of milliseconds, or ISO
 * text with an offset (text without one is read as UTC). Truncated to milliseconds (SEMANTICS.md).
 */
export function readInstant(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : null;
  if (value instanceof Date) {
    const ms = value.getTime();
    return Number.isNaN(ms) ? null : ms;
  }
  if (typeof value === 'string') {
    const instant = readInstantText(value, DRIVER_TEXT);
    return typeof instant === 'number' ? instant : null;
  }
  return null;
}

/** Drivers' and callers' instant text: a space for `T`, short offsets, and text without an offset read as UTC. */
const DRIVER_TEXT = { driverText: true, offsetless: 'UTC' } as const;

/** TimeOfDay: milliseconds since midnight, from `HH:MM[:SS[.fff]]` text or a number of milliseconds. */
export function readTimeOfDay(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return null;
  const ms = readTimeOfDayText(value);
  return typeof ms === 'number' ? ms : null;
}

/** Duration: milliseconds, from ISO 8601 day-time text (`P1DT2H`) or a number of milliseconds. */
export function readDuration(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return parseDuration(value) ?? null;
  return null;
}

/** Binary: bytes, from a Uint8Array (or Buffer) or base64/base64url text. */
export function readBinary(value: unknown): Uint8Array | null {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string')
    return new Uint8Array(Buffer.from(value, value.includes('-') || value.includes('_') ? 'base64url' : 'base64'));
  return null;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Reads a row value as the working value of its EDM type. */
export function reader(type: EdmPrimitiveType): (value: unknown) => Value {
  switch (type) {
    case 'Edm.String':
      return readString;
    case 'Edm.Boolean':
      return readBoolean;
    case 'Edm.Int32':
    case 'Edm.Double':
      return readNumber;
    case 'Edm.Int64':
      return readInt64;
    case 'Edm.Decimal':
      return readDecimal;
    case 'Edm.Date':
      return readDate;
    case 'Edm.DateTimeOffset':
      return readInstant;
    case 'Edm.TimeOfDay':
      return readTimeOfDay;
    case 'Edm.Duration':
      return readDuration;
    case 'Edm.Guid':
      return readGuid;
    case 'Edm.Binary':
      return readBinary;
  }
}

/** An integer working value as a bigint. */
export function toBig(value: Value): bigint {
  return typeof value === 'bigint' ? value : BigInt(value as number);
}

/** A Decimal working value as a Decimal (null stays null). */
export function decimalOf(value: Value): Decimal | null {
  return value === null ? null : toDecimal(value as number | string | bigint | Decimal);
}
