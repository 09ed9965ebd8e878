// Reading a query with `$compute` from any store: the store reads the entity's own properties (a filter or an order
// that names a computed property already holds its expression, which the store evaluates as any other), and the
// service adds the selected computed properties to each row it writes, with the memory backend's closures. A store
// never sees a computed property.
import { computedValues } from '../backends/memory/compile.js';
import type { Row } from '../model/schema.js';
import type { BoundCompute, BoundQuery } from '../validate/bound.js';
import { entityMembers } from './json.js';
import { readingAlso, type PreparedRead, type PrepareOptions, type Store, type StoreCollection } from './store.js';

/** The selected computed properties of a query (none: undefined). */
export function selectedComputed(query: Pick<BoundQuery, 'compute' | 'select'>): readonly BoundCompute[] | undefined {
  const selected = (query.compute ?? []).filter((c) => query.select.includes(c.property));
  return selected.length === 0 ? undefined : selected;
}

/** A row with the values of `computed` beside its own (`now()` read once, when called). */
export function withComputed(computed: readonly BoundCompute[]): (row: Row) => Row {
  const values = computedValues(computed)!;
  return (row) => ({ ...row, ...values(row) });
}

/**
 * A read of a query with `$compute`: every property of the entity read (the computed ones may read any), the
 * computed values added to the decoded rows, the selection written.
 */
export function computedPreparedRead(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent: Row | undefined,
  options: PrepareOptions = {},
): PreparedRead {
  const computed = selectedComputed(query) ?? [];
  const { compute: _compute, ...rest } = query;
  const stored: BoundQuery = { ...rest, select: [...set.entityType.properties.values()] };
  const beside = readingAlso(stored, options);
  return {
    run: async (readOptions) => {
      const { rows, count } = await store.read(set, beside.query, {
        ...readOptions,
        ...(parent === undefined ? {} : { parent }),
      });
      const add = computed.length === 0 ? (row: Row) => row : withComputed(computed);
      const made = rows.map(add);
      return count === undefined ? { rows: made } : { rows: made, count };
    },
    writer: (writeOptions) => (row) => entityMembers(query.select, row as Row, writeOptions),
    ...(beside.also === undefined ? {} : { also: beside.also }),
  };
}
