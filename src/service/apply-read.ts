// Reading a query with `$apply` from any store. A store that groups by itself (the SQL stores: Store.prepareApply)
// makes the leading filters and searches and the first grouping in its database, and the transformations after it run
// over the groups in memory (the memory backend's runApply); any other store reads the input rows (the leading filter
// and search transformations as its filter and `$search`, so that an index can serve them) and every transformation
// runs in memory. The rest of the query (`$filter`, `$orderby`, `$skip`, `$top`, `$count`, `$select` of the aggregated
// instances) runs over what they give. Either way the memory backend's semantics hold; `maxApplyRows` bounds the rows
// (or groups) one request may bring into memory.
import { ODataError } from '../errors.js';
import type { NavigationProperty, Property, Row } from '../model/schema.js';
import { runApply } from '../backends/memory/apply.js';
import { compileQuery } from '../backends/memory/compile.js';
import { applyReadsNavigation, leadingConditions } from '../validate/apply.js';
import { validateQuery } from '../validate/bind.js';
import type { BoundApply, BoundQuery } from '../validate/bound.js';
import { readingUnder, type PreparedCount, type PreparedRead, type Store, type StoreCollection } from './store.js';
import { entityMembers } from './json.js';

/**
 * The read of `$apply`'s input rows (every readable property, its leading filters and searches as the query's filter
 * and search, in key order, one row past `maxRows`), and the transformations left for memory.
 */
export function applyInput(apply: BoundApply, maxRows: number): { query: BoundQuery; rest: BoundApply } {
  const { filter, search, next } = leadingConditions(apply.steps);
  // every readable property, in the type's default order (the key last): the transformations see the same rows in the
  // same order on every store
  const all = validateQuery({ aliases: new Map(), custom: new Map(), text: {} }, apply.input);
  return {
    // one row more than allowed: to know there are more
    query: {
      ...all,
      ...(filter === undefined ? {} : { filter }),
      ...(search === undefined ? {} : { search }),
      top: maxRows + 1,
    },
    rest: { ...apply, steps: apply.steps.slice(next) },
  };
}

/** Where a plan's instances come from: a part the store makes (its rows in row form) and the rest, run in memory. */
interface ApplySource {
  readonly made: (options: Parameters<PreparedRead['run']>[0]) => Promise<readonly Row[]>;
  readonly rest: BoundApply;
}

/**
 * The source of a query's `$apply`: the store's own grouping where it offers one (Store.prepareApply), else its rows
 * for the leading filters; either way at most `maxRows` of them reach memory.
 */
function sourceOf(
  store: Store,
  set: StoreCollection,
  apply: BoundApply,
  parent: Row | undefined,
  maxRows: number,
): ApplySource {
  const prepared = store.prepareApply?.(set, apply, parent, maxRows);
  if (prepared !== undefined) {
    return {
      rest: prepared.rest,
      made: async (options) => {
        const rows = await prepared.run(options);
        if (rows.length > maxRows) {
          throw new ODataError(
            'LimitExceeded',
            `$apply makes at most ${maxRows} groups of ${set.name} per request, and this one makes more: group by fewer properties or filter first`,
            { target: '$apply' },
          );
        }
        return rows;
      },
    };
  }
  const input = applyInput(apply, maxRows);
  if (applyReadsNavigation(input.rest.steps)) {
    throw new ODataError(
      'NotImplemented',
      `This store cannot read through navigations inside $apply's transformations (other than its leading filters) for ${set.name}: compute or group by properties of ${set.entityType.name} itself`,
      { target: '$apply' },
    );
  }
  return {
    rest: input.rest,
    made: async (options) => {
      const { rows } = await store.read(set, input.query, readingUnder(options, parent));
      if (rows.length > maxRows) throw tooManyApplyRows(set, maxRows);
      return rows;
    },
  };
}

/** The 400 for more input rows of `$apply` than one request may bring into memory. */
export function tooManyApplyRows(set: StoreCollection, maxRows: number): ODataError {
  return new ODataError(
    'LimitExceeded',
    `$apply reads at most ${maxRows} rows of ${set.name} per request, and more match its leading filter: narrow it with a filter transformation first, as in filter(...)/groupby(...)`,
    { target: '$apply' },
  );
}

/** The instances `$apply` gives: what its source makes, transformed in memory by what is left. */
async function applied(source: ApplySource, options: Parameters<PreparedRead['run']>[0]): Promise<readonly Row[]> {
  return runApply(await source.made(options), source.rest);
}

/** A read of a query with `$apply` (the rows the aggregated instances, in row form). */
export function applyPreparedRead(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent: Row | undefined,
  maxRows: number,
): PreparedRead {
  const source = sourceOf(store, set, query.apply!, parent, maxRows);
  const compiled = compileQuery(query);
  // the selected navigations that hold a grouping path's values (the projection keeps the properties alone)
  const nested = (query.selectNavigation ?? []).filter((n) => query.apply!.nested?.includes(n));
  return {
    run: async (options) => {
      const made = await applied(source, options);
      const { value, rows, count } = compiled.run(made);
      const out =
        nested.length === 0
          ? value
          : value.map((projected, i) => {
              const row: Record<string, unknown> = { ...projected };
              for (const n of nested) row[n.name] = rows[i]![n.name] ?? null;
              return row;
            });
      return { rows: out, ...(count === undefined ? {} : { count }) };
    },
    writer: (options) => {
      if (nested.length === 0) return (row) => entityMembers(query.select, row as Row, options);
      return (row) => nestedMembers(nested, query.select, row as Row, options);
    },
  };
}

/**
 * The members of an instance of a grouping by navigation paths: each navigation's object of the grouped values
 * (`"PurchaseOrder":{"VendorID":"V1"}`, written as the instance's own values are, deeper navigations nested again),
 * then the instance's own properties.
 */
function nestedMembers(
  navigation: readonly NavigationProperty[],
  select: readonly Property[],
  row: Row,
  options: Parameters<typeof entityMembers>[2],
): string {
  const parts = navigation.map((n) => {
    const target = n.target();
    const value = (row[n.name] ?? {}) as Row;
    return `${JSON.stringify(n.name)}:{${nestedMembers([...target.navigation.values()], [...target.properties.values()], value, options)}}`;
  });
  const own = entityMembers(select, row, options);
  if (own !== '') parts.push(own);
  return parts.join(',');
}

/** What a grouping by navigation paths holds under a navigation, for the context URL: `PurchaseOrder(VendorID)`. */
export function nestedSelection(navigation: NavigationProperty): string {
  const target = navigation.target();
  const items = [
    ...[...target.navigation.values()].map(nestedSelection),
    ...[...target.properties.values()].map((p) => p.name),
  ];
  return `${navigation.name}(${items.join(',')})`;
}

/** `/$count` of a query with `$apply`: how many instances its `$filter` keeps of those `$apply` gives. */
export function applyPreparedCount(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent: Row | undefined,
  maxRows: number,
): PreparedCount {
  const source = sourceOf(store, set, query.apply!, parent, maxRows);
  const compiled = compileQuery(query);
  return {
    run: async (options) => {
      const made = await applied(source, options);
      let count = 0;
      for (const row of made) if (compiled.matches(row)) count++;
      return count;
    },
  };
}
