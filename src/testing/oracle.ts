// The oracle: the memory backend's answer for rows and a query (SEMANTICS.md defines it), with the reason each row was
// kept or dropped: the value of every condition of the filter for that row, so that a failing case says why.
import { compileQuery } from '../backends/memory/compile.js';
import { ClosureCompiler, type RelatedRows } from '../backends/memory/closures.js';
import { comparatorOf, sortKeysOf } from '../backends/memory/order.js';
import { relatedRowsOf } from '../backends/memory/related.js';
import type { EntityType, Row } from '../model/schema.js';
import { parseQuery } from '../syntax/query-string.js';
import { validateQuery } from '../validate/bind.js';
import type { BoundApply, BoundExpand, BoundExpr, BoundQuery } from '../validate/bound.js';
import { runApply } from '../backends/memory/apply.js';
import { rowFormOf } from '../values/cast.js';
import type { Value } from '../values/read.js';
import { keyOf } from './values.js';

export interface OracleAnswer {
  /** The query bound to the entity type (what the oracle ran). */
  readonly bound: BoundQuery;
  /** The answer's rows, in order, with the selected properties only. */
  readonly rows: readonly Row[];
  /** With `$count=true`: the rows matching the filter, before `$skip` and `$top`. */
  readonly count?: number;
  /** True when two rows tie on the requested `$orderby` (the key breaking the tie is the oracle's choice). */
  tie(a: Row, b: Row): boolean;
  /** Why a row (one of the rows given) is kept or dropped: the filter's conditions and their values for it. */
  explain(row: Row): string;
}

/**
 * Runs a query (a query string, `$filter=…&$top=3`) over the rows on the memory backend. Navigations lead to the rows
 * of `related` (by entity type name; the entity type's own are `rows`), matched by their foreign keys. Throws an
 * ODataError when the query does not bind.
 */
export function oracle(
  entityType: EntityType,
  rows: readonly Row[],
  query: string,
  related: Readonly<Record<string, readonly Row[]>> = {},
): OracleAnswer {
  const parsed = parseQuery(query);
  const bound = validateQuery(parsed, entityType);
  const relatedRows = relatedRowsOf((type) => (type === entityType ? rows : (related[type.name] ?? [])));
  const compiled = compileQuery(bound, { related: relatedRows });
  const result = compiled.run(bound.apply === undefined ? rows : applied(bound.apply, rows, relatedRows));
  if (bound.expand !== undefined)
    result.value.forEach((out, i) => expandInto(out, result.rows[i]!, bound.expand!, relatedRows));
  const requested = bound.orderBy.filter((item) => !item.tieBreak);
  const order = comparatorOf(sortKeysOf(requested, new ClosureCompiler(relatedRows)));
  const filterText = parsed.text.$filter ?? '';
  return {
    bound,
    rows: result.value,
    ...(result.count === undefined ? {} : { count: result.count }),
    tie: (a, b) => order(a, b) === 0,
    explain: (row) => explainRow(bound, filterText, compiled.matches(row), row, relatedRows),
  };
}

/**
 * What `$apply` gives: its transformations over the rows in their entity type's default order (the key last), as the
 * service reads them from any store; the query's other options then read these.
 */
function applied(apply: BoundApply, rows: readonly Row[], related: RelatedRows): Row[] {
  const inOrder = compileQuery(validateQuery(parseQuery(''), apply.input), { related }).run(rows).rows;
  return runApply(inOrder, apply, { related });
}

/**
 * The expanded navigations of a row, written into its answer `out` under their names: a collection's related rows
 * with its own options (per row: `$top` and `$skip` page each row's related rows alone), a single related row or null,
 * each expanded again as its options say.
 */
function expandInto(
  out: Record<string, unknown>,
  row: Row,
  expand: readonly BoundExpand[],
  related: RelatedRows,
): void {
  for (const item of expand) {
    const found = related(row, item.navigation);
    const rowsOf = item.navigation.collection ? (found as Row[]) : found === null ? [] : [found as Row];
    const result = compileQuery(item.query, { related }).run(rowsOf);
    if (item.query.expand !== undefined)
      result.value.forEach((nested, i) => expandInto(nested, result.rows[i]!, item.query.expand!, related));
    out[item.navigation.name] = item.navigation.collection ? result.value : (result.value[0] ?? null);
  }
}

/** Boolean nodes a reader wants to see the value of: conditions and what joins them. */
function isCondition(expr: BoundExpr): boolean {
  return (
    expr.kind === 'logical' ||
    expr.kind === 'not' ||
    expr.kind === 'comparison' ||
    expr.kind === 'in' ||
    expr.kind === 'lambda' ||
    (expr.kind === 'call' && expr.type === 'Edm.Boolean') ||
    (expr.kind === 'property' && expr.type === 'Edm.Boolean')
  );
}

/** The operands worth showing beside a condition: what it reads from the row, not its literals. */
function operandsOf(expr: BoundExpr): BoundExpr[] {
  switch (expr.kind) {
    case 'comparison':
      return [expr.left, expr.right];
    case 'in':
      return [expr.left];
    case 'call':
      return [...expr.args];
    default:
      return [];
  }
}

function unwrap(expr: BoundExpr): BoundExpr {
  return expr.kind === 'convert' ? unwrap(expr.operand) : expr;
}

function show(value: Value, expr: BoundExpr): string {
  if (value === null) return 'null';
  const form = expr.type === 'null' ? value : rowFormOf(value, expr.type);
  if (form instanceof Uint8Array) return `binary'${Buffer.from(form).toString('base64url')}'`;
  return typeof form === 'string' ? JSON.stringify(form) : String(form);
}

function explainRow(bound: BoundQuery, filterText: string, kept: boolean, row: Row, related: RelatedRows): string {
  const keyText = keyOf(bound.entityType, row);
  if (bound.filter === undefined) return `(${keyText}) kept: the query has no $filter`;
  const compiler = new ClosureCompiler(related);
  const lines: string[] = [];
  const textOf = (expr: BoundExpr): string => {
    // a node's span leaves out the parentheses of a parenthesized operand at either end (`not (A eq 1)` ends
    // before `)`, `(A eq 1) and B` starts after `(`): take them in
    let { start, end } = expr.span;
    let text = filterText.slice(start, end);
    while (end < filterText.length && filterText[end] === ')' && count(text, '(') > count(text, ')'))
      text += filterText[end++];
    while (start > 0 && filterText[start - 1] === '(' && count(text, ')') > count(text, '('))
      text = filterText[--start] + text;
    return text || expr.kind;
  };
  const visit = (expr: BoundExpr, indent: string): void => {
    const value = compiler.compile(expr)(row);
    lines.push(`${indent}${textOf(expr)} → ${show(value, expr)}`);
    if (expr.kind === 'logical') {
      visit(expr.left, `${indent}  `);
      visit(expr.right, `${indent}  `);
    } else if (expr.kind === 'not') visit(expr.operand, `${indent}  `);
    else {
      for (const operand of operandsOf(expr).map(unwrap)) {
        if (operand.kind === 'literal') continue;
        if (isCondition(operand)) visit(operand, `${indent}  `);
        else lines.push(`${indent}  ${textOf(operand)} = ${show(compiler.compile(operand)(row), operand)}`);
      }
    }
  };
  visit(bound.filter, '  ');
  const verdict = kept ? 'kept: the filter is true' : 'dropped: the filter is not true (false or null)';
  return `(${keyText}) ${verdict}\n${lines.join('\n')}`;
}

function count(text: string, char: string): number {
  let n = 0;
  for (const c of text) if (c === char) n++;
  return n;
}
