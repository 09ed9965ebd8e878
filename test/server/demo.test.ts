// The demo data of the reference server: deterministic, valid against every facet of the model, referentially
// consistent, with the server-computed fields filled as the server would, and streamable set by set.
import { describe, expect, it } from 'vitest';
import {
  addDecimal,
  compareDecimal,
  decimalToString,
  mulDecimal,
  parseDecimal,
  roundDecimal,
  type Decimal,
} from '../../src/values/decimal.js';
import type { EntityType, Property, Row } from '../../src/model/schema.js';
import { demoData, demoRows, type DemoData, type DemoSetName } from '../../src/server/demo.js';
import {
  ActualLabor,
  MeterReadingHistory,
  WorkOrderComment,
  entitySetNames,
  plantDataModel,
  type EntitySetName,
} from '../../src/server/model.js';

const NOW = '2026-01-15T12:00:00.000Z';

function typeOf(setName: EntitySetName): EntityType {
  const type = plantDataModel.entitySets.get(setName);
  if (type === undefined) throw new Error(`no entity set ${setName}`);
  return type;
}

function decimal(value: unknown): Decimal {
  const parsed = typeof value === 'string' ? parseDecimal(value) : undefined;
  if (parsed === undefined) throw new Error(`not decimal text: ${String(value)}`);
  return parsed;
}

const sameDecimal = (a: unknown, b: Decimal): boolean => compareDecimal(decimal(a), b) === 0;

/** Everything wrong with one value against its property's facets (an empty list when it is valid). */
function valueProblems(property: Property, value: unknown): string[] {
  const problems: string[] = [];
  if (value === null) {
    if (!property.nullable) problems.push('null in a non-nullable property');
    return problems;
  }
  switch (property.type) {
    case 'Edm.String':
      if (typeof value !== 'string') return [`not a string: ${typeof value}`];
      if (property.maxLength !== undefined && [...value].length > property.maxLength)
        problems.push(`longer than ${property.maxLength}: ${value}`);
      if (property.allowedValues !== undefined && !property.allowedValues.includes(value))
        problems.push(`not an allowed value: ${value}`);
      if (value.trim() === '') problems.push('blank string');
      return problems;
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? [] : [`not a boolean: ${String(value)}`];
    case 'Edm.Int32':
    case 'Edm.Int64': {
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return [`not an integer: ${String(value)}`];
      if (property.type === 'Edm.Int32' && (value < -(2 ** 31) || value >= 2 ** 31))
        problems.push(`outside Int32: ${value}`);
      problems.push(...boundProblems(property, decimal(String(value))));
      return problems;
    }
    case 'Edm.Decimal': {
      if (typeof value !== 'string') return [`decimal not as text: ${String(value)}`];
      const parsed = parseDecimal(value);
      if (parsed === undefined) return [`not decimal text: ${value}`];
      if (decimalToString(parsed) !== value) problems.push(`not canonical: ${value}`);
      const [integer = '', fraction = ''] = value.replace('-', '').split('.');
      const integerDigits = integer.replace(/^0+/, '').length;
      if (property.scale !== undefined && fraction.length > property.scale)
        problems.push(`more than ${property.scale} decimals: ${value}`);
      if (property.precision !== undefined && integerDigits + fraction.length > property.precision)
        problems.push(`more than ${property.precision} digits: ${value}`);
      if (
        property.precision !== undefined &&
        property.scale !== undefined &&
        integerDigits > property.precision - property.scale
      )
        problems.push(`too many integer digits for (${property.precision},${property.scale}): ${value}`);
      problems.push(...boundProblems(property, parsed));
      return problems;
    }
    case 'Edm.Date':
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return [`not a date: ${String(value)}`];
      if (new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value) problems.push(`no such day: ${value}`);
      return problems;
    case 'Edm.DateTimeOffset':
      if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value))
        return [`not an ISO instant: ${String(value)}`];
      if (new Date(value).toISOString() !== value) problems.push(`not a valid instant: ${value}`);
      return problems;
    case 'Edm.Guid':
      return typeof value === 'string' &&
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(value)
        ? []
        : [`not a lower-case version-4 GUID: ${String(value)}`];
    default:
      return [`unexpected type ${property.type}`];
  }
}

