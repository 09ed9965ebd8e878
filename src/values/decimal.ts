// Exact Edm.Decimal arithmetic for the memory backend (SEMANTICS.md "Edm.Decimal": `0.1 add 0.2 eq 0.3`,
// `1.5 eq 1.50`; "every decimal quotient is rounded half away from zero at 20 digits after the point, whether or
// not it terminates"; `mod` has the sign of the dividend; division or modulo by zero is null).
//
// A value is coefficient × 10^exponent with a BigInt coefficient, kept normalized (no trailing zero digit in
// the coefficient, zero is 0 × 10^0), so equal values are structurally equal and `compareDecimal` is the
// only ordering needed. These functions run once per row: each fast path below says why it is exact.

/** coefficient × 10^exponent, normalized: `coefficient % 10n !== 0n` unless it is 0n, and zero has exponent 0. */
export interface Decimal {
  readonly coefficient: bigint;
  readonly exponent: number;
}

/**
 * The largest |exponent| `parseDecimal` accepts from text (IEEE 754 decimal128's exponent bound). Aligning two
 * operands costs a BigInt of |exponent difference| digits, so an unbounded exponent in a cast string
 * (`'1e999999999'`) would let one query pin the CPU; every finite double (5e-324 … 1.8e308) is far inside.
 */
export const DECIMAL_EXPONENT_LIMIT = 6144;

const ZERO: Decimal = { coefficient: 0n, exponent: 0 };

// Powers of ten as BigInts, memoized for the exponent differences that occur in practice.
const POW10_CACHE: bigint[] = [1n];
function pow10(k: number): bigint {
  if (k < 400) {
    let cached = POW10_CACHE[k];
    if (cached === undefined) {
      for (let i = POW10_CACHE.length; i <= k; i++) POW10_CACHE.push(POW10_CACHE[i - 1]! * 10n);
      cached = POW10_CACHE[k]!;
    }
    return cached;
  }
  return 10n ** BigInt(k);
}

// Exactly representable powers of ten as doubles (10^22 is the largest: 5^22 < 2^53).
const DOUBLE_POW10 = [
  1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
  1e21, 1e22,
];
const TWO_53_BIG = 2n ** 53n;
/** The smallest positive normal double, 2^-1022. */
const MIN_NORMAL = 2.2250738585072014e-308;

/** Strips trailing zero digits; the common case (last digit non-zero) costs one BigInt remainder. */
function make(coefficient: bigint, exponent: number): Decimal {
  if (coefficient === 0n) return ZERO;
  if (coefficient % 10n !== 0n) return { coefficient, exponent };
  // Strip 16 zeros at a time, then at most one each of 8, 4, 2, 1: O(log) divisions instead of one per zero.
  while (coefficient % 10_000_000_000_000_000n === 0n) {
    coefficient /= 10_000_000_000_000_000n;
    exponent += 16;
  }
  for (const [power, k] of STRIP_STEPS) {
    if (coefficient % power === 0n) {
      coefficient /= power;
      exponent += k;
    }
  }
  return { coefficient, exponent };
}
const STRIP_STEPS: readonly (readonly [bigint, number])[] = [
  [100_000_000n, 8],
  [10_000n, 4],
  [100n, 2],
  [10n, 1],
];

export function decimalFromBigInt(n: bigint): Decimal {
  return make(n, 0);
}

// ---------------------------------------------------------------------------------------------------------
// Scanning decimal text without allocating. The results go to module-level slots (single-threaded), so that
// `exactDouble` can run per row without creating an object.

/** Index in the text of the first non-zero mantissa digit, or -1 when every mantissa digit is 0. */
let scanFirst = -1;
/** Index in the text of the last non-zero mantissa digit. */
let scanLast = -1;
/** Index of the `.` in the text, or the end of the integer digits when there is no fraction. */
let scanPoint = 0;
/** Number of mantissa digits from scanFirst to scanLast (the significant digits). */
let scanSignificant = 0;
/** The written exponent (0 when absent); ±Infinity when it has more than 15 digits. */
let scanExponent = 0;
let scanNegative = false;

const CH_0 = 48;
const CH_9 = 57;
const CH_DOT = 46;
const CH_PLUS = 43;
const CH_MINUS = 45;
const CH_E = 101;
const CH_UPPER_E = 69;

/** Mantissa digits read so far, and the ordinals among them of the first and last non-zero digit. */
let scanDigitCount = 0;
let scanFirstDigit = 0;
let scanLastDigit = 0;

