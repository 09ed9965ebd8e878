// Reading row values into the memory backend's working representation, per EDM type. Rows come
// from JSON bodies, database drivers or the caller's own objects, so each type accepts the forms
// those naturally give (docs/backends.md lists them); anything unreadable counts as null.
import { parseDuration } from '../../syntax/literals.js';
import { parseDecimal, type Decimal } from './decimal.js';

/** Working values: Int64 as bigint, Decimal as the raw number/string or a Decimal, instants and durations in ms. */
export type Value = string | number | boolean | bigint | Decimal | Uint8Array | null;

const DAY = 86_400_000;

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
    // the common case, ISO text ending in Z, needs no pattern test
    const last = value.charCodeAt(value.length - 1);
    if (last === 90 || last === 122) {
      const ms = Date.parse(value);
      if (!Number.isNaN(ms)) return ms;
    }
    return readInstantText(value);
  }
  return null;
}

/**
 * Instant text other than `...Z`: a space instead of `T` (SQL drivers), an offset with or without
 * minutes, or no offset at all, which is read as UTC (never as the process's local time).
 */
function readInstantText(text: string): number | null {
  const match =
    /^(-?\d{4,}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/.exec(text);
  if (match === null) return null;
  const [, date, time = '00:00:00', zone = 'Z'] = match;
  const offset =
    zone === 'Z' || zone === 'z'
      ? 'Z'
      : zone.length === 3
        ? `${zone}:00`
        : zone.includes(':')
          ? zone
          : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const ms = Date.parse(`${date}T${time}${offset}`);
  return Number.isNaN(ms) ? null : ms;
}

/** TimeOfDay: milliseconds since midnight, from `HH:MM[:SS[.fff]]` text or a number of milliseconds. */
export function readTimeOfDay(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value !== 'string') return null;
  const match = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?$/.exec(value);
  if (match === null) return null;
  const [, h, m, s, f] = match;
  return (
    Number(h) * 3_600_000 + Number(m) * 60_000 + Number(s ?? 0) * 1000 + Number((f ?? '').slice(0, 3).padEnd(3, '0'))
  );
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

// ── calendar arithmetic without Date objects (allocation-free, proleptic Gregorian) ─────────────

/** Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date of a day number, as [year, month, day]. Writes into `out` to avoid allocating. */
export function civilFromDays(days: number, out: [number, number, number]): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  out[0] = yoe + era * 400 + (month <= 2 ? 1 : 0);
  out[1] = month;
  out[2] = day;
  return out;
}

/** `YYYY-MM-DD` of a day number. */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days, [0, 0, 0]);
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `${year}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The day number of `YYYY-MM-DD` text. */
export function daysOfDate(date: string): number {
  const dash = date.indexOf('-', 1);
  return daysFromCivil(
    Number(date.slice(0, dash)),
    Number(date.slice(dash + 1, dash + 3)),
    Number(date.slice(dash + 4, dash + 6)),
  );
}

export { DAY };
