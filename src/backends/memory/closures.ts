// The closures: every bound node the generated source has no template for (values, arithmetic, functions, casts,
// three-valued logic, comparisons of two computed operands, lambdas and `$count`) compiles once into a closure
// chosen for its types, so evaluating a row walks no tree, parses nothing and allocates nothing except where exact
// decimal arithmetic or a cast needs a new value. A node that has a template (source.ts) is compiled from that
// template instead, so each shape is decided in one place. Semantics: SEMANTICS.md.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { NavigationProperty, Property } from '../../model/schema.js';
import type { BoundComparison, BoundExpr, BoundType, PropertySource } from '../../validate/bound.js';
import {
  ceilingDecimal,
  decimalToNumber,
  floorDecimal,
  negateDecimal,
  roundDecimal,
  type Decimal,
} from '../../values/decimal.js';
import {
  codePointIndexOf,
  codePointLength,
  codePointSubstring,
  patternMatcher,
  toLowerSimple,
  toUpperSimple,
  trimWhiteSpace,
} from '../../values/text.js';
import type { Value } from '../../values/read.js';
import {
  decimalArithmetic,
  doubleArithmetic,
  int32Arithmetic,
  int64Arithmetic,
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
import { readInstantFast } from './fast-reads.js';
import { generatedEval, type Closures, type FunctionCache } from './source.js';
import { chainOperands, comparedType, membershipType } from './tree.js';
import { castValue } from '../../values/cast.js';
import { comparer } from '../../values/compare.js';
import { decimalOf, reader, toBig } from '../../values/read.js';
import { literalValue, type Eval, type Row } from './working-values.js';

/**
 * The rows a navigation leads to from a row: an array of rows for a collection, a row (or null or undefined: none)
 * for a single-valued navigation.
 */
export type RelatedRows = (row: Row, navigation: NavigationProperty) => unknown;

/** By default a row carries its related rows under the navigation's name (`row.Lines`, `row.PurchaseOrder`). */
export const ownMember: RelatedRows = (row, navigation) => row[navigation.name];

/** Compiles bound expressions to closures; lambda variables read their row from a shared frame. */
export class ClosureCompiler implements Closures {
  /** The current row of each lambda variable, by the slot assigned at compile time. */
  readonly frame: Row[] = [];
  /** Variables in scope while compiling, innermost last: a nested lambda may reuse an outer name. */
  private readonly scope: { readonly name: string; readonly slot: number }[] = [];
  private slotCount = 0;
  /** Each bound node compiles once, even where aliases share a subtree. */
  private readonly compiled = new Map<BoundExpr, Eval>();
  /** The generated functions of this query's templated nodes, by source. */
  private readonly functions: FunctionCache = new Map();
  /** `now()` is read once per run so that every row sees the same instant. */
  now = Date.now();

  constructor(private readonly related: RelatedRows = ownMember) {}

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

  /** `expr` as a function of the row: its template's own generated function where it has one, else a closure. */
  compile(expr: BoundExpr): Eval {
    let compiled = this.compiled.get(expr);
    if (compiled === undefined) {
      compiled = generatedEval(expr, this, this.functions) ?? this.compileNode(expr);
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
        return this.property(expr.property, expr.source);
      case 'convert':
        return this.convert(this.compile(expr.operand), expr.operand.type, expr.type);
      case 'comparison':
        return this.comparison(expr);
      case 'logical':
        return this.logical(expr);
      case 'not': {
        // three-valued (over an operand that is never null it has a template)
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

  /** The row a source reads: the row itself, a lambda variable's, or the row a single-valued navigation finds. */
  private rowOf(source: PropertySource): (row: Row) => Row | undefined {
    switch (source.kind) {
      case 'root':
        return (row) => row;
      case 'variable': {
        const slot = this.slot(source.name);
        const frame = this.frame;
        return () => frame[slot];
      }
      case 'navigation': {
        const from = this.rowOf(source.from);
        const { navigation } = source;
        const related = this.related;
        return (row) => {
          const base = from(row);
          if (base === undefined) return undefined;
          const found = related(base, navigation);
          return typeof found === 'object' && found !== null && !Array.isArray(found) ? (found as Row) : undefined;
        };
      }
    }
  }

  private property(property: Property, source: PropertySource): Eval {
    const name = property.name;
    // instants: the usual text forms by the hand-rolled parser the generated filter uses, anything else as read.ts reads it
    const read = property.type === 'Edm.DateTimeOffset' ? readInstantFast : reader(property.type);
    if (source.kind === 'root') return (row) => read(row[name]);
    if (source.kind === 'variable') {
      const slot = this.slot(source.name);
      const frame = this.frame;
      return () => read(frame[slot]![name]);
    }
    const rowOf = this.rowOf(source);
    return (row) => {
      const found = rowOf(row);
      return found === undefined ? null : read(found[name]);
    };
  }

  /** The rows of a navigation collection from a source's row (none where there is no row or no array). */
  private childrenOf(source: PropertySource, navigation: NavigationProperty): (row: Row) => readonly Row[] | undefined {
    const rowOf = this.rowOf(source);
    const related = this.related;
    return (row) => {
      const base = rowOf(row);
      if (base === undefined) return undefined;
      const children = related(base, navigation);
      return Array.isArray(children) ? (children as Row[]) : undefined;
    };
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

  /** The comparison without its template: what the decimal estimate (source.ts) falls back to. */
  exactComparison(expr: BoundComparison): Eval {
    return this.comparison(expr);
  }

  /** Two operands of any shape compared; a property with a literal has a template (source.ts). */
  private comparison(expr: BoundComparison): Eval {
    const type = comparedType(expr.left.type, expr.right.type);
    const operator = expr.operator;
    // both sides the untyped null: `null eq null` is true, `null ne null` false; ordering against null is false
    if (type === undefined) return () => operator === 'eq';
    const cmp = comparer(type);
    const l = this.compile(expr.left);
    const r = this.compile(expr.right);
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

  /** Three-valued and/or (over operands that are never null it has a template): one loop over the chain. */
  private logical(expr: Extract<BoundExpr, { kind: 'logical' }>): Eval {
    const operands = chainOperands(expr).map((operand) => this.compile(operand));
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

  /** `in` item by item (a list of literals compared by identity has a template: a set lookup). */
  private in(expr: Extract<BoundExpr, { kind: 'in' }>): Eval {
    const type = membershipType(expr);
    const left = this.compile(expr.left);
    const hasNull = expr.items.some((i) => i.kind === 'literal' && i.type === 'null');
    if (type === undefined) return (row) => left(row) === null && hasNull;
    const cmp = comparer(type);
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
        return binary((a, b) => {
          // an Int32 row value of NaN or Infinity converted to Decimal has no decimal: null, as unreadable values are
          const x = decimalOf(a);
          const y = decimalOf(b);
          return x === null || y === null ? null : decimalArithmetic(operator, x, y);
        });
      default:
        return binary((a, b) => doubleArithmetic(operator, a as number, b as number));
    }
  }

  private negate(operand: Eval, type: EdmPrimitiveType): Eval {
    return (row) => {
      const v = operand(row);
      if (v === null) return null;
      if (type === 'Edm.Int64') return toInt64(-toBig(v));
      if (type === 'Edm.Decimal') {
        if (typeof v === 'number') return -v;
        const d = decimalOf(v);
        return d === null ? null : negateDecimal(d);
      }
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
        return unary((v) => {
          const d = decimalOf(v);
          return d === null ? null : f(d);
        });
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
    const childrenOf = this.childrenOf(expr.source, expr.navigation);
    const frame = this.frame;
    const [slot, predicate] = this.withVariable(
      expr.variable,
      (slot) => [slot, expr.predicate === undefined ? undefined : this.compile(expr.predicate)] as const,
    );
    const any = expr.operator === 'any';
    return (row) => {
      const children = childrenOf(row);
      if (children === undefined) return !any;
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
    const childrenOf = this.childrenOf(expr.source, expr.navigation);
    const frame = this.frame;
    const [slot, filter] = this.withVariable(
      expr.variable,
      (slot) => [slot, expr.filter === undefined ? undefined : this.compile(expr.filter)] as const,
    );
    return (row) => {
      const children = childrenOf(row);
      if (children === undefined) return 0;
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