function boundProblems(property: Property, value: Decimal): string[] {
  const problems: string[] = [];
  if (property.minimum !== undefined) {
    const order = compareDecimal(value, decimal(String(property.minimum)));
    if (order < 0 || (order === 0 && property.exclusiveMinimum === true))
      problems.push(`below the minimum ${property.minimum}: ${decimalToString(value)}`);
  }
  if (property.maximum !== undefined && compareDecimal(value, decimal(String(property.maximum))) > 0)
    problems.push(`above the maximum ${property.maximum}: ${decimalToString(value)}`);
  return problems;
}

/** Every problem of every row against the entity type: exactly its readable properties, each value valid. */
function facetProblems(label: string, type: EntityType, rows: readonly Row[]): string[] {
  const expectedKeys = [...type.properties.values()].filter((p) => p.writeOnly !== true).map((p) => p.name);
  const problems: string[] = [];
  rows.forEach((row, i) => {
    const keys = Object.keys(row);
    if (keys.join() !== expectedKeys.join()) problems.push(`${label}[${i}]: properties ${keys.join()}`);
    for (const property of type.properties.values()) {
      if (property.writeOnly === true) continue;
      if (!(property.name in row)) continue;
      for (const problem of valueProblems(property, row[property.name]))
        problems.push(`${label}[${i}].${property.name}: ${problem}`);
    }
  });
  return problems;
}

function allFacetProblems(data: DemoData): string[] {
  return [
    ...entitySetNames.flatMap((name) => facetProblems(name, typeOf(name), data.sets[name])),
    ...facetProblems('Comments', WorkOrderComment, data.comments),
    ...facetProblems('ActualLabor', ActualLabor, data.labor),
    ...facetProblems('MeterHistory', MeterReadingHistory, data.meterHistory),
  ];
}

/** Compares key tuples: strings by code units (ASCII here, so code points), numbers numerically. */
function compareKeys(a: readonly unknown[], b: readonly unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (typeof x === 'number' && typeof y === 'number') {
      if (x !== y) return x < y ? -1 : 1;
    } else {
      const sx = String(x);
      const sy = String(y);
      if (sx !== sy) return sx < sy ? -1 : 1;
    }
  }
  return 0;
}

/** Rows whose key (tuple) does not strictly increase: out of order or duplicated. */
function orderProblems(label: string, rows: readonly Row[], key: readonly string[]): string[] {
  const problems: string[] = [];
  for (let i = 1; i < rows.length; i++) {
    const previous = key.map((k) => rows[i - 1]![k]);
    const current = key.map((k) => rows[i]![k]);
    if (compareKeys(previous, current) >= 0)
      problems.push(`${label}[${i}]: ${JSON.stringify(current)} after ${JSON.stringify(previous)}`);
  }
  return problems;
}

function groupBy(rows: readonly Row[], key: string): Map<unknown, Row[]> {
  const groups = new Map<unknown, Row[]>();
  for (const row of rows) {
    const group = groups.get(row[key]);
    if (group === undefined) groups.set(row[key], [row]);
    else group.push(row);
  }
  return groups;
}

function keySet(rows: readonly Row[], key: string): Set<unknown> {
  return new Set(rows.map((row) => row[key]));
}

function sum(rows: readonly Row[], key: string): Decimal {
  return rows.reduce((total, row) => (row[key] === null ? total : addDecimal(total, decimal(row[key]))), decimal('0'));
}

const time = (value: unknown): number => Date.parse(String(value));

const defaultData = demoData();
const seededData = demoData({ seed: 7, rows: 400 });
const tinyData = demoData({ rows: 1 });

