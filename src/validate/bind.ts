// Binding: the syntax tree of each query option resolved against an entity type. Every name becomes
// a Property or NavigationProperty, every node gets its EDM type, promotions become explicit, and
// every mistake becomes an ODataError (400) with the option, the position and what was expected.
import { atPosition, collectProblem, combineErrors, ODataError, type ErrorCode } from '../errors.js';
import {
  isEdmPrimitiveType,
  isIntegral,
  isNumeric,
  isOrdered,
  widerNumeric,
  type EdmPrimitiveType,
} from '../values/edm.js';
import { readableProperties, type EntityType, type NavigationProperty, type Property } from '../model/schema.js';
import type {
  ArithmeticOperator,
  BinaryExpr,
  CallExpr,
  ComparisonOperator,
  ExpandItem,
  Expr,
  InExpr,
  NestedExpandOptions,
  LiteralValue,
  OrderByItem,
  PathExpr,
  SelectItem,
  Span,
} from '../syntax/ast.js';
import { parseDuration } from '../values/temporal.js';
import { parsePattern } from '../values/regex.js';
import type { QueryOptions } from '../syntax/query-string.js';
import { deriveLiteral, testLiteral } from '../syntax/lifted.js';
import type {
  BoundExpand,
  BoundExpr,
  BoundLiteral,
  BoundOrderBy,
  BoundQuery,
  BoundType,
  PropertySource,
} from './bound.js';
import { bindApply } from './apply.js';
import { bindCompute, substituteComputed } from './compute.js';
import { bindSearch } from './search.js';
import { describeOverload, functionSignatures, unsupportedFunctions, type Overload } from './signatures.js';
import { suggest } from '../values/suggest.js';

/** Bounds on what one request may ask for; exceeding one is a 400 `LimitExceeded`. */
export interface QueryLimits {
  /** Total characters of the decoded system query option values (default 65,536). */
  readonly maxQueryLength?: number;
  /** Nesting depth of a bound expression (default 100). */
  readonly maxDepth?: number;
  /** Items in one `in` list (default 1,000). */
  readonly maxInItems?: number;
  /**
   * Largest `$top`; no limit by default (SEMANTICS.md: there is no default cap on `$top`, the server pages), so any
   * value the parser accepts is legal unless a service sets one.
   */
  readonly maxTop?: number;
  /** Items in `$select` (default 200). */
  readonly maxSelect?: number;
  /** Items in `$orderby` (default 32). */
  readonly maxOrderBy?: number;
  /**
   * Nodes of one bound expression, counting an alias's value at each use (default 20,000): aliases
   * that use each other twice would otherwise double the tree at every level.
   */
  readonly maxNodes?: number;
  /**
   * Nesting of `any`, `all` and `$count` inside one another's predicates (default 4). SQLite counts the height of an
   * expression again in every subquery around it, so nesting multiplies: measured on SQLite 3.53, six nested
   * lambdas around an inner expression the other defaults allow already exceed its limit ("Expression tree is too
   * large"), five do not; MariaDB refuses more than 62 nested SELECTs. A user interface rarely nests two.
   */
  readonly maxLambdaDepth?: number;
  /**
   * `any`, `all` and `$count` in the whole query, `$filter` and `$orderby` together, each one a correlated subquery
   * (default 32; an alias counts at each use). Measured with 1,000 rows and 3,000 indexed child rows: 32 of them take
   * 30 ms to plan and 36–182 ms to run on PostgreSQL 15 and at most 33 ms on SQLite and 89 ms on MariaDB; at 100
   * subqueries PostgreSQL plans an `and` of them for 570 ms, and at 64 an `or` runs for 2.5 s.
   */
  readonly maxSubqueries?: number;
  /**
   * Distinct paths through single-valued navigations in one statement, `$filter` and `$orderby` together (each
   * expansion's options are a statement of their own; `PurchaseOrder/VendorID` and `PurchaseOrder/OrderDate` are one
   * path), each a join of one more table (default 16). SQLite joins at most 64 tables
   * and MariaDB 61 in one statement, subqueries merged into it included.
   */
  readonly maxJoins?: number;
  /** How deep `$expand` may nest, `$levels` counted as the levels it stands for (default 4). */
  readonly maxExpandDepth?: number;
  /** Expanded navigations in the whole query, nested ones and those `*` and `$levels` stand for included (default 16). */
  readonly maxExpansions?: number;
  /**
   * Related entities one expanded navigation may read for a page (default 10,000): more is a 400 that says to page
   * with a nested `$top` or read the navigation at its own address. Checked when the expansion is read.
   */
  readonly maxExpandRows?: number;
  /**
   * Rows of a collection one `$apply` may read (default 100,000): its transformations run over them in memory, after
   * the store has kept those its leading `filter(...)` transformations keep. More is a 400 that says to filter first.
   */
  readonly maxApplyRows?: number;
}

/** The limits every option has a default for; `maxTop` has none. */
export type DefaultLimits = Required<Omit<QueryLimits, 'maxTop'>> & Pick<QueryLimits, 'maxTop'>;

export const defaultLimits: Readonly<DefaultLimits> = Object.freeze({
  maxQueryLength: 65_536,
  maxDepth: 100,
  maxInItems: 1_000,
  maxSelect: 200,
  maxOrderBy: 32,
  maxNodes: 20_000,
  maxLambdaDepth: 4,
  maxSubqueries: 32,
  maxJoins: 16,
  maxExpandDepth: 4,
  maxExpansions: 16,
  maxExpandRows: 10_000,
  maxApplyRows: 100_000,
});

const root: PropertySource = Object.freeze({ kind: 'root' });

/** A lambda or $count range variable in scope while its predicate is bound. */
interface Scope {
  readonly name: string;
  readonly type: EntityType;
  /** Tells apart scopes that reuse a name (two `any(p: ...)`), for counting joins. */
  readonly id: number;
}

/** Subqueries and joins of the whole query so far: $filter and $orderby run as one statement. */
interface StatementCost {
  count: number;
  /** The paths through single-valued navigations, each one join (see joinKey). */
  readonly joins: Set<string>;
  /**
   * The next number for a range variable's scope or a generated variable name, shared by the options of one
   * statement, so that a lambda of `$filter` and one of `$orderby` are two scopes (two joins) however they are named.
   */
  ids: number;
}

/** Binds the expressions of one query option; throws the first problem as an ODataError. */
export class Binder {
  private depth = 0;
  private nodes = 0;
  private scopes: Scope[] = [];
  /** Lambdas and $count scopes around the node being bound. */
  private lambdaDepth = 0;
  /** What an unprefixed name refers to: the entity being filtered, or the child rows inside `$count($filter=...)`. */
  private implicit: { readonly type: EntityType; readonly source: PropertySource };
  private target: string;
  private text: string | undefined;

  constructor(
    private readonly entityType: EntityType,
    private readonly limits: DefaultLimits,
    target: string,
    text: string | undefined,
    /** Subqueries (any, all, $count) and joins of the whole query so far: $filter and $orderby run as one statement. */
    private readonly subqueries: StatementCost = { count: 0, joins: new Set(), ids: 0 },
    /**
     * The parameter aliases of `$expand` options (`Lines($filter=Qty gt @q;@q=5)`) in scope: they take precedence over
     * the value the parser gave an alias node (a top-level alias of that name, or none where the options define it
     * after its use).
     */
    private readonly aliases?: ReadonlyMap<string, Expr>,
  ) {
    this.implicit = { type: entityType, source: root };
    this.target = target;
    this.text = text;
  }

  fail(code: ErrorCode, span: Span | number, what: string, hint?: string): never {
    const position = typeof span === 'number' ? span : span.start;
    throw new ODataError(code, atPosition(what, position, this.target, hint), { target: this.target, position });
  }

  // ── expressions ───────────────────────────────────────────────────────────

  bind(expr: Expr): BoundExpr {
    if (++this.depth > this.limits.maxDepth) {
      this.fail('LimitExceeded', expr.span, `Expression nesting deeper than ${this.limits.maxDepth} levels`);
    }
    if (++this.nodes > this.limits.maxNodes) {
      this.fail(
        'LimitExceeded',
        expr.span,
        `The expression has more than ${this.limits.maxNodes} nodes (aliases count at each use)`,
      );
    }
    try {
      return this.bindUnlimited(expr);
    } finally {
      this.depth--;
    }
  }

