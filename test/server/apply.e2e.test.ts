// $apply on the reference server, end to end on every storage: a planner's questions (open work orders per craft, hours
// per asset, lines still to receive per order) answered by groupby and aggregate, each checked against the same
// answer worked out here from the plain rows (read page by page, summed exactly as scaled integers); the options after
// $apply, paging by next link, /$count, and the errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchText } from '../../src/values/text.js';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages({ mysql: true });

type Json = Record<string, unknown> & { value?: Record<string, unknown>[] };
const q = encodeURIComponent;

/** A decimal's text (at most `scale` places) as an integer of 10^-scale units. */
function scaled(value: unknown, scale: number): bigint {
  if (value === null || value === undefined) return 0n;
  const [whole, fraction = ''] = String(value).split('.');
  const negative = whole!.startsWith('-');
  const units = BigInt(whole!.replace('-', '') + fraction.padEnd(scale, '0'));
  return negative ? -units : units;
}

describe.each(kinds)('$apply on the reference server on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 25 });
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${s.root}${path}`, { headers: { API_KEY: s.key, ...headers } });
  const json = async (path: string, headers: Record<string, string> = {}): Promise<Json> => {
    const response = await get(path, headers);
    expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
    return (await response.json()) as Json;
  };
  /** Every row of a read, following its next links. */
  const all = async (path: string): Promise<Record<string, unknown>[]> => {
    const rows: Record<string, unknown>[] = [];
    let body = await json(path);
    rows.push(...body.value!);
    while (typeof body['@odata.nextLink'] === 'string') {
      const next = await fetch(body['@odata.nextLink'], { headers: { API_KEY: s.key } });
      expect(next.status).toBe(200);
      body = (await next.json()) as Json;
      rows.push(...body.value!);
    }
    return rows;
  };

  it('counts the open work orders per craft', async () => {
    const open = "Status ne 'CLOSED' and Status ne 'CAN' and Status ne 'COMP'";
    const answer = await all(`/WorkOrders?$apply=${q(`filter(${open})/groupby((Craft),aggregate($count as Open))`)}`);
    const expected = new Map<unknown, number>();
    for (const wo of await all(`/WorkOrders?$select=Craft,Status`)) {
      if (['CLOSED', 'CAN', 'COMP'].includes(String(wo['Status']))) continue;
      expected.set(wo['Craft'], (expected.get(wo['Craft']) ?? 0) + 1);
    }
    expect(answer.length).toBe(expected.size);
    expect(answer.length).toBeGreaterThan(1);
    for (const group of answer) {
      expect(Object.keys(group).sort()).toEqual(['Craft', 'Open']);
      expect(group['Open']).toBe(expected.get(group['Craft']));
    }
  });

  it('sums the actual hours per asset exactly, and orders and filters the sums', async () => {
    const expected = new Map<unknown, bigint>();
    for (const wo of await all(`/WorkOrders?$select=AssetID,ActualHours`)) {
      if (wo['ActualHours'] === null) continue;
      expected.set(wo['AssetID'], (expected.get(wo['AssetID']) ?? 0n) + scaled(wo['ActualHours'], 2));
    }
    const apply = q('groupby((AssetID),aggregate(ActualHours with sum as Hours,ActualHours with max as Longest))');
    const answer = await all(`/WorkOrders?$apply=${apply}`);
    expect(answer.length).toBeGreaterThan(1);
    for (const group of answer) {
      const sum = expected.get(group['AssetID']);
      if (sum === undefined) expect(group['Hours']).toBeNull();
      else expect(scaled(group['Hours'], 2)).toBe(sum);
    }
    // the options after $apply read its aliases: the largest sums first, only those over 10 hours, counted
    const top = await json(
      `/WorkOrders?$apply=${apply}&$filter=${q('Hours gt 10')}&$orderby=${q('Hours desc')}&$count=true&$top=3`,
    );
    const over = [...expected.values()].filter((sum) => sum > 1000n).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
    expect(top['@odata.count']).toBe(over.length);
    expect(top.value!.map((g) => scaled(g['Hours'], 2))).toEqual(over.slice(0, 3));
    expect(top['@odata.context']).toBe(`${s.root}/$metadata#WorkOrders(AssetID,Hours,Longest)`);
    // IEEE754Compatible: the Decimal sums and the count as strings
    const compatible = await json(`/WorkOrders?$apply=${apply}&$top=1&$count=true`, {
      accept: 'application/json;IEEE754Compatible=true',
    });
    expect(typeof compatible['@odata.count']).toBe('string');
    const [first] = compatible.value!;
    if (first!['Hours'] !== null) expect(typeof first!['Hours']).toBe('string');
  });

  it('finds the lines still to receive per order, and pages the groups by next link', async () => {
    const apply = q(
      'filter(QuantityReceived lt QuantityOrdered)/compute(QuantityOrdered sub QuantityReceived as Open)/groupby((PONumber),aggregate($count as Lines,Open with sum as ToReceive))',
    );
    const expected = new Map<unknown, { lines: number; open: bigint }>();
    for (const line of await all(`/POLineItems?$select=PONumber,QuantityOrdered,QuantityReceived`)) {
      const open = scaled(line['QuantityOrdered'], 4) - scaled(line['QuantityReceived'], 4);
      if (open <= 0n) continue;
      const seen = expected.get(line['PONumber']) ?? { lines: 0, open: 0n };
      expected.set(line['PONumber'], { lines: seen.lines + 1, open: seen.open + open });
    }
    const first = await json(`/POLineItems?$apply=${apply}&$count=true`);
    expect(first['@odata.count']).toBe(expected.size);
    const answer = await all(`/POLineItems?$apply=${apply}`);
    expect(answer.length).toBe(expected.size);
    if (expected.size > 25) expect(typeof first['@odata.nextLink']).toBe('string');
    // groups come in the order of their grouping properties, each once across the pages
    const numbers = answer.map((g) => String(g['PONumber']));
    expect(numbers).toEqual([...numbers].sort());
    for (const group of answer) {
      const e = expected.get(group['PONumber'])!;
      expect(group['Lines']).toBe(e.lines);
      expect(scaled(group['ToReceive'], 4)).toBe(e.open);
    }
    // /$count counts the instances $apply gives
    const count = await get(`/POLineItems/$count?$apply=${apply}`);
    expect(await count.text()).toBe(String(expected.size));
  });

  it("sums the spend per vendor per month through the lines' purchase order, grouped by the database", async () => {
    const apply = q(
      'compute(PurchaseOrder/VendorID as Vendor,year(PurchaseOrder/OrderDate) as Year,month(PurchaseOrder/OrderDate) as Month)/groupby((Vendor,Year,Month),aggregate(ExtendedPrice with sum as Spend,$count as Lines))',
    );
    const orders = new Map<unknown, { vendor: unknown; year: number; month: number }>();
    for (const po of await all('/PurchaseOrders?$select=PONumber,VendorID,OrderDate')) {
      const date = new Date(String(po['OrderDate']));
      orders.set(po['PONumber'], {
        vendor: po['VendorID'],
        year: date.getUTCFullYear(),
        month: date.getUTCMonth() + 1,
      });
    }
    const expected = new Map<string, { spend: bigint; lines: number }>();
    for (const line of await all('/POLineItems?$select=PONumber,ExtendedPrice')) {
      const order = orders.get(line['PONumber'])!;
      const key = JSON.stringify([order.vendor, order.year, order.month]);
      const seen = expected.get(key) ?? { spend: 0n, lines: 0 };
      expected.set(key, { spend: seen.spend + scaled(line['ExtendedPrice'], 4), lines: seen.lines + 1 });
    }
    const answer = await all(`/POLineItems?$apply=${apply}`);
    expect(answer.length).toBe(expected.size);
    expect(answer.length).toBeGreaterThan(1);
    for (const group of answer) {
      expect(Object.keys(group).sort()).toEqual(['Lines', 'Month', 'Spend', 'Vendor', 'Year']);
      const e = expected.get(JSON.stringify([group['Vendor'], group['Year'], group['Month']]))!;
      expect(scaled(group['Spend'], 4)).toBe(e.spend);
      expect(group['Lines']).toBe(e.lines);
    }
    // in ascending order of vendor, year and month
    const keys = answer.map((g) => [String(g['Vendor']), Number(g['Year']), Number(g['Month'])] as const);
    const sorted = [...keys].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));
    expect(keys).toEqual(sorted);
  });

  it('groups by a navigation path, its values nested under the navigation (Data Aggregation CS03 §3.1.3)', async () => {
    const apply = q('groupby((PurchaseOrder/VendorID),aggregate(ExtendedPrice with sum as Spend,$count as Lines))');
    const expected = new Map<unknown, { spend: bigint; lines: number }>();
    for (const line of await all(
      `/POLineItems?$select=ExtendedPrice&$expand=${q('PurchaseOrder($select=VendorID)')}`,
    )) {
      const vendor = (line['PurchaseOrder'] as Record<string, unknown> | null)?.['VendorID'] ?? null;
      const seen = expected.get(vendor) ?? { spend: 0n, lines: 0 };
      expected.set(vendor, { spend: seen.spend + scaled(line['ExtendedPrice'], 4), lines: seen.lines + 1 });
    }
    const first = await json(`/POLineItems?$apply=${apply}`);
    expect(first['@odata.context']).toMatch(/\$metadata#POLineItems\(PurchaseOrder\(VendorID\),Spend,Lines\)$/);
    const answer = await all(`/POLineItems?$apply=${apply}`);
    expect(answer.length).toBe(expected.size);
    expect(answer.length).toBeGreaterThan(1);
    for (const group of answer) {
      expect(Object.keys(group).sort()).toEqual(['Lines', 'PurchaseOrder', 'Spend']);
      const vendor = (group['PurchaseOrder'] as Record<string, unknown>)['VendorID'];
      const e = expected.get(vendor)!;
      expect(e, String(vendor)).toBeDefined();
      expect(scaled(group['Spend'], 4)).toBe(e.spend);
      expect(group['Lines']).toBe(e.lines);
    }
    const vendors = answer.map((g) => String((g['PurchaseOrder'] as Record<string, unknown>)['VendorID']));
    expect(vendors).toEqual([...vendors].sort());
    // the options after $apply name the path
    const descending = await all(`/POLineItems?$apply=${apply}&$orderby=${q('PurchaseOrder/VendorID desc')}`);
    expect(descending).toEqual([...answer].reverse());
    const one = await json(`/POLineItems?$apply=${apply}&$filter=${q(`PurchaseOrder/VendorID eq '${vendors[0]}'`)}`);
    expect(one.value).toEqual([answer[0]]);
    const count = await get(`/POLineItems/$count?$apply=${apply}`);
    expect(await count.text()).toBe(String(expected.size));

    // a line without a work order groups under null, first; beside a property of the line itself
    const crafts = await all(
      `/POLineItems?$apply=${q('groupby((WorkOrder/Craft,Status),aggregate($count as Lines))')}`,
    );
    const byCraft = new Map<string, number>();
    for (const line of await all(`/POLineItems?$select=Status&$expand=${q('WorkOrder($select=Craft)')}`)) {
      const craft = (line['WorkOrder'] as Record<string, unknown> | null)?.['Craft'] ?? null;
      const key = JSON.stringify([craft, line['Status']]);
      byCraft.set(key, (byCraft.get(key) ?? 0) + 1);
    }
    expect(
      new Map(
        crafts.map((g) => [
          JSON.stringify([(g['WorkOrder'] as Record<string, unknown>)['Craft'], g['Status']]),
          g['Lines'],
        ]),
      ),
    ).toEqual(byCraft);
    const keys = crafts.map(
      (g) => [(g['WorkOrder'] as Record<string, unknown>)['Craft'] as string | null, String(g['Status'])] as const,
    );
    const order = (a: readonly [string | null, string], b: readonly [string | null, string]): number =>
      a[0] === b[0]
        ? a[1] < b[1]
          ? -1
          : a[1] > b[1]
            ? 1
            : 0
        : a[0] === null
          ? -1
          : b[0] === null
            ? 1
            : a[0] < b[0]
              ? -1
              : 1;
    expect(keys).toEqual([...keys].sort(order));

    // through a collection: a 501 at the path
    const collection = await get(`/PurchaseOrders?$apply=${q('groupby((Lines/Status))')}`);
    expect(collection.status).toBe(501);
    expect(await collection.json()).toMatchObject({ error: { code: 'NotImplemented', target: '$apply' } });
  });

  it('reads a custom aggregate as its declared method: aggregate(ExtendedPrice) sums it, as OpenUI5 writes it', async () => {
    const custom = await json(
      `/POLineItems?$apply=${q('groupby((Status),aggregate(ExtendedPrice,QuantityOrdered as Ordered))')}`,
    );
    const written = await json(
      `/POLineItems?$apply=${q('groupby((Status),aggregate(ExtendedPrice with sum as ExtendedPrice,QuantityOrdered with sum as Ordered))')}`,
    );
    expect(custom.value).toEqual(written.value);
    expect(custom.value!.length).toBeGreaterThan(1);
    expect(custom['@odata.context']).toBe(`${s.root}/$metadata#POLineItems(Status,ExtendedPrice,Ordered)`);
    // $metadata declares them, with the type of their result
    const metadata = await (await get('/$metadata')).text();
    expect(metadata).toContain(
      '<Annotation Term="Org.OData.Aggregation.V1.CustomAggregate" Qualifier="ExtendedPrice" String="Edm.Decimal" />',
    );
    // a name that is no custom aggregate: a 400 at it that lists those there are
    const unknown = await get(`/POLineItems?$apply=${q('aggregate(UnitPrice)')}`);
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: { message: string } }).error.message).toBe(
      'UnitPrice is not a custom aggregate of POLineItem at position 10 of $apply; its custom aggregates are ExtendedPrice, QuantityOrdered, QuantityReceived; or write the method: UnitPrice with sum as Total',
    );
  });

  it('searches the work orders before grouping them, as $search finds them: search(...)/groupby(...)', async () => {
    // what fan OR "heat exchanger" finds (the memory backend's definition: the words, in a row, in the lower-cased,
    // split Description), worked out here from every row, and what $search finds: the same orders
    const rows = await all(`/WorkOrders?$select=WorkOrderID,Description,Status,Craft,ActualHours`);
    const found = rows.filter((wo) => {
      const text = searchText(String(wo['Description'] ?? ''));
      return text.includes(' fan ') || text.includes(' heat exchanger ');
    });
    expect(found.length).toBeGreaterThan(1);
    expect(found.length).toBeLessThan(rows.length);
    const search = 'fan OR "heat exchanger"';
    const searched = await all(`/WorkOrders?$search=${q(search)}&$select=WorkOrderID`);
    expect(searched.map((wo) => wo['WorkOrderID'])).toEqual(found.map((wo) => wo['WorkOrderID']));
    const perStatus = new Map<unknown, number>();
    for (const wo of found) perStatus.set(wo['Status'], (perStatus.get(wo['Status']) ?? 0) + 1);
    const groups = await all(`/WorkOrders?$apply=${q(`search(${search})/groupby((Status),aggregate($count as N))`)}`);
    expect(new Map(groups.map((g) => [g['Status'], g['N']]))).toEqual(perStatus);
    // (the word pump too, the same way)
    const pump = rows.filter((wo) => searchText(String(wo['Description'] ?? '')).includes(' pump ')).length;
    expect(await all(`/WorkOrders?$apply=${q('search(pump)/aggregate($count as N)')}`)).toEqual([{ N: pump }]);

    // a filter, then a search with OR and a phrase, then the aggregates: the same as $filter and $search together
    const craft = found[0]!['Craft'];
    const filter = craft === null ? 'Craft eq null' : `Craft eq '${String(craft)}'`;
    const other = 'tank OR "output seal" OR NOT valve';
    const kept = await all(`/WorkOrders?$filter=${q(filter)}&$search=${q(other)}&$select=ActualHours`);
    expect(kept.length).toBeGreaterThan(0);
    const [total] = await all(
      `/WorkOrders?$apply=${q(`filter(${filter})/search(${other})/aggregate($count as N,ActualHours with sum as H)`)}`,
    );
    expect(total!['N']).toBe(kept.length);
    const hours = kept.reduce((sum, wo) => sum + scaled(wo['ActualHours'], 2), 0n);
    if (kept.every((wo) => wo['ActualHours'] === null)) expect(total!['H']).toBeNull();
    else expect(scaled(total!['H'], 2)).toBe(hours);
  });

  it('aggregates everything to one instance, even when nothing matches', async () => {
    const none = await json(
      `/PurchaseOrders?$apply=${q("filter(VendorID eq 'no such vendor')/aggregate($count as Orders,FreightAmount with sum as Freight)")}`,
    );
    expect(none.value).toEqual([{ Orders: 0, Freight: null }]);
    expect(none['@odata.context']).toBe(`${s.root}/$metadata#PurchaseOrders(Orders,Freight)`);
    const everything = await json(`/PurchaseOrders?$apply=${q('aggregate($count as Orders)')}`);
    const plain = await get('/PurchaseOrders/$count');
    expect(everything.value).toEqual([{ Orders: Number(await plain.text()) }]);
  });

  it('refuses mistakes with the position in $apply, and what it does not support with 501', async () => {
    const error = async (apply: string, status: number): Promise<Record<string, unknown>> => {
      const response = await get(`/WorkOrders?$apply=${q(apply)}`);
      expect(response.status, apply).toBe(status);
      return ((await response.json()) as { error: Record<string, unknown> }).error;
    };
    expect(await error('groupby((Craft),aggregate(ActualHours with summ as H))', 400)).toMatchObject({
      target: '$apply',
      message: expect.stringContaining("Unknown aggregation method 'summ' at position 43"),
    });
    expect(await error('groupby((NoSuch))', 400)).toMatchObject({ target: '$apply' });
    expect(await error('aggregate(Description with sum as S)', 400)).toMatchObject({
      message: expect.stringContaining('sum cannot aggregate an Edm.String value'),
    });
    expect(await error('aggregate($count as N)/search(pump)', 400)).toMatchObject({
      target: '$apply',
      message: expect.stringContaining('search applies to entities'),
    });
    expect(await error('search(pump;seal)', 400)).toMatchObject({
      target: '$apply',
      message: expect.stringContaining('Unexpected ; at position 11 of $apply'),
    });
    // a set without searchable properties: 501, as for $search
    const readings = await get(`/MeterReadings?$apply=${q('search(pump)/aggregate($count as N)')}`);
    expect(readings.status).toBe(501);
    expect(await readings.json()).toMatchObject({ error: { target: '$apply' } });
    expect(await error('groupby((WorkOrderID),aggregate(ActualLabor/Hours with sum as H))', 400)).toMatchObject({
      target: '$apply',
    });
  });
});
