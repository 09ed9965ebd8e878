// What a create and an update do to a row beside the client's fields, for every model: defaults filled in (fixed
// values, the time, GUIDs, sequences, the next line number under the same parent), the principal of every
// referential constraint checked, the managed timestamps kept.
import { randomUUID } from 'node:crypto';
import { ODataError } from '../errors.js';
import type { EntityType, Model, Property, Row } from '../model/schema.js';
import { collectionOfType, collectionsOf, type StoreCollection, type StoreTransaction } from './store.js';

/**
 * Inserts a checked create body (checkCreateBody) into `c` and returns the stored row: defaults filled in, the
 * principals checked, then `prepare` (the application's computed fields) before the store writes it.
 */
export async function insertRow(
  tx: StoreTransaction,
  model: Model,
  c: StoreCollection,
  sent: Row,
  prepare?: (row: Row) => void | Promise<void>,
): Promise<Row> {
  const row = await withDefaults(tx, c, sent);
  await checkPrincipals(tx, model, c.entityType, row);
  await prepare?.(row);
  await tx.insert(c, row);
  return row;
}

/**
 * What an update does to the properties the service keeps (`row` holds their stored values): a modification time
 * becomes `now`, or a millisecond past the stored one when the clock has not passed it (so that it changes with every
 * write, as an ETag made of it must); a version counts one up.
 */
export function touchModified(entityType: EntityType, row: Row, now: string): void {
  for (const property of entityType.properties.values()) {
    const name = property.name;
    if (property.managed === 'modified') {
      row[name] = modifiedTime(row[name], now);
    } else if (property.managed === 'version') {
      const stored = row[name];
      row[name] = typeof stored === 'bigint' ? stored + 1n : String(BigInt(String(stored ?? 0)) + 1n);
      if (property.type === 'Edm.Int32') row[name] = Number(row[name]);
    }
  }
}

/**
 * The time a write stamps on a row last modified at `stored`: `now`, or a millisecond past `stored` when the clock has
 * not passed it (an ETag made of it changes with every write). A handler that writes related rows with the same time
 * takes it from here first.
 */
export function modifiedTime(stored: unknown, now: string): string {
  const previous = stored instanceof Date ? stored.getTime() : typeof stored === 'string' ? Date.parse(stored) : NaN;
  return Number.isFinite(previous) && previous >= Date.parse(now) ? new Date(previous + 1).toISOString() : now;
}

/** A property's fixed default as a row value (a decimal's as text); undefined when it has none. */
export function fixedDefault(property: Property): unknown {
  const fallback = property.default;
  if (fallback === undefined || !('value' in fallback)) return undefined;
  return property.type === 'Edm.Decimal' ? String(fallback.value) : fallback.value;
}

/** Fills what a create omitted: defaults, sequences, line numbers, GUIDs and timestamps. */
async function withDefaults(tx: StoreTransaction, c: StoreCollection, sent: Row): Promise<Row> {
  const now = new Date().toISOString();
  const row: Row = { ...sent };
  for (const property of c.entityType.properties.values()) {
    if (row[property.name] !== undefined) continue;
    const fallback = property.default;
    if (property.managed === 'version') row[property.name] = property.type === 'Edm.Int32' ? 1 : '1';
    else if (property.managed !== undefined) row[property.name] = now;
    else if (fallback === undefined) row[property.name] = null;
    else if ('value' in fallback) row[property.name] = fixedDefault(property);
    else if (fallback.generate === 'now') row[property.name] = now;
    else if (fallback.generate === 'uuid') row[property.name] = randomUUID();
    else if (fallback.generate === 'sequence') {
      // the next number not taken yet (imported or loaded records may have used some)
      for (;;) {
        const n = await tx.nextSequence(`${c.name}.${property.name}`);
        const value = `${fallback.prefix}${String(n).padStart(fallback.digits, '0')}`;
        if ((await tx.get(c, { [property.name]: value })) === undefined) {
          row[property.name] = value;
          break;
        }
      }
    } else {
      // the next line number among the rows that share the rest of the key (the lines of one order)
      const scope: Row = {};
      for (const key of c.entityType.key) if (key !== property) scope[key.name] = row[key.name];
      for (const name of c.parentKey ?? []) scope[name] = row[name];
      // concurrent creates under one parent take turns, so that no two get the same number
      await tx.lock(`${c.name}:${property.name}:${JSON.stringify(scope)}`);
      row[property.name] = (await tx.maxOf(c, property.name, scope)) + 1;
    }
  }
  return row;
}

/**
 * The principal of every referential constraint that leads to this entity type must exist: a line names an order
 * that exists (a 400 naming the property, never a dangling row).
 */
async function checkPrincipals(tx: StoreTransaction, model: Model, entityType: EntityType, row: Row): Promise<void> {
  for (const principal of principalsOf(model, entityType)) {
    const key: Row = {};
    for (const [parent, child] of principal.foreignKey) key[parent] = row[child];
    if (Object.values(key).some((value) => value === null || value === undefined)) continue;
    if ((await tx.get(principal.collection, key)) === undefined) {
      const [, child] = principal.foreignKey[0]!;
      throw new ODataError(
        'InvalidBody',
        `${child} ${String(row[child])} names no ${principal.collection.entityType.name}`,
        { target: child },
      );
    }
  }
}

interface Principal {
  readonly collection: StoreCollection;
  /** Principal key property and the dependent property that holds its value. */
  readonly foreignKey: readonly (readonly [string, string])[];
}

/** The principals of `dependent`: by its single-valued navigations, and by the collections that lead to it, where the constraint covers the principal's whole key. */
function principalsOf(model: Model, dependent: EntityType): readonly Principal[] {
  let byType = principalCache.get(model);
  if (byType === undefined) principalCache.set(model, (byType = new Map()));
  let principals = byType.get(dependent);
  if (principals === undefined) {
    const found: Principal[] = [];
    const seen = new Set<string>();
    const add = (type: EntityType, pairs: [string, string][]): void => {
      const coversKey = pairs.length === type.key.length && type.key.every((k) => pairs.some(([p]) => p === k.name));
      if (!coversKey || ![...collectionsOf(model).values()].some((c) => c.entityType === type)) return;
      const id = `${type.name}\n${JSON.stringify([...pairs].sort())}`;
      if (seen.has(id)) return;
      seen.add(id);
      found.push({ collection: collectionOfType(model, type), foreignKey: pairs });
    };
    // single-valued navigations of the dependent (a book's author)
    for (const navigation of dependent.navigation.values()) {
      if (!navigation.collection)
        add(
          navigation.target(),
          Object.entries(navigation.foreignKey).map(([own, referenced]): [string, string] => [referenced, own]),
        );
    }
    // collections that lead to it (an author's books)
    for (const type of model.entityTypes.values()) {
      for (const navigation of type.navigation.values()) {
        if (!navigation.collection || navigation.target() !== dependent) continue;
        add(type, Object.entries(navigation.foreignKey));
      }
    }
    byType.set(dependent, (principals = found));
  }
  return principals;
}

const principalCache = new WeakMap<Model, Map<EntityType, readonly Principal[]>>();