  private bindUnlimited(expr: Expr): BoundExpr {
    switch (expr.kind) {
      case 'literal':
        return this.bindLiteral(expr.literal, expr.span);
      case 'path':
        return this.bindPath(expr);
      case 'alias':
        return this.bindAlias(expr.name, this.aliases?.get(expr.name) ?? expr.value, expr.span);
      case 'binary':
        return this.bindBinaryChain(expr);
      case 'in':
        return this.bindIn(expr);
      case 'not': {
        const operand = this.bind(expr.operand);
        this.expectBoolean(operand, "'not'");
        return { kind: 'not', type: 'Edm.Boolean', nullable: operand.nullable, operand, span: expr.span };
      }
      case 'negate': {
        const operand = this.bind(expr.operand);
        if (operand.type === 'null' || !(isNumeric(operand.type) || operand.type === 'Edm.Duration')) {
          this.fail('TypeMismatch', expr.span, `Cannot negate ${operand.type}`, 'expected a number or a duration');
        }
        // −(−2^63) is outside Int64, so null
        const nullable = operand.nullable || operand.type === 'Edm.Int64';
        return { kind: 'negate', type: operand.type, nullable, operand, span: expr.span };
      }
      case 'call':
        return this.bindCall(expr);
      case 'typeName':
        return this.fail(
          'TypeMismatch',
          expr.span,
          `Unexpected type name ${expr.name}`,
          'type names are arguments of cast and isof',
        );
      case 'caseBranch':
        return this.fail('InvalidSyntax', expr.span, 'Unexpected condition:result pair', 'it belongs inside case(...)');
      case 'list':
      case 'array':
        return this.fail('TypeMismatch', expr.span, 'Unexpected list', "a list of values belongs right of 'in'");
      case 'object':
        return this.fail('TypeMismatch', expr.span, 'Unexpected JSON object', 'the model has no complex types');
    }
  }

  private bindLiteral(literal: LiteralValue, span: Span): BoundLiteral {
    switch (literal.type) {
      case 'null':
        return { kind: 'literal', type: 'null', nullable: true, value: literal, span };
      case 'enum':
        return this.fail(
          'TypeMismatch',
          span,
          `Unexpected enumeration literal ${literal.typeName}'${literal.value}'`,
          'the model has no enumeration types',
        );
      case 'Edm.Geography':
      case 'Edm.Geometry':
        return this.fail(
          'NotImplemented',
          span,
          `Unexpected ${literal.type} literal`,
          'the model has no geo properties',
        );
      case 'Edm.Decimal':
        // every backend computes with exact decimals; bound their size as a database column would be
        if (testLiteral(literal, (value) => decimalDigits(value) > 100)) {
          this.fail(
            'InvalidLiteral',
            span,
            'Decimal literal with more than 100 digits',
            'write a Double (with an exponent) for values of that size',
          );
        }
        return { kind: 'literal', type: literal.type, nullable: false, value: literal, span };
      default:
        return { kind: 'literal', type: literal.type, nullable: false, value: literal, span };
    }
  }

  private bindAlias(name: string, value: Expr | undefined, span: Span): BoundExpr {
    // An alias without a value is null (OData 4.01 §5.3); a value's errors are reported against the alias.
    if (value === undefined) return { kind: 'literal', type: 'null', nullable: true, value: { type: 'null' }, span };
    const [target, text] = [this.target, this.text];
    this.target = name;
    this.text = undefined;
    try {
      return this.bind(value);
    } finally {
      [this.target, this.text] = [target, text];
    }
  }

  private expectBoolean(operand: BoundExpr, where: string): void {
    if (operand.type !== 'Edm.Boolean' && operand.type !== 'null') {
      this.fail('TypeMismatch', operand.span, `${where} needs a Boolean operand, found ${operand.type}`);
    }
  }

  /** Where the operator of `left op right` is: the first non-blank character after the left operand. */
  private operatorPosition(expr: BinaryExpr): number {
    const text = this.text;
    if (text === undefined) return expr.left.span.end + 1;
    let i = expr.left.span.end;
    while (text[i] === ' ' || text[i] === '\t' || text[i] === ')') i++;
    return i;
  }

  /** A left-deep chain (`a or b or c ...`) is walked iteratively: a 10,000-term chain must not exhaust the stack. */
  private bindBinaryChain(expr: BinaryExpr): BoundExpr {
    const chain: BinaryExpr[] = [expr];
    let leftmost: Expr = expr.left;
    while (leftmost.kind === 'binary') {
      chain.push(leftmost);
      leftmost = leftmost.left;
    }
    // `and`/`or` chains run as loops in every backend; other operators nest, so their chains count as depth.
    const nested = chain.filter((node) => node.operator !== 'and' && node.operator !== 'or').length;
    if (this.depth + nested > this.limits.maxDepth) {
      this.fail(
        'LimitExceeded',
        expr.span,
        `Expression nesting deeper than ${this.limits.maxDepth} levels (a chain of ${nested} operators)`,
      );
    }
    let left = this.bind(leftmost);
    for (let i = chain.length - 1; i >= 0; i--) {
      const node = chain[i]!;
      left = this.bindBinary(node, left, this.bind(node.right));
    }
    return left;
  }

  private bindBinary(expr: BinaryExpr, left: BoundExpr, right: BoundExpr): BoundExpr {
    const span = expr.span;
    switch (expr.operator) {
      case 'and':
      case 'or':
        this.expectBoolean(left, `'${expr.operator}'`);
        this.expectBoolean(right, `'${expr.operator}'`);
        return {
          kind: 'logical',
          type: 'Edm.Boolean',
          nullable: left.nullable || right.nullable,
          operator: expr.operator,
          left,
          right,
          span,
        };
      case 'eq':
      case 'ne':
      case 'gt':
      case 'ge':
      case 'lt':
      case 'le':
        return this.bindComparison(expr, expr.operator, left, right);
      case 'has':
        return this.fail(
          'TypeMismatch',
          this.operatorPosition(expr),
          `'has' needs an enumeration operand, found ${left.type}`,
          'the model has no enumeration types',
        );
      default:
        return this.bindArithmetic(expr, expr.operator, left, right);
    }
  }

  private bindComparison(expr: BinaryExpr, operator: ComparisonOperator, left: BoundExpr, right: BoundExpr): BoundExpr {
    const [l, r] = this.unify(left, right, () =>
      this.fail('TypeMismatch', this.operatorPosition(expr), `Cannot compare ${left.type} with ${right.type}`),
    );
    const type = l.type === 'null' ? r.type : l.type;
    if (operator !== 'eq' && operator !== 'ne' && type !== 'null' && !isOrdered(type)) {
      this.fail(
        'TypeMismatch',
        this.operatorPosition(expr),
        `${type} values have no order`,
        `use eq or ne with ${type}`,
      );
    }
    return { kind: 'comparison', type: 'Edm.Boolean', nullable: false, operator, left: l, right: r, span: expr.span };
  }

  private bindArithmetic(expr: BinaryExpr, operator: ArithmeticOperator, left: BoundExpr, right: BoundExpr): BoundExpr {
    const span = expr.span;
    const nullable = left.nullable || right.nullable;
    const mismatch = (): never =>
      this.fail('TypeMismatch', this.operatorPosition(expr), `Cannot ${operator} ${left.type} and ${right.type}`);
    if (left.type === 'null' && right.type === 'null') return mismatch();
    const lt = left.type === 'null' ? right.type : left.type;
    const rt = right.type === 'null' ? left.type : right.type;
    if (lt === 'null' || rt === 'null') return mismatch();
    if (isNumeric(lt) && isNumeric(rt)) {
      let type = widerNumeric(lt, rt);
      if (operator === 'divby' && isIntegral(type)) type = 'Edm.Decimal';
      const l = this.promote(left, type);
      const r = this.promote(right, type);
      return { kind: 'arithmetic', type, nullable: true, operator, left: l, right: r, span };
    }
    const additive = operator === 'add' || operator === 'sub';
    if (additive && lt === 'Edm.DateTimeOffset' && rt === 'Edm.Duration') {
      return { kind: 'arithmetic', type: 'Edm.DateTimeOffset', nullable, operator, left, right, span };
    }
    if (additive && lt === 'Edm.Duration' && rt === 'Edm.Duration') {
      return { kind: 'arithmetic', type: 'Edm.Duration', nullable, operator, left, right, span };
    }
    if (
      operator === 'sub' &&
      (lt === 'Edm.DateTimeOffset' || lt === 'Edm.Date') &&
      (rt === 'Edm.DateTimeOffset' || rt === 'Edm.Date')
    ) {
      const type: EdmPrimitiveType = lt === rt ? lt : 'Edm.DateTimeOffset';
      const l = this.promote(left, type);
      const r = this.promote(right, type);
      return { kind: 'arithmetic', type: 'Edm.Duration', nullable, operator, left: l, right: r, span };
    }
    return mismatch();
  }

