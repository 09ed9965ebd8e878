// A store over JavaScript arrays: reads run the memory backend's compiled queries, writes go to the arrays. A
// transaction keeps its writes to itself until it commits (readers never see half of one), and transactions take
// turns. For tests, prototypes, fixtures and data that fits in memory; nothing is written to disk.
import { compileQuery, type RelatedRows } from '../backends/memory/compile.js';
import type { Model, Row } from '../model/schema.js';
import { relatedRowsOf } from '../backends/memory/related.js';
import type { BoundApply, BoundQuery } from '../validate/bound.js';
import { runApply } from '../backends/memory/apply.js';
import { applyInput, tooManyApplyRows } from './apply-read.js';
import { entityMembers } from './json.js';
import {
  collectionOfType,
  collectionsOf,
  duplicateKey,
  linkTupleText,
  type PreparedApply,
  type PreparedRead,
  type PrepareOptions,
  readingAlso,
  type ReadOptions,
  type ReadResult,
  type RelatedLink,
  type RelatedResult,
  type Store,
  type StoreCollection,
  type StoreTransaction,
} from './store.js';

/** What changes the arrays: a transaction's writes, applied together at commit. */
type Change = { readonly kind: 'put'; readonly row: Row } | { readonly kind: 'delete' };

export class MemoryStore implements Store {
  private readonly collections: ReadonlyMap<string, StoreCollection>;
  private readonly arrays = new Map<StoreCollection, Row[]>();
  /** Position of each row in its array, by key text; rebuilt when the array changed behind the store's back. */
  private readonly indexes = new Map<StoreCollection, { readonly length: number; readonly at: Map<string, number> }>();
  private readonly sequences = new Map<string, number>();
  /** The end of the last transaction begun: the next one starts after it. */
  private turn: Promise<unknown> = Promise.resolve();

  /**
   * `data`: rows by collection name (entity sets, contained collections by their entity type's name). The arrays are
   * the store's from then on: it writes into them, and indexes them by key.
   */
  constructor(
    readonly model: Model,
    data: Readonly<Record<string, Row[]>> = {},
  ) {
    this.collections = collectionsOf(model);
    for (const name of Object.keys(data))
      if (!this.collections.has(name)) throw new Error(`${name} is no collection of the model`);
    for (const c of this.collections.values()) this.arrays.set(c, data[c.name] ?? []);
  }

  /** The array of a collection's rows. */
  rows(name: string): Row[] {
    const c = this.collections.get(name);
    if (c === undefined) throw new Error(`${name} is no collection of the model`);
    return this.arrays.get(c)!;
  }

  // ── reads ──────────────────────────────────────────────────────────────────

  prepareRead(c: StoreCollection, query: BoundQuery, parent?: Row, options: PrepareOptions = {}): PreparedRead {
    const related = this.relatedRows();
    // what is read beside the selection is projected with it; the writer writes the selection alone
    const beside = readingAlso(query, options);
    const compiled = compileQuery(beside.query, { related });
    const run = async (): Promise<ReadResult> => {
      let rows: Iterable<Row> = this.arrays.get(c)!;
      const scope = { ...parent };
      if (Object.keys(scope).length > 0) rows = [...rows].filter((row) => matchesAll(row, scope));
      related.forget();
      const { value, count } = compiled.run(rows);
      return count === undefined ? { rows: value } : { rows: value, count };
    };
    return {
      run,
      writer: (options) => (row) => entityMembers(query.select, row as Row, options),
      ...(beside.also === undefined ? {} : { also: beside.also }),
    };
  }

  /**
   * Every transformation of `$apply`, over the rows its leading filters keep (at most `maxRows`, in key order, as the
   * service reads them from any store), with the related rows of navigations at hand: `compute(PurchaseOrder/VendorID
   * as Vendor)` reads them as a filter does.
   */
  prepareApply(c: StoreCollection, apply: BoundApply, parent: Row | undefined, maxRows: number): PreparedApply {
    const related = this.relatedRows();
    const input = applyInput(apply, maxRows);
    const compiled = compileQuery(input.query, { related });
    return {
      rest: { input: apply.output, steps: [], output: apply.output },
      run: async () => {
        let rows: Iterable<Row> = this.arrays.get(c)!;
        if (parent !== undefined && Object.keys(parent).length > 0)
          rows = [...rows].filter((row) => matchesAll(row, parent));
        related.forget();
        const { value } = compiled.run(rows);
        if (value.length > maxRows) throw tooManyApplyRows(c, maxRows);
        return runApply(value, input.rest, { related });
      },
    };
  }

  /** The rows related to many entities (`$expand`): the collection grouped by the link once, the query run per group. */
  async readRelated(c: StoreCollection, query: BoundQuery, link: RelatedLink): Promise<RelatedResult> {
    const related = this.relatedRows();
    const compiled = compileQuery(query, { related });
    const properties = link.properties.map((name) => c.entityType.properties.get(name)!);
    const groups = new Map<string, Row[]>();
    for (const tuple of link.values) groups.set(linkTupleText(properties, tuple), []);
    for (const row of this.arrays.get(c)!) {
      const group = groups.get(
        linkTupleText(
          properties,
          link.properties.map((name) => row[name]),
        ),
      );
      if (group !== undefined) group.push(row);
    }
    const rows: Row[] = [];
    const counts: number[] = [];
    for (const group of groups.values()) {
      const { value, count } = compiled.run(group);
      rows.push(...value);
      counts.push(count ?? 0);
    }
    return query.count ? { rows, counts } : { rows };
  }

