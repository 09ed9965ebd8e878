// `$expand`: the related entities of the entities a request reads. Each expanded navigation is one read of its
// target collection for every entity of the level together (the store's `readRelated`: one statement on the SQL
// stores), then the same for the next level over the rows found: an expand of depth d costs d reads beyond the
// entities' own, whatever their number. The rows are tied to their entities by the navigation's foreign key.
import { ODataError } from '../errors.js';
import type { Model, NavigationProperty, Property, Row } from '../model/schema.js';
import type { BoundExpand, BoundQuery } from '../validate/bound.js';
import {
  collectionOfType,
  linkTupleText,
  type ReadOptions,
  type RelatedLink,
  type RelatedResult,
  type Store,
  type StoreCollection,
} from './store.js';

/** One expanded navigation of a level's entities: their related rows, and the expansions of those rows. */
export interface ExpandedNavigation {
  readonly expand: BoundExpand;
  /** Where the related rows are kept. */
  readonly target: StoreCollection;
  /** Each entity's related rows (by the entity's row object), in the expansion's order, and its count when asked. */
  readonly related: ReadonlyMap<Row, { readonly rows: readonly Row[]; readonly count?: number }>;
  /** The next level: the expansions of the related rows. */
  readonly nested: readonly ExpandedNavigation[];
  /** The JSON members of a related row's selection, where the store wrote them from its own rows (RelatedResult). */
  readonly members?: (row: Row, options: { readonly ieee754Compatible: boolean }) => string;
}

/** The properties a navigation's foreign key reads on each side: `source[i]` of the entity holds `target[i]`'s value. */
export function linkOf(navigation: NavigationProperty): { readonly source: string[]; readonly target: string[] } {
  const pairs = Object.entries(navigation.foreignKey);
  return { source: pairs.map(([source]) => source), target: pairs.map(([, target]) => target) };
}

/**
 * What the service reads of a query's rows beside the client's `$select`: the key (full metadata's ids, `$ref`),
 * the ETag's properties, and the source side of each expanded navigation's foreign key (to expand them).
 */
function tiesOf(query: BoundQuery): string[] {
  return [
    ...query.entityType.key.map((p) => p.name),
    // (and its ETag's properties: every entity carries its @odata.etag)
    ...query.entityType.concurrency.map((p) => p.name),
    ...(query.expand ?? []).flatMap((e) => linkOf(e.navigation).source),
  ];
}

/** The properties a read of `query` selects: the client's `$select`, what ties its rows (tiesOf) and `also`. */
export function selectForExpand(query: BoundQuery, also: readonly string[] = []): readonly Property[] {
  const needed = new Set([...tiesOf(query), ...also]);
  return [...query.entityType.properties.values()].filter((p) => query.select.includes(p) || needed.has(p.name));
}

export interface ExpandOptions extends ReadOptions {
  /** Related rows one expanded navigation may read for a level (maxExpandRows). */
  readonly maxRows: number;
}

/** Reads the expansions of `rows` (the entities of one level), level after level. */
export async function readExpansions(
  store: Store,
  model: Model,
  rows: readonly Row[],
  expands: readonly BoundExpand[],
  options: ExpandOptions,
): Promise<ExpandedNavigation[]> {
  const out: ExpandedNavigation[] = [];
  for (const expand of expands) out.push(await readExpansion(store, model, rows, expand, options));
  return out;
}

