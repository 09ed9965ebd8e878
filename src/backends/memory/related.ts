// The rows a navigation leads to, for rows kept in arrays by entity type (a memory store's collections, the testing
// kit's data sets): each navigation's target rows indexed once by the properties it links on, and the text that
// makes equal link values meet whatever form they are held in.
import type { EntityType, NavigationProperty, Property, Row } from '../../model/schema.js';
import { isNumeric, type EdmPrimitiveType } from '../../values/edm.js';
import { decimalOf, reader } from '../../values/read.js';
import type { RelatedRows } from './closures.js';

/**
 * The text that ties a related row to its entity: equal for equal values of a link property whatever form a store or
 * a caller's rows hold them in (an Int64 as a bigint, a number or its digits; a Decimal as `2` or `'2.00'`; a Guid in
 * either case; an instant with any offset), and for an Int32 foreign key beside an Int64 key. Stores group the rows
 * of `readRelated` with it, and the service ties them to their entities with it.
 */
export function linkValueText(property: Pick<Property, 'type'>, value: unknown): string {
  const read = reader(property.type)(value);
  if (read === null) return 'null';
  if (isNumeric(property.type)) {
    const decimal = decimalOf(read);
    return decimal === null ? `n${String(read)}` : `n${decimal.coefficient}e${decimal.exponent}`;
  }
  if (read instanceof Uint8Array) return `b${Buffer.from(read).toString('hex')}`;
  return `${typeof read}:${String(read)}`;
}

/** The text of a tuple of link values (see linkValueText). */
export function linkTupleText(properties: readonly Pick<Property, 'type'>[], values: readonly unknown[]): string {
  let text = '';
  for (let i = 0; i < properties.length; i++) text += `${linkValueText(properties[i]!, values[i])}\u0000`;
  return text;
}

/**
 * The related rows of navigations over rows kept by entity type (`rowsOf(type)`): a collection's rows, or a single
 * row or null, found through an index of each navigation's target rows by its foreign key, built when a read first
 * needs it. `forget` drops the indexes: the next read must see the arrays as they are then.
 */
export function relatedRowsOf(rowsOf: (entityType: EntityType) => readonly Row[]): RelatedRows & { forget(): void } {
  const indexes = new Map<NavigationProperty, Map<string, Row[]>>();
  const indexOf = (navigation: NavigationProperty): Map<string, Row[]> => {
    let index = indexes.get(navigation);
    if (index !== undefined) return index;
    const targetType = navigation.target();
    const targets = Object.values(navigation.foreignKey).map((name) => targetType.properties.get(name)!);
    index = new Map();
    for (const row of rowsOf(targetType)) {
      const text = linkTupleText(
        targets,
        targets.map((p) => row[p.name]),
      );
      const list = index.get(text);
      if (list === undefined) index.set(text, [row]);
      else list.push(row);
    }
    indexes.set(navigation, index);
    return index;
  };
  const sourcesOf = new Map<
    NavigationProperty,
    readonly { readonly name: string; readonly type: EdmPrimitiveType }[]
  >();
  const related = (row: Row, navigation: NavigationProperty): unknown => {
    let sources = sourcesOf.get(navigation);
    if (sources === undefined) {
      // (the source side's properties, read from the type the navigation belongs to by the target's types: the
      // link texts are the same for the same number whatever integer or decimal type holds it)
      const targetType = navigation.target();
      sources = Object.entries(navigation.foreignKey).map(([name, target]) => ({
        name,
        type: targetType.properties.get(target)!.type,
      }));
      sourcesOf.set(navigation, sources);
    }
    const values = sources.map((source) => row[source.name]);
    // a null never equals anything: no related row
    const found = values.some((v) => v === null || v === undefined)
      ? undefined
      : indexOf(navigation).get(linkTupleText(sources, values));
    return navigation.collection ? (found ?? []) : (found?.[0] ?? null);
  };
  return Object.assign(related, { forget: () => indexes.clear() });
}