  /** Gives two operands one type by promotion, or calls `mismatch`. */
  private unify(left: BoundExpr, right: BoundExpr, mismatch: () => never): [BoundExpr, BoundExpr] {
    const lt = left.type;
    const rt = right.type;
    if (lt === rt || lt === 'null' || rt === 'null') return [left, right];
    if (isNumeric(lt) && isNumeric(rt)) {
      const type = widerNumeric(lt, rt);
      return [this.promote(left, type), this.promote(right, type)];
    }
    if ((lt === 'Edm.Date' && rt === 'Edm.DateTimeOffset') || (lt === 'Edm.DateTimeOffset' && rt === 'Edm.Date')) {
      return [this.promote(left, 'Edm.DateTimeOffset'), this.promote(right, 'Edm.DateTimeOffset')];
    }
    // `Duration eq 'P1D'`: the bare 4.01 duration form is a string literal.
    const duration = (a: BoundExpr, b: BoundExpr): BoundExpr | undefined =>
      a.type === 'Edm.Duration' && b.kind === 'literal' && b.value.type === 'Edm.String'
        ? this.stringToDuration(b)
        : undefined;
    const asRight = duration(left, right);
    if (asRight !== undefined) return [left, asRight];
    const asLeft = duration(right, left);
    if (asLeft !== undefined) return [asLeft, right];
    return mismatch();
  }

  private stringToDuration(literal: BoundLiteral): BoundExpr | undefined {
    if (literal.value.type !== 'Edm.String') return undefined;
    const milliseconds = parseDuration(literal.value.value);
    if (milliseconds === undefined) return undefined;
    return {
      kind: 'literal',
      type: 'Edm.Duration',
      nullable: false,
      value: { type: 'Edm.Duration', value: literal.value.value, milliseconds },
      span: literal.span,
    };
  }

  /** Promotes to a wider numeric type or Date → DateTimeOffset: a literal is retyped, anything else wrapped in `convert`. */
  promote(expr: BoundExpr, type: EdmPrimitiveType): BoundExpr {
    if (expr.type === type || expr.type === 'null') return expr;
    if (expr.kind === 'literal') {
      const value = deriveLiteral(expr.value, (literal) => retypeLiteral(literal, type));
      if (value !== undefined) return { ...expr, type, value };
    }
    return { kind: 'convert', type, nullable: expr.nullable, operand: expr, span: expr.span };
  }

  private bindIn(expr: InExpr): BoundExpr {
    const left = this.bind(expr.left);
    const right = expr.right;
    if (right.kind !== 'list' && right.kind !== 'array') {
      return this.fail(
        'TypeMismatch',
        right.span,
        "The right side of 'in' must be a list",
        "write a list such as ('A','B')",
      );
    }
    if (right.items.length > this.limits.maxInItems) {
      this.fail(
        'LimitExceeded',
        right.span,
        `The 'in' list has ${right.items.length} items, more than the limit of ${this.limits.maxInItems}`,
      );
    }
    const items = right.items.map((item) => this.bind(item));
    // `'P1D' in (Span)`: the bare duration form on the left reads as a duration
    if (left.kind === 'literal' && left.type === 'Edm.String' && items.some((i) => i.type === 'Edm.Duration')) {
      const asDuration = this.stringToDuration(left);
      if (asDuration === undefined)
        this.fail('TypeMismatch', left.span, `Cannot compare Edm.String with Edm.Duration in 'in'`);
      return this.bindInItems(expr, asDuration, items);
    }
    return this.bindInItems(expr, left, items);
  }

  /**
   * `x in (a, b, ...)` is `x eq a or x eq b ...` (SEMANTICS.md), so each item is compared with the left side in the
   * type those two promote to, not in one type for the whole list: a Double item must not turn the comparison of a
   * Decimal with a Decimal item into Doubles. Items of one promoted type share an `in` node (one IN list in SQL);
   * several types give an `or` of `in` nodes, each with the left side promoted for its items.
   */
  private bindInItems(expr: InExpr, left: BoundExpr, items: BoundExpr[]): BoundExpr {
    const node = (l: BoundExpr, list: readonly BoundExpr[]): BoundExpr => ({
      kind: 'in',
      type: 'Edm.Boolean',
      nullable: false,
      left: l,
      items: list,
      span: expr.span,
    });
    const groups = new Map<BoundType, { left: BoundExpr; items: BoundExpr[] }>();
    let nulls = 0;
    for (const item of items) {
      const [l, r] = this.unify(left, item, () =>
        this.fail('TypeMismatch', item.span, `Cannot compare ${left.type} with ${item.type} in 'in'`),
      );
      if (r.type === 'null') {
        nulls++;
        continue;
      }
      const type = l.type === 'null' ? 'null' : r.type;
      const group = groups.get(type) ?? { left: l, items: [] };
      group.items.push(r);
      groups.set(type, group);
    }
    // `null in (...)` and `x in (null)` compare with null only: no promotion to make
    if (groups.size === 0) return node(left, items);
    const all = [...groups.values()];
    // a null item (x eq null) means the same in any type: it joins the first group
    if (nulls > 0) all[0]!.items.push(...items.filter((item) => item.type === 'null'));
    return all
      .map((group) => node(group.left, group.items))
      .reduce((or, next): BoundExpr => ({
        kind: 'logical',
        type: 'Edm.Boolean',
        nullable: false,
        operator: 'or',
        left: or,
        right: next,
        span: expr.span,
      }));
  }

  // ── functions ─────────────────────────────────────────────────────────────

  private bindCall(expr: CallExpr): BoundExpr {
    const unsupported = unsupportedFunctions[expr.name];
    if (unsupported !== undefined) this.fail('NotImplemented', expr.span, `${expr.name} is not supported`, unsupported);
    if (expr.name === 'cast' || expr.name === 'isof') return this.bindCastOrIsOf(expr);
    if (expr.name === 'case') return this.bindCase(expr);
    const overloads = functionSignatures[expr.name]!;
    const arities = [...new Set(overloads.map((o) => o.parameters.length))];
    const candidates = overloads.filter((o) => o.parameters.length === expr.args.length);
    if (candidates.length === 0) {
      this.fail(
        'WrongArgumentCount',
        expr.span,
        `${expr.name} takes ${arities.join(' or ')} argument${arities.length === 1 && arities[0] === 1 ? '' : 's'}, found ${expr.args.length}`,
        `expected ${overloads.map((o) => describeOverload(expr.name, o)).join(' or ')}`,
      );
    }
    const args = expr.args.map((arg) => this.bind(arg));
    const chosen = candidates.find((o) => o.parameters.every((accepted, i) => accepts(accepted, args[i]!.type)));
    if (chosen === undefined) return this.argumentMismatch(expr, candidates[0]!, args);
    const promoted = args.map((arg, i) => this.promote(arg, targetOf(chosen.parameters[i]!, arg.type)));
    this.checkArguments(expr, promoted);
    return {
      kind: 'call',
      type: chosen.returns,
      nullable: promoted.some((a) => a.nullable) || nullWithoutNullArguments(expr.name, promoted),
      name: expr.name,
      args: promoted,
      span: expr.span,
    };
  }

  private argumentMismatch(expr: CallExpr, overload: Overload, args: readonly BoundExpr[]): never {
    const index = overload.parameters.findIndex((accepted, i) => !accepts(accepted, args[i]!.type));
    const arg = args[index]!;
    this.fail(
      'TypeMismatch',
      arg.span,
      `Argument ${index + 1} of ${expr.name} must be ${overload.parameters[index]!.join(' or ')}, found ${arg.type}`,
      `expected ${describeOverload(expr.name, overload)}`,
    );
  }