async function readExpansion(
  store: Store,
  model: Model,
  rows: readonly Row[],
  expand: BoundExpand,
  options: ExpandOptions,
): Promise<ExpandedNavigation> {
  const { navigation } = expand;
  const target = collectionOfType(model, navigation.target());
  const link = linkOf(navigation);
  // the values are compared as the related side's types (an Int32 foreign key may point to an Int64 key)
  const linkProperties = link.target.map((name) => target.entityType.properties.get(name)!);
  // each distinct tuple of the entities' foreign-key values once; an entity with a null in it has no related rows
  const tuples = new Map<string, { readonly values: readonly unknown[]; readonly entities: Row[] }>();
  for (const row of rows) {
    const values = link.source.map((name) => row[name]);
    if (values.some((value) => value === null || value === undefined)) continue;
    const text = linkTupleText(linkProperties, values);
    const entry = tuples.get(text);
    if (entry === undefined) tuples.set(text, { values, entities: [row] });
    else entry.entities.push(row);
  }
  const related = new Map<Row, { rows: Row[]; count?: number }>();
  if (tuples.size === 0) return { expand, target, related, nested: [] };
  // the related rows carry the target side of the link (to be tied to their entities) and what their own
  // expansions and ids need
  const query: BoundQuery = {
    ...expand.query,
    select: selectForExpand(expand.query, link.target),
  };
  const relatedLink: RelatedLink = {
    properties: link.target,
    values: [...tuples.values()].map((t) => t.values),
    maxRows: options.maxRows,
    ...(expand.ref || expand.countOnly === true
      ? {}
      : {
          written: expand.query.select,
          needed: [...link.target, ...tiesOf(expand.query)],
        }),
  };
  const result = await (store.readRelated !== undefined
    ? store.readRelated(target, query, relatedLink, signalOf(options))
    : readEachTuple(store, target, query, relatedLink, options));
  if (result.rows.length > options.maxRows || result.truncated === true) {
    throw new ODataError(
      'LimitExceeded',
      `$expand of ${navigation.name} would return more than ${options.maxRows} related entities (maxExpandRows)`,
      {
        target: '$expand',
        details: [
          {
            code: 'LimitExceeded',
            message: `page the expansion with ${navigation.name}($top=...), read fewer entities with $top, or read ${navigation.name} at its own address`,
          },
        ],
      },
    );
  }
  const byTuple = new Map<string, Row[]>();
  for (const row of result.rows) {
    const text = linkTupleText(
      linkProperties,
      link.target.map((name) => row[name]),
    );
    const list = byTuple.get(text);
    if (list === undefined) byTuple.set(text, [row]);
    else list.push(row);
  }
  let index = 0;
  for (const [text, { entities }] of tuples) {
    const group = byTuple.get(text) ?? [];
    const count = result.counts?.[index++];
    for (const entity of entities) related.set(entity, count === undefined ? { rows: group } : { rows: group, count });
  }
  const nested =
    expand.query.expand === undefined || expand.query.expand.length === 0
      ? []
      : await readExpansions(store, model, result.rows, expand.query.expand, options);
  const { raw, writer } = result;
  if (raw === undefined || writer === undefined) return { expand, target, related, nested };
  const rawOf = new Map<Row, unknown>();
  for (let i = 0; i < result.rows.length; i++) rawOf.set(result.rows[i]!, raw[i]);
  const plain = writer({ ieee754Compatible: false });
  const compatible = writer({ ieee754Compatible: true });
  const members = (row: Row, format: { readonly ieee754Compatible: boolean }): string =>
    (format.ieee754Compatible ? compatible : plain)(rawOf.get(row));
  return { expand, target, related, nested, members };
}

/** A store without `readRelated`: each tuple's rows with `read` and the tuple as the parent (N+1 reads). */
async function readEachTuple(
  store: Store,
  target: StoreCollection,
  query: BoundQuery,
  link: RelatedLink,
  options: ReadOptions,
): Promise<RelatedResult> {
  const rows: Row[] = [];
  const counts: number[] = [];
  for (const values of link.values) {
    const parent = Object.fromEntries(link.properties.map((name, i) => [name, values[i]]));
    const result = await store.read(target, query, { ...signalOf(options), parent });
    rows.push(...result.rows);
    counts.push(result.count ?? 0);
  }
  return query.count ? { rows, counts } : { rows };
}

function signalOf(options: ReadOptions): ReadOptions {
  return options.signal === undefined ? {} : { signal: options.signal };
}
