// The functions the sqlite dialect's SQL calls (dialect.ts), registered on a better-sqlite3 connection. Each is the
// memory backend's own code for the same operation, so SQLite and memory agree by construction where SQLite has no
// exact native equivalent. All are deterministic and null in, null out, except odata_deadline (below).
import {
  ceilingDecimal,
  compareDecimal,
  decimalToNumber,
  decimalToString,
  floorDecimal,
  parseDecimal,
  roundDecimal,
  type Decimal,
} from '../../../values/decimal.js';
import { patternMatcher, searchText, toLowerSimple, toUpperSimple, trimWhiteSpace } from '../../../values/text.js';
import {
  INT32_MAX,
  INT32_MIN,
  int64Arithmetic,
  decimalArithmetic,
  roundHalfAway,
  toInt64,
} from '../../../values/arithmetic.js';
import { NUMBER_SYNTAX } from '../common.js';
import { scaledToText } from './storage.js';

/** The part of a better-sqlite3 `Database` this needs (structural, so the driver stays the caller's choice). */
export interface SqliteFunctionHost {
  function(
    name: string,
    options: { readonly deterministic?: boolean; readonly safeIntegers?: boolean },
    implementation: (...args: never[]) => unknown,
  ): unknown;
  /** better-sqlite3's user-defined aggregates (`odata_sum`). */
  aggregate<T>(
    name: string,
    options: {
      readonly start?: T | (() => T);
      step(total: T, next: unknown): T | void;
      result?(total: T): unknown;
      readonly deterministic?: boolean;
      readonly safeIntegers?: boolean;
    },
  ): unknown;
}

type SqliteValue = string | number | bigint | Uint8Array | null;

const numberSyntax = new RegExp(NUMBER_SYNTAX);

const decimal = (v: SqliteValue): Decimal | undefined =>
  v === null || v instanceof Uint8Array ? undefined : parseDecimal(v);
const text = (d: Decimal | null | undefined): string | null =>
  d === null || d === undefined ? null : decimalToString(d);
const integer = (v: SqliteValue): bigint | undefined =>
  typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : undefined;

/** Registers every odata_* function the sqlite dialect emits. Call once per connection. */
export function registerSqliteFunctions(db: SqliteFunctionHost): void {
  const define = (name: string, implementation: (...args: SqliteValue[]) => unknown): void => {
    db.function(name, { deterministic: true, safeIntegers: true }, implementation as (...args: never[]) => unknown);
  };

  // decimals: stored as scaled integers (storage.ts, whose decoder reads them), computed as exact text
  define('odata_decimal', (scaled, scale) => {
    const n = integer(scaled);
    return n === undefined ? null : scaledToText(n, Number(scale));
  });
  define('odata_dec', (op, a, b) => {
    const x = decimal(a);
    const y = decimal(b);
    if (x === undefined || y === undefined) return null;
    return text(decimalArithmetic(String(op), x, y));
  });
  define('odata_dec_cmp', (a, b) => {
    const x = decimal(a);
    const y = decimal(b);
    return x === undefined || y === undefined ? null : BigInt(compareDecimal(x, y));
  });
  define('odata_dec_key', (a) => {
    const x = decimal(a);
    return x === undefined ? null : decimalSortKey(x);
  });
  define('odata_dec_double', (a) => {
    const x = decimal(a);
    return x === undefined ? null : decimalToNumber(x);
  });
  define('odata_dbl_dec', (a) =>
    typeof a === 'number' || typeof a === 'bigint' ? text(parseDecimal(Number(a))) : null,
  );
  define('odata_finite', (r, a, b) => {
    // SQLite turns an infinite REAL into ±Inf and a NaN into NULL; memory's rule: overflow from finite operands is null
    if (typeof r !== 'number' || Number.isFinite(r)) return r;
    return Number.isFinite(Number(a)) && Number.isFinite(Number(b)) ? null : r;
  });
  define('odata_text_dec', (a) => (typeof a === 'string' && numberSyntax.test(a) ? text(parseDecimal(a)) : null));
  define('odata_round', (name, a, kind) => {
    if (a === null) return null;
    if (kind === 'double') {
      const x = Number(a);
      return name === 'round' ? roundHalfAway(x) : name === 'floor' ? Math.floor(x) : Math.ceil(x);
    }
    const x = decimal(a);
    if (x === undefined) return null;
    return text(name === 'round' ? roundDecimal(x) : name === 'floor' ? floorDecimal(x) : ceilingDecimal(x));
  });
  define('odata_to_int', (a, kind, target) => {
    if (a === null) return null;
    let n: bigint;
    if (kind === 'double') {
      // as memory: the double's shortest decimal text, rounded (1234567890123456789 reads as …800, not …768)
      const x = parseDecimal(Number(a));
      if (x === undefined) return null;
      n = BigInt(decimalToString(roundDecimal(x)));
    } else {
      const x = decimal(a);
      if (x === undefined) return null;
      n = BigInt(decimalToString(roundDecimal(x)));
    }
    return target === 'int32' ? (n < BigInt(INT32_MIN) || n > BigInt(INT32_MAX) ? null : n) : toInt64(n);
  });

  // integers: exact, null outside Int64 (SQLite would silently turn an overflow into a float)
  define('odata_int', (op, a, b) => {
    const x = integer(a);
    const y = integer(b);
    return x === undefined || y === undefined ? null : int64Arithmetic(String(op), x, y);
  });
  define('odata_fmod', (a, b) => {
    if (a === null || b === null) return null;
    const y = Number(b);
    return y === 0 ? null : Number(a) % y;
  });

  // text
  define('odata_lower', (s) => (typeof s === 'string' ? toLowerSimple(s) : null));
  define('odata_search_text', (s) => (typeof s === 'string' ? searchText(s) : null));
  define('odata_upper', (s) => (typeof s === 'string' ? toUpperSimple(s) : null));
  define('odata_trim', (s) => (typeof s === 'string' ? trimWhiteSpace(s) : null));
  // the memory backend's linear-time matcher (patternMatcher caches it): null for a pattern that is not valid or
  // not supported, as in memory
  define('odata_matches', (s, p) => {
    if (typeof s !== 'string' || typeof p !== 'string') return null;
    const matcher = patternMatcher(p);
    return matcher === undefined ? null : matcher.test(s) ? 1n : 0n;
  });

  // the exact sum of integers (scaled decimals included) as digit text, past 64 bits where SQLite's SUM fails with
  // "integer overflow" (the statement is run again with it then: Dialect.exactIntegerSum); nulls left out, none: null
  db.aggregate('odata_sum', {
    start: null,
    step: (total: bigint | null, value: SqliteValue): bigint | null => {
      const n = integer(value);
      return n === undefined ? total : (total ?? 0n) + n;
    },
    result: (total: bigint | null) => (total === null ? null : total.toString()),
    deterministic: true,
    safeIntegers: true,
  });

  // the row check of statements emitted with `deadlineChecks` (see runWithDeadline): true, or a throw past the
  // deadline. Not deterministic, so that SQLite calls it each time instead of once per statement.
  db.function('odata_deadline', { deterministic: false }, checkDeadline);
}

