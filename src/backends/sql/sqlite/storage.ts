// How SQLite keeps each EDM type. SQLite has no decimal type: a Decimal column is an INTEGER holding the value ×
// 10^scale, exact, ordered as the decimals are and indexable, so it needs a scale and a precision of at most 18.
// Booleans are 0/1, instants their UTC text `YYYY-MM-DDTHH:MM:SS.sssZ`, text compares by code point (BINARY).
// better-sqlite3 binds a JavaScript number as REAL and a bigint as INTEGER, and returns INTEGERs as bigints
// (defaultSafeIntegers), so integers go in as bigints where SQLite needs an integer.
import type { Property } from '../../../model/schema.js';
import { INT64_MAX, INT64_MIN } from '../../../values/arithmetic.js';
import { readBoolean, readInt64 } from '../../../values/read.js';
import type { ScaledDecimals, Storage, ValueFacets } from '../dialect.js';
import {
  decimalLiteralText,
  decimalValue,
  decodeAlike,
  encodeAlike,
  encodeLiteralAlike,
  fitsDigits,
  isoInstant,
  storableInstant,
  storableInstantValue,
  trimFraction,
} from '../forms.js';

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);
/** 10^0 … 10^15: scales whose scaled integers below 2^53 split exactly in double arithmetic. */
const POWERS = Array.from({ length: 16 }, (_, i) => 10 ** i);

/**
 * A scaled integer (the stored form of a decimal) as canonical decimal text: 123450 at scale 4 → '12.345'. The one
 * decoder of SQLite's decimals: decodeValue, the server's JSON writer and `odata_decimal` in SQL all read them here.
 */
export function scaledToText(scaled: bigint, scale: number): string {
  if (scale < POWERS.length && scaled <= MAX_EXACT && scaled >= -MAX_EXACT) {
    // within 2^53 the digits come from exact double arithmetic, without BigInt division
    const factor = POWERS[scale]!;
    const n = Number(scaled);
    const magnitude = n < 0 ? -n : n;
    const fraction = magnitude % factor;
    let text = String((magnitude - fraction) / factor);
    if (fraction !== 0) {
      const digits = String(fraction).padStart(scale, '0');
      let end = digits.length;
      while (digits.charCodeAt(end - 1) === 48) end--; // '0'
      text += `.${digits.slice(0, end)}`;
    }
    return n < 0 ? `-${text}` : text;
  }
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(scale + 1, '0');
  const text = trimFraction(`${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`);
  return negative && text !== '0' ? `-${text}` : text;
}

/** A stored decimal (an INTEGER, or what else the driver gave) as canonical decimal text. */
function decodeScaled(raw: unknown, scale: number): string {
  return scaledToText(typeof raw === 'bigint' ? raw : BigInt(raw as number), scale);
}

export const scaledDecimals: ScaledDecimals = {
  scale: (property: Pick<Property, 'name' | 'precision' | 'scale'>) =>
    property.scale === undefined || (property.precision ?? 19) > 18
      ? {
          unsupported: `The decimal property ${property.name} (SQLite keeps decimals as scaled 64-bit integers, so it needs a scale and a precision of at most 18)`,
        }
      : property.scale,
  read: (column, scale) => `odata_decimal(${column}, ${scale})`,
  bounds: (literal, scale) => {
    const negative = literal.startsWith('-');
    const digits = literal.replace(/^[-+]/, '');
    const [whole = '0', fraction = ''] = digits.split('.');
    const kept = fraction.slice(0, scale).padEnd(scale, '0');
    const rest = fraction.slice(scale);
    const magnitude = BigInt(`${whole}${kept}` || '0');
    const exactTail = /^0*$/.test(rest);
    const truncated = negative ? -magnitude : magnitude;
    if (exactTail) return { exact: truncated, floor: truncated, ceiling: truncated };
    // truncation moved toward zero: below the value when positive, above it when negative
    return negative ? { floor: truncated - 1n, ceiling: truncated } : { floor: truncated, ceiling: truncated + 1n };
  },
};

const decode = (property: ValueFacets, raw: unknown): unknown =>
  property.type === 'Edm.Decimal' && raw !== null && raw !== undefined
    ? decodeScaled(raw, property.scale ?? 0)
    : decodeAlike(property, raw);

export const sqliteStorage: Storage = {
  columnType: ({ type }) => {
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
        return 'INTEGER'; // Boolean 0/1, integers, scaled decimals
    }
  },

  encodeLiteral: (literal) => {
    switch (literal.type) {
      case 'Edm.Boolean':
        return literal.value ? 1 : 0;
      case 'Edm.Int32':
        return BigInt(literal.value);
      case 'Edm.Int64':
        return literal.value;
      case 'Edm.Decimal':
        // a computed decimal is exact text (odata_dec and friends); a column compared with a literal is scaled by
        // the emitter (scaledDecimals)
        return decimalLiteralText(literal.value);
      case 'Edm.Double':
        return Number.isNaN(literal.value) ? { unsupported: 'NaN (sqlite cannot hold it)' } : literal.value;
      case 'Edm.DateTimeOffset': {
        const ms = storableInstant(literal);
        return typeof ms === 'number' ? isoInstant(ms) : ms;
      }
      case 'Edm.TimeOfDay': {
        const ms = encodeLiteralAlike(literal);
        return typeof ms === 'number' ? BigInt(ms) : ms;
      }
      default:
        return encodeLiteralAlike(literal);
    }
  },

  encode: (property, value) => {
    if (value === null || value === undefined) return null;
    switch (property.type) {
      case 'Edm.String':
        // SQLite's text functions stop at U+0000
        return typeof value !== 'string' || value.includes('\u0000') ? undefined : value;
      case 'Edm.Boolean': {
        const b = readBoolean(value);
        return b === null ? undefined : b ? 1 : 0;
      }
      case 'Edm.Int64':
        return readInt64(value) ?? undefined;
      case 'Edm.Decimal': {
        // more places than the scale, or beyond 64 bits, is refused: never stored changed
        const d = decimalValue(value);
        const scale = property.scale ?? 0;
        if (d === null || !fitsDigits(d, Number.POSITIVE_INFINITY, scale)) return undefined;
        const scaled = d.coefficient * 10n ** BigInt(d.exponent + scale);
        return scaled < INT64_MIN || scaled > INT64_MAX ? undefined : scaled;
      }
      case 'Edm.DateTimeOffset': {
        const ms = storableInstantValue(value);
        return ms === null ? undefined : isoInstant(ms);
      }
      default:
        return encodeAlike(property, value);
    }
  },

  decode,
  decoder: (property) => {
    if (property.type !== 'Edm.Decimal') return (raw) => decodeAlike(property, raw);
    const scale = property.scale ?? 0;
    return (raw) => (raw === null || raw === undefined ? null : decodeScaled(raw, scale));
  },
  decimalText: (property) => {
    const scale = property.scale ?? 0;
    // anything but an integer (a column some other program wrote) takes the general decoder
    return (raw) =>
      typeof raw === 'bigint' || (typeof raw === 'number' && Number.isSafeInteger(raw))
        ? decodeScaled(raw, scale)
        : undefined;
  },
  integerParam: (n) => BigInt(n),
  scaledDecimals,
};
