// Reading a query with `$apply` from any store: the store reads the input rows (the leading filter transformations as
// its filter, so that an index can serve them), the transformations run over them in memory (the memory backend's
// runApply), and the rest of the query (`$filter`, `$orderby`, `$skip`, `$top`, `$count`, `$select` of the aggregated
// instances) runs over what they give. Every store gets `$apply` this way, with the memory backend's exact semantics;
// `maxApplyRows` bounds the rows one request may bring into memory.
import { ODataError } from '../errors.js';
import type { Row } from '../model/schema.js';
import { runApply } from '../backends/memory/apply.js';
import { compileQuery } from '../backends/memory/compile.js';
import { andOf, validateQuery } from '../validate/bind.js';
import type { BoundApply, BoundExpr, BoundQuery } from '../validate/bound.js';
import type { PreparedCount, PreparedRead, Store, StoreCollection } from './store.js';
import { entityMembers } from './json.js';

/** The read of the input rows, and the transformations left for memory. */
function inputOf(apply: BoundApply, maxRows: number): { query: BoundQuery; rest: BoundApply } {
  let first = 0;
  let filter: BoundExpr | undefined;
  for (; first < apply.steps.length; first++) {
    const step = apply.steps[first]!;
    if (step.kind !== 'filter') break;
    filter = filter === undefined ? step.predicate : andOf(filter, step.predicate);
  }
  // every readable property, in the type's default order (the key last): the transformations see the same rows in the
  // same order on every store
  const all = validateQuery({ aliases: new Map(), custom: new Map(), text: {} }, apply.input);
  return {
    // one row more than allowed: to know there are more
    query: { ...all, ...(filter === undefined ? {} : { filter }), top: maxRows + 1 },
    rest: { ...apply, steps: apply.steps.slice(first) },
  };
}

/** The instances `$apply` gives: the store's rows for `input`, transformed in memory by what is left. */
async function applied(
  store: Store,
  set: StoreCollection,
  input: { readonly query: BoundQuery; readonly rest: BoundApply },
  parent: Row | undefined,
  maxRows: number,
  options: Parameters<PreparedRead['run']>[0],
): Promise<readonly Row[]> {
  const { rows } = await store.read(set, input.query, { ...options, ...(parent === undefined ? {} : { parent }) });
  if (rows.length > maxRows) {
    throw new ODataError(
      'LimitExceeded',
      `$apply reads at most ${maxRows} rows of ${set.name} per request, and more match its leading filter: narrow it with a filter transformation first, as in filter(...)/groupby(...)`,
      { target: '$apply' },
    );
  }
  return runApply(rows, input.rest);
}

/** A read of a query with `$apply` (the rows the aggregated instances, in row form). */
export function applyPreparedRead(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent: Row | undefined,
  maxRows: number,
): PreparedRead {
  const input = inputOf(query.apply!, maxRows);
  const compiled = compileQuery(query);
  return {
    run: async (options) => {
      const made = await applied(store, set, input, parent, maxRows, options);
      const { value, count } = compiled.run(made);
      return { rows: value, ...(count === undefined ? {} : { count }) };
    },
    writer: (options) => (row) => entityMembers(query.select, row as Row, options),
  };
}

/** `/$count` of a query with `$apply`: how many instances its `$filter` keeps of those `$apply` gives. */
export function applyPreparedCount(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent: Row | undefined,
  maxRows: number,
): PreparedCount {
  const input = inputOf(query.apply!, maxRows);
  const compiled = compileQuery(query);
  return {
    run: async (options) => {
      const made = await applied(store, set, input, parent, maxRows, options);
      let count = 0;
      for (const row of made) if (compiled.matches(row)) count++;
      return count;
    },
  };
}