// ---------------------------------------------------------------------------------------------------------
// Deadlines: better-sqlite3 has no sqlite3_interrupt, so a statement is stopped from inside, by the row check the
// emitter puts in every WHERE (SqlOptions.deadlineChecks). A thread runs one statement at a time, so one deadline per
// thread (this module's state) serves every connection on it.

/** The error a statement stops with when its deadline passes (`code` 'ODATA_DEADLINE'). */
export class StatementDeadlineError extends Error {
  readonly code = 'ODATA_DEADLINE';
  constructor(readonly budgetMs: number) {
    super(`The statement ran past its deadline of ${budgetMs} ms`);
    this.name = 'StatementDeadlineError';
  }
}

let deadline = Infinity;
let budget = 0;

function checkDeadline(): 1 {
  if (performance.now() > deadline) throw new StatementDeadlineError(budget);
  return 1;
}

/**
 * Runs `run`, which executes SQLite statements synchronously on this thread, so that a statement emitted with
 * `deadlineChecks` throws StatementDeadlineError once `budgetMs` have passed, wherever SQLite is in it (a sort or a
 * scan in SQLite's own code included: the check runs for every row a WHERE visits). Statements without the checks
 * are not stopped. Nested calls keep the earlier deadline.
 */
export function runWithDeadline<T>(budgetMs: number, run: () => T): T {
  const previous = deadline;
  const previousBudget = budget;
  const next = performance.now() + budgetMs;
  if (next < deadline) {
    deadline = next;
    budget = budgetMs;
  }
  try {
    return run();
  } finally {
    deadline = previous;
    budget = previousBudget;
  }
}

/** Whether `error` is a statement stopped at its deadline (also after crossing a thread as a plain object). */
export function isStatementDeadline(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ODATA_DEADLINE';
}

/**
 * Text whose binary order is the decimal's numeric order: a sign class, then the position of the leading digit
 * (offset to be non-negative, fixed width), then the digits; a negative value's exponent and digits are
 * complemented, and a terminator above every digit makes a shorter digit string sort after its extensions.
 */
export function decimalSortKey(d: Decimal): string {
  const c = d.coefficient;
  if (c === 0n) return 'B';
  const negative = c < 0n;
  const digits = (negative ? -c : c).toString();
  const leading = digits.length - 1 + d.exponent + 500_000; // |exponent| is bounded far below this
  if (!negative) return `C${String(leading).padStart(7, '0')}${digits}`;
  const complement = digits.replace(/\d/g, (x) => String(9 - Number(x)));
  return `A${String(9_999_999 - leading).padStart(7, '0')}${complement}~`;
}
