// Rows and the working values the memory backend reads from them: the reader and the comparer of each EDM type,
// literals as working values, and cast(). Both the closures and the generated source use these, so a type is read
// and ordered one way wherever it is evaluated. Semantics: SEMANTICS.md.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { LiteralValue } from '../../syntax/ast.js';
import type { BoundType } from '../../validate/bound.js';
import {
  compareDecimal,
  decimalToNumber,
  decimalToString,
  exactDouble,
  parseDecimal,
  roundDecimal,
  type Decimal,
} from '../../values/decimal.js';
import { compareCodePoints } from '../../values/text.js';
import {
  bytesEqual,
  readBinary,
  readBoolean,
  readDate,
  readDecimal,
  readDuration,
  readGuid,
  readInstant,
  readInt64,
  readNumber,
  readString,
  readTimeOfDay,
  toDecimal,
  type Value,
} from '../../values/read.js';
import { formatDouble, INT32_MAX, INT32_MIN, toInt64 } from '../../values/arithmetic.js';
import { DAY, daysOfDate } from '../../values/calendar.js';
import { formatDuration, formatTimeOfDay } from '../../values/temporal.js';

/** A row: an object with a value per property (and an array of child rows per navigation used in a lambda). */
export type Row = Readonly<Record<string, unknown>>;

/** A compiled expression: its working value for a row. */
export type Eval = (row: Row) => Value;

/** Orders two non-null working values of one type: negative, zero or positive. */
export type Comparer = (a: NonNullable<Value>, b: NonNullable<Value>) => number;

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

/** A literal as the working value of its (bound) type, computed once. */
export function literalValue(value: LiteralValue): Value {
  switch (value.type) {
    case 'null':
      return null;
    case 'Edm.Boolean':
    case 'Edm.Int32':
    case 'Edm.Double':
    case 'Edm.String':
    case 'Edm.Date':
      return value.value;
    case 'Edm.Int64':
      return value.value;
    case 'Edm.Decimal':
      // a decimal whose value is exactly a double's shortest text compares on the fast double path
      return exactDouble(value.value) ?? parseDecimal(value.value) ?? null;
    case 'Edm.DateTimeOffset':
      return value.epochMilliseconds;
    case 'Edm.TimeOfDay':
      return readTimeOfDay(value.value);
    case 'Edm.Duration':
      return value.milliseconds;
    case 'Edm.Guid':
      return value.value.toLowerCase();
    case 'Edm.Binary':
      return value.bytes;
    default:
      return null;
  }
}

const compareNumbers: Comparer = (a, b) => {
  const x = a as number;
  const y = b as number;
  if (x < y) return -1;
  if (x > y) return 1;
  // loose equality on purpose: an exact Int32 product beyond 2^53 is a bigint, and 5n == 5 is true
  if (x == y) return 0;
  // NaN equals NaN and sorts above every number, as PostgreSQL orders it
  return Number.isNaN(x) ? (Number.isNaN(y) ? 0 : 1) : -1;
};

const compareBig: Comparer = (a, b) => ((a as bigint) < (b as bigint) ? -1 : (a as bigint) > (b as bigint) ? 1 : 0);

const compareDecimals: Comparer = (a, b) => {
  // Numbers are read by their shortest decimal text, and doubles order exactly as those texts do.
  if (typeof a === 'number' && typeof b === 'number') return compareNumbers(a, b);
  const x = toDecimal(a as number | string | bigint | Decimal);
  const y = toDecimal(b as number | string | bigint | Decimal);
  return x === null || y === null ? 0 : compareDecimal(x, y);
};

const compareDates: Comparer = (a, b) => {
  const x = a as string;
  const y = b as string;
  if (x.length === 10 && y.length === 10 && x[0] !== '-' && y[0] !== '-') return x < y ? -1 : x > y ? 1 : 0;
  return Math.sign(daysOfDate(x) - daysOfDate(y));
};

const compareStrings: Comparer = (a, b) => compareCodePoints(a as string, b as string);
const compareBooleans: Comparer = (a, b) => (a === b ? 0 : a ? 1 : -1);
const compareBytes: Comparer = (a, b) => (bytesEqual(a as Uint8Array, b as Uint8Array) ? 0 : 1);

/** How working values of a type are ordered (Binary only as equal or not). */
export function comparer(type: EdmPrimitiveType): Comparer {
  switch (type) {
    case 'Edm.String':
    case 'Edm.Guid':
      return compareStrings;
    case 'Edm.Boolean':
      return compareBooleans;
    case 'Edm.Int32':
    case 'Edm.Double':
    case 'Edm.DateTimeOffset':
    case 'Edm.TimeOfDay':
    case 'Edm.Duration':
      return compareNumbers;
    case 'Edm.Int64':
      return compareBig;
    case 'Edm.Decimal':
      return compareDecimals;
    case 'Edm.Date':
      return compareDates;
    case 'Edm.Binary':
      return compareBytes;
  }
}

export function toBig(value: Value): bigint {
  return typeof value === 'bigint' ? value : BigInt(value as number);
}

export function decimalOf(value: Value): Decimal | null {
  return value === null ? null : toDecimal(value as number | string | bigint | Decimal);
}

/** cast() between primitive types (SEMANTICS.md); a value that cannot be represented is null. */
export function castValue(value: NonNullable<Value>, from: BoundType, to: EdmPrimitiveType): Value {
  if (to === 'Edm.String') {
    switch (from) {
      case 'Edm.Decimal':
        return decimalToString(decimalOf(value)!);
      case 'Edm.DateTimeOffset':
        return new Date(value as number).toISOString();
      case 'Edm.Int64':
        return (value as bigint | number).toString();
      case 'Edm.TimeOfDay':
        return formatTimeOfDay(value as number);
      case 'Edm.Duration':
        return formatDuration(value as number);
      case 'Edm.Double':
        return formatDouble(value as number);
      default:
        return String(value);
    }
  }
  if (from === 'Edm.Date' && to === 'Edm.DateTimeOffset') return daysOfDate(value as string) * DAY;
  // to a number: from a number, or from text in the literal syntax only
  let decimal: Decimal | null;
  if (from === 'Edm.String') {
    const text = value as string;
    if (!/^[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(text)) return null;
    decimal = parseDecimal(text) ?? null;
  } else decimal = decimalOf(value);
  if (decimal === null) return null;
  switch (to) {
    case 'Edm.Double':
      return decimalToNumber(decimal);
    case 'Edm.Decimal':
      return decimal;
    case 'Edm.Int32': {
      const n = decimalToNumber(roundDecimal(decimal));
      return n < INT32_MIN || n > INT32_MAX ? null : n;
    }
    case 'Edm.Int64': {
      const text = decimalToString(roundDecimal(decimal));
      return toInt64(BigInt(text));
    }
    default:
      return null;
  }
}
