// Whole queries for the testing kit: `$filter`, `$orderby`, `$select`, `$top`, `$skip`, `$count`, `$expand` (and
// `$apply`, apply.ts) over one entity type, as decoded option texts and as the percent-encoded query string a URL carries.
import fc from 'fast-check';
import type { EntityType, NavigationProperty } from '../model/schema.js';
import { isOrdered } from '../values/edm.js';
import { applyOf, outputOrder, totalOrder, type ApplyOptions } from './apply.js';
import { filterOf, orderItemOf, type FilterOptions } from './filters.js';

/** A generated query: each option's text as written, and the query string that carries them. */
export interface GeneratedQuery {
  readonly options: Readonly<Partial<Record<QueryOptionName, string>>>;
  /** `$filter=…&$orderby=…`, each value percent-encoded (`+` and `&` in a literal are escaped). */
  readonly text: string;
}

export type QueryOptionName = '$filter' | '$orderby' | '$select' | '$top' | '$skip' | '$count' | '$apply' | '$expand';

export interface QueryArbitraryOptions extends ApplyOptions {
  /**
   * The options to generate (default `$filter`, `$orderby`, `$select`, `$top` and `$skip`; `$count`, `$apply` and,
   * with `navigation`, `$expand` on request). With `$apply`, one query in three is a pipeline (`applyOf`) with `$orderby` over what it gives, paged
   * only when that order names all of it, and `$count` when asked for.
   */
  readonly include?: readonly QueryOptionName[];
  /**
   * `$orderby` items that are expressions besides properties (`length(S)`, `D add 1`, and literals, the same for
   * every row, which must not change the order: SQL reads `ORDER BY 1` as a column number). Default false. With
   * `navigation`, items also order by properties through navigations (`Twin/S`) and collections' sizes
   * (`Parts/$count`).
   */
  readonly orderByExpressions?: boolean;
}

/** The properties a query may order by: ordered, readable ones (Binary has no order). */
function orderable(entityType: EntityType, options: FilterOptions): string[] {
  const wanted = options.properties === undefined ? undefined : new Set(options.properties);
  return [...entityType.properties.values()]
    .filter((p) => !p.writeOnly && isOrdered(p.type) && (wanted === undefined || wanted.has(p.name) || p.isKey))
    .map((p) => p.name);
}

/**
 * `$orderby` items: one to three properties, each ascending or descending. With `total`, the key properties not
 * already named follow, so that the order has no ties and a page of it is one set of rows.
 */
export function orderByOf(
  entityType: EntityType,
  options: FilterOptions & { readonly total?: boolean; readonly orderByExpressions?: boolean } = {},
): fc.Arbitrary<string> {
  const names = orderable(entityType, options);
  const expressions = options.orderByExpressions === true;
  const name = fc.constantFrom(...names);
  const item = fc.tuple(
    expressions || (options.navigation ?? 0) > 0
      ? fc.oneof(
          { weight: 3, arbitrary: name },
          { weight: 1, arbitrary: orderItemOf(entityType, options, expressions) },
        )
      : name,
    fc.constantFrom('', ' desc'),
  );
  return fc
    .uniqueArray(item, { minLength: 1, maxLength: Math.min(3, names.length), selector: ([name]) => name })
    .map((items) => {
      const named = new Set(items.map(([name]) => name));
      const ties = options.total
        ? entityType.key.filter((k) => !named.has(k.name)).map((k) => [k.name, ''] as const)
        : [];
      return [...items, ...ties].map(([name, direction]) => `${name}${direction}`).join(',');
    });
}

/** `$select`: some of the readable properties, the key always among them (so that answers can be matched by key). */
export function selectOf(entityType: EntityType): fc.Arbitrary<string> {
  const all = [...entityType.properties.values()].filter((p) => !p.writeOnly);
  const others = all.filter((p) => !p.isKey).map((p) => p.name);
  const keys = entityType.key.map((k) => k.name);
  return fc.subarray(others, { minLength: 0 }).map((chosen) =>
    all
      .map((p) => p.name)
      .filter((name) => keys.includes(name) || chosen.includes(name))
      .join(','),
  );
}

