// Bulk loading for operators: `odata-engine import SITE SET FILE` (a JSON array or CSV, validated like a POST, all
// or nothing) and `odata-engine seed SITE --rows N` (generated records into an empty site). Both run in one
// transaction per site and report progress.
import { ODataError, isODataError } from '../errors.js';
import type { EntityType, Row } from '../model/schema.js';
import type { Backend } from './backend.js';
import { checkActionBody, checkCreateBody } from '../service/body.js';
import { JsonNumber, JsonSyntaxError, readJson, type JsonValue } from '../service/json-reader.js';
import { demoRows, type DemoOptions, type DemoSetName } from './demo.js';
import { AddComment, entitySetNames, type EntitySetName } from './model.js';
import type { StoreCollection } from '../service/store.js';
import type { SqlTransaction } from '../service/sql/sql-store.js';
import { collection, type ContainedName } from './collections.js';
import type { Credential } from './tenancy.js';
import { insertEntity, recordMeterReading } from './writes.js';
import { addComment, updateHourSums } from './work-orders.js';

/** What `import` accepts besides the entity sets: work-order comments and labor records. */
export const importTargets = [...entitySetNames, 'Comments', 'ActualLabor'] as const;
export type ImportTarget = (typeof importTargets)[number];

export type Progress = (done: number, total: number) => void;

export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** RFC 4180 CSV: a header row, then records; quoted fields may hold commas, quotes (doubled) and line breaks. */
export function parseCsv(text: string): Row[] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      field = '';
      if (record.length > 1 || record[0] !== '') records.push(record);
      record = [];
    } else field += c;
  }
  if (quoted) throw new AdminError('The CSV ends inside a quoted field');
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  const [header, ...rows] = records;
  if (header === undefined) return [];
  return rows.map((values, n) => {
    if (values.length !== header.length) {
      throw new AdminError(`CSV record ${n + 2} has ${values.length} fields; the header has ${header.length}`);
    }
    return Object.fromEntries(header.map((name, i) => [name.trim(), values[i]]));
  });
}

/** CSV text as the JSON a body would carry: empty is null, numbers and Booleans by the property's type. */
function typedFromCsv(entityType: EntityType | undefined, row: Row): Row {
  const out: Row = {};
  for (const [name, raw] of Object.entries(row)) {
    const type = entityType?.properties.get(name)?.type;
    const text = raw as string;
    if (text === '' && type !== 'Edm.String') out[name] = null;
    else if (type === 'Edm.Int32' || type === 'Edm.Double')
      out[name] = /^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? Number(text) : text;
    else if (type === 'Edm.Boolean') out[name] = text === 'true' ? true : text === 'false' ? false : text;
    else out[name] = text;
  }
  return out;
}

/**
 * Records from a file's text: a JSON array of objects, or CSV. JSON is read like a request body (json-reader.ts):
 * numbers keep their exact digits for the checks, and a name twice in one record is refused.
 */
export function parseRecords(text: string, format: 'json' | 'csv', entityType?: EntityType): Row[] {
  if (format === 'csv') return parseCsv(text).map((row) => typedFromCsv(entityType, row));
  let value: JsonValue;
  try {
    value = readJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new AdminError(`The file is not valid JSON: ${error.message}`);
  }
  if (!Array.isArray(value)) throw new AdminError('A JSON import is an array of records');
  return value.map((record, n) => {
    if (record === null || typeof record !== 'object' || Array.isArray(record) || record instanceof JsonNumber)
      throw new AdminError(`Record ${n + 1} is not a JSON object`);
    return record;
  });
}

const importer: Credential = { site: '', kind: 'user', name: 'import' };

/**
 * Validates every record like a POST to the set (the read-only sets included: this is how their records get in;
 * server-computed fields in the file are ignored and computed again) and inserts them all in one transaction:
 * any problem names the record and nothing is written.
 */
export async function importRecords(
  backend: Backend,
  site: string,
  target: ImportTarget,
  records: readonly Row[],
  progress: Progress = () => undefined,
): Promise<number> {
  const siteInfo = await backend.directory.site(site);
  if (siteInfo === undefined) throw new AdminError(`No site ${site}`);
  const store = await backend.store(site);
  const options = { timeZone: siteInfo.timeZone, offsetlessInstants: ['ReadingDate', 'StartDate'] };
  const credential = { ...importer, site };
  await store.transaction(async (tx) => {
    const touchedWorkOrders = new Set<string>();
    for (let n = 0; n < records.length; n++) {
      try {
        await importOne(tx, target, records[n]!, options, credential, touchedWorkOrders);
      } catch (error) {
        if (isODataError(error)) {
          throw new AdminError(
            `Record ${n + 1}${error.target === undefined ? '' : ` (${error.target})`}: ${error.message}`,
          );
        }
        throw error;
      }
      if ((n + 1) % 500 === 0 || n + 1 === records.length) progress(n + 1, records.length);
    }
    for (const id of touchedWorkOrders) await updateHourSums(tx, id);
  });
  return records.length;
}

