// The memory backend: a bound query compiled once into closures over rows (predicate, comparator,
// projection), then run over arrays many times. Each bound node becomes one closure chosen for its
// types at compile time; the common shapes (a property compared with a literal, and/or chains) get
// specialised closures, so evaluating a row walks no tree, parses nothing and allocates nothing
// except where exact decimal arithmetic or a cast needs a new value. Semantics: SEMANTICS.md.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { Property } from '../../model/schema.js';
import type { ComparisonOperator, LiteralValue } from '../../syntax/ast.js';
import type { BoundExpr, BoundOrderBy, BoundQuery, BoundType } from '../../validate/bound.js';
import {
  ceilingDecimal,
  compareDecimal,
  decimalToNumber,
  decimalToString,
  exactDouble,
  floorDecimal,
  negateDecimal,
  parseDecimal,
  roundDecimal,
  type Decimal,
} from '../../values/decimal.js';
import {
  codePointIndexOf,
  codePointLength,
  codePointSubstring,
  compareCodePoints,
  patternMatcher,
  toLowerSimple,
  toUpperSimple,
  trimWhiteSpace,
} from '../../values/text.js';
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
import {
  decimalArithmetic,
  doubleArithmetic,
  formatDouble,
  int32Arithmetic,
  int64Arithmetic,
  INT32_MAX,
  INT32_MIN,
  roundHalfAway,
  toInt64,
} from '../../values/arithmetic.js';
import {
  civilFromDays,
  DAY,
  daysOfDate,
  formatDate,
  MAX_STORABLE_INSTANT,
  MIN_STORABLE_INSTANT,
} from '../../values/calendar.js';
import { formatDuration, formatTimeOfDay } from '../../values/temporal.js';

/** A row: an object with a value per property (and an array of child rows per navigation used in a lambda). */
export type Row = Readonly<Record<string, unknown>>;

export interface RunResult<R> {
  /** The rows of the page, projected to the selected properties. */
  readonly value: Record<string, unknown>[];
  /** With `$count=true`: all rows matching the filter, ignoring `$top` and `$skip`. */
  readonly count?: number;
  /** The matching rows of the page before projection (for callers that need the originals). */
  readonly rows: R[];
}

export interface CompiledQuery {
  /** True when the row satisfies `$filter` (false and null both drop it). */
  matches(row: Row): boolean;
  /** The `$orderby` order (nulls first ascending, the key breaking ties): negative, zero or positive. */
  compare(a: Row, b: Row): number;
  /** A new object with exactly the selected properties. */
  project(row: Row): Record<string, unknown>;
  /** Filter, count, order, page and project. Sorting only keeps `$skip + $top` rows when `$top` is given. */
  run<R extends Row>(rows: Iterable<R>): RunResult<R>;
}

type Eval = (row: Row) => Value;
type Comparer = (a: NonNullable<Value>, b: NonNullable<Value>) => number;

