// The plant's write rules (MODEL.md): the computed fields of a row about to be written, and meter readings, which
// keep a history. Used by the service's write hooks, `odata-engine import` and `seed`.
import { ODataError } from '../errors.js';
import type { Row } from '../model/schema.js';
import type { StoreCollection, StoreTransaction } from '../service/store.js';
import { insertRow, touchModified } from '../service/writes.js';
import { decimalToString, mulDecimal, parseDecimal, roundDecimal } from '../values/decimal.js';
import { collection } from './collections.js';
import { plantDataModel } from './model.js';
import type { Credential } from './tenancy.js';

const CLOSED_WORK_ORDER = new Set(['COMP', 'CLOSED', 'CAN']);

/** Inserts a checked create body (checkCreateBody) into `c` with the plant's computed fields; returns the row. */
export function insertEntity(
  tx: StoreTransaction,
  c: StoreCollection,
  sent: Row,
  credential: Credential,
): Promise<Row> {
  return insertRow(tx, plantDataModel, c, sent, (row) => computeFields(c, row, credential));
}

/** Money products keep four places, rounded half away from zero (the column's scale). */
function moneyProduct(a: unknown, b: unknown): string | null {
  const x = a === null || a === undefined ? undefined : parseDecimal(String(a));
  const y = b === null || b === undefined ? undefined : parseDecimal(String(b));
  if (x === undefined || y === undefined) return null;
  const scaled = roundDecimal(mulDecimal(mulDecimal(x, y), parseDecimal('10000')!));
  return decimalToString(mulDecimal(scaled, parseDecimal('0.0001')!));
}

/** A computed decimal must fit its column: a product too large for Decimal(18,4) is the client's 400, not a crash. */
function fitting(set: StoreCollection, name: string, value: string | null, from: string): string | null {
  const property = set.entityType.properties.get(name)!;
  const whole = value === null ? '' : value.replace('-', '').split('.')[0]!.replace(/^0+/, '');
  const allowed = (property.precision ?? 38) - (property.scale ?? 0);
  if (whole.length > allowed) {
    throw new ODataError(
      'InvalidBody',
      `${from} is ${value}, more than ${name} can hold (${allowed} digits before the point)`,
      {
        target: name,
      },
    );
  }
  return value;
}

/** Server-computed fields of a row about to be written (MODEL.md: R/O fields). */
export function computeFields(set: StoreCollection, row: Row, credential: Credential, changes?: Row): void {
  switch (set.name) {
    case 'PRLineItems':
      row['ExtendedCost'] = fitting(
        set,
        'ExtendedCost',
        moneyProduct(row['Quantity'], row['EstimatedUnitCost']),
        'Quantity × EstimatedUnitCost',
      );
      break;
    case 'POLineItems':
      row['ExtendedPrice'] = fitting(
        set,
        'ExtendedPrice',
        moneyProduct(row['QuantityOrdered'], row['UnitPrice']),
        'QuantityOrdered × UnitPrice',
      );
      break;
    case 'POAttachments':
      if (changes === undefined || changes['ContentBase64'] !== undefined) {
        const content = row['ContentBase64'];
        row['SizeBytes'] = content instanceof Uint8Array ? content.length : 0;
        row['UploadedBy'] = credential.kind === 'user' ? credential.name : `key:${credential.name}`;
      }
      break;
    case 'WorkOrders':
      row['IsOpen'] = !CLOSED_WORK_ORDER.has(String(row['Status']));
      // sums over the labor records (kept by RemoveActualLabor and import); none yet on a new work order
      row['ActualHours'] ??= '0';
      row['ActualOTHours'] ??= '0';
      break;
  }
}

/**
 * Records a meter reading (a validated MeterReadings create body): kept in the meter's history with the next
 * ReadingID, and made the meter's current reading when its ReadingDate is the latest. Returns the reading as a
 * MeterReadings entity.
 */
export async function recordMeterReading(tx: StoreTransaction, sent: Row): Promise<Row> {
  const readings = collection('MeterReadings');
  const history = collection('MeterReadingHistory');
  const now = new Date().toISOString();
  const meter = { MeterID: sent['MeterID'] };
  await tx.lock(`MeterReadings:${String(sent['MeterID'])}`);
  const reading: Row = { ...sent, ReadingDate: sent['ReadingDate'] ?? now, CreatedDate: now };
  for (const p of history.entityType.properties.keys()) if (reading[p] === undefined) reading[p] = null;
  reading['ReadingID'] = (await tx.maxOf(history, 'ReadingID', meter)) + 1;
  await tx.insert(history, reading);
  const current = await tx.get(readings, meter);
  const entity: Row = {};
  for (const p of readings.entityType.properties.keys()) entity[p] = reading[p] ?? null;
  entity['LastModifiedDate'] = now;
  if (current === undefined) await tx.insert(readings, entity);
  else if (Date.parse(String(entity['ReadingDate'])) >= Date.parse(String(current['ReadingDate'] ?? 0))) {
    entity['CreatedDate'] = current['CreatedDate'];
    // later than the stored time even within one millisecond: the ETag changes with every reading
    entity['LastModifiedDate'] = current['LastModifiedDate'];
    touchModified(readings.entityType, entity, now);
    await tx.update(readings, entity);
  }
  return entity;
}