/** Reads a run of digits from `i`, noting the first and last non-zero digit; returns the index after it. */
function scanDigits(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c >= CH_0 && c <= CH_9) {
    if (c !== CH_0) {
      if (scanFirst < 0) {
        scanFirst = i;
        scanFirstDigit = scanDigitCount;
      }
      scanLast = i;
      scanLastDigit = scanDigitCount;
    }
    scanDigitCount++;
    c = text.charCodeAt(++i);
  }
  return i;
}

/**
 * The OData decimal syntax `[sign] 1*DIGIT ["." 1*DIGIT] [("e"/"E") [sign] 1*DIGIT]` (the ABNF's `"e"` is
 * case-insensitive). Returns false for anything else, including `.5`, `5.`, spaces, `INF` and `NaN`.
 */
function scan(text: string): boolean {
  const end = text.length;
  let i = 0;
  let c = text.charCodeAt(0);
  scanNegative = c === CH_MINUS;
  if (c === CH_MINUS || c === CH_PLUS) c = text.charCodeAt(++i);
  scanFirst = -1;
  scanLast = -1;
  scanSignificant = 0;
  scanDigitCount = 0;
  const integerStart = i;
  i = scanDigits(text, i);
  if (i === integerStart) return false;
  scanPoint = i;
  c = text.charCodeAt(i);
  if (c === CH_DOT) {
    const fractionStart = ++i;
    i = scanDigits(text, i);
    if (i === fractionStart) return false;
    c = text.charCodeAt(i);
  }
  if (scanFirst >= 0) scanSignificant = scanLastDigit - scanFirstDigit + 1;
  scanExponent = 0;
  if (c === CH_E || c === CH_UPPER_E) {
    c = text.charCodeAt(++i);
    let negative = false;
    if (c === CH_MINUS || c === CH_PLUS) {
      negative = c === CH_MINUS;
      c = text.charCodeAt(++i);
    }
    const exponentStart = i;
    let value = 0;
    while (c >= CH_0 && c <= CH_9) {
      // Beyond 1e15 the value is only compared with the limits, so saturating at Infinity is exact enough.
      value = value < 1e15 ? value * 10 + (c - CH_0) : Infinity;
      c = text.charCodeAt(++i);
    }
    if (i === exponentStart) return false;
    scanExponent = negative ? -value : value;
  }
  return i === end;
}

/**
 * Reads a decimal. A number is read as its shortest round-trip decimal (what `String(n)` prints: 0.1 is
 * 1×10^-1, 1e21 is 1×10^21), NaN and ±Infinity give undefined, -0 is 0. A string must be an OData decimal
 * literal (`[sign] digits [. digits] [e [sign] digits]`) else undefined; `1.50` reads as 1.5. A string whose
 * normalized exponent is beyond ±DECIMAL_EXPONENT_LIMIT is also undefined (out of range).
 */
export function parseDecimal(value: number | string | bigint): Decimal | undefined {
  if (typeof value === 'bigint') return make(value, 0);
  if (typeof value === 'number') return decimalFromDouble(value);
  if (!scan(value)) return undefined;
  if (scanFirst < 0) return ZERO;
  // value = digits[scanFirst..scanLast] × 10^shift, the shift counting the digits after scanLast up to the point.
  const shift = scanLast < scanPoint ? scanPoint - 1 - scanLast : -(scanLast - scanPoint);
  const exponent = scanExponent + shift;
  if (!(Math.abs(exponent) <= DECIMAL_EXPONENT_LIMIT)) return undefined;
  let coefficient: bigint;
  if (scanSignificant <= 15) {
    // Fast path: up to 15 digits accumulate exactly in a double (< 10^15 < 2^53), so no substring is built.
    let m = 0;
    for (let i = scanFirst; i <= scanLast; i++) {
      const c = value.charCodeAt(i);
      if (c !== CH_DOT) m = m * 10 + (c - CH_0);
    }
    coefficient = BigInt(m);
  } else if (scanFirst > scanPoint || scanLast < scanPoint) {
    coefficient = BigInt(value.slice(scanFirst, scanLast + 1));
  } else {
    coefficient = BigInt(value.slice(scanFirst, scanPoint) + value.slice(scanPoint + 1, scanLast + 1));
  }
  // The coefficient ends in scanLast's non-zero digit, so it is already normalized.
  return { coefficient: scanNegative ? -coefficient : coefficient, exponent };
}