describe('demoData: determinism', () => {
  it('gives exactly the same rows for the same options', () => {
    expect(demoData()).toEqual(defaultData);
    expect(demoData({ seed: 7, rows: 400, now: NOW })).toEqual(seededData);
  });

  it('gives different rows for a different seed, and shifts timestamps with now', () => {
    const other = demoData({ seed: 8 });
    expect(other.sets.WorkOrders).not.toEqual(defaultData.sets.WorkOrders);
    expect(other.sets.Parts).not.toEqual(defaultData.sets.Parts);
    expect(other.labor).not.toEqual(defaultData.labor);
    const later = demoData({ now: '2027-01-15T12:00:00.000Z' });
    expect(later.sets.WorkOrders[0]!.RequestedDate).not.toEqual(defaultData.sets.WorkOrders[0]!.RequestedDate);
    expect(later.sets.WorkOrders.map((r) => r.Description)).toEqual(
      defaultData.sets.WorkOrders.map((r) => r.Description),
    );
  });

  it('does not depend on the clock', () => {
    expect(demoData({ now: NOW })).toEqual(defaultData);
  });

  it('has all eleven sets, none empty, and contained records', () => {
    expect(Object.keys(defaultData.sets).sort()).toEqual([...entitySetNames].sort());
    for (const name of entitySetNames) expect(defaultData.sets[name].length, name).toBeGreaterThan(0);
    expect(defaultData.comments.length).toBeGreaterThan(0);
    expect(defaultData.labor.length).toBeGreaterThan(0);
    expect(defaultData.meterHistory.length).toBeGreaterThan(0);
    expect(defaultData.sets.WorkOrders).toHaveLength(50);
    expect(defaultData.sets.Parts).toHaveLength(50);
  });
});

describe('demoData: facets', () => {
  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
    ['1 row', tinyData],
  ] as const)('every value of every row obeys its property (%s)', (_, data) => {
    expect(allFacetProblems(data)).toEqual([]);
  });

  it('holds for many seeds', () => {
    for (let seed = 100; seed < 130; seed++) {
      expect(allFacetProblems(demoData({ seed, rows: 60 })), `seed ${seed}`).toEqual([]);
    }
  });

  it('the checker itself catches bad values', () => {
    const parts = typeOf('Parts');
    const good = defaultData.sets.Parts[0]!;
    expect(facetProblems('Parts', parts, [good])).toEqual([]);
    expect(facetProblems('Parts', parts, [{ ...good, UnitOfMeasure: 'DOZEN' }])).toHaveLength(1);
    expect(facetProblems('Parts', parts, [{ ...good, UnitCost: '1.50' }])).toHaveLength(1);
    expect(facetProblems('Parts', parts, [{ ...good, UnitCost: '1.00001' }])).toHaveLength(1);
    expect(facetProblems('Parts', parts, [{ ...good, QuantityOnHand: null }])).toHaveLength(1);
    expect(facetProblems('Parts', parts, [{ ...good, CreatedDate: '2024-01-01T00:00:00Z' }])).toHaveLength(1);
    expect(facetProblems('Parts', parts, [{ ...good, PartID: 'P'.repeat(41) }])).toHaveLength(1);
    const { Bin: _bin, ...withoutBin } = good;
    expect(facetProblems('Parts', parts, [withoutBin])).toHaveLength(1);
    const lines = typeOf('PRLineItems');
    expect(facetProblems('PRLineItems', lines, [{ ...defaultData.sets.PRLineItems[0]!, Quantity: '0' }])).toHaveLength(
      1,
    );
    const orders = typeOf('WorkOrders');
    expect(facetProblems('WorkOrders', orders, [{ ...defaultData.sets.WorkOrders[0]!, Priority: 6 }])).toHaveLength(1);
  });

  it('omits the write-only attachment content', () => {
    for (const row of seededData.sets.POAttachments) expect(row).not.toHaveProperty('ContentBase64');
  });
});