/** Reads a row value as the working value of its EDM type. */
function reader(type: EdmPrimitiveType): (value: unknown) => Value {
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
function literalValue(value: LiteralValue): Value {
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

function comparer(type: EdmPrimitiveType): Comparer {
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

const typeOf = (type: BoundType, other: BoundType): EdmPrimitiveType | undefined =>
  type === 'null' ? (other === 'null' ? undefined : other) : type;

function toBig(value: Value): bigint {
  return typeof value === 'bigint' ? value : BigInt(value as number);
}

function decimalOf(value: Value): Decimal | null {
  return value === null ? null : toDecimal(value as number | string | bigint | Decimal);
}

/** Compiles bound expressions to closures; lambda variables read their row from a shared frame. */
class Compiler {
  /** The current row of each lambda variable, by the slot assigned at compile time. */
  readonly frame: Row[] = [];
  /** Variables in scope while compiling, innermost last: a nested lambda may reuse an outer name. */
  private readonly scope: { readonly name: string; readonly slot: number }[] = [];
  private slotCount = 0;
  /** Each bound node compiles once, even where aliases share a subtree. */
  private readonly compiled = new Map<BoundExpr, Eval>();
  /** `now()` is read once per run so that every row sees the same instant. */
  now = Date.now();

  /** The slot of the innermost variable with this name. */
  private slot(variable: string): number {
    for (let i = this.scope.length - 1; i >= 0; i--) if (this.scope[i]!.name === variable) return this.scope[i]!.slot;
    throw new Error(`Unbound range variable ${variable}`);
  }

  /** Compiles `body` with `variable` bound to a new slot. */
  private withVariable<T>(variable: string, body: (slot: number) => T): T {
    const slot = this.slotCount++;
    this.scope.push({ name: variable, slot });
    try {
      return body(slot);
    } finally {
      this.scope.pop();
    }
  }

  compile(expr: BoundExpr): Eval {
    let compiled = this.compiled.get(expr);
    if (compiled === undefined) {
      compiled = this.compileNode(expr);
      this.compiled.set(expr, compiled);
    }
    return compiled;
  }

  private compileNode(expr: BoundExpr): Eval {
    switch (expr.kind) {
      case 'literal': {
        const value = literalValue(expr.value);
        return () => value;
      }
      case 'property':
        return this.property(expr.property, expr.source.kind === 'root' ? undefined : expr.source.name);
      case 'convert':
        return this.convert(this.compile(expr.operand), expr.operand.type, expr.type);
      case 'comparison':
        return this.comparison(expr);
      case 'logical':
        return this.logical(expr);
      case 'not': {
        const operand = this.compile(expr.operand);
        return (row) => {
          const v = operand(row);
          return v === null ? null : !v;
        };
      }
      case 'arithmetic':
        return this.arithmetic(expr);
      case 'negate':
        return this.negate(this.compile(expr.operand), expr.type);
      case 'in':
        return this.in(expr);
      case 'call':
        return this.call(expr);
      case 'cast':
        return this.cast(this.compile(expr.operand), expr.operand.type, expr.type);
      case 'isof': {
        const operand = this.compile(expr.operand);
        const matches = expr.operand.type === expr.target;
        return (row) => matches && operand(row) !== null;
      }
      case 'case': {
        const branches = expr.branches.map((b) => [this.compile(b.condition), this.compile(b.result)] as const);
        return (row) => {
          for (const [condition, result] of branches) if (condition(row) === true) return result(row);
          return null;
        };
      }
      case 'lambda':
        return this.lambda(expr);
      case 'count':
        return this.count(expr);
    }
  }

  private rowOf(variable: string | undefined): (row: Row) => Row | undefined {
    if (variable === undefined) return (row) => row;
    const slot = this.slot(variable);
    const frame = this.frame;
    return () => frame[slot];
  }

  private property(property: Property, variable: string | undefined): Eval {
    const name = property.name;
    const read = reader(property.type);
    if (variable === undefined) return (row) => read(row[name]);
    const slot = this.slot(variable);
    const frame = this.frame;
    return () => read(frame[slot]![name]);
  }

  private convert(operand: Eval, from: BoundType, to: EdmPrimitiveType): Eval {
    if (from === 'Edm.Date' && to === 'Edm.DateTimeOffset') {
      return (row) => {
        const v = operand(row);
        return v === null ? null : daysOfDate(v as string) * DAY;
      };
    }
    if (to === 'Edm.Double') {
      return (row) => {
        const v = operand(row);
        if (v === null || typeof v === 'number') return v;
        if (typeof v === 'bigint') return Number(v);
        if (typeof v === 'string') return Number(v);
        return decimalToNumber(v as Decimal);
      };
    }
    // Int32 → Int64 and integers → Decimal: the working values already serve (numbers and bigints
    // compare with each other, and decimal operations read numbers and bigints exactly).
    return operand;
  }

  private comparison(expr: Extract<BoundExpr, { kind: 'comparison' }>): Eval {
    const type = typeOf(expr.left.type, expr.right.type);
    const operator = expr.operator;
    // null eq null: both sides untyped null
    // `null eq null` is true, `null ne null` false; ordering against null is always false
    if (type === undefined) return () => operator === 'eq';
    const cmp = comparer(type);
    const { left, right } = expr;
    // Fast path: a root property compared with a literal (the shape of most filters).
    if (left.kind === 'property' && left.source.kind === 'root' && right.kind === 'literal') {
      return this.propertyComparison(left.property, operator, literalValue(right.value), cmp);
    }
    if (right.kind === 'property' && right.source.kind === 'root' && left.kind === 'literal') {
      const mirrored = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const;
      return this.propertyComparison(right.property, mirrored[operator], literalValue(left.value), cmp);
    }
    const l = this.compile(left);
    const r = this.compile(right);
    switch (operator) {
      case 'eq':
        return (row) => {
          const a = l(row);
          const b = r(row);
          return a === null || b === null ? a === b : cmp(a, b) === 0;
        };
      case 'ne':
        return (row) => {
          const a = l(row);
          const b = r(row);
          return a === null || b === null ? a !== b : cmp(a, b) !== 0;
        };
      default: {
        const test = orderTest(operator);
        return (row) => {
          const a = l(row);
          const b = r(row);
          return a !== null && b !== null && test(cmp(a, b));
        };
      }
    }
  }

  private propertyComparison(property: Property, operator: ComparisonOperator, c: Value, cmp: Comparer): Eval {
    const name = property.name;
    const read = reader(property.type);
    if (c === null) {
      // `X eq null`, `X ne null`; ordering against null is always false
      if (operator === 'eq') return (row) => read(row[name]) === null;
      if (operator === 'ne') return (row) => read(row[name]) !== null;
      return () => false;
    }
    if (property.type === 'Edm.String' || property.type === 'Edm.Boolean') {
      // strings and booleans are equal exactly when identical; anything else in the row reads as null
      if (operator === 'eq') return (row) => row[name] === c;
      if (operator === 'ne') return (row) => row[name] !== c;
    }
    const numeric =
      property.type === 'Edm.Int32' ||
      property.type === 'Edm.Double' ||
      (property.type === 'Edm.Decimal' && typeof c === 'number');
    if (numeric && typeof c === 'number' && !Number.isNaN(c)) {
      // numbers straight from the row; anything else (numeric text, bigint, decimal text) through the reader
      // NaN (and for decimals Infinity) leaves the fast path, so every path orders them as the comparer does
      const decimal = property.type === 'Edm.Decimal';
      const fast = (v: unknown): v is number => typeof v === 'number' && (decimal ? v - v === 0 : v === v);
      const slow = (value: unknown): number => {
        const v = read(value);
        return v === null ? Number.NaN : cmp(v, c);
      };
      switch (operator) {
        case 'eq':
          return (row) => {
            const v = row[name];
            return fast(v) ? v === c : slow(v) === 0;
          };
        case 'ne':
          return (row) => {
            const v = row[name];
            return fast(v) ? v !== c : slow(v) !== 0;
          };
        case 'gt':
          return (row) => {
            const v = row[name];
            return fast(v) ? v > c : slow(v) > 0;
          };
        case 'ge':
          return (row) => {
            const v = row[name];
            return fast(v) ? v >= c : slow(v) >= 0;
          };
        case 'lt':
          return (row) => {
            const v = row[name];
            return fast(v) ? v < c : slow(v) < 0;
          };
        case 'le':
          return (row) => {
            const v = row[name];
            return fast(v) ? v <= c : slow(v) <= 0;
          };
      }
    }
    switch (operator) {
      case 'eq':
        return (row) => {
          const v = read(row[name]);
          return v !== null && cmp(v, c) === 0;
        };
      case 'ne':
        return (row) => {
          const v = read(row[name]);
          return v === null || cmp(v, c) !== 0;
        };
      default: {
        const test = orderTest(operator);
        return (row) => {
          const v = read(row[name]);
          return v !== null && test(cmp(v, c));
        };
      }
    }
  }

  private logical(expr: Extract<BoundExpr, { kind: 'logical' }>): Eval {
    // Flatten a chain of the same operator into one loop: no recursion, however long the chain.
    const operands: Eval[] = [];
    const stack: BoundExpr[] = [expr];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.kind === 'logical' && node.operator === expr.operator) stack.push(node.right, node.left);
      else operands.push(this.compile(node));
    }
    if (expr.operator === 'and') {
      if (operands.length === 2) {
        const [a, b] = operands as [Eval, Eval];
        return (row) => {
          const x = a(row);
          if (x === false) return false;
          const y = b(row);
          if (y === false) return false;
          return x === true && y === true ? true : null;
        };
      }
      return (row) => {
        let unknown = false;
        for (let i = 0; i < operands.length; i++) {
          const v = operands[i]!(row);
          if (v === false) return false;
          if (v !== true) unknown = true;
        }
        return unknown ? null : true;
      };
    }
    if (operands.length === 2) {
      const [a, b] = operands as [Eval, Eval];
      return (row) => {
        const x = a(row);
        if (x === true) return true;
        const y = b(row);
        if (y === true) return true;
        return x === false && y === false ? false : null;
      };
    }
    return (row) => {
      let unknown = false;
      for (let i = 0; i < operands.length; i++) {
        const v = operands[i]!(row);
        if (v === true) return true;
        if (v !== false) unknown = true;
      }
      return unknown ? null : false;
    };
  }

  private in(expr: Extract<BoundExpr, { kind: 'in' }>): Eval {
    const type = typeOf(expr.left.type, expr.items.find((i) => i.type !== 'null')?.type ?? 'null');
    const left = this.compile(expr.left);
    const hasNull = expr.items.some((i) => i.kind === 'literal' && i.type === 'null');
    if (type === undefined) return (row) => left(row) === null && hasNull;
    const cmp = comparer(type);
    // literal lists of values that compare by identity become a set lookup
    const identity =
      type === 'Edm.String' ||
      type === 'Edm.Guid' ||
      type === 'Edm.Int32' ||
      type === 'Edm.Boolean' ||
      type === 'Edm.Date';
    if (identity && expr.items.every((i) => i.kind === 'literal')) {
      const values = new Set(expr.items.map((i) => literalValue((i as Extract<BoundExpr, { kind: 'literal' }>).value)));
      return (row) => {
        const v = left(row);
        return v === null ? hasNull : values.has(v);
      };
    }
    const items = expr.items.map((i) => this.compile(i));
    return (row) => {
      const v = left(row);
      for (let i = 0; i < items.length; i++) {
        const item = items[i]!(row);
        if (v === null || item === null) {
          if (v === item) return true;
        } else if (cmp(v, item) === 0) return true;
      }
      return false;
    };
  }

  private arithmetic(expr: Extract<BoundExpr, { kind: 'arithmetic' }>): Eval {
    const l = this.compile(expr.left);
    const r = this.compile(expr.right);
    const { operator, type } = expr;
    const binary =
      (f: (a: NonNullable<Value>, b: NonNullable<Value>) => Value): Eval =>
      (row) => {
        const a = l(row);
        if (a === null) return null;
        const b = r(row);
        return b === null ? null : f(a, b);
      };
    const leftType = expr.left.type === 'null' ? expr.right.type : expr.left.type;
    if (type === 'Edm.Duration' && (leftType === 'Edm.DateTimeOffset' || leftType === 'Edm.Date')) {
      // instant − instant, date − date: the difference as a duration
      return leftType === 'Edm.Date'
        ? binary((a, b) => (daysOfDate(a as string) - daysOfDate(b as string)) * DAY)
        : binary((a, b) => (a as number) - (b as number));
    }
    switch (type) {
      case 'Edm.DateTimeOffset':
      case 'Edm.Duration':
        return operator === 'add'
          ? binary((a, b) => (a as number) + (b as number))
          : binary((a, b) => (a as number) - (b as number));
      case 'Edm.Int32':
        return binary((a, b) => int32Arithmetic(operator, a as number | bigint, b as number | bigint));
      case 'Edm.Int64':
        return binary((a, b) => int64Arithmetic(operator, toBig(a), toBig(b)));
      case 'Edm.Decimal':
        return binary((a, b) => decimalArithmetic(operator, decimalOf(a)!, decimalOf(b)!));
      default:
        return binary((a, b) => doubleArithmetic(operator, a as number, b as number));
    }
  }

  private negate(operand: Eval, type: EdmPrimitiveType): Eval {
    return (row) => {
      const v = operand(row);
      if (v === null) return null;
      if (type === 'Edm.Int64') return toInt64(-toBig(v));
      if (type === 'Edm.Decimal') return typeof v === 'number' ? -v : negateDecimal(decimalOf(v)!);
      return -(v as number);
    };
  }

  private call(expr: Extract<BoundExpr, { kind: 'call' }>): Eval {
    const args = expr.args.map((a) => this.compile(a));
    const [a0, a1, a2] = args;
    const unary = (f: (v: NonNullable<Value>) => Value): Eval => {
      const arg = a0!;
      return (row) => {
        const v = arg(row);
        return v === null ? null : f(v);
      };
    };
    const pair = (f: (x: NonNullable<Value>, y: NonNullable<Value>) => Value): Eval => {
      const x0 = a0!;
      const x1 = a1!;
      return (row) => {
        const x = x0(row);
        if (x === null) return null;
        const y = x1(row);
        return y === null ? null : f(x, y);
      };
    };
    const argType = expr.args[0]?.type;
    const days: [number, number, number] = [0, 0, 0];
    const calendar = (part: 0 | 1 | 2): Eval =>
      argType === 'Edm.Date'
        ? unary((v) => {
            const text = v as string;
            const dash = text.indexOf('-', 1);
            return part === 0
              ? Number(text.slice(0, dash))
              : Number(text.slice(dash + 1 + (part === 1 ? 0 : 3), dash + 3 + (part === 1 ? 0 : 3)));
          })
        : unary((v) => civilFromDays(Math.floor((v as number) / DAY), days)[part]);
    const msOfDay = (v: number, timeOfDay: boolean): number => (timeOfDay ? v : ((v % DAY) + DAY) % DAY);
    const clock = (unit: number, modulo: number): Eval => {
      const timeOfDay = argType === 'Edm.TimeOfDay';
      return unary((v) => Math.floor(msOfDay(v as number, timeOfDay) / unit) % modulo);
    };
    switch (expr.name) {
      case 'contains':
        return pair((s, t) => (s as string).includes(t as string));
      case 'startswith':
        return pair((s, t) => (s as string).startsWith(t as string));
      case 'endswith':
        return pair((s, t) => (s as string).endsWith(t as string));
      case 'indexof':
        return pair((s, t) => codePointIndexOf(s as string, t as string));
      case 'length':
        return unary((s) => codePointLength(s as string));
      case 'substring': {
        if (a2 === undefined) return pair((s, i) => codePointSubstring(s as string, i as number));
        return (row) => {
          const s = a0!(row);
          const i = a1!(row);
          const n = a2(row);
          return s === null || i === null || n === null
            ? null
            : codePointSubstring(s as string, i as number, n as number);
        };
      }
      case 'tolower':
        return unary((s) => toLowerSimple(s as string));
      case 'toupper':
        return unary((s) => toUpperSimple(s as string));
      case 'trim':
        return unary((s) => trimWhiteSpace(s as string));
      case 'concat':
        return pair((s, t) => (s as string) + (t as string));
      case 'matchesPattern': {
        // a linear-time matcher (src/values/regex.ts): no pattern can make a row take more than linear time
        const pattern = expr.args[1]!;
        if (pattern.kind === 'literal' && pattern.value.type === 'Edm.String') {
          const matcher = patternMatcher(pattern.value.value);
          return unary((s) => (matcher === undefined ? null : matcher.test(s as string)));
        }
        return pair((s, p) => {
          const matcher = patternMatcher(p as string);
          return matcher === undefined ? null : matcher.test(s as string);
        });
      }
      case 'year':
        return calendar(0);
      case 'month':
        return calendar(1);
      case 'day':
        return calendar(2);
      case 'hour':
        return clock(3_600_000, 24);
      case 'minute':
        return clock(60_000, 60);
      case 'second':
        return clock(1000, 60);
      case 'fractionalseconds': {
        const timeOfDay = argType === 'Edm.TimeOfDay';
        return unary((v) => (msOfDay(v as number, timeOfDay) % 1000) / 1000);
      }
      case 'date':
        return unary((v) => formatDate(Math.floor((v as number) / DAY)));
      case 'time':
        return unary((v) => msOfDay(v as number, false));
      case 'totaloffsetminutes': {
        // stored values are kept in UTC; a literal keeps its own offset (SEMANTICS.md)
        const arg = expr.args[0]!;
        const offset = arg.kind === 'literal' && arg.value.type === 'Edm.DateTimeOffset' ? arg.value.offsetMinutes : 0;
        return unary(() => offset);
      }
      case 'totalseconds':
        return unary((v) => (v as number) / 1000);
      case 'now':
        return () => this.now;
      case 'maxdatetime':
        return () => MAX_STORABLE_INSTANT;
      case 'mindatetime':
        return () => MIN_STORABLE_INSTANT;
      case 'round':
      case 'floor':
      case 'ceiling': {
        if (expr.type === 'Edm.Double') {
          const f = expr.name === 'round' ? roundHalfAway : expr.name === 'floor' ? Math.floor : Math.ceil;
          return unary((v) => f(v as number));
        }
        const f = expr.name === 'round' ? roundDecimal : expr.name === 'floor' ? floorDecimal : ceilingDecimal;
        return unary((v) => f(decimalOf(v)!));
      }
      default:
        throw new Error(`The memory backend cannot evaluate ${expr.name}`);
    }
  }

  private cast(operand: Eval, from: BoundType, to: EdmPrimitiveType): Eval {
    if (from === to || from === 'null') return operand;
    return (row) => {
      const v = operand(row);
      return v === null ? null : castValue(v, from, to);
    };
  }

  private lambda(expr: Extract<BoundExpr, { kind: 'lambda' }>): Eval {
    const source = this.rowOf(expr.source.kind === 'root' ? undefined : expr.source.name);
    const name = expr.navigation.name;
    const frame = this.frame;
    const [slot, predicate] = this.withVariable(
      expr.variable,
      (slot) => [slot, expr.predicate === undefined ? undefined : this.compile(expr.predicate)] as const,
    );
    const any = expr.operator === 'any';
    return (row) => {
      const children = source(row)?.[name];
      if (!Array.isArray(children)) return !any;
      if (predicate === undefined) return children.length > 0;
      for (let i = 0; i < children.length; i++) {
        frame[slot] = children[i] as Row;
        const v = predicate(row);
        if (any ? v === true : v !== true) return any;
      }
      return !any;
    };
  }

  private count(expr: Extract<BoundExpr, { kind: 'count' }>): Eval {
    const source = this.rowOf(expr.source.kind === 'root' ? undefined : expr.source.name);
    const name = expr.navigation.name;
    const frame = this.frame;
    const [slot, filter] = this.withVariable(
      expr.variable,
      (slot) => [slot, expr.filter === undefined ? undefined : this.compile(expr.filter)] as const,
    );
    return (row) => {
      const children = source(row)?.[name];
      if (!Array.isArray(children)) return 0;
      if (filter === undefined) return children.length;
      let n = 0;
      for (let i = 0; i < children.length; i++) {
        frame[slot] = children[i] as Row;
        if (filter(row) === true) n++;
      }
      return n;
    };
  }
}

function orderTest(operator: 'gt' | 'ge' | 'lt' | 'le'): (c: number) => boolean {
  switch (operator) {
    case 'gt':
      return (c) => c > 0;
    case 'ge':
      return (c) => c >= 0;
    case 'lt':
      return (c) => c < 0;
    case 'le':
      return (c) => c <= 0;
  }
}

/** cast() between primitive types (SEMANTICS.md); a value that cannot be represented is null. */
function castValue(value: NonNullable<Value>, from: BoundType, to: EdmPrimitiveType): Value {
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

interface SortKey {
  readonly read: Eval;
  readonly cmp: Comparer;
  readonly sign: number;
}

/** Compares two key values: nulls first ascending and last descending. */
function compareKey(key: SortKey, x: Value, y: Value): number {
  if (x === null) return y === null ? 0 : -key.sign;
  if (y === null) return key.sign;
  return key.cmp(x, y) * key.sign;
}

function sortKeysOf(items: readonly BoundOrderBy[], compiler: Compiler): SortKey[] {
  return items.map((item) => {
    const type = item.expr.type === 'null' ? undefined : item.expr.type;
    return {
      read: compiler.compile(item.expr),
      cmp: type === undefined ? () => 0 : comparer(type),
      sign: item.direction === 'desc' ? -1 : 1,
    };
  });
}

/** Orders two rows by the bound `$orderby`. */
function comparatorOf(keys: readonly SortKey[]): (a: Row, b: Row) => number {
  return (a, b) => {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const c = compareKey(key, key.read(a), key.read(b));
      if (c !== 0) return c;
    }
    return 0;
  };
}

/**
 * Sorts every row: each key is read once per row into a column and an index array is sorted, so a
 * comparison touches only ready values (n key reads instead of 2·n·log n).
 */
function sortAll<R extends Row>(rows: readonly R[], keys: readonly SortKey[]): R[] {
  const n = rows.length;
  const columns = keys.map((key) => {
    const column = new Array<Value>(n);
    for (let i = 0; i < n; i++) column[i] = key.read(rows[i]!);
    return column;
  });
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((i, j) => {
    for (let k = 0; k < keys.length; k++) {
      const column = columns[k]!;
      const c = compareKey(keys[k]!, column[i]!, column[j]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const sorted = new Array<R>(n);
  for (let i = 0; i < n; i++) sorted[i] = rows[order[i]!]!;
  return sorted;
}

/** Keeps the `k` smallest rows by `compare` in a max-heap: O(n log k) instead of sorting everything. */
class BoundedHeap<R> {
  private readonly heap: R[] = [];
  constructor(
    private readonly k: number,
    private readonly compare: (a: R, b: R) => number,
  ) {}

  offer(row: R): void {
    const heap = this.heap;
    if (heap.length < this.k) {
      heap.push(row);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (this.compare(heap[i]!, heap[parent]!) <= 0) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
    } else if (this.k > 0 && this.compare(row, heap[0]!) < 0) {
      heap[0] = row;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let largest = i;
        if (l < heap.length && this.compare(heap[l]!, heap[largest]!) > 0) largest = l;
        if (r < heap.length && this.compare(heap[r]!, heap[largest]!) > 0) largest = r;
        if (largest === i) break;
        [heap[i], heap[largest]] = [heap[largest]!, heap[i]!];
        i = largest;
      }
    }
  }

  sorted(): R[] {
    return this.heap.sort(this.compare);
  }
}

/**
 * Whether an expression's value is always true or false, never null, whatever the data: comparisons,
 * `in`, lambdas and `isof` by construction, and logic over them. (A Boolean function of non-nullable
 * properties can still be null: a row may lack the value, or a pattern from the data may not compile.)
 */
function twoValued(expr: BoundExpr): boolean {
  switch (expr.kind) {
    case 'comparison':
    case 'in':
    case 'lambda':
    case 'isof':
      return true;
    case 'not':
      return twoValued(expr.operand);
    case 'logical':
      return twoValued(expr.left) && twoValued(expr.right);
    default:
      return false;
  }
}

/**
 * Generates the filter as JavaScript source, so that each compiled query has its own code and
 * the property reads of its common shapes are monomorphic named loads (`row.Status === c0`), as in
 * a hand-written predicate. Closures shared by every query made those reads megamorphic once a
 * process had compiled many queries (2.4× a hand-written predicate; bench/memory.bench.ts). Only
 * property names (validated identifiers from the schema) enter the source; every value is a
 * constant passed in, and any node without a template runs as its compiled closure.
 */
class PredicateGenerator {
  private readonly values: unknown[] = [];

  constructor(private readonly compiler: Compiler) {}

  private constant(value: unknown): string {
    this.values.push(value);
    return `k${this.values.length - 1}`;
  }

  private closure(expr: BoundExpr): string {
    return `${this.constant(this.compiler.compile(expr))}(row)`;
  }

  /** A JavaScript expression for `expr`'s value: true, false or null. */
  private generate(expr: BoundExpr): string {
    switch (expr.kind) {
      case 'literal':
        return expr.value.type === 'Edm.Boolean'
          ? String(expr.value.value)
          : expr.value.type === 'null'
            ? 'null'
            : this.closure(expr);
      case 'comparison':
        return this.comparison(expr) ?? this.closure(expr);
      case 'logical': {
        const operands: BoundExpr[] = [];
        const stack: BoundExpr[] = [expr];
        while (stack.length > 0) {
          const node = stack.pop()!;
          if (node.kind === 'logical' && node.operator === expr.operator) stack.push(node.right, node.left);
          else operands.push(node);
        }
        // Operands that never yield null (comparisons, in, lambdas) join with plain && and ||.
        if (operands.every(twoValued)) {
          return `(${operands.map((o) => this.generate(o)).join(expr.operator === 'and' ? ' && ' : ' || ')})`;
        }
        return this.closure(expr);
      }
      case 'not':
        return twoValued(expr.operand) ? `!${this.generate(expr.operand)}` : this.closure(expr);
      case 'in':
        return this.in(expr) ?? this.closure(expr);
      case 'call':
        return this.call(expr) ?? this.closure(expr);
      default:
        return this.closure(expr);
    }
  }

  private comparison(expr: Extract<BoundExpr, { kind: 'comparison' }>): string | undefined {
    const mirrored = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const;
    const { left, right } = expr;
    if (left.kind === 'arithmetic' && right.kind === 'literal') return this.arithmeticComparison(expr, left, right);
    if (left.kind === 'property' && left.source.kind === 'root' && right.kind === 'literal') {
      return this.propertyComparison(left.property, expr.operator, literalValue(right.value));
    }
    if (right.kind === 'property' && right.source.kind === 'root' && left.kind === 'literal') {
      return this.propertyComparison(right.property, mirrored[expr.operator], literalValue(left.value));
    }
    return undefined;
  }

  private propertyComparison(property: Property, operator: ComparisonOperator, c: Value): string | undefined {
    const row = `row.${property.name}`;
    const js = { eq: '===', ne: '!==', gt: '>', ge: '>=', lt: '<', le: '<=' }[operator];
    if (c === null) return undefined;
    const read = reader(property.type);
    const cmp = comparer(property.type);
    // `slow` handles any other form of the value; NaN for null makes every comparison false
    const slow = this.constant((value: unknown): number => {
      const v = read(value);
      return v === null ? Number.NaN : cmp(v, c);
    });
    const k = this.constant(c);
    const numeric = (check: string): string =>
      operator === 'ne'
        ? `!(v = ${row}, ${check} ? v === ${k} : ${slow}(v) === 0)`
        : `(v = ${row}, ${check} ? v ${js} ${k} : ${slow}(v) ${js} 0)`;
    switch (property.type) {
      case 'Edm.String':
        if (operator === 'eq' || operator === 'ne') return `(${row} ${js} ${k})`;
        return `(v = ${row}, typeof v === "string" ? ${this.constant(compareCodePoints)}(v, ${k}) ${js} 0 : false)`;
      case 'Edm.Boolean':
        return operator === 'eq' || operator === 'ne' ? `(${row} ${js} ${k})` : undefined;
      case 'Edm.Int32':
      case 'Edm.Double':
        // NaN takes the slow path, which orders it as the comparer does (above every number)
        return typeof c === 'number' && !Number.isNaN(c) ? numeric('typeof v === "number" && v === v') : undefined;
      case 'Edm.Decimal':
        // a Decimal is finite: NaN and Infinity take the reader's way (null)
        return typeof c === 'number' && !Number.isNaN(c) ? numeric('typeof v === "number" && v - v === 0') : undefined;
      case 'Edm.Date':
        return typeof c === 'string' && c.length === 10 && c[0] !== '-'
          ? numeric('typeof v === "string" && v.length === 10 && v.charCodeAt(4) === 45')
          : undefined;
      case 'Edm.DateTimeOffset': {
        const readInstantRef = this.constant(readInstant);
        if (operator === 'ne') return `!(v = ${readInstantRef}(${row}), v !== null && v === ${k})`;
        return `(v = ${readInstantRef}(${row}), v !== null && v ${js} ${k})`;
      }
      default:
        return undefined;
    }
  }

  /** A number-valued operand as source: a root property (any form, checked by the caller) or an exact literal. */
  private numericOperand(expr: BoundExpr): string | undefined {
    if (expr.kind === 'property' && expr.source.kind === 'root') return `row.${expr.property.name}`;
    if (expr.kind === 'literal') {
      const value = literalValue(expr.value);
      return typeof value === 'number' && Number.isFinite(value) ? this.constant(value) : undefined;
    }
    return undefined;
  }

  /**
   * `A mul B gt 1000` on Decimal values read from numbers: decided in doubles when the double result is
   * farther from the literal than the rounding error can reach, exactly (BigInt decimals) otherwise.
   * Each number is within half an ulp (2^-53 relative) of the decimal it stands for, and one double
   * operation adds at most that again, so the margins below (about four times the bound) are safe.
   */
  private arithmeticComparison(
    expr: Extract<BoundExpr, { kind: 'comparison' }>,
    left: Extract<BoundExpr, { kind: 'arithmetic' }>,
    right: Extract<BoundExpr, { kind: 'literal' }>,
  ): string | undefined {
    const c = literalValue(right.value);
    if (left.type !== 'Edm.Decimal' || typeof c !== 'number' || !Number.isFinite(c)) return undefined;
    if (left.operator !== 'add' && left.operator !== 'sub' && left.operator !== 'mul') return undefined;
    const a = this.numericOperand(left.left);
    const b = this.numericOperand(left.right);
    if (a === undefined || b === undefined) return undefined;
    const exact = this.constant(this.compiler.compile(expr));
    const k = this.constant(c);
    const op = { add: '+', sub: '-', mul: '*' }[left.operator];
    const margin =
      left.operator === 'mul'
        ? `1e-15 * Math.abs(p) + 5e-16 * Math.abs(${k}) + 1e-300`
        : `1e-15 * (Math.abs(a) + Math.abs(b)) + 5e-16 * Math.abs(${k}) + 1e-300`;
    const decided = { eq: 'false', ne: 'true', gt: 'd > 0', ge: 'd > 0', lt: 'd < 0', le: 'd < 0' }[expr.operator];
    // subnormal operands carry far more than 2^-53 relative error: those go the exact way
    const normal = (x: string): string => `(${x} === 0 || (${x} > 1e-300 || ${x} < -1e-300))`;
    return `(a = ${a}, b = ${b}, typeof a === "number" && typeof b === "number" && ${normal('a')} && ${normal('b')} && (p = a ${op} b, d = p - ${k}, Math.abs(d) > ${margin}) ? ${decided} : ${exact}(row))`;
  }

  private in(expr: Extract<BoundExpr, { kind: 'in' }>): string | undefined {
    const left = expr.left;
    if (left.kind !== 'property' || left.source.kind !== 'root' || !expr.items.every((i) => i.kind === 'literal'))
      return undefined;
    const type = left.property.type;
    if (type !== 'Edm.String' && type !== 'Edm.Int32') return undefined;
    const values = expr.items.map((i) => literalValue((i as Extract<BoundExpr, { kind: 'literal' }>).value));
    const set = this.constant(new Set(values.filter((v) => v !== null)));
    const hasNull = values.includes(null);
    const jsType = type === 'Edm.String' ? 'string' : 'number';
    // other forms of the value (numeric text, say) go through the reader, as eq does
    const read = reader(type);
    const slow = this.constant((value: unknown): boolean => {
      const v = read(value);
      return v === null ? hasNull : (values as unknown[]).includes(v);
    });
    return `(v = row.${left.property.name}, typeof v === "${jsType}" ? ${set}.has(v) : ${slow}(v))`;
  }

  private call(expr: Extract<BoundExpr, { kind: 'call' }>): string | undefined {
    const [subject, search] = expr.args;
    const method = { contains: 'includes', startswith: 'startsWith', endswith: 'endsWith' }[expr.name as string];
    if (
      method === undefined ||
      subject === undefined ||
      search?.kind !== 'literal' ||
      search.value.type !== 'Edm.String'
    )
      return undefined;
    const k = this.constant(search.value.value);
    if (subject.kind === 'property' && subject.source.kind === 'root') {
      return `(v = row.${subject.property.name}, typeof v === "string" ? v.${method}(${k}) : null)`;
    }
    return `(v = ${this.closure(subject)}, v === null ? null : v.${method}(${k}))`;
  }

  /** The compiled predicate: true when the row satisfies the filter. */
  predicate(filter: BoundExpr): (row: Row) => boolean {
    const body = this.generate(filter);
    const names = this.values.map((_, i) => `k${i}`);
    // The source holds only schema names (validated identifiers) and constant slots, never query text.
    const factory = new Function(
      ...names,
      `"use strict"; return function matches(row) { let v, a, b, p, d; return ${body} === true; };`,
    ) as (...values: unknown[]) => (row: Row) => boolean;
    return factory(...this.values);
  }
}

/** Compiles a bound query once; the result runs over any number of row arrays. */
export function compileQuery(bound: BoundQuery): CompiledQuery {
  const compiler = new Compiler();
  const matches = bound.filter === undefined ? () => true : new PredicateGenerator(compiler).predicate(bound.filter);
  const keys = sortKeysOf(bound.orderBy, compiler);
  const compare = comparatorOf(keys);
  const names = bound.select.map((p) => p.name);
  const project = (row: Row): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const value = row[name];
      out[name] = value === undefined ? null : value;
    }
    return out;
  };
  const { top, skip = 0, count: wantCount } = bound;
  return {
    matches,
    compare,
    project,
    run<R extends Row>(rows: Iterable<R>): RunResult<R> {
      compiler.now = Date.now();
      let count = 0;
      let page: R[];
      if (top !== undefined) {
        const heap = new BoundedHeap<R>(skip + top, compare);
        for (const row of rows) {
          if (!matches(row)) continue;
          count++;
          heap.offer(row);
        }
        page = heap.sorted().slice(skip);
      } else {
        const all: R[] = [];
        for (const row of rows) if (matches(row)) all.push(row);
        count = all.length;
        page = sortAll(all, keys).slice(skip);
      }
      return { value: page.map(project), rows: page, ...(wantCount ? { count } : {}) };
    },
  };
}

/** Compiles and runs in one call. */
export function runQuery<R extends Row>(rows: Iterable<R>, bound: BoundQuery): RunResult<R> {
  return compileQuery(bound).run(rows);
}
