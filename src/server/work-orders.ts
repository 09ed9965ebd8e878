// The plant's work-order operations (MODEL.md "Actions"), shared by the AddComment and RemoveActualLabor actions and
// by `odata-engine import`: comment numbering, labor removal and the hour sums a work order keeps of its labor.
import { ODataError } from '../errors.js';
import type { Row } from '../model/schema.js';
import { addDecimal, decimalToString, parseDecimal, type Decimal } from '../values/decimal.js';
import type { StoreTransaction } from '../service/store.js';
import { touchModified } from '../service/writes.js';
import { collection } from './collections.js';

/** Adds a comment (validated AddComment parameters) under the next comment number of the work order. */
export async function addComment(tx: StoreTransaction, workOrderId: unknown, sent: Row, now: string): Promise<void> {
  const comments = collection('WorkOrderComment');
  const id = { WorkOrderID: workOrderId };
  const next = (await tx.maxOf(comments, 'CommentID', id)) + 1;
  await tx.insert(comments, {
    ...id,
    CommentID: next,
    Comment: sent['Comment'],
    Username: sent['Username'],
    CreatedDate: now,
  });
}

/** ActualHours and ActualOTHours: the exact sums of Hours and OTHours over labor records. */
export function laborHourSums(records: readonly Row[]): { ActualHours: string; ActualOTHours: string } {
  const sum = (name: string): string =>
    decimalToString(
      records.reduce(
        (total: Decimal, r) => addDecimal(total, parseDecimal(String(r[name] ?? '0'))!),
        parseDecimal('0')!,
      ),
    );
  return { ActualHours: sum('Hours'), ActualOTHours: sum('OTHours') };
}

/** Recomputes a work order's hour sums from its labor records (after an import added some). */
export async function updateHourSums(tx: StoreTransaction, workOrderId: string): Promise<void> {
  const workOrders = collection('WorkOrders');
  const workOrder = await tx.get(workOrders, { WorkOrderID: workOrderId });
  if (workOrder === undefined) return;
  const labor = await tx.children(collection('ActualLabor'), { WorkOrderID: workOrderId });
  const updated = { ...workOrder, ...laborHourSums(labor) };
  // (a change of the work order: its ETag changes with it)
  touchModified(workOrders.entityType, updated, new Date().toISOString());
  await tx.update(workOrders, updated);
}

/** A stored or sent decimal (text, number or a driver's bigint) as canonical text, to compare values. */
function decimalText(value: unknown): string | undefined {
  const d = value === null || value === undefined ? undefined : parseDecimal(String(value));
  return d === undefined ? undefined : decimalToString(d);
}

/**
 * Removes the oldest labor record equal to the parameters (decimals by value, StartDate as an instant) and sets the
 * work order's hour sums in `workOrder` (the caller stores it); no match is a 404.
 */
export async function removeLabor(tx: StoreTransaction, workOrder: Row, p: Row): Promise<void> {
  const labor = collection('ActualLabor');
  const records = await tx.children(labor, { WorkOrderID: workOrder['WorkOrderID'] });
  const same = (a: unknown, b: unknown): boolean => decimalText(a) === decimalText(b);
  const match = records
    .filter(
      (r) =>
        r['PeopleID'] === p['PeopleID'] &&
        r['Craft'] === p['Craft'] &&
        same(r['Hours'], p['Hours']) &&
        same(r['OTHours'] ?? '0', p['OTHours'] ?? '0') &&
        Date.parse(String(r['StartDate'])) === Date.parse(String(p['StartDate'])),
    )
    .sort(
      (a, b) =>
        String(a['CreatedDate']).localeCompare(String(b['CreatedDate'])) ||
        String(a['LaborID']).localeCompare(String(b['LaborID'])),
    )[0];
  if (match === undefined) {
    throw new ODataError(
      'LaborRecordNotFound',
      `Work order ${String(workOrder['WorkOrderID'])} has no labor record with these values`,
    );
  }
  await tx.delete(labor, { WorkOrderID: workOrder['WorkOrderID'], LaborID: match['LaborID'] });
  Object.assign(workOrder, laborHourSums(records.filter((r) => r !== match)));
}