  /** Literal arguments whose value alone is wrong: a bad regular expression, a negative substring position. */
  private checkArguments(expr: CallExpr, args: readonly BoundExpr[]): void {
    if (expr.name === 'matchesPattern') {
      const pattern = args[1]!;
      if (pattern.kind === 'literal' && pattern.value.type === 'Edm.String') {
        const parsed = parsePattern(pattern.value.value);
        if (!parsed.ok) {
          const at = this.positionInString(pattern.span, parsed.position);
          if (parsed.kind === 'invalid')
            this.fail('InvalidLiteral', at, 'Invalid regular expression in matchesPattern', parsed.message);
          // valid ECMAScript, but not for a linear-time engine (backreferences, lookaround, a very large automaton)
          this.fail('NotImplemented', at, 'This regular expression is not supported in matchesPattern', parsed.message);
        }
      }
    }
    if (expr.name === 'substring') {
      for (const arg of args.slice(1)) {
        if (arg.kind === 'literal' && arg.value.type === 'Edm.Int32' && arg.value.value < 0) {
          this.fail(
            'InvalidLiteral',
            arg.span,
            `substring takes no negative position or length, found ${arg.value.value}`,
          );
        }
      }
    }
  }

  /**
   * Where a position inside a string literal's value is in the option text: after the opening quote, with each
   * doubled quote of the text counting once in the value.
   */
  private positionInString(span: Span, index: number): number {
    const text = this.text;
    if (text === undefined || text[span.start] !== "'") return span.start + 1 + index;
    let at = span.start + 1;
    for (let i = 0; i < index && at < span.end; i++) at += text[at] === "'" ? 2 : 1;
    return at;
  }

  private bindCastOrIsOf(expr: CallExpr): BoundExpr {
    const typeArg = expr.args[expr.args.length - 1];
    if (typeArg === undefined || typeArg.kind !== 'typeName') {
      return this.fail(
        'WrongArgumentCount',
        expr.span,
        `${expr.name} takes a value and a type name`,
        `as in ${expr.name}(Quantity,Edm.String)`,
      );
    }
    if (expr.args.length === 1) {
      return this.fail(
        'NotImplemented',
        expr.span,
        `${expr.name}(${typeArg.name}) on the current entity is not supported`,
        'the model has no derived types',
      );
    }
    if (expr.args.length !== 2) {
      return this.fail('WrongArgumentCount', expr.span, `${expr.name} takes 2 arguments, found ${expr.args.length}`);
    }
    const target = typeArg.name;
    if (!isEdmPrimitiveType(target)) {
      const guess = suggest(target, [
        'Edm.String',
        'Edm.Int32',
        'Edm.Int64',
        'Edm.Decimal',
        'Edm.Double',
        'Edm.Boolean',
        'Edm.Date',
        'Edm.DateTimeOffset',
      ]);
      return this.fail(
        'UnknownType',
        typeArg.span,
        `Unknown type ${target}`,
        guess === undefined ? 'expected an EDM primitive type such as Edm.String' : `did you mean ${guess}?`,
      );
    }
    const operand = this.bind(expr.args[0]!);
    if (expr.name === 'isof')
      return { kind: 'isof', type: 'Edm.Boolean', nullable: false, operand, target, span: expr.span };
    if (!castAllowed(operand.type, target)) {
      this.fail('TypeMismatch', expr.span, `Cannot cast ${operand.type} to ${target}`);
    }
    return { kind: 'cast', type: target, nullable: true, operand, span: expr.span };
  }

  private bindCase(expr: CallExpr): BoundExpr {
    const branches = expr.args.map((arg) => {
      if (arg.kind !== 'caseBranch')
        return this.fail('InvalidSyntax', arg.span, 'Expected condition:result in case(...)');
      const condition = this.bind(arg.condition);
      this.expectBoolean(condition, 'A case condition');
      return { condition, result: this.bind(arg.result) };
    });
    if (branches.length === 0)
      return this.fail('WrongArgumentCount', expr.span, 'case needs at least one condition:result pair');
    let type: BoundType = 'null';
    for (const { result } of branches) {
      if (result.type === 'null' || result.type === type) continue;
      if (type === 'null') type = result.type;
      else if (isNumeric(type) && isNumeric(result.type)) type = widerNumeric(type, result.type);
      else if (type === 'Edm.Date' && result.type === 'Edm.DateTimeOffset') type = result.type;
      else if (!(type === 'Edm.DateTimeOffset' && result.type === 'Edm.Date')) {
        this.fail('TypeMismatch', result.span, `The results of case have different types: ${type} and ${result.type}`);
      }
    }
    const common = type;
    return {
      kind: 'case',
      type: common,
      nullable: true,
      branches: branches.map((b) => ({
        condition: b.condition,
        result: common === 'null' ? b.result : this.promote(b.result, common),
      })),
      span: expr.span,
    };
  }

  // ── paths ─────────────────────────────────────────────────────────────────

