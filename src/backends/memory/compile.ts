// The memory backend: a bound query compiled once (the filter as generated source, source.ts; everything else as
// closures, closures.ts), then run over arrays many times: filter, count, order (order.ts), page and project.
// Semantics: SEMANTICS.md.
import type { BoundCompute, BoundQuery } from '../../validate/bound.js';
import { rowFormOf } from '../../values/cast.js';
import { ClosureCompiler, type RelatedRows } from './closures.js';
import { BoundedHeap, comparatorOf, sortAll, sortKeysOf } from './order.js';
import { searchPredicate } from './search.js';
import { generatedPredicate } from './source.js';
import type { Row } from './working-values.js';

export type { Row } from './working-values.js';
export type { RelatedRows } from './closures.js';

export interface CompileOptions {
  /**
   * Where the rows read through navigations come from (`any`, `all`, `/$count`, `PurchaseOrder/VendorID`): an array
   * of rows for a collection, a row or null for a single-valued navigation. By default each row carries them under
   * the navigation's name (`row.Lines = [...]`, `row.PurchaseOrder = {...}`); a store gives them from its own indexes.
   */
  readonly related?: RelatedRows;
}

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

/** Compiles a bound query once; the result runs over any number of row arrays. */
export function compileQuery(bound: BoundQuery, options: CompileOptions = {}): CompiledQuery {
  const compiler = new ClosureCompiler(options.related);
  const filtered = bound.filter === undefined ? undefined : generatedPredicate(bound.filter, compiler);
  // $search beside the filter: both must hold
  const searched = bound.search === undefined ? undefined : searchPredicate(bound.search);
  const matches =
    searched === undefined
      ? (filtered ?? (() => true))
      : filtered === undefined
        ? searched
        : (row: Row) => filtered(row) && searched(row);
  const keys = sortKeysOf(bound.orderBy, compiler);
  const compare = comparatorOf(keys);
  const names = bound.select.map((p) => p.name);
  // `$compute`'s selected properties, computed from the row
  const computed = computedValues(
    (bound.compute ?? []).filter((c) => bound.select.includes(c.property)),
    compiler,
  );
  const project = (row: Row): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      const value = row[name];
      out[name] = value === undefined ? null : value;
    }
    if (computed !== undefined) Object.assign(out, computed(row));
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

/**
 * The values of computed properties (`$compute`) of a row, in row form as a store's values are (decimals as text,
 * instants in UTC); undefined for none.
 */
export function computedValues(
  compute: readonly BoundCompute[],
  compiler: ClosureCompiler = new ClosureCompiler(),
): ((row: Row) => Record<string, unknown>) | undefined {
  if (compute.length === 0) return undefined;
  const read = compute.map((c) => ({ name: c.property.name, type: c.property.type, value: compiler.compile(c.expr) }));
  return (row) => {
    const out: Record<string, unknown> = {};
    for (const c of read) out[c.name] = rowFormOf(c.value(row), c.type);
    return out;
  };
}

/** Compiles and runs in one call. */
export function runQuery<R extends Row>(rows: Iterable<R>, bound: BoundQuery, options?: CompileOptions): RunResult<R> {
  return compileQuery(bound, options).run(rows);
}
