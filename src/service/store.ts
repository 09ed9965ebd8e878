// The contract between the OData service and where the data lives. The service parses, binds and checks everything
// a client sends, and a store only keeps rows: it reads a bound query, finds one row by key and writes rows inside a
// transaction. Shipped stores: SQL (SQLite, PostgreSQL, MySQL/MariaDB; tables made from the model) and memory
// (arrays). docs/embedding.md says how to write one of your own.
import { ODataError } from '../errors.js';
import type { EntityType, Model, Property, Row } from '../model/schema.js';
import type { BoundApply, BoundQuery } from '../validate/bound.js';
import type { LiteralValue } from '../syntax/ast.js';

/**
 * Where a store keeps one kind of entity: an entity set (named after it), or a collection contained under a parent's
 * navigation (named after its entity type), whose rows lead their key with the parent's key.
 */
export interface StoreCollection {
  readonly name: string;
  readonly entityType: EntityType;
  /** A contained collection's parent key properties: properties of its entity type, part of each row's identity. */
  readonly parentKey?: readonly string[];
}

/** Every collection of a model: its entity sets, then the collections contained under their navigations. */
export function collectionsOf(model: Model): ReadonlyMap<string, StoreCollection> {
  const cached = collectionCache.get(model);
  if (cached !== undefined) return cached;
  const all = new Map<string, StoreCollection>();
  for (const [name, set] of model.sets) all.set(name, Object.freeze({ name, entityType: set.entityType }));
  for (const type of model.entityTypes.values()) {
    for (const navigation of type.navigation.values()) {
      if (navigation.contained !== true) continue;
      const target = navigation.target();
      if (!all.has(target.name))
        all.set(
          target.name,
          Object.freeze({ name: target.name, entityType: target, parentKey: Object.values(navigation.foreignKey) }),
        );
    }
  }
  collectionCache.set(model, all);
  return all;
}

const collectionCache = new WeakMap<Model, ReadonlyMap<string, StoreCollection>>();

/** The collection that keeps an entity type's rows (the first set of that type, or its contained collection). */
export function collectionOfType(model: Model, entityType: EntityType): StoreCollection {
  for (const c of collectionsOf(model).values()) if (c.entityType === entityType) return c;
  throw new Error(`No collection of the model keeps ${entityType.name}`);
}

/** How a read may be stopped early; the store's own budget applies either way. */
export interface ReadOptions {
  /** Aborted when the client is gone: a store that can stop a running statement does, and rejects with its reason. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The read options of a request or read: its signal, read from `source` only when a store looks at it (an adapter
 * makes a request's signal on first use: src/service/http-body.ts).
 */
export class SignalOf implements ReadOptions {
  constructor(private readonly source: { readonly signal?: AbortSignal | undefined } | undefined) {}