  private bindPath(expr: PathExpr): BoundExpr {
    let type: EntityType;
    let source: PropertySource;
    switch (expr.root.kind) {
      case 'implicit':
      case '$it':
        ({ type, source } = this.implicit);
        break;
      case '$this': {
        const scope = this.scopes[this.scopes.length - 1];
        ({ type, source } =
          scope === undefined ? this.implicit : { type: scope.type, source: { kind: 'variable', name: scope.name } });
        break;
      }
      case '$root':
        return this.fail(
          'NotImplemented',
          expr.span,
          '$root is not supported',
          'filter on properties of the entity itself',
        );
      case 'variable': {
        const name = expr.root.name;
        const scope = [...this.scopes].reverse().find((s) => s.name === name)!;
        type = scope.type;
        source = { kind: 'variable', name };
        break;
      }
    }
    const segments = expr.segments;
    /** Whether a single-valued navigation was passed: it may find no row, and then every property is null. */
    let throughNavigation = false;
    if (segments.length === 0) {
      return this.fail(
        'TypeMismatch',
        expr.span,
        `${expr.root.kind === 'variable' ? expr.root.name : expr.root.kind} is an entity, not a value`,
        'compare one of its properties, as in x/Name',
      );
    }
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i]!;
      const next = segments[i + 1];
      if (segment.kind !== 'property') return this.unsupportedSegment(segment);
      const property = type.properties.get(segment.name);
      if (property !== undefined) {
        if (property.writeOnly === true) {
          this.fail(
            'NotQueryable',
            segment.span,
            `${segment.name} on ${type.name} is write-only`,
            'it can be sent in a request body but not filtered, sorted or selected',
          );
        }
        if (next !== undefined && (next.kind === 'any' || next.kind === 'all' || next.kind === 'count')) {
          const what = next.kind === 'count' ? '$count' : `${next.kind}(...)`;
          this.fail(
            'TypeMismatch',
            next.span,
            `${segment.name} is not a collection`,
            `${what} needs a navigation collection such as ${[...type.navigation.keys()].join(', ') || '(none on this type)'}`,
          );
        }
        if (next !== undefined && next.kind !== 'property') this.unsupportedSegment(next);
        if (next !== undefined) {
          this.fail(
            'UnknownProperty',
            next.span,
            `${property.type} property ${segment.name} has no members`,
            `${segment.name} is a value, not a structure`,
          );
        }
        return {
          kind: 'property',
          type: property.type,
          nullable: property.nullable || throughNavigation,
          property,
          source,
          span: expr.span,
        };
      }
      const navigation = type.navigation.get(segment.name);
      if (navigation === undefined) this.unknownProperty(type, segment.name, segment.span);
      if (!navigation.collection) {
        if (next !== undefined && (next.kind === 'any' || next.kind === 'all' || next.kind === 'count')) {
          this.fail(
            'TypeMismatch',
            next.span,
            `${segment.name} is a single ${navigation.target().name}, not a collection`,
            `${next.kind === 'count' ? '$count' : `${next.kind}(...)`} needs a navigation collection`,
          );
        }
        const target = navigation.target();
        if (next === undefined) {
          const example = readableProperties(target)[0]?.name ?? '...';
          return this.fail(
            'TypeMismatch',
            segment.span,
            `${segment.name} is an entity (${target.name}), not a value`,
            `compare one of its properties, as in ${segment.name}/${example}`,
          );
        }
        source = { kind: 'navigation', navigation, from: source };
        this.countJoin(source, segment.span);
        type = target;
        throughNavigation = true;
        continue;
      }
      if (next === undefined) {
        return this.fail(
          'TypeMismatch',
          segment.span,
          `${segment.name} is a collection of ${navigation.target().name}`,
          `use ${segment.name}/any(x: ...), ${segment.name}/all(x: ...) or ${segment.name}/$count`,
        );
      }
      if (next.kind === 'any' || next.kind === 'all') {
        if (i + 2 < segments.length)
          this.fail('InvalidSyntax', segments[i + 2]!.span, `Nothing can follow ${next.kind}(...)`);
        return this.bindLambda(
          navigation,
          source,
          next.kind,
          next.variable,
          next.predicate,
          span(expr.span.start, next.span.end),
        );
      }
      if (next.kind === 'count') {
        if (i + 2 < segments.length) this.fail('InvalidSyntax', segments[i + 2]!.span, 'Nothing can follow $count');
        return this.bindCount(navigation, source, next.filter, span(expr.span.start, next.span.end));
      }
      if (next.kind === 'property') {
        this.fail(
          'TypeMismatch',
          next.span,
          `${segment.name} is a collection: ${next.name} of which row?`,
          `use ${segment.name}/any(x: x/${next.name} ...)`,
        );
      }
      return this.unsupportedSegment(next);
    }
    return this.fail('InvalidSyntax', expr.span, 'Empty path');
  }

  private unknownProperty(type: EntityType, name: string, where: Span, selecting = false): never {
    const candidates = [...readableProperties(type).map((p) => p.name), ...type.navigation.keys()];
    const guess = suggest(name, candidates);
    // In an expression, an unknown bare word is most often a string someone forgot to quote.
    const quoted = selecting
      ? `${type.name} has ${candidates.slice(0, 12).join(', ')}${candidates.length > 12 ? ', …' : ''}`
      : `a string value is written in single quotes: '${name}'`;
    this.fail(
      'UnknownProperty',
      where,
      `Unknown property '${name}' on ${type.name}`,
      guess === undefined ? quoted : `did you mean '${guess}'?`,
    );
  }

  private unsupportedSegment(segment: PathExpr['segments'][number]): never {
    switch (segment.kind) {
      case 'cast':
        return this.fail(
          'UnknownType',
          segment.span,
          `Unknown type ${segment.typeName}`,
          'the model has no derived types to cast to',
        );
      case 'function':
        return this.fail(
          'UnknownFunction',
          segment.span,
          `Unknown function ${segment.name}`,
          'the model has no bound functions',
        );
      case 'key':
        return this.fail(
          'NotImplemented',
          segment.span,
          'Key predicates in $filter paths are not supported',
          'use any(x: x/Key eq ...)',
        );
      case 'annotation':
        return this.fail('NotImplemented', segment.span, `Annotation values (@${segment.term}) are not supported`);
      case 'filter':
        return this.fail(
          'NotImplemented',
          segment.span,
          '/$filter(...) path segments are not supported',
          'use any(x: ...)',
        );
      case 'any':
      case 'all':
      case 'count':
        return this.fail(
          'TypeMismatch',
          segment.span,
          `${segment.kind === 'count' ? '$count' : `${segment.kind}(...)`} needs a collection before it`,
        );
      case 'property':
        return this.fail('InvalidSyntax', segment.span, `Unexpected ${segment.name}`);
    }
  }

  private bindLambda(
    navigation: NavigationProperty,
    source: PropertySource,
    operator: 'any' | 'all',
    variable: string | undefined,
    predicate: Expr | undefined,
    where: Span,
  ): BoundExpr {
    const name = variable ?? `$${operator}${this.subqueries.ids++}`;
    this.countSubquery(where);
    if (predicate === undefined) {
      return {
        kind: 'lambda',
        type: 'Edm.Boolean',
        nullable: false,
        operator,
        navigation,
        source,
        variable: name,
        span: where,
      };
    }
    this.enterSubquery(where);
    this.scopes.push({ name, type: navigation.target(), id: this.subqueries.ids++ });
    try {
      const bound = this.bind(predicate);
      this.expectBoolean(bound, `The ${operator}(...) predicate`);
      return {
        kind: 'lambda',
        type: 'Edm.Boolean',
        nullable: false,
        operator,
        navigation,
        source,
        variable: name,
        predicate: bound,
        span: where,
      };
    } finally {
      this.scopes.pop();
      this.lambdaDepth--;
    }
  }

  /** One more subquery in the query (`maxSubqueries`). */
  private countSubquery(where: Span): void {
    if (++this.subqueries.count > this.limits.maxSubqueries) {
      this.fail(
        'LimitExceeded',
        where,
        `The query has more than ${this.limits.maxSubqueries} any, all and $count (each is a subquery; maxSubqueries)`,
      );
    }
  }

  /** One more path through a single-valued navigation, unless the query has it already (`maxJoins`). */
  private countJoin(source: PropertySource, where: Span): void {
    const joins = this.subqueries.joins;
    const key = this.joinKey(source);
    if (joins.has(key)) return;
    joins.add(key);
    if (joins.size > this.limits.maxJoins) {
      this.fail(
        'LimitExceeded',
        where,
        `The query reads through more than ${this.limits.maxJoins} single-valued navigation paths (each is a join; maxJoins)`,
      );
    }
  }

  /** The same text for the same rows: a path from the same scope through the same navigations. */
  private joinKey(source: PropertySource): string {
    switch (source.kind) {
      case 'root':
        return '';
      case 'variable': {
        const scope = [...this.scopes].reverse().find((s) => s.name === source.name);
        return `${source.name}#${scope?.id ?? ''}`;
      }
      case 'navigation':
        return `${this.joinKey(source.from)}/${source.navigation.name}`;
    }
  }

  /** Binding inside one more lambda or $count (`maxLambdaDepth`); the caller leaves it in `finally`. */
  private enterSubquery(where: Span): void {
    if (++this.lambdaDepth > this.limits.maxLambdaDepth) {
      this.lambdaDepth--;
      this.fail(
        'LimitExceeded',
        where,
        `any, all and $count nested ${this.lambdaDepth + 1} deep, more than the limit of ${this.limits.maxLambdaDepth} (maxLambdaDepth)`,
      );
    }
  }

  private bindCount(
    navigation: NavigationProperty,
    source: PropertySource,
    filter: Expr | undefined,
    where: Span,
  ): BoundExpr {
    const variable = `$count${this.subqueries.ids++}`;
    this.countSubquery(where);
    if (filter === undefined) {
      return { kind: 'count', type: 'Edm.Int32', nullable: false, navigation, source, variable, span: where };
    }
    // Inside $count($filter=...), unprefixed names are properties of the counted rows.
    const outer = this.implicit;
    this.enterSubquery(where);
    this.implicit = { type: navigation.target(), source: { kind: 'variable', name: variable } };
    try {
      const bound = this.bind(filter);
      this.expectBoolean(bound, 'The $count filter');
      return {
        kind: 'count',
        type: 'Edm.Int32',
        nullable: false,
        navigation,
        source,
        variable,
        filter: bound,
        span: where,
      };
    } finally {
      this.implicit = outer;
      this.lambdaDepth--;
    }
  }

  // ── options ───────────────────────────────────────────────────────────────

  filter(expr: Expr): BoundExpr {
    const bound = this.bind(expr);
    if (bound.type !== 'Edm.Boolean' && bound.type !== 'null') {
      this.fail(
        'NotBoolean',
        expr.span,
        `$filter must be a Boolean expression, found ${bound.type}`,
        'compare it with something, as in Quantity gt 0',
      );
    }
    return bound;
  }

  orderBy(items: readonly OrderByItem[]): BoundOrderBy[] {
    if (items.length > this.limits.maxOrderBy) {
      this.fail(
        'LimitExceeded',
        items[this.limits.maxOrderBy]!.span,
        `$orderby has ${items.length} items, more than the limit of ${this.limits.maxOrderBy}`,
      );
    }
    const bound: BoundOrderBy[] = items.map((item) => {
      const expr = this.bind(item.expr);
      if (expr.type === 'null' || !isOrdered(expr.type)) {
        this.fail(
          'NotSortable',
          item.expr.span,
          `Cannot order by ${expr.type === 'null' ? 'null' : `an ${expr.type} value`}`,
          'order by a property or an expression with a primitive, ordered type',
        );
      }
      return { expr, direction: item.direction, tieBreak: false };
    });
    // An item whose value is the same for every row cannot change the order (SQL would even read a bare constant
    // as a column number): it is checked like any other, then left out.
    const ordering = bound.filter((o) => !rowIndependent(o.expr));
    // Ties are broken by the key, ascending (SEMANTICS.md), so that paging is deterministic.
    for (const key of this.entityType.key) {
      const present = ordering.some(
        (o) => o.expr.kind === 'property' && o.expr.source.kind === 'root' && o.expr.property === key,
      );
      if (!present) {
        ordering.push({
          expr: {
            kind: 'property',
            type: key.type,
            nullable: false,
            property: key,
            source: root,
            span: { start: 0, end: 0 },
          },
          direction: 'asc',
          tieBreak: true,
        });
      }
    }
    return ordering;
  }

  /** The selected properties, and the navigations named in `$select` (their links, not their entities). */
  select(items: readonly SelectItem[]): { properties: readonly Property[]; navigation: readonly NavigationProperty[] } {
    if (items.length > this.limits.maxSelect) {
      this.fail(
        'LimitExceeded',
        items[this.limits.maxSelect]!.span,
        `$select has ${items.length} items, more than the limit of ${this.limits.maxSelect}`,
      );
    }
    const chosen = new Set<Property>();
    const navigations = new Set<NavigationProperty>();
    let star = false;
    // every item is checked, also after `*`: `$select=*,Nmae` names a property that does not exist
    for (const item of items) {
      if (item.kind === 'star') {
        star = true;
        continue;
      }
      if (item.kind === 'allOperations')
        this.fail(
          'NotImplemented',
          item.span,
          `${item.namespace}.* selects operations`,
          'the model has no functions to select',
        );
      if (item.options !== undefined)
        this.fail('NotImplemented', item.span, 'Nested query options in $select are not supported');
      const [first, ...rest] = item.segments;
      if (first === undefined || first.kind !== 'property')
        return this.fail('NotImplemented', item.span, 'Only property names can be selected');
      const property = this.entityType.properties.get(first.name);
      if (property === undefined) {
        const navigation = this.entityType.navigation.get(first.name);
        if (navigation !== undefined) {
          // selecting a navigation selects its link (which full metadata writes for every navigation anyway), not
          // its entities; what is read through it is expanded
          const next = rest[0];
          if (next === undefined) {
            navigations.add(navigation);
            continue;
          }
          this.fail(
            'TypeMismatch',
            next.span,
            `$select cannot read through the navigation ${first.name}`,
            // (a keyless target is not an entity: the values a groupby of $apply nests, which $expand cannot read)
            navigation.target().key.length === 0
              ? `select ${first.name} itself, which holds the grouped values: $select=${first.name}`
              : next.kind === 'property'
                ? `expand it: $expand=${first.name}($select=${next.name})`
                : `expand it: $expand=${first.name}`,
          );
        }
        this.unknownProperty(this.entityType, first.name, first.span, true);
      }
      if (property.writeOnly === true)
        this.fail('NotQueryable', first.span, `${first.name} on ${this.entityType.name} is write-only`);
      if (rest.length > 0)
        this.fail('UnknownProperty', rest[0]!.span, `${property.type} property ${first.name} has no members`);
      chosen.add(property);
    }
    const navigation = [...this.entityType.navigation.values()].filter((n) => navigations.has(n));
    if (star) return { properties: readableProperties(this.entityType), navigation };
    return { properties: [...this.entityType.properties.values()].filter((p) => chosen.has(p)), navigation };
  }
}