  read(
    c: StoreCollection,
    query: BoundQuery,
    options: ReadOptions & { readonly parent?: Row } = {},
  ): Promise<ReadResult> {
    return this.prepareRead(c, query, options.parent).run() as Promise<ReadResult>;
  }

  async count(
    c: StoreCollection,
    query: BoundQuery,
    options: ReadOptions & { readonly parent?: Row } = {},
  ): Promise<number> {
    const { count } = await this.read(c, { ...query, count: true, top: 0, skip: 0 }, options);
    return count ?? 0;
  }

  async get(c: StoreCollection, key: Row): Promise<Row | undefined> {
    const at = this.indexOf(c).get(this.keyText(c, key));
    return at === undefined ? undefined : { ...this.arrays.get(c)![at]! };
  }

  /** The rows navigations lead to (lambdas, `/$count`, paths through single-valued navigations), from the arrays. */
  private relatedRows(): RelatedRows & { forget(): void } {
    return relatedRowsOf((entityType) => this.arrays.get(collectionOfType(this.model, entityType))!);
  }

  // ── writes ─────────────────────────────────────────────────────────────────

  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T> {
    const run = this.turn.then(async () => {
      const changes = new Map<StoreCollection, Map<string, Change>>();
      const sequences = new Map<string, number>();
      const result = await work(this.transactionOf(changes, sequences));
      this.commit(changes, sequences);
      return result;
    });
    this.turn = run.catch(() => undefined);
    return run;
  }

  private transactionOf(
    changes: Map<StoreCollection, Map<string, Change>>,
    sequences: Map<string, number>,
  ): StoreTransaction {
    const changesOf = (c: StoreCollection): Map<string, Change> => {
      let map = changes.get(c);
      if (map === undefined) changes.set(c, (map = new Map()));
      return map;
    };
    /** The rows of `c` as this transaction sees them. */
    const current = (c: StoreCollection): Row[] => {
      const pending = changes.get(c);
      const base = this.arrays.get(c)!;
      if (pending === undefined) return base;
      const rows = base.filter((row) => !pending.has(this.keyText(c, row)));
      for (const change of pending.values()) if (change.kind === 'put') rows.push(change.row);
      return rows;
    };
    const get = async (c: StoreCollection, key: Row): Promise<Row | undefined> => {
      const change = changes.get(c)?.get(this.keyText(c, key));
      if (change !== undefined) return change.kind === 'put' ? { ...change.row } : undefined;
      return this.get(c, key);
    };
    return {
      get,
      children: async (c, where) =>
        current(c)
          .filter((row) => matchesAll(row, where))
          .map((row) => ({ ...row })),
      insert: async (c, row) => {
        if ((await get(c, row)) !== undefined) throw duplicateKey(c, row);
        changesOf(c).set(this.keyText(c, row), { kind: 'put', row: { ...row } });
      },
      update: async (c, row) => {
        if ((await get(c, row)) !== undefined) changesOf(c).set(this.keyText(c, row), { kind: 'put', row: { ...row } });
      },
      delete: async (c, key) => {
        if ((await get(c, key)) === undefined) return false;
        changesOf(c).set(this.keyText(c, key), { kind: 'delete' });
        return true;
      },
      // transactions take turns already: holding a name adds nothing
      lock: async () => undefined,
      nextSequence: async (name) => {
        const next = (sequences.get(name) ?? this.sequences.get(name) ?? 0) + 1;
        sequences.set(name, next);
        return next;
      },
      maxOf: async (c, property, where) => {
        let max = 0;
        for (const row of current(c)) {
          const value = Number(row[property]);
          if (matchesAll(row, where) && value > max) max = value;
        }
        return max;
      },
    };
  }

  private commit(changes: Map<StoreCollection, Map<string, Change>>, sequences: Map<string, number>): void {
    for (const [c, pending] of changes) {
      const array = this.arrays.get(c)!;
      const index = this.indexOf(c);
      const removed = new Set<number>();
      for (const [text, change] of pending) {
        const at = index.get(text);
        if (change.kind === 'delete') {
          if (at !== undefined) removed.add(at);
        } else if (at === undefined) array.push(change.row);
        else array[at] = change.row;
      }
      if (removed.size > 0) {
        let kept = 0;
        for (let i = 0; i < array.length; i++) if (!removed.has(i)) array[kept++] = array[i]!;
        array.length = kept;
      }
      this.indexes.delete(c);
    }
    for (const [name, value] of sequences) this.sequences.set(name, value);
  }

  // ── keys ───────────────────────────────────────────────────────────────────

  private keyText(c: StoreCollection, row: Row): string {
    let text = '';
    for (const name of c.parentKey ?? []) text += `${String(row[name])}\u0000`;
    for (const property of c.entityType.key) text += `${String(row[property.name])}\u0000`;
    return text;
  }

  private indexOf(c: StoreCollection): Map<string, number> {
    const array = this.arrays.get(c)!;
    const known = this.indexes.get(c);
    if (known !== undefined && known.length === array.length) return known.at;
    const at = new Map<string, number>();
    for (let i = 0; i < array.length; i++) at.set(this.keyText(c, array[i]!), i);
    this.indexes.set(c, { length: array.length, at });
    return at;
  }
}

function matchesAll(row: Row, where: Row): boolean {
  for (const name in where) if (String(row[name]) !== String(where[name])) return false;
  return true;
}