/** The options of one expanded navigation, as `$expand` writes them between parentheses (`;` between). */
function itemOf(navigation: NavigationProperty, given: FilterOptions, steps: number): fc.Arbitrary<string> {
  const target = navigation.target();
  // (the properties asked for are the entity type's own)
  const { properties: _own, ...options } = given;
  const expand =
    steps > 1
      ? fc.option(expandOf(target, { ...options, navigation: steps - 1 }), { nil: undefined, freq: 3 })
      : fc.constant(undefined);
  const select = fc.option(selectOf(target), { nil: undefined, freq: 3 });
  const collection = navigation.collection
    ? fc.record({
        filter: fc.option(filterOf(target, { ...options, navigation: steps - 1, depth: 2 }), {
          nil: undefined,
          freq: 2,
        }),
        // each parent's related rows are paged on their own: in an order that ends with the key
        order: fc.option(orderByOf(target, { ...options, navigation: 0, total: true }), {
          nil: undefined,
          freq: 2,
        }),
        top: fc.option(fc.nat(3), { nil: undefined, freq: 3 }),
        skip: fc.option(fc.nat(2), { nil: undefined, freq: 3 }),
      })
    : fc.constant(undefined);
  return fc.tuple(collection, select, expand).map(([paging, chosen, inner]) => {
    const parts: string[] = [];
    if (paging?.filter !== undefined) parts.push(`$filter=${paging.filter}`);
    const paged = paging?.top !== undefined || paging?.skip !== undefined;
    if (paging?.order !== undefined || paged)
      parts.push(`$orderby=${paging?.order ?? target.key.map((k) => k.name).join(',')}`);
    if (paging?.top !== undefined) parts.push(`$top=${paging.top}`);
    if (paging?.skip !== undefined) parts.push(`$skip=${paging.skip}`);
    if (chosen !== undefined) parts.push(`$select=${chosen}`);
    if (inner !== undefined) parts.push(`$expand=${inner}`);
    return parts.length === 0 ? navigation.name : `${navigation.name}(${parts.join(';')})`;
  });
}

/**
 * `$expand` text for the entity type: one or more of its navigations, with options of their own now and then, nested
 * while `navigation` steps remain (default 1). Empty when the entity type has no navigation.
 */
export function expandOf(entityType: EntityType, options: FilterOptions = {}): fc.Arbitrary<string> {
  const steps = Math.max(options.navigation ?? 1, 1);
  const navigations = [...entityType.navigation.values()];
  if (navigations.length === 0) return fc.constant('');
  return fc
    .tuple(
      ...navigations.map((navigation) => fc.option(itemOf(navigation, options, steps), { nil: undefined, freq: 2 })),
    )
    .map((items) => {
      const chosen = items.filter((item): item is string => item !== undefined);
      return (chosen.length === 0 ? [navigations[0]!.name] : chosen).join(',');
    });
}

/** Percent-encodes an option's value for a query string (`$` and `,` may stay as they are). */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/%24/g, '$').replace(/%2C/g, ',');
}

/** Builds the query string of decoded option texts. */
export function queryText(options: Readonly<Partial<Record<QueryOptionName, string>>>): string {
  return Object.entries(options)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `${name}=${encode(value!)}`)
    .join('&');
}

/**
 * A whole query over the entity type. Any query with `$top` or `$skip` orders totally (its `$orderby` ends with the
 * key), so that every correct implementation returns the same page; without paging, rows that tie may come in any
 * order and are compared as a set within each tie.
 */