function decimalFromDouble(n: number): Decimal | undefined {
  if (!Number.isFinite(n)) return undefined;
  if (n === 0) return ZERO; // both +0 and -0
  // Fast path 1: a safe integer is its own shortest decimal (doubles below 2^53 are spaced at most 1 apart, so
  // no decimal with fewer significant digits rounds to n) and BigInt(n) is exact.
  if (Number.isSafeInteger(n)) return make(BigInt(n), 0);
  // Fast path 2: a normal double of the form m / 10^k with |m| < 10^15. m and 10^k (k ≤ 15) are exact doubles and
  // IEEE division is correctly rounded, so `m / 10^k === n` proves that the decimal m×10^-k reads back as n. Two
  // different decimals of at most 15 significant digits never read as the same normal double (10^15 < 2^52, the
  // DBL_DIG guarantee), and the shortest representation of n has at most as many digits as m×10^-k, so it IS
  // m×10^-k. If rounding in `n * 10^k` picked a wrong m the check fails and we fall through: never inexact.
  const magnitude = Math.abs(n);
  if (magnitude >= MIN_NORMAL && magnitude < 1e15) {
    for (let k = 1; k <= 15; k++) {
      const power = DOUBLE_POW10[k]!;
      const scaled = magnitude * power;
      if (scaled >= 1e15) break;
      const m = Math.round(scaled);
      if (m / power === magnitude) return make(BigInt(n < 0 ? -m : m), -k);
    }
  }
  // General case: String(n) is the shortest round-trip decimal (ECMAScript Number::toString).
  return parseDecimal(String(n));
}

// ---------------------------------------------------------------------------------------------------------
// The allocation-free comparison fast path.

/**
 * `Number(text)` when the decimal value of `text` is exactly the shortest round-trip decimal of that double,
 * else undefined (also for text that is not decimal syntax, or out of the double range). Zero gives +0.
 *
 * Why this makes double comparison exact: the memory backend reads a JS number x as the decimal D(x) that
 * `String(x)` prints (`parseDecimal(x)`). D is strictly increasing on finite doubles: D(x) lies in the interval
 * of reals that round to x, those intervals are disjoint and ordered like the doubles, and D(-0) = D(0) = 0. If
 * `exactDouble(t)` returns n then D(n) is the value of t, so for every row value x,
 * `x < n` ⇔ D(x) < D(n) = t, and likewise for `===` and `>`: comparing the doubles gives the order of the
 * exact decimals, with no BigInt in sight.
 *
 * Fast path (no allocation): at most 15 significant digits and a normal result. Then `Number(text)` is the
 * double nearest to t, and no other decimal of at most 15 digits reads as the same normal double (10^15 < 2^52,
 * the DBL_DIG guarantee); the shortest decimal of n has at most as many digits as t, so it is t. With 16 or 17
 * significant digits, or a subnormal result, the exact comparison is done through `parseDecimal` (rare); with
 * more than 17 it cannot be a shortest representation.
 */
export function exactDouble(text: string): number | undefined {
  if (!scan(text)) return undefined;
  if (scanFirst < 0) return 0;
  if (scanSignificant > 17) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n === 0) return undefined; // overflow, or a non-zero value underflowing to 0
  if (scanSignificant <= 15 && Math.abs(n) >= MIN_NORMAL) return n;
  const exact = parseDecimal(text);
  const shortest = decimalFromDouble(n);
  return exact !== undefined && shortest !== undefined && compareDecimal(exact, shortest) === 0 ? n : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Arithmetic.