describe('demoData: keys', () => {
  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
  ] as const)('every set is in key order with unique keys (%s)', (_, data) => {
    const problems = entitySetNames.flatMap((name) =>
      orderProblems(
        name,
        data.sets[name],
        typeOf(name).key.map((p) => p.name),
      ),
    );
    problems.push(...orderProblems('Comments', data.comments, ['WorkOrderID', 'CommentID']));
    problems.push(...orderProblems('ActualLabor', data.labor, ['WorkOrderID', 'LaborID']));
    problems.push(...orderProblems('ActualLabor by LaborID', data.labor, ['LaborID']));
    problems.push(...orderProblems('MeterHistory', data.meterHistory, ['MeterID', 'ReadingID']));
    expect(problems).toEqual([]);
  });

  it('uses the server sequence formats', () => {
    const { sets } = seededData;
    for (const row of sets.PurchaseOrders) expect(row.PONumber).toMatch(/^PO-\d{6}$/);
    for (const row of sets.PurchaseRequests) expect(row.PRNumber).toMatch(/^PR-\d{6}$/);
    for (const row of sets.WorkOrders) expect(row.WorkOrderID).toMatch(/^WO-\d{6}$/);
    for (const row of sets.Parts) expect(row.PartID).toMatch(/^P-\d{5}$/);
    for (const row of sets.Accounts) expect(row.Account).toMatch(/^\d{4}-\d{3}$/);
    expect(sets.PurchaseOrders[0]!.PONumber).toBe('PO-000001');
    expect(sets.PurchaseOrders.at(-1)!.PONumber).toBe(`PO-${String(sets.PurchaseOrders.length).padStart(6, '0')}`);
    for (const row of [...sets.Parts, ...sets.PurchaseRequests])
      for (const vendor of [row.PreferredVendorID, row.SuggestedVendorID])
        if (vendor !== null && vendor !== undefined) expect(vendor).toMatch(/^V-\d{4}$/);
  });

  it('keeps keys at one width when the counts need more digits', () => {
    const ids = [...demoRows('Parts', { rows: 95_000 })].map((row) => String(row.PartID));
    expect(ids[0]).toBe('P-100001');
    expect(new Set(ids.map((id) => id.length)).size).toBe(1);
  });
});

