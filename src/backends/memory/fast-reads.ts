// Allocation-free readers for the generated filter's fast paths: the common text forms of a Decimal and of an
// instant, read straight into a double. Each answers NaN for any text it does not fully recognise, and the caller then
// takes the general reader of src/values (read.ts), which decides everything else, null included. So a fast reader can
// make a row faster, never change its answer: where it gives a number, that number is what the general reader reads
// (an instant), or within 2^-53 of it (a decimal). test/backends/memory/fast-reads.property.test.ts checks both.
import { readInstant } from '../../values/read.js';

const DIGIT_0 = 48;
const DIGIT_9 = 57;
const PLUS = 43;
const MINUS = 45;
const DOT = 46;
const COLON = 58;

/** Powers of ten exactly representable as doubles (10^22 is the largest: 5^22 < 2^53). */
const POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];

/**
 * Decimal text `[+|-]digits[.digits]` (what PostgreSQL's numeric, mysql2's DECIMAL or an IEEE754Compatible JSON body
 * give) as the double nearest to its value, when its digits without the point form an integer m below 2^53 and it has
 * at most 22 places; NaN otherwise (an exponent, more digits, or text that is not decimal syntax at all).
 *
 * Why it is within 2^-53 (relative) of the exact value m / 10^k: m accumulates exactly (every partial value is below
 * 2^53), 10^k is an exact double for k ≤ 22, and one IEEE division of exact operands is correctly rounded. Were the
 * digits to reach 2^53, the partial values could round, but never below 2^53 (rounding is monotonic and 2^53 is a
 * double), so the `m > MAX_SAFE_INTEGER` test still sends such text to the exact path.
 */
export function decimalTextDouble(text: string): number {
  let i = 0;
  let c = text.charCodeAt(0);
  const negative = c === MINUS;
  if (c === MINUS || c === PLUS) c = text.charCodeAt(++i);
  const start = i;
  let m = 0;
  while (c >= DIGIT_0 && c <= DIGIT_9) {
    m = m * 10 + (c - DIGIT_0);
    c = text.charCodeAt(++i);
  }
  if (i === start) return Number.NaN;
  let places = 0;
  if (c === DOT) {
    const fraction = ++i;
    c = text.charCodeAt(i);
    while (c >= DIGIT_0 && c <= DIGIT_9) {
      m = m * 10 + (c - DIGIT_0);
      c = text.charCodeAt(++i);
    }
    places = i - fraction;
    if (places === 0 || places > 22) return Number.NaN;
  }
  if (i !== text.length || m > Number.MAX_SAFE_INTEGER) return Number.NaN;
  const x = places === 0 ? m : m / POW10[places]!;
  return negative ? -x : x;
}

/**
 * Integer text `[+|-]digits` (PostgreSQL's int8, mysql2's BIGINT with bigNumberStrings: what `readInt64` takes from
 * text) as its exact value when that is below 2^53 in magnitude; NaN otherwise.
 */
export function integerTextDouble(text: string): number {
  // digit text without a point reads as decimalTextDouble reads it: its integer, exactly
  return text.includes('.') ? Number.NaN : decimalTextDouble(text);
}

/** The two digits at `at` as a number, or -1 when either is not a digit (NaN past the end is not). */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - DIGIT_0;
  const b = text.charCodeAt(at + 1) - DIGIT_0;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * ISO 8601 instant text as epoch milliseconds, exactly as `readInstant` (src/values/read.ts) reads it, for the forms
 * JSON bodies, drivers and other programs write: `YYYY-MM-DD`, `T` (or `t`, or a space), `HH:MM[:SS[.f…]]` with at most
 * 12 fractional digits (truncated to milliseconds, SEMANTICS.md), then `Z`, `±hh:mm`, `±hhmm`, `±hh` or nothing
 * (UTC). NaN for anything else, valid or not: other years, a date alone, spaces before the offset, and every
 * impossible date, time or offset (`2023-02-29`, hour 24, `+24:00`), which `readInstant` reads as null.
 */
export function instantTextEpoch(text: string): number {
  const n = text.length;
  const century = twoDigits(text, 0);
  const yearOfCentury = twoDigits(text, 2);
  const year = century * 100 + yearOfCentury;
  const month = twoDigits(text, 5);
  const day = twoDigits(text, 8);
  const separator = text.charCodeAt(10);
  const hour = twoDigits(text, 11);
  const minute = twoDigits(text, 14);
  if (
    text.charCodeAt(4) !== MINUS ||
    text.charCodeAt(7) !== MINUS ||
    text.charCodeAt(13) !== COLON ||
    (separator !== 84 && separator !== 116 && separator !== 32) ||
    century < 0 ||
    yearOfCentury < 0 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    hour < 0 ||
    hour > 23 ||
    minute < 0 ||
    minute > 59
  )
    return Number.NaN;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day > (month === 2 && leap ? 29 : MONTH_DAYS[month]!)) return Number.NaN;
  let i = 16;
  let second = 0;
  let millisecond = 0;
  if (text.charCodeAt(16) === COLON) {
    second = twoDigits(text, 17);
    if (second < 0 || second > 59) return Number.NaN;
    i = 19;
    if (text.charCodeAt(19) === DOT) {
      i = 20;
      let c = text.charCodeAt(20);
      while (c >= DIGIT_0 && c <= DIGIT_9) {
        if (i < 23) millisecond = millisecond * 10 + (c - DIGIT_0);
        c = text.charCodeAt(++i);
      }
      const digits = i - 20;
      if (digits === 0 || digits > 12) return Number.NaN;
      if (digits === 1) millisecond *= 100;
      else if (digits === 2) millisecond *= 10;
    }
  }
  let offset = 0;
  if (i < n) {
    const z = text.charCodeAt(i);
    if (z === 90 || z === 122) {
      i++;
    } else if (z === PLUS || z === MINUS) {
      const hours = twoDigits(text, i + 1);
      let minutes = 0;
      i += 3;
      if (text.charCodeAt(i) === COLON) {
        minutes = twoDigits(text, i + 1);
        i += 3;
      } else if (i < n) {
        minutes = twoDigits(text, i);
        i += 2;
      }
      if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return Number.NaN;
      offset = (hours * 60 + minutes) * 60_000;
      if (z === MINUS) offset = -offset;
    } else {
      return Number.NaN;
    }
    if (i !== n) return Number.NaN;
  }
  // days since 1970-01-01 (H. Hinnant's days_from_civil, years counted from March); the year is taken 400 years
  // (146,097 days) later so that every quotient is of a non-negative number and truncation is the floor
  const y = (month <= 2 ? year - 1 : year) + 400;
  const days =
    y * 365 +
    Math.trunc(y / 4) -
    Math.trunc(y / 100) +
    Math.trunc(y / 400) +
    Math.trunc((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) +
    day -
    1 -
    719_468 -
    146_097;
  return days * 86_400_000 + hour * 3_600_000 + minute * 60_000 + second * 1000 + millisecond - offset;
}

/** `readInstant` with the common text forms read by `instantTextEpoch` first. */
export function readInstantFast(value: unknown): number | null {
  if (typeof value === 'string') {
    const instant = instantTextEpoch(value);
    if (instant === instant) return instant;
  }
  return readInstant(value);
}
