// How working values of each EDM type are ordered (SEMANTICS.md "Comparison"): numbers with NaN above every number,
// decimals exactly, dates as calendar days, strings by code point, Binary only as equal or not.
import { daysOfDate } from './calendar.js';
import { compareDecimal, type Decimal } from './decimal.js';
import type { EdmPrimitiveType } from './edm.js';
import { bytesEqual, toDecimal, type Value } from './read.js';
import { compareCodePoints } from './text.js';

/** Orders two non-null working values of one type: negative, zero or positive. */
export type Comparer = (a: NonNullable<Value>, b: NonNullable<Value>) => number;

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
