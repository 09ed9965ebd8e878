// The predicate shapes the memory backend specialises, each decided here once and written as JavaScript source:
// a property compared with a literal (per EDM type, with its null, NaN and slow-path rules; instant text read by a
// hand-rolled parser), a Decimal sum, difference or product compared with a literal (decided in doubles unless too
// close to call), `in` over a list of literals, contains/startswith/endswith of a literal, and and/or/not over
// operands that are never null (plain && || !).
//
// The filter is one generated function per compiled query, so that the property reads of its common shapes are
// monomorphic named loads (`row.Status === k0`), as in a hand-written predicate. Closures shared by every query
// made those reads megamorphic once a process had compiled many queries (2.4× a hand-written predicate;
// bench/memory.bench.ts). Where the closures need one of these shapes (inside a lambda, under three-valued logic,
// in a `case`), they compile the same source as a function of its own, so no shape has a second implementation.
// Only property names (validated identifiers from the schema) enter the source; every value is a constant passed
// in, and every node without a template runs as its compiled closure.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { Property } from '../../model/schema.js';
import type { ComparisonOperator } from '../../syntax/ast.js';
import type {
  BoundArithmetic,
  BoundCall,
  BoundComparison,
  BoundExpr,
  BoundIn,
  BoundLiteral,
  BoundLogical,
} from '../../validate/bound.js';
import type { Value } from '../../values/read.js';
import { chainOperands, comparedType, membershipType } from './tree.js';
import { comparer } from '../../values/compare.js';
import { decimalToNumber } from '../../values/decimal.js';
import { isDecimal, reader } from '../../values/read.js';
import { decimalTextDouble, instantTextEpoch, integerTextDouble } from './fast-reads.js';
import { literalValue, type Eval, type Row } from './working-values.js';

/** What the templates need from the closure compiler. */
export interface Closures {
  /** The closure of an operand that has no template of its own. */
  compile(expr: BoundExpr): Eval;
  /** A comparison evaluated exactly, never by its template: what a template that decides most rows falls back to. */
  exactComparison(expr: BoundComparison): Eval;
}

/** Generated functions by their source: one shape used again with other constants compiles once. */
export type FunctionCache = Map<string, (constants: readonly unknown[]) => unknown>;