const span = (start: number, end: number): Span => ({ start, end });

/** Expansions bound so far in one query (for maxExpansions). */
interface ExpandBudget {
  count: number;
}

/** How deep an `$expand` tree nests (1 for a list without nested expansions). */
function expandDepth(items: readonly ExpandItem[] | undefined): number {
  let deepest = 0;
  for (const item of items ?? []) {
    const nested = item.kind === 'path' ? expandDepth(item.options?.expand) : 0;
    deepest = Math.max(deepest, 1 + nested);
  }
  return deepest;
}

/**
 * Binds `$expand` items to `entityType`: each names a navigation of it (or `*`, every one not named otherwise: named
 * items take precedence, OData 4.01 §5.1.3), and its nested options are bound to the navigation's target, in the same
 * `$expand` text (positions stay those of the option's value).
 */
function bindExpand(
  items: readonly ExpandItem[],
  entityType: EntityType,
  limits: DefaultLimits,
  text: string | undefined,
  depth: number,
  budget: ExpandBudget,
  /** The aliases of the enclosing expansions' options, innermost taking precedence. */
  aliases?: ReadonlyMap<string, Expr>,
): BoundExpand[] {
  const at: Binder = new Binder(entityType, limits, '$expand', text);
  if (depth > limits.maxExpandDepth) {
    at.fail(
      'LimitExceeded',
      items[0]!.span,
      `$expand nests more than ${limits.maxExpandDepth} levels deep (maxExpandDepth)`,
      'read deeper levels at their own address',
    );
  }
  const expanded = new Map<string, BoundExpand>();
  const add = (navigation: NavigationProperty, where: Span, bound: () => BoundExpand): void => {
    if (++budget.count > limits.maxExpansions) {
      at.fail(
        'LimitExceeded',
        where,
        `$expand names more than ${limits.maxExpansions} navigations in all (maxExpansions; * and $levels count each one they stand for)`,
      );
    }
    expanded.set(navigation.name, bound());
  };
  for (const item of items) {
    if (item.kind === 'star') continue;
    if (item.kind === 'value') {
      at.fail('InvalidSyntax', item.span, `$value expands a media stream, and ${entityType.name} is no media entity`);
    }
    const [first, ...rest] = item.segments;
    if (first!.kind === 'cast') {
      at.fail(
        'UnknownType',
        first!.span,
        `Unknown type ${first!.typeName}`,
        'the model has no derived types to cast to',
      );
    }
    if (first!.kind === 'annotation') {
      at.fail('UnknownProperty', first!.span, `${entityType.name} has no annotation @${first!.term} to expand`);
    }
    const name = first!.name;
    const navigation = entityType.navigation.get(name);
    if (navigation === undefined) {
      if (entityType.properties.has(name)) {
        at.fail(
          'TypeMismatch',
          first!.span,
          `${name} is a property of ${entityType.name}, not a navigation`,
          `select it: $select=${name}`,
        );
      }
      const guess = suggest(name, [...entityType.navigation.keys()]);
      at.fail(
        'UnknownProperty',
        first!.span,
        `Unknown navigation property '${name}' on ${entityType.name}`,
        guess !== undefined
          ? `did you mean '${guess}'?`
          : entityType.navigation.size === 0
            ? `${entityType.name} has no navigation properties`
            : `its navigation properties: ${[...entityType.navigation.keys()].join(', ')}`,
      );
    }
    if (rest.length > 0 || item.star === true) {
      const next = rest[0] ?? { kind: 'star', span: { start: item.span.end, end: item.span.end } };
      at.fail(
        'InvalidSyntax',
        next.span,
        `${name} is a navigation: an expand path ends there`,
        next.kind === 'property' ? `expand what follows inside it: ${name}($expand=${next.name})` : undefined,
      );
    }
    if (item.suffix === '$count' && !navigation.collection) {
      at.fail(
        'TypeMismatch',
        item.span,
        `${name} is a single ${navigation.target().name}: /$count applies to collections`,
        `expand it: $expand=${name}`,
      );
    }
    if (expanded.has(name)) {
      at.fail('InvalidSyntax', first!.span, `${name} is expanded more than once`, 'give its options in one item');
    }
    const levels = item.options?.levels ?? 1;
    add(navigation, first!.span, () => {
      // an item's own aliases apply to its options and those nested in them
      const own = item.options?.aliases;
      const scope = own === undefined ? aliases : new Map([...(aliases ?? []), ...own]);
      const bound = expandOne(
        navigation,
        item.suffix === '$ref',
        { levels, strict: true },
        item.options,
        item.span,
        limits,
        text,
        depth,
        budget,
        scope,
      );
      // `/$count` takes only `$filter` (the parser refuses the rest): each entity's count, no entity read
      if (item.suffix !== '$count') return bound;
      const { entityType, filter, orderBy } = bound.query;
      return {
        ...bound,
        countOnly: true,
        query: {
          entityType,
          ...(filter === undefined ? {} : { filter }),
          orderBy,
          select: entityType.key,
          top: 0,
          count: true,
        },
      };
    });
  }
  // `*` expands each navigation not named above, once (a later `*` adds nothing); its `$levels` repeats those
  // that can recur and leaves the others at one level
  for (const item of items) {
    if (item.kind !== 'star') continue;
    for (const navigation of entityType.navigation.values()) {
      if (expanded.has(navigation.name)) continue;
      add(navigation, item.span, () =>
        expandOne(
          navigation,
          item.ref,
          { levels: item.levels ?? 1, strict: false },
          undefined,
          item.span,
          limits,
          text,
          depth,
          budget,
        ),
      );
    }
  }
  return [...expanded.values()];
}

