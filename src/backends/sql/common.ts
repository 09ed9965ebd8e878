// Spellings shared by more than one dialect.
import * as range from '../../values/arithmetic.js';
import type { Sql } from './dialect.js';

/** The Int64 range, and one past each end (the clamp that turns an out-of-range exact result into null), as SQL. */
export const INT64_MIN = String(range.INT64_MIN);
export const INT64_MAX = String(range.INT64_MAX);
export const BELOW_INT64 = String(range.INT64_MIN - 1n);
export const ABOVE_INT64 = String(range.INT64_MAX + 1n);
export const INT32_MIN = String(range.INT32_MIN);
export const INT32_MAX = String(range.INT32_MAX);

/**
 * An exact numeric expression as a value of an integer range, or null outside it, mentioning `exact` once: clamp it
 * one past each end, then turn those two values into null (PostgreSQL's GREATEST skips a null argument, so a null
 * `exact` ends as null). Not for MySQL, whose NULLIF evaluates its first argument twice (mysql/dialect.ts).
 */
export function nullOutside(exact: Sql, below: string, above: string): Sql {
  return `NULLIF(NULLIF(LEAST(GREATEST(${exact}, ${below}), ${above}), ${above}), ${below})`;
}

/** One past each end of Int32 or Int64, for nullOutside. */
export function rangeOf(type: 'Edm.Int32' | 'Edm.Int64'): [string, string] {
  return type === 'Edm.Int32' ? ['-2147483649', '2147483648'] : [BELOW_INT64, ABOVE_INT64];
}

/** Half away from zero for a double: trunc(x) ± 1 when |x − trunc(x)| ≥ 0.5 (the difference is exact). */
export function roundHalfAwayDouble(x: Sql, trunc: (x: Sql) => Sql): Sql {
  return `(${trunc(x)} + CASE WHEN ABS(${x} - ${trunc(x)}) >= 0.5 THEN SIGN(${x}) ELSE 0 END)`;
}

/** Unicode White_Space (what `trim` removes, SEMANTICS.md), as a regular-expression character class body. */
export const WHITE_SPACE_CLASS =
  '\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}';

/** The same characters as a string, for trim functions that take a set of characters. */
export const WHITE_SPACE_CHARACTERS =
  '\t\n\u000b\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';

/** A numeric string in the literal syntax (cast from String, SEMANTICS.md): the pattern the memory cast uses. */
export { NUMBER_TEXT as NUMBER_SYNTAX } from '../../values/cast.js';

/**
 * The largest finite double, and the magnitude below which a product or quotient is taken as zero: the smallest
 * subnormal (PostgreSQL raises where IEEE rounds to zero; the range test works on the operands' shortest decimals,
 * so it cannot tell 2^-1075 from its neighbours, and a result below the smallest subnormal answers 0).
 */
export const DOUBLE_MAX = '1.7976931348623157e308';
export const DOUBLE_ZERO_BELOW = '4.9406564584124655e-324';

/**
 * The largest normalized exponent the memory backend reads from decimal text (parseDecimal's DECIMAL_EXPONENT_LIMIT,
 * IEEE decimal128's; a test holds the two equal): text beyond it is not a number to cast.
 */
export const DECIMAL_EXPONENT_LIMIT = 6144;

/**
 * The significant digits of 2^1024 − 2^970, the least value a double rounds to infinity (magnitude 10^308), and of
 * 2^−1075, the greatest positive value that rounds to 0 (magnitude 10^−324): with the magnitude equal, comparing
 * digit strings without trailing zeros compares the values.
 */
export const DOUBLE_OVERFLOW_DIGITS = (2n ** 1024n - 2n ** 970n).toString().replace(/0+$/, '');
export const DOUBLE_UNDERFLOW_DIGITS = (5n ** 1075n).toString();

/**
 * The name of a table's full-text index of these columns (Dialect.searchIndex): the table's name, `_search_`, and a
 * tag of the column list, so that indexing other columns makes a new index (filled then) instead of reading an old
 * one that lacks them.
 */
export function searchIndexName(table: string, columns: readonly string[], maxLength = Infinity): string {
  // FNV-1a over the names, 32 bits, base 36
  let hash = 0x811c9dc5;
  for (const c of [...columns].sort().join('\u0000')) hash = Math.imul(hash ^ c.codePointAt(0)!, 0x01000193) >>> 0;
  const tag = `_search_${hash.toString(36)}`;
  return `${table.slice(0, maxLength - tag.length)}${tag}`;
}