function withoutComputed(entityType: EntityType, record: Row, keep: readonly string[] = []): Row {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return record;
  // defined, never assigned: a `__proto__` member of a record must stay a field (an unknown one, refused by the body
  // checks), not become the copy's prototype
  const out: Row = Object.create(null) as Row;
  for (const [name, value] of Object.entries(record)) {
    const property = entityType.properties.get(name);
    if (property?.computed === true && !keep.includes(name)) continue;
    Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

async function importOne(
  tx: SqlTransaction,
  target: ImportTarget,
  record: Row,
  options: { timeZone: string; offsetlessInstants: string[] },
  credential: Credential,
  touchedWorkOrders: Set<string>,
): Promise<void> {
  if (target === 'Comments' || target === 'ActualLabor') {
    const name: ContainedName = target === 'Comments' ? 'WorkOrderComment' : 'ActualLabor';
    const c = collection(name);
    const workOrderId = record['WorkOrderID'];
    if (
      typeof workOrderId !== 'string' ||
      (await tx.get(collection('WorkOrders'), { WorkOrderID: workOrderId })) === undefined
    ) {
      throw new ODataError('InvalidBody', `WorkOrderID ${String(workOrderId)} names no work order of this site`, {
        target: 'WorkOrderID',
      });
    }
    const { WorkOrderID: _parent, ...fields } = record;
    if (target === 'Comments') {
      const sent = checkActionBody(AddComment, withoutComputed(c.entityType, fields), options);
      await addComment(tx, workOrderId, sent, new Date().toISOString());
    } else {
      const sent = checkCreateBody(c.entityType, withoutComputed(c.entityType, fields), options);
      await insertEntity(tx, c, { ...sent, WorkOrderID: workOrderId }, credential);
      touchedWorkOrders.add(workOrderId);
    }
    return;
  }
  const set = collection(target as EntitySetName);
  if (target === 'MeterReadings') {
    await recordMeterReading(tx, checkCreateBody(set.entityType, withoutComputed(set.entityType, record), options));
    return;
  }
  // keys a client may not send (generated GUIDs) are still taken from a file: they identify the imported record
  const keys = set.entityType.key.map((p) => p.name);
  const cleaned = withoutComputed(set.entityType, record, keys);
  const keyValues: Row = {};
  for (const k of keys) {
    if (set.entityType.properties.get(k)?.computed === true && cleaned[k] !== undefined) {
      keyValues[k] = String(cleaned[k]).toLowerCase();
      delete cleaned[k];
    }
  }
  const sent = checkCreateBody(set.entityType, cleaned, options);
  await insertEntity(tx, set, { ...sent, ...keyValues }, credential);
  if (target === 'WorkOrders') {
    await updateHourSums(tx, String(sent['WorkOrderID']));
  }
}

/** The order in which generated sets are loaded, headers before their lines and work orders before their labor. */
const seedOrder: readonly [DemoSetName, EntitySetName | ContainedName][] = [
  ...entitySetNames.map((name): [DemoSetName, EntitySetName] => [name, name]),
  ['Comments', 'WorkOrderComment'],
  ['ActualLabor', 'ActualLabor'],
  ['MeterHistory', 'MeterReadingHistory'],
];

/** Generated records (demo.ts) into an empty site, in one transaction. Returns the number of rows written. */
export async function seedSite(
  backend: Backend,
  site: string,
  options: DemoOptions,
  progress: (set: string, done: number) => void = () => undefined,
): Promise<number> {
  if ((await backend.directory.site(site)) === undefined) throw new AdminError(`No site ${site}`);
  const store = await backend.store(site);
  if (await store.hasRows(collection('Accounts')))
    throw new AdminError(`Site ${site} has records already; seed fills an empty site`);
  let total = 0;
  await store.transaction(async (tx) => {
    // one batch in flight while the next is generated (a network database works while this process does);
    // the session runs statements in order, and a failed batch is awaited before the next one is sent
    let inFlight: Promise<void> | undefined;
    const send = async (c: StoreCollection, rows: readonly Row[]): Promise<void> => {
      if (inFlight !== undefined) await inFlight;
      inFlight = tx.insertMany(c, rows);
      inFlight.catch(() => undefined); // awaited before the next batch or at the end; not an unhandled rejection
    };
    try {
      for (const [source, target] of seedOrder) {
        const c = collection(target);
        const size = store.batchRows(c);
        let batch: Row[] = [];
        let n = 0;
        for (const row of demoRows(source, options)) {
          batch.push(row);
          if (batch.length === size) {
            await send(c, batch);
            batch = [];
          }
          n++;
          if (n % 1000 === 0) progress(source, n);
        }
        if (batch.length > 0) await send(c, batch);
        progress(source, n);
        total += n;
      }
    } finally {
      // settled before the transaction commits or rolls back, even when generation threw
      await inFlight;
    }
  });
  // statistics for the planner now, where the database would otherwise plan reads of the seeded tables as if they
  // were empty (PostgreSQL until autovacuum's next round: a page of a million rows becomes a scan and a sort)
  for (const [, target] of seedOrder) await store.analyze(collection(target));
  return total;
}