export function queryOf(entityType: EntityType, options: QueryArbitraryOptions = {}): fc.Arbitrary<GeneratedQuery> {
  const include = new Set<QueryOptionName>(options.include ?? ['$filter', '$orderby', '$select', '$top', '$skip']);
  const maybe = <T>(on: boolean, arb: fc.Arbitrary<T>, freq = 3): fc.Arbitrary<T | undefined> =>
    on ? fc.option(arb, { nil: undefined, freq }) : fc.constant(undefined);
  const plain = plainQueryOf(entityType, options, include, maybe);
  if (!include.has('$apply')) return plain;
  const applied = fc
    .record({
      apply: applyOf(entityType, options),
      // an order by all of what it gives (then paged when asked), or by the first of it alone
      order: fc.option(fc.tuple(fc.boolean(), outputOrder), { nil: undefined }),
      top: maybe(include.has('$top'), fc.nat(6), 2),
      skip: maybe(include.has('$skip'), fc.nat(4), 2),
      count: maybe(include.has('$count'), fc.constant('true'), 2),
    })
    .map(({ apply, order, top, skip, count }): GeneratedQuery => {
      const chosen: Partial<Record<QueryOptionName, string>> = { $apply: apply.text };
      const total = order !== undefined && order[0];
      if (order !== undefined && include.has('$orderby')) {
        const text = totalOrder(apply.output, order[1]);
        chosen.$orderby = total ? text : text.split(',')[0]!;
      }
      // a page of what `$apply` gives is one set of rows only in an order by all of it
      if (total && include.has('$orderby')) {
        if (top !== undefined) chosen.$top = String(top);
        if (skip !== undefined) chosen.$skip = String(skip);
      }
      if (count !== undefined) chosen.$count = count;
      return { options: chosen, text: queryText(chosen) };
    });
  return fc.oneof({ weight: 2, arbitrary: plain }, { weight: 1, arbitrary: applied });
}

/** A query without `$apply` (see queryOf). */
function plainQueryOf(
  entityType: EntityType,
  options: QueryArbitraryOptions,
  include: ReadonlySet<QueryOptionName>,
  maybe: <T>(on: boolean, arb: fc.Arbitrary<T>, freq?: number) => fc.Arbitrary<T | undefined>,
): fc.Arbitrary<GeneratedQuery> {
  return fc
    .record({
      filter: maybe(include.has('$filter'), filterOf(entityType, options), 5),
      paging: fc.record({
        top: maybe(include.has('$top'), fc.nat(6), 2),
        skip: maybe(include.has('$skip'), fc.nat(4), 2),
      }),
      orderBy: maybe(include.has('$orderby'), fc.boolean(), 2),
      orderByItems: orderByOf(entityType, { ...options, total: true }),
      select: maybe(include.has('$select'), selectOf(entityType), 2),
      count: maybe(include.has('$count'), fc.constant('true'), 2),
      // (related rows only with `navigation`: without it, no data set holds any)
      expand: maybe(
        include.has('$expand') && (options.navigation ?? 0) > 0 && entityType.navigation.size > 0,
        expandOf(entityType, options),
        2,
      ),
    })
    .map(({ filter, paging, orderBy, orderByItems, select, count, expand }): GeneratedQuery => {
      const paged = paging.top !== undefined || paging.skip !== undefined;
      // without `total`, drop the appended key unless paging needs it
      const order =
        paged || orderBy !== undefined ? (paged ? orderByItems : dropTrailingKey(orderByItems, entityType)) : undefined;
      const chosen: Partial<Record<QueryOptionName, string>> = {};
      if (filter !== undefined) chosen.$filter = filter;
      if (order !== undefined) chosen.$orderby = order;
      if (select !== undefined) chosen.$select = select;
      if (paging.top !== undefined) chosen.$top = String(paging.top);
      if (paging.skip !== undefined) chosen.$skip = String(paging.skip);
      if (count !== undefined) chosen.$count = count;
      if (expand !== undefined) chosen.$expand = expand;
      return { options: chosen, text: queryText(chosen) };
    });
}

/** `$orderby` text without the key items `orderByOf` appended for `total` (the items the caller chose stay). */
function dropTrailingKey(orderBy: string, entityType: EntityType): string {
  const items = orderBy.split(',');
  const keys = new Set(entityType.key.map((k) => k.name));
  while (items.length > 1 && keys.has(items[items.length - 1]!)) items.pop();
  return items.join(',');
}
