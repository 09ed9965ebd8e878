// Where each collection of the service lives: the eleven entity sets and the three contained collections, each a
// table named after it. A contained collection's table leads its key with the parent's key.
import type { EntityType } from '../../model/schema.js';
import { ActualLabor, MeterReadingHistory, plantDataModel, WorkOrderComment, type EntitySetName } from '../model.js';

export interface Collection {
  /** The entity set name, or the contained collection's table name. */
  readonly name: string;
  readonly entityType: EntityType;
  readonly table: string;
  /** For a contained collection: the parent's key properties, also columns of this table. */
  readonly parentKey?: readonly string[];
}

export type ContainedName = 'WorkOrderComments' | 'ActualLabor' | 'MeterReadingHistory';

const contained: Readonly<Record<ContainedName, Collection>> = {
  WorkOrderComments: {
    name: 'WorkOrderComments',
    entityType: WorkOrderComment,
    table: 'WorkOrderComments',
    parentKey: ['WorkOrderID'],
  },
  ActualLabor: { name: 'ActualLabor', entityType: ActualLabor, table: 'ActualLabor', parentKey: ['WorkOrderID'] },
  MeterReadingHistory: {
    name: 'MeterReadingHistory',
    entityType: MeterReadingHistory,
    table: 'MeterReadingHistory',
    parentKey: ['MeterID'],
  },
};

export const collections: ReadonlyMap<string, Collection> = new Map<string, Collection>([
  ...[...plantDataModel.entitySets].map(([name, entityType]): [string, Collection] => [
    name,
    { name, entityType, table: name },
  ]),
  ...Object.values(contained).map((c): [string, Collection] => [c.name, c]),
]);

export function collection(name: EntitySetName | ContainedName): Collection {
  return collections.get(name)!;
}

/** The table of the collection an entity type is stored in (for navigation subqueries). */
export function tableOfType(entityType: EntityType): string {
  for (const c of collections.values()) if (c.entityType === entityType) return c.table;
  throw new Error(`No collection stores ${entityType.name}`);
}

/** Navigation tables for `any`/`all`/`$count` over an entity type's collections. */
export function navigationTables(entityType: EntityType): Record<string, { table: string }> {
  return Object.fromEntries(
    [...entityType.navigation.values()].map((nav) => [nav.name, { table: tableOfType(nav.target()) }]),
  );
}
