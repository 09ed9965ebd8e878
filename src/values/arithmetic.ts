// The numeric ranges of the EDM integer types and the arithmetic every backend must agree with (SEMANTICS.md
// "Arithmetic"): integers exact and null outside their range, decimals exact, doubles null on overflow.
import { addDecimal, divDecimal, modDecimal, mulDecimal, subDecimal, type Decimal } from './decimal.js';

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** An Int64 result, or null outside Int64 (SEMANTICS.md: integer arithmetic never overflows silently). */
export function toInt64(value: bigint): bigint | null {
  return value < INT64_MIN || value > INT64_MAX ? null : value;
}

/** Half away from zero, for doubles (JavaScript's Math.round rounds -2.5 to -2). */
export function roundHalfAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Int32 arithmetic: exact; a product beyond 2^53 is carried as a bigint, and anything combined with a bigint
 * continues as Int64 arithmetic. Null for division or modulo by zero.
 */
export function int32Arithmetic(operator: string, a: number | bigint, b: number | bigint): number | bigint | null {
  if (typeof a === 'bigint' || typeof b === 'bigint') return int64Arithmetic(operator, BigInt(a), BigInt(b));
  switch (operator) {
    case 'add':
      return a + b;
    case 'sub':
      return a - b;
    case 'mul': {
      const product = a * b;
      // beyond 2^53 a double product is not exact: compute it as a bigint
      return Number.isSafeInteger(product) ? product : toInt64(BigInt(a) * BigInt(b));
    }
    case 'div':
      return b === 0 ? null : Math.trunc(a / b);
    case 'mod':
      return b === 0 ? null : a % b;
    default:
      return null;
  }
}

/** Int64 arithmetic, exact: null outside Int64 and for division or modulo by zero. */
export function int64Arithmetic(operator: string, a: bigint, b: bigint): bigint | null {
  switch (operator) {
    case 'add':
      return toInt64(a + b);
    case 'sub':
      return toInt64(a - b);
    case 'mul':
      return toInt64(a * b);
    case 'div':
      return b === 0n ? null : toInt64(a / b);
    case 'mod':
      return b === 0n ? null : a % b;
    default:
      return null;
  }
}

/** Decimal arithmetic, exact; quotients rounded half away from zero at 20 places; null for division by zero. */
export function decimalArithmetic(operator: string, a: Decimal, b: Decimal): Decimal | null {
  switch (operator) {
    case 'add':
      return addDecimal(a, b);
    case 'sub':
      return subDecimal(a, b);
    case 'mul':
      return mulDecimal(a, b);
    case 'div':
    case 'divby':
      return divDecimal(a, b);
    case 'mod':
      return modDecimal(a, b);
    default:
      return null;
  }
}

/**
 * A result beyond the Double range from finite operands is null (as an Int64 overflow is): MariaDB cannot hold
 * infinity, and PostgreSQL raises instead of overflowing, so null is the answer every backend can give.
 */
export function finiteDouble(r: number, a: number, b: number): number | null {
  return r === Infinity || r === -Infinity ? (Number.isFinite(a) && Number.isFinite(b) ? null : r) : r;
}

/** Double arithmetic: IEEE 754, null on overflow from finite operands and for division or modulo by zero. */
export function doubleArithmetic(operator: string, a: number, b: number): number | null {
  switch (operator) {
    case 'add':
      return finiteDouble(a + b, a, b);
    case 'sub':
      return finiteDouble(a - b, a, b);
    case 'mul':
      return finiteDouble(a * b, a, b);
    case 'div':
    case 'divby':
      return b === 0 ? null : finiteDouble(a / b, a, b);
    case 'mod':
      return b === 0 ? null : a % b;
    default:
      return null;
  }
}

/** A Double as its OData literal text: INF, -INF, NaN, else JavaScript's shortest form without '+'. */
export function formatDouble(value: number): string {
  if (value === Infinity) return 'INF';
  if (value === -Infinity) return '-INF';
  return String(value).replace('e+', 'e');
}
