// A store a user might write in an afternoon, to prove the Store contract is enough: rows in plain arrays, reads by
// the memory backend's runQuery (no prepareRead: the service's default path), transactions as a copy swapped in at
// commit, one at a time. docs/embedding.md "Writing a store" describes what it implements.
import { runQuery } from '../../src/backends/memory/compile.js';
import type { Model, NavigationProperty, Row } from '../../src/model/schema.js';
import {
  collectionOfType,
  duplicateKey,
  type ReadResult,
  type Store,
  type StoreCollection,
  type StoreTransaction,
} from '../../src/service/store.js';
import type { BoundQuery } from '../../src/validate/bound.js';

type Tables = Map<string, Row[]>;

export function tinyStore(model: Model, data: Record<string, Row[]>): Store {
  let tables: Tables = new Map(Object.entries(data).map(([name, rows]) => [name, rows.map((row) => ({ ...row }))]));
  let turn: Promise<unknown> = Promise.resolve();
  let counters = new Map<string, number>();
  const rowsOf = (from: Tables, c: StoreCollection): Row[] => from.get(c.name) ?? [];
  const sameKey = (c: StoreCollection, a: Row, b: Row): boolean =>
    [...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)].every((k) => String(a[k]) === String(b[k]));
  const matching = (row: Row, where: Row): boolean =>
    Object.keys(where).every((k) => String(row[k]) === String(where[k]));
  /** The rows a navigation leads to, as lambdas (`any`, `all`, `/$count`) and paths (`Author/Name`) read them. */
  const related = (row: Row, navigation: NavigationProperty): Row[] | Row | null => {
    const target = collectionOfType(model, navigation.target());
    const where = Object.fromEntries(Object.entries(navigation.foreignKey).map(([p, child]) => [child, row[p]]));
    // a null foreign key relates to nothing
    const found = Object.values(where).some((v) => v === null || v === undefined)
      ? []
      : rowsOf(tables, target).filter((child) => matching(child, where));
    return navigation.collection ? found : (found[0] ?? null);
  };
  const read = async (c: StoreCollection, query: BoundQuery, options: { parent?: Row } = {}): Promise<ReadResult> => {
    const rows = rowsOf(tables, c).filter((row) => matching(row, options.parent ?? {}));
    const { value, count } = runQuery(rows, query, { related });
    return count === undefined ? { rows: value } : { rows: value, count };
  };
  return {
    read,
    count: async (c, query, options) => (await read(c, { ...query, count: true, top: 0 }, options)).count ?? 0,
    get: async (c, key) => rowsOf(tables, c).find((row) => sameKey(c, row, key)),
    transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
      const run = turn.then(async () => {
        const copy: Tables = new Map([...tables].map(([name, rows]) => [name, [...rows]]));
        const sequences = new Map(counters);
        const list = (c: StoreCollection): Row[] => {
          if (!copy.has(c.name)) copy.set(c.name, []);
          return copy.get(c.name)!;
        };
        const result = await work({
          get: async (c, key) => list(c).find((row) => sameKey(c, row, key)),
          children: async (c, where) => list(c).filter((row) => matching(row, where)),
          insert: async (c, row) => {
            if (list(c).some((other) => sameKey(c, other, row))) throw duplicateKey(c, row);
            list(c).push({ ...row });
          },
          update: async (c, row) => {
            const rows = list(c);
            const at = rows.findIndex((other) => sameKey(c, other, row));
            if (at >= 0) rows[at] = { ...row };
          },
          delete: async (c, key) => {
            const rows = list(c);
            const at = rows.findIndex((other) => sameKey(c, other, key));
            if (at >= 0) rows.splice(at, 1);
            return at >= 0;
          },
          lock: async () => undefined,
          nextSequence: async (name) => {
            sequences.set(name, (sequences.get(name) ?? 0) + 1);
            return sequences.get(name)!;
          },
          maxOf: async (c, property, where) =>
            Math.max(
              0,
              ...list(c)
                .filter((row) => matching(row, where))
                .map((row) => Number(row[property])),
            ),
        });
        tables = copy;
        counters = sequences;
        return result;
      });
      turn = run.catch(() => undefined);
      return run;
    },
  };
}