describe('demoData: references', () => {
  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
    ['1 row', tinyData],
  ] as const)('every reference names an existing record (%s)', (_, data) => {
    const { sets } = data;
    const accounts = keySet(sets.Accounts, 'Account');
    const parts = keySet(sets.Parts, 'PartID');
    const workOrders = keySet(sets.WorkOrders, 'WorkOrderID');
    const requests = keySet(sets.PurchaseRequests, 'PRNumber');
    const orders = keySet(sets.PurchaseOrders, 'PONumber');
    const blankets = keySet(sets.BlanketPOs, 'BlanketPONumber');
    const meters = keySet(sets.MeterReadings, 'MeterID');
    const problems: string[] = [];
    const check = (label: string, rows: readonly Row[], field: string, known: Set<unknown>, nullable = true) => {
      rows.forEach((row, i) => {
        const value = row[field];
        if (value === null ? !nullable : !known.has(value)) problems.push(`${label}[${i}].${field} = ${String(value)}`);
      });
    };
    for (const name of [
      'PurchaseRequests',
      'PRLineItems',
      'PurchaseOrders',
      'POLineItems',
      'BlanketPOs',
      'BlanketPOLineItems',
      'WorkOrders',
    ] as const)
      check(name, sets[name], 'Account', accounts);
    for (const name of ['PRLineItems', 'POLineItems', 'BlanketPOLineItems'] as const)
      check(name, sets[name], 'PartID', parts);
    for (const name of ['PurchaseRequests', 'PRLineItems', 'POLineItems'] as const)
      check(name, sets[name], 'WorkOrderID', workOrders);
    check('PRLineItems', sets.PRLineItems, 'PRNumber', requests, false);
    check('POLineItems', sets.POLineItems, 'PONumber', orders, false);
    check('POAttachments', sets.POAttachments, 'PONumber', orders, false);
    check('BlanketPOLineItems', sets.BlanketPOLineItems, 'BlanketPONumber', blankets, false);
    check('PurchaseOrders', sets.PurchaseOrders, 'PRNumber', requests);
    check('PurchaseOrders', sets.PurchaseOrders, 'BlanketPONumber', blankets);
    check('Comments', data.comments, 'WorkOrderID', workOrders, false);
    check('ActualLabor', data.labor, 'WorkOrderID', workOrders, false);
    check('MeterHistory', data.meterHistory, 'MeterID', meters, false);
    expect(problems).toEqual([]);
  });

  it('numbers lines 1..n under every header, and every header has lines', () => {
    const { sets } = seededData;
    for (const [headers, lines, key] of [
      [sets.PurchaseRequests, sets.PRLineItems, 'PRNumber'],
      [sets.PurchaseOrders, sets.POLineItems, 'PONumber'],
      [sets.BlanketPOs, sets.BlanketPOLineItems, 'BlanketPONumber'],
    ] as const) {
      const groups = groupBy(lines, key);
      for (const header of headers) {
        const group = groups.get(header[key]) ?? [];
        expect(group.length, String(header[key])).toBeGreaterThan(0);
        expect(group.map((line) => line.LineNumber)).toEqual(group.map((_, i) => i + 1));
        const created = group.map((line) => time(line.CreatedDate));
        expect(created).toEqual([...created].sort((a, b) => a - b));
        expect(created[0]).toBeGreaterThanOrEqual(time(header.CreatedDate));
      }
    }
  });

  it('links purchase orders to requests and blanket orders consistently', () => {
    const { sets } = seededData;
    const requests = new Map(sets.PurchaseRequests.map((row) => [row.PRNumber, row]));
    const blankets = new Map(sets.BlanketPOs.map((row) => [row.BlanketPONumber, row]));
    const blanketLines = groupBy(sets.BlanketPOLineItems, 'BlanketPONumber');
    const poLines = groupBy(sets.POLineItems, 'PONumber');
    let fromRequests = 0;
    let fromBlankets = 0;
    for (const po of sets.PurchaseOrders) {
      if (po.PRNumber !== null) {
        fromRequests++;
        const pr = requests.get(po.PRNumber)!;
        expect(['Ordered', 'Closed']).toContain(pr.Status);
        expect(time(pr.RequestedDate)).toBeLessThan(time(po.OrderDate));
      }
      if (po.BlanketPONumber !== null) {
        fromBlankets++;
        const blanket = blankets.get(po.BlanketPONumber)!;
        expect(po.VendorID).toBe(blanket.VendorID);
        const orderDay = String(po.OrderDate).slice(0, 10);
        expect(orderDay >= String(blanket.StartDate)).toBe(true);
        if (blanket.EndDate !== null) expect(orderDay <= String(blanket.EndDate)).toBe(true);
        const agreed = new Map(
          (blanketLines.get(po.BlanketPONumber) ?? []).map((line) => [line.PartID, line.UnitPrice]),
        );
        for (const line of poLines.get(po.PONumber) ?? []) expect(line.UnitPrice).toBe(agreed.get(line.PartID));
      }
    }
    expect(fromRequests).toBeGreaterThan(10);
    expect(fromBlankets).toBeGreaterThan(3);
  });

  it('describes stock lines with their part', () => {
    const { sets } = seededData;
    const parts = new Map(sets.Parts.map((row) => [row.PartID, row]));
    for (const line of [...sets.PRLineItems, ...sets.POLineItems, ...sets.BlanketPOLineItems]) {
      if (line.PartID === null) continue;
      const part = parts.get(line.PartID)!;
      expect(line.Description).toBe(part.Description);
      expect(line.UnitOfMeasure).toBe(part.UnitOfMeasure);
    }
  });
});

