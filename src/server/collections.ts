// The plant's collections in the store: the eleven entity sets and the three contained collections. The tables of the
// contained ones keep the names they had before collections were named after their entity types.
import { collectionsOf, type StoreCollection } from '../service/store.js';
import { plantDataModel, type EntitySetName } from './model.js';

export type ContainedName = 'WorkOrderComment' | 'ActualLabor' | 'MeterReadingHistory';

/** Table names that differ from their collection's name. */
export const plantTables: Readonly<Record<string, string>> = { WorkOrderComment: 'WorkOrderComments' };

export function collection(name: EntitySetName | ContainedName): StoreCollection {
  return collectionsOf(plantDataModel).get(name)!;
}