const OPERATOR_SOURCE = { eq: '===', ne: '!==', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;
/** A comparison's answer from `d`, the difference of its sides, once the doubles are far enough apart to decide. */
const DECIDED_BY_DIFFERENCE = { eq: 'false', ne: 'true', gt: 'd > 0', ge: 'd > 0', lt: 'd < 0', le: 'd < 0' } as const;
/**
 * Source: `d = a - b` is farther from zero than two values each within 2^-53 (relative) of theirs can make it, or the
 * 1e-300 an absolute error near the subnormal range can reach; false for NaN. Assigns `d`.
 */
const farApart = (a: string, b: string): string =>
  `(d = ${a} - ${b}, Math.abs(d) > 1e-15 * (Math.abs(${a}) + Math.abs(${b})) + 1e-300)`;
const MIRRORED = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const;

/**
 * The variables templates assign while evaluating a row (comma expressions keep each template one expression).
 * Each is read right after it is assigned, before any other template runs, so nested templates share them.
 */
const LOCALS = 'let v, a, b, p, d, t;';

/** The filter as one generated function: true when the row satisfies it (false and null both drop it). */
export function generatedPredicate(filter: BoundExpr, closures: Closures): (row: Row) => boolean {
  const writer = new SourceWriter(closures);
  const body = writer.value(filter);
  const source = `return function matches(row) { ${LOCALS} return ${body} === true; };`;
  return instantiate(source, writer.constants) as (row: Row) => boolean;
}

/** A function of its own for a node that has a template; undefined for any other node (it compiles to a closure). */
export function generatedEval(expr: BoundExpr, closures: Closures, cache: FunctionCache): Eval | undefined {
  const writer = new SourceWriter(closures);
  const body = writer.template(expr);
  if (body === undefined) return undefined;
  const source = `return function evaluate(row) { ${LOCALS} return ${body}; };`;
  return instantiate(source, writer.constants, cache) as Eval;
}

/** Runs generated source with its constants; the source names every constant, so it alone is the cache key. */
function instantiate(source: string, constants: readonly unknown[], cache?: FunctionCache): unknown {
  let factory = cache?.get(source);
  if (factory === undefined) {
    // constants arrive as one array (a filter may have more than a call can take as arguments), each then in a
    // variable of its own, as a hand-written predicate's would be
    const slots = constants.length === 0 ? '' : `const ${constants.map((_, i) => `k${i} = k[${i}]`).join(', ')}; `;
    // The source holds only schema names (validated identifiers) and constant slots, never query text.
    factory = new Function('k', `"use strict"; ${slots}${source}`) as (constants: readonly unknown[]) => unknown;
    cache?.set(source, factory);
  }
  return factory(constants);
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
 * Row values that already are their working value and compare with JavaScript's own operators, as a test of `v`;
 * every other value is read and compared by the type's comparer. NaN always takes the comparer's way, which orders
 * it above every number; a Decimal is finite, so a NaN or infinite number reads as null.
 */
function directForm(type: EdmPrimitiveType, c: NonNullable<Value>): string | undefined {
  switch (type) {
    case 'Edm.Int32':
    case 'Edm.Double':
      return typeof c === 'number' && !Number.isNaN(c) ? 'typeof v === "number" && v === v' : undefined;
    case 'Edm.Decimal':
      return typeof c === 'number' && !Number.isNaN(c) ? 'typeof v === "number" && v - v === 0' : undefined;
    case 'Edm.Date':
      // `YYYY-MM-DD` text with a four-digit year orders as the days it names (ten characters with a dash at 4 are
      // taken for it)
      return typeof c === 'string' && c.length === 10 && c[0] !== '-'
        ? 'typeof v === "string" && v.length === 10 && v.charCodeAt(4) === 45'
        : undefined;
    default:
      return undefined;
  }
}

/**
 * A numeric literal as a double within 2^-53 (relative) of its exact value: a number as it is (a Decimal literal is a
 * number only when it is exactly that double's shortest text), an Int64 or a Decimal rounded to the nearest double
 * (±Infinity beyond the range, which the estimate never decides on); undefined for anything else.
 */
function literalDouble(expr: BoundLiteral): number | undefined {
  const value = literalValue(expr.value);
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value;
  if (typeof value === 'bigint') return Number(value);
  if (isDecimal(value)) return decimalToNumber(value);
  return undefined;
}

/** Types whose working values are equal exactly when identical, so that `in` over literals is a set lookup. */
const SET_MEMBERSHIP_TYPES: ReadonlySet<EdmPrimitiveType> = new Set([
  'Edm.String',
  'Edm.Guid',
  'Edm.Int32',
  'Edm.Boolean',
  'Edm.Date',
]);

/** Row values of these types that the reader returns unchanged, as a test of `v`: they go to the set directly. */
const MEMBERSHIP_DIRECT: Partial<Record<EdmPrimitiveType, string>> = {
  'Edm.String': 'typeof v === "string"',
  'Edm.Int32': 'typeof v === "number"',
};

const SEARCH_METHODS: Partial<Record<BoundCall['name'], string>> = {
  contains: 'includes',
  startswith: 'startsWith',
  endswith: 'endsWith',
};

/** The source of one generated function: its templates and the constants they read. */
class SourceWriter {
  readonly constants: unknown[] = [];

  constructor(private readonly closures: Closures) {}

  private constant(value: unknown): string {
    this.constants.push(value);
    return `k${this.constants.length - 1}`;
  }

  /** A JavaScript expression for `expr`'s value: its template, or a call of its closure. */
  value(expr: BoundExpr): string {
    return this.template(expr) ?? `${this.constant(this.closures.compile(expr))}(row)`;
  }

  /** `expr`'s template (true, false or null for a Boolean), or undefined when the node has none. */
  template(expr: BoundExpr): string | undefined {
    switch (expr.kind) {
      case 'comparison':
        return this.comparison(expr);
      case 'logical':
        return this.chain(expr);
      case 'not':
        return twoValued(expr.operand) ? `!${this.value(expr.operand)}` : undefined;
      case 'in':
        return this.membership(expr);
      case 'call':
        return this.search(expr);
      default:
        return undefined;
    }
  }

  /** and/or over operands that are never null, flattened: plain && and ||. Three-valued logic is a closure. */
  private chain(expr: BoundLogical): string | undefined {
    const operands = chainOperands(expr);
    if (!operands.every(twoValued)) return undefined;
    return `(${operands.map((o) => this.value(o)).join(expr.operator === 'and' ? ' && ' : ' || ')})`;
  }

  private comparison(expr: BoundComparison): string | undefined {
    const { left, right } = expr;
    // `null eq null` and the like: a closure (nothing to read)
    if (comparedType(left.type, right.type) === undefined) return undefined;
    if (left.kind === 'arithmetic' && right.kind === 'literal')
      return this.decimalEstimate(expr, left, expr.operator, right);
    if (right.kind === 'arithmetic' && left.kind === 'literal')
      return this.decimalEstimate(expr, right, MIRRORED[expr.operator], left);
    if (left.kind === 'property' && left.source.kind === 'root' && right.kind === 'literal') {
      return this.propertyTest(left.property, expr.operator, right);
    }
    if (right.kind === 'property' && right.source.kind === 'root' && left.kind === 'literal') {
      return this.propertyTest(right.property, MIRRORED[expr.operator], left);
    }
    if (left.type === 'Edm.Decimal' && right.type === 'Edm.Decimal') return this.decimalPairEstimate(expr);
    return undefined;
  }

  /**
   * Two Decimal values of the row compared (`QuantityReceived lt QuantityOrdered`): decided in doubles when they are
   * farther apart than their rounding can reach (each within 2^-53 of its value: `approximateOperand`), exactly
   * otherwise; a value only the exact path reads, null included, is NaN and fails the test.
   */
  private decimalPairEstimate(expr: BoundComparison): string | undefined {
    const a = this.approximateOperand(expr.left);
    const b = this.approximateOperand(expr.right);
    if (a === undefined || b === undefined) return undefined;
    const exact = this.constant(this.closures.exactComparison(expr));
    const decided = DECIDED_BY_DIFFERENCE[expr.operator];
    return `(a = ${a}, b = ${b}, ${farApart('a', 'b')} ? ${decided} : ${exact}(row))`;
  }

  /** A root property compared with a literal: the shape of most filters. */
  private propertyTest(property: Property, operator: ComparisonOperator, literal: BoundLiteral): string {
    const row = `row.${property.name}`;
    const js = OPERATOR_SOURCE[operator];
    const read = reader(property.type);
    const c = literalValue(literal.value);
    if (c === null) {
      // `X eq null`, `X ne null`; ordering against null is always false
      return operator === 'eq' || operator === 'ne' ? `(${this.constant(read)}(${row}) ${js} null)` : 'false';
    }
    const k = this.constant(c);
    // strings and booleans are equal exactly when identical; anything else in the row reads as null
    if ((property.type === 'Edm.String' || property.type === 'Edm.Boolean') && (operator === 'eq' || operator === 'ne'))
      return `(${row} ${js} ${k})`;
    // any form of the value, read and compared as its type orders it; NaN for null makes every comparison but
    // `ne` false
    const cmp = comparer(property.type);
    const slow = this.constant((value: unknown): number => {
      const v = read(value);
      return v === null ? Number.NaN : cmp(v, c);
    });
    if (property.type === 'Edm.DateTimeOffset' && typeof c === 'number') {
      // the usual instant text read by a hand-rolled parser; any other form (or NaN, its answer for text it does not
      // take) goes to the general reader
      const parse = this.constant(instantTextEpoch);
      return `(v = ${row}, typeof v === "string" && (t = ${parse}(v)) === t ? t ${js} ${k} : ${slow}(v) ${js} 0)`;
    }
    const direct = directForm(property.type, c);
    if (property.type === 'Edm.Decimal') {
      const text = this.decimalTextEstimate(operator, literal);
      if (text !== undefined)
        return `(v = ${row}, ${direct === undefined ? '' : `${direct} ? v ${js} ${k} : `}${text} : ${slow}(v) ${js} 0)`;
    }
    if (direct === undefined) return `(${slow}(${row}) ${js} 0)`;
    return `(v = ${row}, ${direct} ? v ${js} ${k} : ${slow}(v) ${js} 0)`;
  }

  /**
   * A Decimal property held as text (a driver's numeric column, `'12.5000'`) compared with a literal: decided in
   * doubles, as `decimalEstimate` does, when the text's double (`decimalTextDouble`, within 2^-53 of its value, or NaN
   * for text it does not take) is farther from the literal's than their rounding can reach; the exact reader
   * otherwise. Source for the test and its answer (`test ? answer`), reading `v`; undefined for a literal no double
   * stands for.
   */
  private decimalTextEstimate(operator: ComparisonOperator, literal: BoundLiteral): string | undefined {
    const c = literalDouble(literal);
    if (c === undefined || !Number.isFinite(c)) return undefined;
    const k = this.constant(c);
    const decided = DECIDED_BY_DIFFERENCE[operator];
    return `typeof v === "string" && (a = ${this.constant(decimalTextDouble)}(v), ${farApart('a', k)}) ? ${decided}`;
  }

  /**
   * An operand of Decimal arithmetic as source for a double within 2^-53 (relative) of its exact value, or NaN where
   * only the exact path can tell: a root Decimal property read from a number (its shortest decimal, within half an ulp)
   * or from decimal text (`decimalTextDouble`), an Int32 (number) or Int64 (bigint, integer number or digit text)
   * property promoted to Decimal, or a literal. Any other row value (a Decimal object, numeric text of an Int32,
   * an unreadable value) is NaN, so the exact path reads it, null included. Undefined when the operand is no such node.
   */
  private approximateOperand(expr: BoundExpr): string | undefined {
    if (expr.kind === 'literal') {
      const x = literalDouble(expr);
      return x === undefined ? undefined : this.constant(x);
    }
    const node = expr.kind === 'convert' ? expr.operand : expr;
    if (node.kind !== 'property' || node.source.kind !== 'root') return undefined;
    const row = `row.${node.property.name}`;
    switch (node.type) {
      case 'Edm.Decimal':
        return `(v = ${row}, typeof v === "number" ? v : typeof v === "string" ? ${this.constant(decimalTextDouble)}(v) : NaN)`;
      case 'Edm.Int32':
        // read as readNumber reads a number: as it is (numeric text takes the exact path)
        return `(v = ${row}, typeof v === "number" ? v : NaN)`;
      case 'Edm.Int64':
        // readInt64 takes a bigint, a number only when it is an integer (its exact value), and digit text
        return `(v = ${row}, typeof v === "bigint" ? Number(v) : typeof v === "number" ? (Number.isInteger(v) ? v : NaN) : typeof v === "string" ? ${this.constant(integerTextDouble)}(v) : NaN)`;
      default:
        return undefined;
    }
  }

  /**
   * `A mul B gt 1000` on Decimal values: decided in doubles when the double result is farther from the literal than
   * the rounding error can reach, exactly (BigInt decimals) otherwise. Each operand and the literal are within 2^-53
   * (relative) of the decimal they stand for (`approximateOperand`, `literalDouble`), and one double operation adds at
   * most that again: a product is off by at most about 3·2^-53·|p| and the literal by 2^-53·|k|, so the margins below
   * (three to four times that, plus 1e-300 for a literal or result in the subnormal range, whose error is absolute)
   * are safe. A subnormal operand carries far more than 2^-53 relative error, and NaN (a value only the exact path
   * reads) fails every test: both go the exact way; an infinite or overflowing result never passes the margin.
   */
  private decimalEstimate(
    expr: BoundComparison,
    left: BoundArithmetic,
    operator: ComparisonOperator,
    right: BoundLiteral,
  ): string | undefined {
    if (left.type !== 'Edm.Decimal') return undefined;
    if (left.operator !== 'add' && left.operator !== 'sub' && left.operator !== 'mul') return undefined;
    const c = literalDouble(right);
    if (c === undefined || !Number.isFinite(c)) return undefined;
    const a = this.approximateOperand(left.left);
    const b = this.approximateOperand(left.right);
    if (a === undefined || b === undefined) return undefined;
    const exact = this.constant(this.closures.exactComparison(expr));
    const k = this.constant(c);
    const op = { add: '+', sub: '-', mul: '*' }[left.operator];
    const margin =
      left.operator === 'mul'
        ? `1e-15 * Math.abs(p) + 5e-16 * Math.abs(${k}) + 1e-300`
        : `1e-15 * (Math.abs(a) + Math.abs(b)) + 5e-16 * Math.abs(${k}) + 1e-300`;
    const decided = DECIDED_BY_DIFFERENCE[operator];
    // zero or normal: NaN fails both tests
    const normal = (x: string): string => `(${x} === 0 || ${x} > 1e-300 || ${x} < -1e-300)`;
    return `(a = ${a}, b = ${b}, ${normal('a')} && ${normal('b')} && (p = a ${op} b, d = p - ${k}, Math.abs(d) > ${margin}) ? ${decided} : ${exact}(row))`;
  }

  /** `X in (literals)` over values equal exactly when identical: a set lookup. */
  private membership(expr: BoundIn): string | undefined {
    const type = membershipType(expr);
    if (type === undefined || !SET_MEMBERSHIP_TYPES.has(type) || !expr.items.every((i) => i.kind === 'literal'))
      return undefined;
    const values = expr.items.map((i) => literalValue((i as BoundLiteral).value));
    const members = new Set(values.filter((v) => v !== null));
    const hasNull = values.includes(null);
    const set = this.constant(members);
    const left = expr.left;
    const direct = left.kind === 'property' && left.source.kind === 'root' ? MEMBERSHIP_DIRECT[type] : undefined;
    if (left.kind === 'property' && direct !== undefined) {
      // other forms of the value (numeric text, say) go through the reader, as eq does
      const read = reader(type);
      const slow = this.constant((value: unknown): boolean => {
        const v = read(value);
        return v === null ? hasNull : members.has(v);
      });
      return `(v = row.${left.property.name}, ${direct} ? ${set}.has(v) : ${slow}(v))`;
    }
    return `(v = ${this.value(left)}, v === null ? ${String(hasNull)} : ${set}.has(v))`;
  }

  /** contains, startswith and endswith of a literal: the string method itself. */
  private search(expr: BoundCall): string | undefined {
    const [subject, search] = expr.args;
    const method = SEARCH_METHODS[expr.name];
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
    return `(v = ${this.value(subject)}, v === null ? null : v.${method}(${k}))`;
  }
}