  get signal(): AbortSignal | undefined {
    return this.source?.signal;
  }
}

/**
 * Read options with a parent: the signal copied by name, not by a spread, which would lose it (the service's read
 * options are SignalOf instances, whose `signal` is a getter).
 */
export function readingUnder(
  options: ReadOptions | undefined,
  parent: Row | undefined,
): ReadOptions & { readonly parent?: Row } {
  const signal = options?.signal;
  return { ...(signal === undefined ? {} : { signal }), ...(parent === undefined ? {} : { parent }) };
}

export interface ReadResult {
  /** The rows of the page, with the properties of the query's `select`. */
  readonly rows: readonly Row[];
  /** How many rows the filter keeps, `$top` and `$skip` aside: present when the query asks for `$count`. */
  readonly count?: number;
}

/**
 * A read made once and run many times (the service keeps it per query): a store's fast path, such as SQL text and a
 * JSON writer that reads the driver's rows without decoding them first. Stores without one get the service's default
 * over `read`.
 */
export interface PreparedRead {
  run(options?: ReadOptions): Promise<{ readonly rows: readonly unknown[]; readonly count?: number }>;
  /** The JSON members of one row as `run` returns it (`"A":1,"B":"x"`), for the query's `select`. */
  writer(options: { readonly ieee754Compatible: boolean }): (row: unknown) => string;
  /**
   * Optional: the same read for other values of the query's lifted literals (src/syntax/lifted.ts, written in the
   * order of the query's shape), or undefined where it would not be the same read. A store that offers it lets the
   * service keep one plan per query shape instead of one per query string.
   */
  rebind?(written: readonly LiteralValue[]): PreparedRead | undefined;
  /**
   * Given `also` (prepareRead's options): the values of those properties of a row `run` returned, decoded (the
   * service reads an entity's ETag and a page's last order values from them; `writer` writes none of them).
   */
  also?(row: unknown): Row;
}

/** What a prepared read reads beside the query's `select`. */
export interface PrepareOptions {
  /** Properties read beside the selection but not written: PreparedRead.also gives their values. */
  readonly also?: readonly Property[];
}

/**
 * For a store whose rows come decoded, by name: the query that reads `also` beside its selection, and the `also` of
 * its PreparedRead (none when nothing is asked).
 */
export function readingAlso(
  query: BoundQuery,
  options: PrepareOptions,
): { readonly query: BoundQuery; readonly also?: (row: unknown) => Row } {
  const asked = options.also ?? [];
  if (asked.length === 0) return { query };
  const missing = asked.filter((p) => !query.select.includes(p));
  const names = asked.map((p) => p.name);
  return {
    query: missing.length === 0 ? query : { ...query, select: [...query.select, ...missing] },
    also: (row) => Object.fromEntries(names.map((name) => [name, (row as Row)[name]])),
  };
}

/** A count (`/$count`) made once and run many times, as PreparedRead is for reads. */
export interface PreparedCount {
  run(options?: ReadOptions): Promise<number>;
  /** Optional: the same count for other values of the query's lifted literals (see PreparedRead.rebind). */
  rebind?(written: readonly LiteralValue[]): PreparedCount | undefined;
}

/** Which related rows `readRelated` finds: those whose `properties` hold one of the `values` tuples. */
export interface RelatedLink {
  /** Properties of the related collection (a navigation's foreign key on the related side). */
  readonly properties: readonly string[];
  /**
   * Value tuples, in the order of `properties`, as the store's own rows hold them; none holds a null, and no two have
   * the same `linkTupleText`.
   */
  readonly values: readonly (readonly unknown[])[];
  /**
   * The service asks no more than this many rows in all (`maxExpandRows`): a store may stop reading one row past it,
   * and the service refuses the request then.
   */
  readonly maxRows?: number;
  /**
   * The properties the answer writes of each row (the client's selection). Given it, a store may answer with a
   * `writer` (see RelatedResult), and then leave out of `rows` those of them that `needed` does not name.
   */
  readonly written?: readonly Property[];
  /** The properties the service reads of `rows` in any case: the link's, the key and those of nested expansions. */
  readonly needed?: readonly string[];
}

// (the link texts live beside the memory backend's related rows, which index by them too)
export { linkTupleText, linkValueText } from '../backends/memory/related.js';

export interface RelatedResult {
  /**
   * The rows with the query's `select` (which includes the link's properties), each tuple's rows in the query's order
   * with its `$skip` and `$top` applied to that tuple's rows alone; rows of different tuples may interleave.
   */
  readonly rows: readonly Row[];
  /** With `$count`: each tuple's count of rows the filter keeps, in the order of `link.values`. */
  readonly counts?: readonly number[];
  /** True when the store stopped reading at `link.maxRows` (there are more rows than the service allows). */
  readonly truncated?: boolean;
  /**
   * Optional fast path (given `link.written`): the JSON members of `link.written` for each row, written from the
   * store's own row (`raw[i]` beside `rows[i]`) without decoding it first, as PreparedRead's writer does.
   */
  readonly raw?: readonly unknown[];
  readonly writer?: (options: { readonly ieee754Compatible: boolean }) => (raw: unknown) => string;
}

/** Row access inside a transaction: everything it writes lands at commit, or nothing does. */
export interface StoreTransaction {
  /** One row by its full key (a contained row's key includes its parent key), every property. */
  get(c: StoreCollection, key: Row): Promise<Row | undefined>;
  /** Every row whose properties equal `where` (a parent's children), every property, in key order. */
  children(c: StoreCollection, where: Row): Promise<Row[]>;
  /** Adds a row with every property; a row with its key exists: rejects with `duplicateKey(c, row)`. */
  insert(c: StoreCollection, row: Row): Promise<void>;
  /** Writes every property of `row` to the row with its key (the service read it first, in this transaction). */
  update(c: StoreCollection, row: Row): Promise<void>;
  /** Removes the row with this key; whether there was one. */
  delete(c: StoreCollection, key: Row): Promise<boolean>;
  /** Waits until no other transaction holds `name`, then holds it until this one ends. */
  lock(name: string): Promise<void>;
  /** The next value (1, 2, ...) of a named counter the store keeps. */
  nextSequence(name: string): Promise<number>;
  /** The largest value of an integer property among the rows whose properties equal `where` (0 when none). */
  maxOf(c: StoreCollection, property: string, where: Row): Promise<number>;
}

/**
 * Where an OData service's rows live. The service hands a store only what it has checked: bound queries (names
 * resolved, types known), keys of the right types, and rows that passed the model's facets and rules.
 */
export interface Store {
  /** The rows of a bound query: filtered, ordered, paged and projected as it says, with the count it asks for. */
  read(c: StoreCollection, query: BoundQuery, options?: ReadOptions & { readonly parent?: Row }): Promise<ReadResult>;
  /** How many rows the query's filter keeps (`/$count`). */
  count(c: StoreCollection, query: BoundQuery, options?: ReadOptions & { readonly parent?: Row }): Promise<number>;
  /** One row by its full key, every property; undefined when there is none. */
  get(c: StoreCollection, key: Row, options?: ReadOptions): Promise<Row | undefined>;
  /** Runs `work` in a transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /**
   * Optional: the rows related to many entities at once (`$expand`), in one statement where the store can. Without it
   * the service reads each tuple's rows with `read` and a `parent` (one read per related entity: N+1).
   */
  readRelated?(c: StoreCollection, query: BoundQuery, link: RelatedLink, options?: ReadOptions): Promise<RelatedResult>;
  /** Optional fast path for collection reads (see PreparedRead). */
  prepareRead?(c: StoreCollection, query: BoundQuery, parent?: Row, options?: PrepareOptions): PreparedRead;
  /** Optional fast path for counts (see PreparedCount). */
  prepareCount?(c: StoreCollection, query: BoundQuery, parent?: Row): PreparedCount;
  /**
   * Optional: the leading part of `$apply` made by the store itself (a database's GROUP BY), prepared once; undefined
   * where it makes none of this one. Without it the service reads the rows (its leading filters applied) and runs
   * every transformation in memory.
   */
  prepareApply?(
    c: StoreCollection,
    apply: BoundApply,
    parent: Row | undefined,
    maxRows: number,
  ): PreparedApply | undefined;
}

/**
 * A part of `$apply` a store makes: `run` gives the instances of the transformations before `rest`, in row form and in
 * the order the memory backend's runApply would give them, at most `maxRows` + 1 of them (one more says there are
 * more than allowed); the service runs `rest` over them.
 */
export interface PreparedApply {
  readonly rest: BoundApply;
  run(options?: ReadOptions): Promise<readonly Row[]>;
}

/** What `insert` rejects with when a row with the same key exists: a 409 naming the key. */
export function duplicateKey(c: StoreCollection, row: Row): ODataError {
  const key = c.entityType.key.map((p) => `${p.name}=${String(row[p.name])}`).join(',');
  return new ODataError('Conflict', `${c.entityType.name} (${key}) exists`);
}