/**
 * One navigation with its nested options. `$levels` above one expands the same navigation again inside, which needs a
 * target type with a navigation of the same name to its own type (a recursive one): `strict` (a named item) makes any
 * other a 400; from `*` it is expanded once. `levels` is the client's value, `repeated` how many levels are above.
 */
function expandOne(
  navigation: NavigationProperty,
  ref: boolean,
  recursion: { readonly levels: number | 'max'; readonly strict: boolean; readonly repeated?: number },
  options: NestedExpandOptions | undefined,
  where: Span,
  limits: DefaultLimits,
  text: string | undefined,
  depth: number,
  budget: ExpandBudget,
  aliases?: ReadonlyMap<string, Expr>,
): BoundExpand {
  const target = navigation.target();
  const binder: Binder = new Binder(target, limits, '$expand', text, undefined, aliases);
  const problems: ODataError[] = [];
  const attempt = <T>(run: () => T): T | undefined => collectProblem(problems, run);
  if (!navigation.collection && options !== undefined) {
    // one related entity: nothing to order, page or count
    for (const name of ['orderBy', 'top', 'skip', 'count'] as const) {
      if (options[name] !== undefined) {
        binder.fail(
          'InvalidSyntax',
          where,
          `${navigation.name} is a single ${target.name}: $${name.toLowerCase()} applies to collections`,
          'give $select, $filter or $expand',
        );
      }
    }
  }
  if (options?.top !== undefined && limits.maxTop !== undefined && options.top > limits.maxTop) {
    binder.fail(
      'LimitExceeded',
      where,
      `$top ${options.top} in ${navigation.name} is larger than the limit of ${limits.maxTop}`,
    );
  }
  const filter = options?.filter === undefined ? undefined : attempt(() => binder.filter(options.filter!));
  const orderBy =
    options?.orderBy === undefined ? defaultOrder(target) : attempt(() => binder.orderBy(options.orderBy!));
  const select =
    options?.select === undefined
      ? { properties: readableProperties(target), navigation: [] }
      : attempt(() => binder.select(options.select!));
  let expand =
    options?.expand === undefined
      ? []
      : attempt(() => bindExpand(options.expand!, target, limits, text, depth + 1, budget, aliases));
  if (problems.length > 0) throw combineErrors(problems);
  const { levels, strict } = recursion;
  const repeated = recursion.repeated ?? 0;
  // `max`: as deep as maxExpandDepth allows with the nested expansions below each level
  const more = levels === 'max' ? limits.maxExpandDepth - depth - expandDepth(options?.expand) : levels - 1 - repeated;
  if (more > 0) {
    const again = target.navigation.get(navigation.name);
    if (again === undefined || again.target() !== target) {
      if (strict && levels !== 'max') {
        binder.fail(
          'InvalidSyntax',
          where,
          `$levels=${levels} repeats ${navigation.name}, but ${target.name} has no navigation ${navigation.name} to its own type`,
          '$levels is for recursive navigations; nest $expand for others',
        );
      }
    } else if (!expand!.some((e) => e.navigation === again)) {
      if (++budget.count > limits.maxExpansions) {
        binder.fail(
          'LimitExceeded',
          where,
          `$expand names more than ${limits.maxExpansions} navigations in all (maxExpansions; $levels counts each level)`,
        );
      }
      if (depth + 1 + expandDepth(options?.expand) > limits.maxExpandDepth) {
        binder.fail(
          'LimitExceeded',
          where,
          `$levels=${levels} nests more than ${limits.maxExpandDepth} levels deep (maxExpandDepth)`,
        );
      }
      expand = [
        ...expand!,
        expandOne(
          again,
          ref,
          { levels, strict, repeated: repeated + 1 },
          options,
          where,
          limits,
          text,
          depth + 1,
          budget,
          aliases,
        ),
      ];
    }
  }
  return {
    navigation,
    ref,
    query: {
      entityType: target,
      ...(filter === undefined ? {} : { filter }),
      orderBy: orderBy!,
      select: ref ? target.key : select!.properties,
      ...(ref || select!.navigation.length === 0 ? {} : { selectNavigation: select!.navigation }),
      ...(options?.top === undefined ? {} : { top: options.top }),
      ...(options?.skip === undefined ? {} : { skip: options.skip }),
      count: options?.count ?? false,
      ...(expand!.length === 0 ? {} : { expand: expand! }),
    },
  };
}

/** Entity types are immutable, so what a query without $orderby binds to is computed once per type. */
const defaultOrderCache = new WeakMap<EntityType, BoundOrderBy[]>();

/** A property of the entity being read, as a bound expression. */
export const rootProperty = (property: Property): BoundExpr => ({
  kind: 'property',
  type: property.type,
  nullable: property.nullable,
  property,
  source: root,
  span: { start: 0, end: 0 },
});

/** `left and right` as a bound expression (a filter and one more condition: a keyset level, a leading $apply filter). */
export function andOf(left: BoundExpr, right: BoundExpr): BoundExpr {
  return { kind: 'logical', type: 'Edm.Boolean', nullable: false, operator: 'and', left, right, span: right.span };
}

/** The order of a query without $orderby: the type's default order, then the key, ascending, breaking ties. */
function defaultOrder(type: EntityType): BoundOrderBy[] {
  let order = defaultOrderCache.get(type);
  if (order === undefined) {
    const declared = type.defaultOrder.map(({ property, descending }): BoundOrderBy => ({
      expr: rootProperty(property),
      direction: descending ? 'desc' : 'asc',
      tieBreak: false,
    }));
    const keys = type.key
      .filter((key) => !type.defaultOrder.some((o) => o.property === key))
      .map((key): BoundOrderBy => ({ expr: rootProperty(key), direction: 'asc', tieBreak: true }));
    order = Object.freeze([...declared, ...keys]) as BoundOrderBy[];
    defaultOrderCache.set(type, order);
  }
  return order;
}

/** Whether an argument of type `actual` fits a parameter accepting `accepted`: null, or numeric promotion. */
function accepts(accepted: readonly EdmPrimitiveType[], actual: BoundType): boolean {
  if (actual === 'null' || accepted.includes(actual)) return true;
  return isNumeric(actual) && accepted.some((t) => isNumeric(t) && widerNumeric(actual, t) === t);
}

/** The parameter type an argument is promoted to. */
function targetOf(accepted: readonly EdmPrimitiveType[], actual: BoundType): EdmPrimitiveType {
  if (actual !== 'null' && accepted.includes(actual)) return actual;
  if (actual !== 'null' && isNumeric(actual))
    return accepted.find((t) => isNumeric(t) && widerNumeric(actual, t) === t)!;
  return accepted[0]!;
}

function castAllowed(from: BoundType, to: EdmPrimitiveType): boolean {
  if (from === 'null' || from === to) return true;
  if (to === 'Edm.String') return from !== 'Edm.Binary';
  if (isNumeric(to)) return isNumeric(from) || from === 'Edm.String';
  return from === 'Edm.Date' && to === 'Edm.DateTimeOffset';
}

/** The digits of a Decimal literal's value (0 for any other literal). */
function decimalDigits(literal: LiteralValue): number {
  return literal.type === 'Edm.Decimal' ? literal.value.replace(/[-.]/g, '').length : 0;
}

