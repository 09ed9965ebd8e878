// Printing a syntax tree back to canonical OData text: lower-case operators, single spaces around
// them, parentheses only where precedence needs them. `parseFilter(printFilter(e))` equals `e` up to spans.
import type {
  AggregateItem,
  ApplyTransformation,
  ComputeItem,
  ExpandItem,
  Expr,
  LiteralValue,
  NestedExpandOptions,
  OrderByItem,
  PathExpr,
  PathSegment,
  SelectItem,
  SelectSegment,
} from './ast.js';
import { printSearch } from './search.js';

// Binding strength, weakest first (OData 4.01 Part 2 §5.1.1.16).
const OR = 1;
const AND = 2;
const EQUALITY = 3;
const RELATIONAL = 4;
const ADDITIVE = 5;
const MULTIPLICATIVE = 6;
const UNARY = 7;
const POSTFIX = 8;
const PRIMARY = 9;

function precedence(expr: Expr): number {
  switch (expr.kind) {
    case 'binary':
      switch (expr.operator) {
        case 'or':
          return OR;
        case 'and':
          return AND;
        case 'eq':
        case 'ne':
          return EQUALITY;
        case 'gt':
        case 'ge':
        case 'lt':
        case 'le':
          return RELATIONAL;
        case 'add':
        case 'sub':
          return ADDITIVE;
        case 'mul':
        case 'div':
        case 'divby':
        case 'mod':
          return MULTIPLICATIVE;
        case 'has':
          return POSTFIX;
      }
    // falls through: unreachable, every operator returned
    case 'in':
      return POSTFIX;
    case 'not':
    case 'negate':
      return UNARY;
    default:
      return PRIMARY;
  }
}

/** Canonical OData text for a literal value. */
export function printLiteral(literal: LiteralValue): string {
  switch (literal.type) {
    case 'null':
      return 'null';
    case 'Edm.Boolean':
      return literal.value ? 'true' : 'false';
    case 'Edm.Int32':
      return String(literal.value);
    case 'Edm.Int64':
      return literal.value.toString();
    case 'Edm.Decimal':
      return literal.value;
    case 'Edm.Double':
      return printDouble(literal.value);
    case 'Edm.String':
      return quote(literal.value);
    case 'Edm.Date':
    case 'Edm.TimeOfDay':
    case 'Edm.DateTimeOffset':
    case 'Edm.Guid':
      return literal.value;
    case 'Edm.Duration':
      return `duration'${literal.value}'`;
    case 'Edm.Binary':
      return `binary'${literal.value}'`;
    case 'enum':
      return `${literal.typeName}${quote(literal.value)}`;
    case 'Edm.Geography':
      return `geography'${literal.value}'`;
    case 'Edm.Geometry':
      return `geometry'${literal.value}'`;
  }
}