describe('demoData: computed fields and timestamps', () => {
  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
  ] as const)('line amounts are exact products (%s)', (_, { sets }) => {
    for (const line of sets.PRLineItems) {
      if (line.EstimatedUnitCost === null) expect(line.ExtendedCost).toBeNull();
      else
        expect(
          sameDecimal(line.ExtendedCost, mulDecimal(decimal(line.Quantity), decimal(line.EstimatedUnitCost))),
        ).toBe(true);
    }
    for (const line of sets.POLineItems)
      expect(sameDecimal(line.ExtendedPrice, mulDecimal(decimal(line.QuantityOrdered), decimal(line.UnitPrice)))).toBe(
        true,
      );
  });

  it('receipts follow the line status, and tax follows the taxable lines', () => {
    const { sets } = seededData;
    const lines = groupBy(sets.POLineItems, 'PONumber');
    const rate = decimal('0.0725');
    for (const po of sets.PurchaseOrders) {
      const group = lines.get(po.PONumber) ?? [];
      for (const line of group) {
        const ordered = decimal(line.QuantityOrdered);
        const received = decimal(line.QuantityReceived);
        if (line.Status === 'Received') expect(compareDecimal(received, ordered)).toBe(0);
        else if (line.Status === 'PartiallyReceived') {
          expect(compareDecimal(received, decimal('0'))).toBe(1);
          expect(compareDecimal(received, ordered)).toBe(-1);
        } else expect(line.QuantityReceived).toBe('0');
        if (po.Status === 'Canceled') expect(line.Status).toBe('Canceled');
        if (po.Status === 'Received' || po.Status === 'Closed') expect(line.Status).toBe('Received');
        if (['Draft', 'PendingApproval', 'Approved', 'Issued'].includes(String(po.Status)))
          expect(line.Status).toBe('Open');
      }
      const taxable = sum(
        group.filter((line) => line.IsTaxable === true && line.Status !== 'Canceled'),
        'ExtendedPrice',
      );
      const cents = roundDecimal(mulDecimal(mulDecimal(taxable, rate), decimal('100')));
      expect(sameDecimal(po.TaxAmount, mulDecimal(cents, decimal('0.01'))), String(po.PONumber)).toBe(true);
    }
  });

  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
  ] as const)('work orders sum their labor and know whether they are open (%s)', (_, data) => {
    const labor = groupBy(data.labor, 'WorkOrderID');
    for (const wo of data.sets.WorkOrders) {
      const rows = labor.get(wo.WorkOrderID) ?? [];
      expect(sameDecimal(wo.ActualHours, sum(rows, 'Hours')), String(wo.WorkOrderID)).toBe(true);
      expect(sameDecimal(wo.ActualOTHours, sum(rows, 'OTHours')), String(wo.WorkOrderID)).toBe(true);
      expect(wo.IsOpen).toBe(!['COMP', 'CLOSED', 'CAN'].includes(String(wo.Status)));
      expect(wo.CompletedDate !== null).toBe(wo.Status === 'COMP' || wo.Status === 'CLOSED');
      if (wo.CompletedDate !== null) expect(time(wo.CompletedDate)).toBeGreaterThanOrEqual(time(wo.RequestedDate));
      for (const row of rows) {
        expect(time(row.StartDate)).toBeGreaterThanOrEqual(time(wo.RequestedDate));
        expect(time(row.CreatedDate)).toBeLessThanOrEqual(time(wo.LastModifiedDate));
        if (wo.CompletedDate !== null) expect(time(row.StartDate)).toBeLessThan(time(wo.CompletedDate));
      }
      if (['REQ', 'APPR', 'SCHED', 'CAN'].includes(String(wo.Status))) expect(rows).toEqual([]);
    }
    expect(data.labor.some((row) => row.OTHours !== '0')).toBe(true);
  });

  it('numbers comments 1..n per work order, oldest first', () => {
    const works = new Map(seededData.sets.WorkOrders.map((row) => [row.WorkOrderID, row]));
    for (const [id, comments] of groupBy(seededData.comments, 'WorkOrderID')) {
      expect(comments.map((c) => c.CommentID)).toEqual(comments.map((_, i) => i + 1));
      const created = comments.map((c) => time(c.CreatedDate));
      expect(created).toEqual([...created].sort((a, b) => a - b));
      expect(created[0]).toBeGreaterThanOrEqual(time(works.get(id)!.CreatedDate));
      expect(created.at(-1)).toBeLessThanOrEqual(time(works.get(id)!.LastModifiedDate));
    }
  });

  it('keeps each meter equal to its newest reading', () => {
    const history = groupBy(seededData.meterHistory, 'MeterID');
    for (const meter of seededData.sets.MeterReadings) {
      const readings = history.get(meter.MeterID) ?? [];
      expect(readings.length).toBeGreaterThan(0);
      expect(readings.map((r) => r.ReadingID)).toEqual(readings.map((_, i) => i + 1));
      const dates = readings.map((r) => time(r.ReadingDate));
      for (let i = 1; i < dates.length; i++) expect(dates[i]).toBeGreaterThan(dates[i - 1]!);
      const newest = readings.at(-1)!;
      for (const field of ['Description', 'MeterReading', 'Unit', 'ReadingDate', 'Event'])
        expect(meter[field], `${String(meter.MeterID)}.${field}`).toEqual(newest[field]);
      expect(time(meter.LastModifiedDate)).toBe(Math.max(...readings.map((r) => time(r.CreatedDate))));
      for (const reading of readings) {
        expect(time(reading.CreatedDate)).toBeGreaterThanOrEqual(time(reading.ReadingDate));
        expect(time(reading.CreatedDate)).toBeGreaterThanOrEqual(time(meter.CreatedDate));
      }
    }
  });

  it.each([
    ['default', defaultData],
    ['seed 7, 400 rows', seededData],
  ] as const)('CreatedDate ≤ LastModifiedDate ≤ now everywhere (%s)', (_, data) => {
    const now = time(NOW);
    const problems: string[] = [];
    for (const name of entitySetNames) {
      data.sets[name].forEach((row, i) => {
        if (!('CreatedDate' in row)) return;
        const created = time(row.CreatedDate);
        const modified = time(row.LastModifiedDate);
        if (!(created <= modified && modified <= now)) problems.push(`${name}[${i}]`);
      });
    }
    for (const [label, rows] of [
      ['Comments', data.comments],
      ['ActualLabor', data.labor],
      ['MeterHistory', data.meterHistory],
    ] as const) {
      rows.forEach((row, i) => {
        if (!(time(row.CreatedDate) <= now)) problems.push(`${label}[${i}]`);
      });
    }
    for (const [label, rows, field] of [
      ['WorkOrders', data.sets.WorkOrders, 'RequestedDate'],
      ['PurchaseRequests', data.sets.PurchaseRequests, 'RequestedDate'],
      ['PurchaseOrders', data.sets.PurchaseOrders, 'OrderDate'],
      ['MeterReadings', data.sets.MeterReadings, 'ReadingDate'],
      ['MeterHistory', data.meterHistory, 'ReadingDate'],
      ['ActualLabor', data.labor, 'StartDate'],
    ] as const) {
      rows.forEach((row, i) => {
        if (!(time(row[field]) <= now)) problems.push(`${label}[${i}].${field} in the future`);
      });
    }
    expect(problems).toEqual([]);
  });

  it('gives blanket orders an end on or after their start, and attachments plausible files', () => {
    const { sets } = seededData;
    for (const blanket of sets.BlanketPOs)
      if (blanket.EndDate !== null) expect(String(blanket.EndDate) >= String(blanket.StartDate)).toBe(true);
    const orders = new Map(sets.PurchaseOrders.map((row) => [row.PONumber, row]));
    for (const attachment of sets.POAttachments) {
      expect(attachment.FileName).not.toMatch(/[/\\]/);
      expect(attachment.SizeBytes).toBeGreaterThan(1000);
      expect(attachment.SizeBytes).toBeLessThanOrEqual(10 * 1024 * 1024);
      expect(time(attachment.CreatedDate)).toBeGreaterThanOrEqual(time(orders.get(attachment.PONumber)!.CreatedDate));
    }
  });

  it('reads like a plant: vocabularies in use, priorities 1-5, realistic codes', () => {
    const { sets } = seededData;
    const statuses = new Set(sets.WorkOrders.map((row) => row.Status));
    for (const status of ['REQ', 'APPR', 'INPRG', 'COMP', 'CLOSED']) expect(statuses).toContain(status);
    expect(new Set(sets.WorkOrders.map((row) => row.Priority))).toEqual(new Set([1, 2, 3, 4, 5]));
    expect(new Set(sets.PurchaseOrders.map((row) => row.Status)).size).toBeGreaterThanOrEqual(6);
    expect(new Set(sets.Parts.map((row) => row.UnitOfMeasure)).size).toBeGreaterThanOrEqual(5);
    expect(sets.Accounts.map((row) => row.Account)).toContain('5100-200');
    for (const row of sets.WorkOrders) expect(String(row.Description).length).toBeGreaterThan(8);
  });

  it('gives distinct parts, one meter per asset measure, and mostly active accounts to new records', () => {
    const descriptions = defaultData.sets.Parts.map((row) => row.Description);
    expect(new Set(descriptions).size).toBe(descriptions.length);
    const meters = seededData.sets.MeterReadings.map((row) => row.Description);
    expect(new Set(meters).size).toBe(meters.length);
    const { sets } = seededData;
    const active = new Map(sets.Accounts.map((row) => [row.Account, row.IsActive]));
    const references = [sets.WorkOrders, sets.PurchaseRequests, sets.PurchaseOrders, sets.BlanketPOs]
      .flat()
      .map((row) => row.Account)
      .filter((account) => account !== null);
    const inactive = references.filter((account) => active.get(account) === false);
    expect(inactive.length).toBeLessThan(references.length * 0.02);
    expect(sets.Accounts.some((row) => row.IsActive === false)).toBe(true);
  });

  it("matches labor to the crew: the craft of each record is its person's", () => {
    const crafts = new Map<unknown, unknown>();
    for (const row of seededData.labor) {
      if (crafts.has(row.PeopleID)) expect(row.Craft, String(row.PeopleID)).toBe(crafts.get(row.PeopleID));
      crafts.set(row.PeopleID, row.Craft);
    }
  });
});

