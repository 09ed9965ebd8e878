// Creating a record the way the service does, for the POST route, `odata-engine import` and `seed`: defaults,
// sequences, line numbers and GUIDs filled in, the header checked, computed fields set, all inside the caller's
// transaction.
import type { Row } from '../model/schema.js';
import { randomUUID } from 'node:crypto';
import { ODataError } from '../errors.js';
import { decimalToString, mulDecimal, parseDecimal, roundDecimal } from '../values/decimal.js';
import { collection, type Collection } from './store/collections.js';
import { isDuplicateKey, type SqlSession } from './store/driver.js';
import type { SiteStore } from './store/site-store.js';
import type { Credential } from './tenancy.js';

/** Child sets whose header must exist: the header set and the shared key. */
export const HEADERS: Readonly<Record<string, { readonly set: string; readonly key: string }>> = {
  PRLineItems: { set: 'PurchaseRequests', key: 'PRNumber' },
  POLineItems: { set: 'PurchaseOrders', key: 'PONumber' },
  BlanketPOLineItems: { set: 'BlanketPOs', key: 'BlanketPONumber' },
  POAttachments: { set: 'PurchaseOrders', key: 'PONumber' },
};

const CLOSED_WORK_ORDER = new Set(['COMP', 'CLOSED', 'CAN']);

/** Inserts a validated create body (checkCreateBody) into `set` and returns the stored row. */
export async function insertEntity(
  store: SiteStore,
  session: SqlSession,
  set: Collection,
  sent: Row,
  credential: Credential,
): Promise<Row> {
  const row = await withDefaults(store, session, set, sent);
  const header = HEADERS[set.name];
  if (
    header !== undefined &&
    (await store.get(collection(header.set as never), { [header.key]: row[header.key] }, session)) === undefined
  ) {
    throw new ODataError(
      'InvalidBody',
      `${header.key} ${String(row[header.key])} names no ${header.set.replace(/s$/, '')} of this site`,
      {
        target: header.key,
      },
    );
  }
  computeFields(set, row, credential);
  try {
    await store.insert(session, set, row);
  } catch (error) {
    if (isDuplicateKey(error)) {
      const key = set.entityType.key.map((p) => `${p.name}=${String(row[p.name])}`).join(',');
      throw new ODataError('Conflict', `${set.entityType.name} (${key}) exists`);
    }
    throw error;
  }
  return row;
}

/** Fills what a create omitted: defaults, sequences, line numbers, GUIDs and timestamps. */
async function withDefaults(store: SiteStore, session: SqlSession, set: Collection, sent: Row): Promise<Row> {
  const now = new Date().toISOString();
  const row: Row = { ...sent };
  for (const property of set.entityType.properties.values()) {
    if (row[property.name] !== undefined) continue;
    const fallback = property.default;
    if (property.managed !== undefined) row[property.name] = now;
    else if (fallback === undefined) row[property.name] = null;
    else if ('value' in fallback)
      row[property.name] = property.type === 'Edm.Decimal' ? String(fallback.value) : fallback.value;
    else if (fallback.generate === 'now') row[property.name] = now;
    else if (fallback.generate === 'uuid') row[property.name] = randomUUID();
    else if (fallback.generate === 'sequence') {
      // the next number not taken yet (imported or demo records may have used some)
      for (;;) {
        const n = await store.nextSequence(session, `${set.name}.${property.name}`);
        const value = `${fallback.prefix}${String(n).padStart(fallback.digits, '0')}`;
        if ((await store.get(set, { [property.name]: value }, session)) === undefined) {
          row[property.name] = value;
          break;
        }
      }
    } else {
      const parent = HEADERS[set.name];
      const scope: Row = parent === undefined ? {} : { [parent.key]: row[parent.key] };
      // concurrent creates under one header take turns, so that no two get the same number
      await store.lock(session, `${set.name}:${property.name}:${JSON.stringify(scope)}`);
      row[property.name] = (await store.maxOf(session, set, property.name, scope)) + 1;
    }
  }
  return row;
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
function fitting(set: Collection, name: string, value: string | null, from: string): string | null {
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
export function computeFields(set: Collection, row: Row, credential: Credential, changes?: Row): void {
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
export async function recordMeterReading(store: SiteStore, session: SqlSession, sent: Row): Promise<Row> {
  const readings = collection('MeterReadings');
  const history = collection('MeterReadingHistory');
  const now = new Date().toISOString();
  const meter = { MeterID: sent['MeterID'] };
  await store.lock(session, `MeterReadings:${String(sent['MeterID'])}`);
  const reading: Row = { ...sent, ReadingDate: sent['ReadingDate'] ?? now, CreatedDate: now };
  for (const p of history.entityType.properties.keys()) if (reading[p] === undefined) reading[p] = null;
  reading['ReadingID'] = (await store.maxOf(session, history, 'ReadingID', meter)) + 1;
  await store.insert(session, history, reading);
  const current = await store.get(readings, meter, session);
  const entity: Row = {};
  for (const p of readings.entityType.properties.keys()) entity[p] = reading[p] ?? null;
  entity['LastModifiedDate'] = now;
  if (current === undefined) await store.insert(session, readings, entity);
  else if (Date.parse(String(entity['ReadingDate'])) >= Date.parse(String(current['ReadingDate'] ?? 0))) {
    entity['CreatedDate'] = current['CreatedDate'];
    await store.update(session, readings, entity);
  }
  return entity;
}