export function compareDecimal(a: Decimal, b: Decimal): -1 | 0 | 1 {
  const ca = a.coefficient;
  const cb = b.coefficient;
  // Different signs (or one zero) decide without alignment.
  const sa = ca > 0n ? 1 : ca < 0n ? -1 : 0;
  const sb = cb > 0n ? 1 : cb < 0n ? -1 : 0;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  // Same exponent: the coefficients compare directly (the common case for values of one column).
  if (a.exponent === b.exponent) return ca < cb ? -1 : ca > cb ? 1 : 0;
  let x = ca;
  let y = cb;
  if (a.exponent > b.exponent) x *= pow10(a.exponent - b.exponent);
  else y *= pow10(b.exponent - a.exponent);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function negateDecimal(a: Decimal): Decimal {
  return a.coefficient === 0n ? ZERO : { coefficient: -a.coefficient, exponent: a.exponent };
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  if (a.coefficient === 0n) return b;
  if (b.coefficient === 0n) return a;
  const ea = a.exponent;
  const eb = b.exponent;
  if (ea === eb) return make(a.coefficient + b.coefficient, ea);
  return ea > eb
    ? make(a.coefficient * pow10(ea - eb) + b.coefficient, eb)
    : make(a.coefficient + b.coefficient * pow10(eb - ea), ea);
}

export function subDecimal(a: Decimal, b: Decimal): Decimal {
  return addDecimal(a, negateDecimal(b));
}

export function mulDecimal(a: Decimal, b: Decimal): Decimal {
  return make(a.coefficient * b.coefficient, a.exponent + b.exponent);
}

/**
 * a / b rounded half away from zero to `digits` places after the point (default 20, SEMANTICS.md: every decimal
 * quotient, whether or not it terminates, so that every backend can give the same answer), or null when b is zero:
 * 10 / 3 = 3.33333333333333333333, -2 / 3 = -0.66666666666666666667, 1 / 2^70 = 0.00000000000000000001.
 */
export function divDecimal(a: Decimal, b: Decimal, digits = 20): Decimal | null {
  if (!Number.isInteger(digits)) throw new RangeError(`digits must be an integer, got ${digits}`);
  const cb = b.coefficient;
  if (cb === 0n) return null;
  const ca = a.coefficient;
  if (ca === 0n) return ZERO;
  // q = round(a / b × 10^digits) computed as num / den with integers: a / b = ca / cb × 10^(ea - eb).
  const shift = a.exponent - b.exponent + digits;
  let num = ca;
  let den = cb;
  if (shift >= 0) num *= pow10(shift);
  else den *= pow10(-shift);
  const q = num / den; // truncates toward zero
  const r = num % den; // sign of num
  // half away from zero on the remainder: |r| × 2 ≥ |den|
  const absR = r < 0n ? -r : r;
  const absDen = den < 0n ? -den : den;
  if (absR * 2n >= absDen) return make(num < 0n !== den < 0n ? q - 1n : q + 1n, -digits);
  return make(q, -digits);
}

/** a - b × trunc(a / b): the sign of the dividend (-7 mod 3 = -1, 7 mod -3 = 1); null when b is zero. */
export function modDecimal(a: Decimal, b: Decimal): Decimal | null {
  const cb = b.coefficient;
  if (cb === 0n) return null;
  const ea = a.exponent;
  const eb = b.exponent;
  // BigInt % truncates, so its result has the sign of the dividend, as required.
  if (ea === eb) return make(a.coefficient % cb, ea);
  return ea > eb ? make((a.coefficient * pow10(ea - eb)) % cb, eb) : make(a.coefficient % (cb * pow10(eb - ea)), ea);
}

/** Truncation toward zero to an integer, with the remainder's sign deciding floor, ceiling and rounding. */
function toIntegral(a: Decimal, mode: 'round' | 'floor' | 'ceiling'): Decimal {
  if (a.exponent >= 0) return a; // already an integer (normalized: a negative exponent means a fraction)
  const divisor = pow10(-a.exponent);
  const c = a.coefficient;
  let q = c / divisor;
  const r = c % divisor; // non-zero: the last digit of a normalized coefficient is not 0
  if (mode === 'floor') {
    if (r < 0n) q -= 1n;
  } else if (mode === 'ceiling') {
    if (r > 0n) q += 1n;
  } else if ((r < 0n ? -r : r) * 2n >= divisor) {
    q += c < 0n ? -1n : 1n;
  }
  return make(q, 0);
}

/** Nearest integer, half away from zero: 2.5 → 3, -2.5 → -3. */
export function roundDecimal(a: Decimal): Decimal {
  return toIntegral(a, 'round');
}

export function floorDecimal(a: Decimal): Decimal {
  return toIntegral(a, 'floor');
}

export function ceilingDecimal(a: Decimal): Decimal {
  return toIntegral(a, 'ceiling');
}

export function isIntegral(a: Decimal): boolean {
  return a.exponent >= 0;
}

/** The double nearest to a (correctly rounded; ±Infinity beyond the double range, 0 below it). */
export function decimalToNumber(a: Decimal): number {
  const c = a.coefficient;
  const e = a.exponent;
  // Fast path (Clinger): |c| ≤ 2^53 and 10^|e| ≤ 10^22 are both exact doubles, and one IEEE multiplication or
  // division of exact operands is correctly rounded, so the result is the double nearest to c × 10^e.
  if (e >= -22 && e <= 22 && c <= TWO_53_BIG && c >= -TWO_53_BIG) {
    const x = Number(c);
    if (e === 0) return x;
    return e > 0 ? x * DOUBLE_POW10[e]! : x / DOUBLE_POW10[-e]!;
  }
  // StringToNumber is correctly rounded in V8 for any number of digits.
  return Number(`${c}e${e}`);
}

/** The shortest exact plain text: '1.5', '-0.001', '12000', '0'; never an exponent. */
export function decimalToString(a: Decimal): string {
  const c = a.coefficient;
  const e = a.exponent;
  if (e === 0) return c.toString();
  const negative = c < 0n;
  const digits = (negative ? -c : c).toString();
  let text: string;
  if (e > 0) text = digits + '0'.repeat(e);
  else if (digits.length > -e) text = `${digits.slice(0, digits.length + e)}.${digits.slice(digits.length + e)}`;
  else text = `0.${'0'.repeat(-e - digits.length)}${digits}`;
  return negative ? `-${text}` : text;
}