describe('demoRows', () => {
  const streamed: readonly DemoSetName[] = [...entitySetNames, 'Comments', 'ActualLabor', 'MeterHistory'];
  const options = { seed: 7, rows: 400 } as const;

  it.each(streamed)('yields exactly the rows demoData has for %s', (name) => {
    const expected =
      name === 'Comments'
        ? seededData.comments
        : name === 'ActualLabor'
          ? seededData.labor
          : name === 'MeterHistory'
            ? seededData.meterHistory
            : seededData.sets[name];
    const rows = demoRows(name, options);
    expect([...rows]).toEqual(expected);
    // The iterable starts over when walked again.
    expect([...rows]).toEqual(expected);
  });

  it('is lazy: the first row of a million-row set comes at once', () => {
    const started = performance.now();
    const first = demoRows('POLineItems', { rows: 1_000_000 })[Symbol.iterator]().next();
    expect(first.done).toBe(false);
    expect((first.value as Row).PONumber).toBe('PO-000001');
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('rejects bad options and unknown sets', () => {
    expect(() => demoRows('Nope' as DemoSetName)).toThrowError(RangeError);
    for (const rows of [0, -1, 1.5, 1_000_001, Number.NaN])
      expect(() => demoData({ rows }), String(rows)).toThrowError(RangeError);
    expect(() => demoData({ seed: 0.5 })).toThrowError(RangeError);
    expect(() => demoData({ now: 'yesterday' })).toThrowError(RangeError);
  });
});

describe('scale', () => {
  it('rows: 2000 gives about 2000 rows in the largest sets, quickly', () => {
    const started = performance.now();
    const data = demoData({ rows: 2000 });
    const elapsed = performance.now() - started;
    expect(data.sets.WorkOrders).toHaveLength(2000);
    expect(data.sets.Parts).toHaveLength(2000);
    for (const name of ['PRLineItems', 'POLineItems'] as const) {
      expect(data.sets[name].length, name).toBeGreaterThan(1500);
      expect(data.sets[name].length, name).toBeLessThan(3000);
    }
    expect(data.meterHistory.length).toBeGreaterThan(1500);
    expect(data.meterHistory.length).toBeLessThan(3000);
    expect(elapsed).toBeLessThan(5000);
    expect(allFacetProblems(data)).toEqual([]);
  });
});