/** A literal's value as a wider type, or undefined when it cannot be retyped at bind time. */
function retypeLiteral(value: LiteralValue, type: EdmPrimitiveType): LiteralValue | undefined {
  switch (value.type) {
    case 'Edm.Int32':
    case 'Edm.Int64':
      if (type === 'Edm.Int64') return { type, value: BigInt(value.value) };
      if (type === 'Edm.Decimal') return { type, value: value.value.toString() };
      if (type === 'Edm.Double') return { type, value: Number(value.value) };
      return undefined;
    case 'Edm.Decimal':
      return type === 'Edm.Double' ? { type, value: Number(value.value) } : undefined;
    case 'Edm.Date': {
      if (type !== 'Edm.DateTimeOffset') return undefined;
      const [year, month, day] = value.value.split(/(?<=\d)-/).map(Number) as [number, number, number];
      const date = new Date(0);
      date.setUTCFullYear(year, month - 1, day);
      return { type, value: `${value.value}T00:00:00Z`, epochMilliseconds: date.getTime(), offsetMinutes: 0 };
    }
    default:
      return undefined;
  }
}

/**
 * Binds parsed query options to an entity type. Every problem in every option is reported: the first
 * as the error, the others in its `details`. Limits default to `defaultLimits`.
 */
export function validateQuery(options: QueryOptions, entityType: EntityType, limits: QueryLimits = {}): BoundQuery {
  const effective: DefaultLimits = { ...defaultLimits, ...limits };
  const problems: ODataError[] = [];
  const subqueries: StatementCost = { count: 0, joins: new Set(), ids: 0 };
  // `$apply` first: the other options read the instances it gives (Data Aggregation 4.0 §3)
  const apply =
    options.apply === undefined
      ? undefined
      : collectProblem(problems, () => bindApply(options.apply!, entityType, effective, options.text.$apply));
  if (options.apply !== undefined && apply === undefined) throw combineErrors(problems);
  entityType = apply?.output ?? entityType;
  // the type the options bind to: with `$compute`, the entity type with the computed properties
  let optionsType = entityType;
  const attempt = <T>(target: string, run: (binder: Binder) => T): T | undefined =>
    collectProblem(problems, () =>
      run(new Binder(optionsType, effective, target, options.text[target as keyof QueryOptions['text']], subqueries)),
    );
  const compute =
    options.compute === undefined
      ? undefined
      : attempt('$compute', (b) => bindCompute(options.compute!, entityType, b));
  if (options.compute !== undefined && compute === undefined) throw combineErrors(problems);
  optionsType = compute?.type ?? entityType;
  const computed = new Map((compute?.computed ?? []).map((c) => [c.property, c.expr] as const));

  const length = Object.values(options.text).reduce((sum, text) => sum + (text?.length ?? 0), 0);
  if (length > effective.maxQueryLength) {
    throw new ODataError(
      'LimitExceeded',
      `The query options have ${length} characters, more than the limit of ${effective.maxQueryLength}`,
    );
  }

  // a filter or an order that names a computed property reads its expression
  const filter =
    options.filter === undefined
      ? undefined
      : attempt('$filter', (b) => substituteComputed(b.filter(options.filter!), computed));
  const orderBy =
    options.orderBy === undefined
      ? defaultOrder(entityType)
      : attempt('$orderby', (b) =>
          b.orderBy(options.orderBy!).map((item) => ({ ...item, expr: substituteComputed(item.expr, computed) })),
        );
  const select =
    options.select === undefined
      ? // (the instances of a grouping by a navigation path hold its values nested: written under the navigation)
        { properties: readableProperties(optionsType), navigation: apply?.nested ?? [] }
      : attempt('$select', (b) => b.select(options.select!));
  const search =
    options.search === undefined
      ? undefined
      : apply !== undefined
        ? collectProblem(problems, () => {
            throw new ODataError('NotImplemented', '$search together with $apply is not supported yet', {
              target: '$search',
            });
          })
        : collectProblem(problems, () => bindSearch(options.search!, entityType));
  if (apply !== undefined && options.expand !== undefined) {
    problems.push(
      new ODataError('NotImplemented', '$expand together with $apply is not supported yet', { target: '$expand' }),
    );
  }
  const expand =
    options.expand === undefined || apply !== undefined
      ? undefined
      : attempt('$expand', () =>
          bindExpand(options.expand!, entityType, effective, options.text.$expand, 1, { count: 0 }),
        );
  if (options.top !== undefined && effective.maxTop !== undefined && options.top > effective.maxTop) {
    problems.push(
      new ODataError(
        'LimitExceeded',
        atPosition(`$top ${options.top} is larger than the limit of ${effective.maxTop}`, 0, '$top'),
        {
          target: '$top',
          position: 0,
        },
      ),
    );
  }
  if (problems.length > 0) throw combineErrors(problems);
  return {
    entityType,
    ...(filter === undefined ? {} : { filter }),
    orderBy: orderBy!,
    select: select!.properties,
    ...(select!.navigation.length === 0 ? {} : { selectNavigation: select!.navigation }),
    ...(options.top === undefined ? {} : { top: options.top }),
    ...(options.skip === undefined ? {} : { skip: options.skip }),
    count: options.count ?? false,
    ...(expand === undefined || expand.length === 0 ? {} : { expand }),
    ...(apply === undefined ? {} : { apply }),
    ...(compute === undefined ? {} : { compute: compute.computed }),
    ...(search === undefined ? {} : { search }),
  };
}

/**
 * Whether an expression is null whatever the row: the null literal, and anything computed from it, since a function
 * or an arithmetic operator of null is null (SEMANTICS.md). Comparisons, logic and `in` are never null this way.
 */
export function alwaysNull(expr: BoundExpr): boolean {
  if (expr.type === 'null') return true; // the null literal, or a case whose every result is null
  switch (expr.kind) {
    case 'call':
      return expr.args.some(alwaysNull);
    case 'arithmetic':
      return alwaysNull(expr.left) || alwaysNull(expr.right);
    case 'convert':
    case 'negate':
    case 'cast':
      return alwaysNull(expr.operand);
    case 'case':
      return expr.branches.every((b) => alwaysNull(b.result));
    default:
      return false;
  }
}

/**
 * Whether an expression has the same value for every row: it reads no property, lambda or $count, or its value is
 * decided by types alone (`isof` of another type is false, an order comparison with null is false, arithmetic on
 * null is null). `now()` counts as constant: every row of a request sees the same instant (docs/backends.md).
 */
export function rowIndependent(expr: BoundExpr): boolean {
  if (alwaysNull(expr)) return true;
  switch (expr.kind) {
    case 'literal':
      return true;
    case 'property':
    case 'lambda':
    case 'count':
      return false;
    case 'convert':
    case 'negate':
    case 'cast':
      return rowIndependent(expr.operand);
    case 'not':
      return rowIndependent(expr.operand);
    case 'isof':
      return expr.operand.type !== expr.target || !expr.operand.nullable || rowIndependent(expr.operand);
    case 'comparison': {
      const { left, right, operator } = expr;
      if (left.type === 'null' || right.type === 'null') {
        // (the emitter folds these; `x eq round(null)` reads x and is not folded, so it stays row-dependent)
        const other = left.type === 'null' ? right : left;
        return operator !== 'eq' && operator !== 'ne' ? true : !other.nullable || rowIndependent(other);
      }
      return rowIndependent(left) && rowIndependent(right);
    }
    case 'logical':
      return rowIndependent(expr.left) && rowIndependent(expr.right);
    case 'arithmetic':
      return rowIndependent(expr.left) && rowIndependent(expr.right);
    case 'in':
      return rowIndependent(expr.left) && expr.items.every(rowIndependent);
    case 'call':
      return expr.args.every(rowIndependent);
    case 'case':
      return expr.branches.every((b) => rowIndependent(b.condition) && rowIndependent(b.result));
  }
}

/**
 * Functions that can be null though no argument is: substring with a negative start or length (SEMANTICS.md), and
 * matchesPattern with a pattern that is not a valid regular expression. Backends trust `nullable: false`.
 */
function nullWithoutNullArguments(name: string, args: readonly BoundExpr[]): boolean {
  if (name === 'substring') {
    return args.slice(1).some((a) => !(a.kind === 'literal' && a.value.type === 'Edm.Int32' && a.value.value >= 0));
  }
  return name === 'matchesPattern';
}