/** A Double always prints with an exponent (or as INF/NaN) so that it reads back as a Double. */
function printDouble(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'INF';
  if (value === -Infinity) return '-INF';
  if (Object.is(value, -0)) return '-0e0';
  return value.toExponential().replace('e+', 'e');
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

function printSegment(segment: PathSegment): string {
  switch (segment.kind) {
    case 'property':
      return segment.name;
    case 'cast':
      return segment.typeName;
    case 'count':
      return segment.filter === undefined ? '$count' : `$count($filter=${print(segment.filter, 0)})`;
    case 'filter':
      return `$filter(${print(segment.predicate, 0)})`;
    case 'any':
    case 'all':
      return segment.variable === undefined || segment.predicate === undefined
        ? `${segment.kind}()`
        : `${segment.kind}(${segment.variable}:${print(segment.predicate, 0)})`;
    case 'function':
      return `${segment.name}(${segment.parameters.map((p) => `${p.name}=${print(p.value, 0)}`).join(',')})`;
    case 'key':
      return `(${segment.values.map((v) => (v.name === undefined ? '' : `${v.name}=`) + print(v.value, 0)).join(',')})`;
    case 'annotation':
      return `@${segment.term}`;
  }
}

function printPath(expr: PathExpr): string {
  let text = expr.root.kind === 'implicit' ? '' : expr.root.kind === 'variable' ? expr.root.name : expr.root.kind;
  for (const segment of expr.segments) {
    // A key predicate attaches to the segment before it: `Items(1)`, not `Items/(1)`.
    if (segment.kind === 'key') text += printSegment(segment);
    else text += (text.length > 0 ? '/' : '') + printSegment(segment);
  }
  return text;
}

function operatorOf(expr: Expr): string {
  return expr.kind === 'binary' ? expr.operator : 'in';
}

/** The right operand's text of a binary or `in` node. */
function printRight(expr: Expr & { kind: 'binary' | 'in' }, level: number): string {
  if (expr.kind === 'in') {
    const right = expr.right;
    if (right.kind === 'list') return `(${right.items.map((i) => print(i, 0)).join(',')})`;
    return print(right, PRIMARY);
  }
  return print(expr.right, expr.operator === 'has' ? PRIMARY : level + 1);
}

function print(expr: Expr, minimum: number): string {
  const level = precedence(expr);
  const text = printUnparenthesized(expr, level);
  return level < minimum ? `(${text})` : text;
}

function printUnparenthesized(expr: Expr, level: number): string {
  switch (expr.kind) {
    case 'binary':
    case 'in': {
      // Walk the left spine iteratively: a 100,000-term `or` chain is a left-deep tree.
      const chain: (Expr & { kind: 'binary' | 'in' })[] = [expr];
      let leftmost: Expr = expr.left;
      while ((leftmost.kind === 'binary' || leftmost.kind === 'in') && precedence(leftmost) === level) {
        chain.push(leftmost);
        leftmost = leftmost.left;
      }
      let text = print(leftmost, level);
      for (let i = chain.length - 1; i >= 0; i--) {
        const node = chain[i]!;
        text += ` ${operatorOf(node)} ${printRight(node, level)}`;
      }
      return text;
    }
    case 'not':
      return `not ${print(expr.operand, UNARY)}`;
    case 'negate': {
      const operand = print(expr.operand, UNARY);
      // `- 5` is negate(5); `-5` would read back as the literal -5 (also when 5 only starts the operand: `-5 has x`).
      return /^(?:[0-9]|INF(?![A-Za-z0-9_]))/.test(operand) || expr.operand.kind === 'literal'
        ? `- ${operand}`
        : `-${operand}`;
    }
    case 'literal':
      return printLiteral(expr.literal);
    case 'call':
      return `${expr.name}(${expr.args.map((a) => print(a, 0)).join(',')})`;
    case 'typeName':
      return expr.name;
    case 'caseBranch': {
      const condition = print(expr.condition, 0);
      const result = print(expr.result, 0);
      // `12:30` would read back as a TimeOfDay: keep the colon from joining two numbers
      return /\d$/.test(condition) && /^\d/.test(result) ? `${condition}: ${result}` : `${condition}:${result}`;
    }
    case 'path':
      return printPath(expr);
    case 'alias':
      return expr.name;
    case 'list':
      return `(${expr.items.map((i) => print(i, 0)).join(',')})`;
    case 'array':
      return `[${expr.items.map((i) => print(i, 0)).join(',')}]`;
    case 'object':
      return `{${expr.members.map((m) => `${JSON.stringify(m.name)}:${print(m.value, 0)}`).join(',')}}`;
  }
}

/** Canonical `$filter` text for a syntax tree. */
export function printFilter(expr: Expr): string {
  return print(expr, 0);
}

/** Canonical `$orderby` text. */
export function printOrderBy(items: readonly OrderByItem[]): string {
  return items.map((item) => `${print(item.expr, 0)}${item.direction === 'desc' ? ' desc' : ''}`).join(',');
}

function printSelectSegment(segment: SelectSegment): string {
  switch (segment.kind) {
    case 'property':
      return segment.name;
    case 'cast':
      return segment.typeName;
    case 'annotation':
      return `@${segment.term}`;
    case 'operation':
      return segment.parameterNames === undefined
        ? segment.name
        : `${segment.name}(${segment.parameterNames.join(',')})`;
  }
}

/** Canonical `$select` text. */
export function printSelect(items: readonly SelectItem[]): string {
  return items
    .map((item) => {
      switch (item.kind) {
        case 'star':
          return '*';
        case 'allOperations':
          return `${item.namespace}.*`;
        case 'path': {
          const path = item.segments.map(printSelectSegment).join('/');
          return item.options === undefined ? path : `${path}(${printNestedOptions(item.options)})`;
        }
      }
    })
    .join(',');
}

/** The options in an item's parentheses, in canonical order, separated by `;`. */
function printNestedOptions(o: NestedExpandOptions): string {
  const parts: string[] = [];
  if (o.select !== undefined) parts.push(`$select=${printSelect(o.select)}`);
  if (o.filter !== undefined) parts.push(`$filter=${printFilter(o.filter)}`);
  if (o.orderBy !== undefined) parts.push(`$orderby=${printOrderBy(o.orderBy)}`);
  if (o.top !== undefined) parts.push(`$top=${o.top}`);
  if (o.skip !== undefined) parts.push(`$skip=${o.skip}`);
  if (o.count !== undefined) parts.push(`$count=${o.count}`);
  if (o.expand !== undefined) parts.push(`$expand=${printExpand(o.expand)}`);
  if (o.levels !== undefined) parts.push(`$levels=${o.levels}`);
  for (const [name, value] of o.aliases ?? []) parts.push(`${name}=${printFilter(value)}`);
  return parts.join(';');
}

/** Canonical `$expand` text. */
export function printExpand(items: readonly ExpandItem[]): string {
  return items
    .map((item) => {
      if (item.kind === 'star') {
        if (item.ref) return '*/$ref';
        return item.levels === undefined ? '*' : `*($levels=${item.levels})`;
      }
      if (item.kind === 'value') return '$value';
      const path = item.segments
        .map((s) => (s.kind === 'cast' ? s.typeName : s.kind === 'annotation' ? `@${s.term}` : s.name))
        .join('/');
      const star = item.star === true ? '/*' : '';
      const suffix = item.suffix === undefined ? '' : `/${item.suffix}`;
      const options = item.options === undefined ? '' : printNestedOptions(item.options);
      return `${path}${star}${suffix}${options === '' ? '' : `(${options})`}`;
    })
    .join(',');
}

/** Canonical `$compute` text (and the items of `compute(...)`). */
export function printCompute(items: readonly ComputeItem[]): string {
  return items.map((item) => `${printFilter(item.expr)} as ${item.alias}`).join(',');
}

function printAggregateItem(item: AggregateItem): string {
  switch (item.kind) {
    case 'count':
      return `$count as ${item.alias}`;
    case 'custom':
      return item.alias === item.name ? item.name : `${item.name} as ${item.alias}`;
    case 'method':
      return `${printFilter(item.expr)} with ${item.method} as ${item.alias}`;
  }
}

/** Canonical `$apply` text. */
export function printApply(steps: readonly ApplyTransformation[]): string {
  return steps
    .map((step) => {
      switch (step.kind) {
        case 'aggregate':
          return `aggregate(${step.items.map(printAggregateItem).join(',')})`;
        case 'groupby': {
          const properties = `(${step.properties.map(printPath).join(',')})`;
          return `groupby(${properties}${step.apply === undefined ? '' : `,${printApply(step.apply)}`})`;
        }
        case 'filter':
          return `filter(${printFilter(step.predicate)})`;
        case 'search':
          return `search(${printSearch(step.search)})`;
        case 'compute':
          return `compute(${printCompute(step.items)})`;
        case 'orderby':
          return `orderby(${printOrderBy(step.items)})`;
        case 'top':
        case 'skip':
          return `${step.kind}(${step.count})`;
        case 'topcount':
        case 'bottomcount':
        case 'toppercent':
        case 'bottompercent':
        case 'topsum':
        case 'bottomsum':
          return `${step.kind}(${printFilter(step.n)},${printFilter(step.value)})`;
        case 'concat':
          return `concat(${step.sequences.map(printApply).join(',')})`;
        case 'identity':
          return 'identity';
      }
    })
    .join('/');
}
