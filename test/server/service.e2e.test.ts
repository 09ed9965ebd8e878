// The reference server end to end: a real port, real HTTP (fetch), real storage (SQLite files and the PostgreSQL
// server). Every row of the interface's endpoint, authentication and error tables, and MODEL.md's write rules, with
// status, headers and body asserted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SaxesParser } from 'saxes';
import { entitySetNames } from '../../src/server/model.js';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages({ mysql: true });

type Json = Record<string, unknown> & { value?: Record<string, unknown>[] };

describe.each(kinds)('the reference server on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 20 });
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${s.root}${path}`, { headers: { API_KEY: s.key, ...headers } });
  const send = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${s.root}${path}`, {
      method,
      headers: { API_KEY: s.key, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const json = async (response: Response): Promise<Json> => (await response.json()) as Json;

  describe('navigation', () => {
    const q = encodeURIComponent;

    it('expands an order with its lines, paged and counted per order', async () => {
      const body = await json(
        await get(
          `/PurchaseOrders?$select=PONumber&$orderby=PONumber&$top=3&$expand=${q('Lines($select=LineNumber,PONumber;$orderby=LineNumber desc;$top=2;$count=true)')}`,
        ),
      );
      expect(body['@odata.context']).toBe(`${s.root}/$metadata#PurchaseOrders(PONumber,Lines(PONumber,LineNumber))`);
      expect(body.value!.length).toBe(3);
      for (const order of body.value!) {
        const lines = order['Lines'] as Json['value'] & object;
        const count = await get(`/PurchaseOrders('${String(order['PONumber'])}')/Lines/$count`);
        expect(order['Lines@odata.count']).toBe(Number(await count.text()));
        expect(lines.length).toBe(Math.min(2, order['Lines@odata.count'] as number));
        for (const line of lines) expect(line['PONumber']).toBe(order['PONumber']);
        const numbers = lines.map((line) => line['LineNumber'] as number);
        expect([...numbers].sort((a, b) => b - a)).toEqual(numbers);
      }
    });

    it("filters and orders lines by their order's fields, and expands the order back", async () => {
      const [order] = (await json(await get('/PurchaseOrders?$select=PONumber,VendorID&$top=1'))).value!;
      const vendor = String(order!['VendorID']);
      const ofVendor = (
        await json(await get(`/PurchaseOrders?$select=PONumber&$filter=${q(`VendorID eq '${vendor}'`)}`))
      ).value!.map((o) => o['PONumber']);
      const lines = await json(
        await get(
          `/POLineItems?$select=PONumber,LineNumber&$filter=${q(`PurchaseOrder/VendorID eq '${vendor}'`)}&$orderby=${q('PurchaseOrder/OrderDate desc,PONumber,LineNumber')}&$expand=${q('PurchaseOrder($select=VendorID,OrderDate)')}&$count=true`,
        ),
      );
      expect(lines.value!.length).toBeGreaterThan(0);
      const dates: string[] = [];
      for (const line of lines.value!) {
        expect(ofVendor).toContain(line['PONumber']);
        const parent = line['PurchaseOrder'] as Record<string, unknown>;
        expect(parent['VendorID']).toBe(vendor);
        dates.push(String(parent['OrderDate']));
      }
      expect([...dates].sort().reverse()).toEqual(dates);
      // a line whose part is not there reads null through it: `eq null` keeps it, and no other comparison does
      const all = Number(await (await get('/POLineItems/$count')).text());
      const withPart = Number(await (await get(`/POLineItems/$count?$filter=${q('Part/PartID ne null')}`)).text());
      const without = Number(await (await get(`/POLineItems/$count?$filter=${q('Part/PartID eq null')}`)).text());
      expect(withPart + without).toBe(all);
    });
  });

  describe('collection reads', () => {
    it.each(entitySetNames)('GET %s answers OData JSON with a value array', async (set) => {
      const response = await get(`/${set}`);
      expect(response.status).toBe(200);
      // without OData-MaxVersion: the highest version the service speaks
      expect(response.headers.get('odata-version')).toBe('4.01');
      expect(response.headers.get('content-type')).toMatch(/^application\/json;odata\.metadata=minimal/);
      const body = await json(response);
      expect(body['@odata.context']).toBe(`${s.root}/$metadata#${set}`);
      expect(Array.isArray(body.value)).toBe(true);
      expect(body.value!.length).toBeGreaterThan(0);
    });

    it('answers in the version OData-MaxVersion allows, and refuses versions it does not speak', async () => {
      expect((await get('/Accounts?$top=1', { 'OData-MaxVersion': '4.0' })).headers.get('odata-version')).toBe('4.0');
      expect((await get('/Accounts?$top=1', { 'OData-MaxVersion': '4.01' })).headers.get('odata-version')).toBe('4.01');
      expect((await get('/Accounts?$top=1', { 'OData-MaxVersion': '5.0' })).headers.get('odata-version')).toBe('4.01');
      // errors too are in the negotiated version
      const missing = await get('/Acounts', { 'OData-MaxVersion': '4.0' });
      expect([missing.status, missing.headers.get('odata-version')]).toEqual([404, '4.0']);
      for (const [name, value] of [
        ['OData-Version', '5.0'],
        ['OData-Version', '3.0'],
        ['OData-MaxVersion', '3.0'],
        ['OData-MaxVersion', 'four'],
      ] as const) {
        const refused = await get('/Accounts', { [name]: value });
        expect(refused.status, `${name}: ${value}`).toBe(400);
        expect(((await refused.json()) as { error: Record<string, unknown> }).error).toMatchObject({
          code: 'UnsupportedVersion',
          target: name,
        });
      }
    });

    it('applies $select, $filter, $orderby, $top, $skip and $count', async () => {
      const body = await json(
        await get(
          `/WorkOrders?$select=WorkOrderID,Priority&$filter=${encodeURIComponent('Priority le 2')}&$orderby=Priority desc,WorkOrderID&$top=3&$skip=1&$count=true`,
        ),
      );
      expect(body['@odata.context']).toBe(`${s.root}/$metadata#WorkOrders(WorkOrderID,Priority)`);
      // (each entity's ETag beside its selected properties)
      for (const row of body.value!) expect(Object.keys(row)).toEqual(['@odata.etag', 'WorkOrderID', 'Priority']);
      expect(body.value!.length).toBeLessThanOrEqual(3);
      expect(body.value!.every((r) => (r['Priority'] as number) <= 2)).toBe(true);
      const priorities = body.value!.map((r) => r['Priority'] as number);
      expect([...priorities].sort((a, b) => b - a)).toEqual(priorities);
      expect(typeof body['@odata.count']).toBe('number');
      expect(body['@odata.count'] as number).toBeGreaterThanOrEqual(body.value!.length);
      // the number alone counts what the filter keeps, whatever $top and $skip say
      const alone = await get(`/WorkOrders/$count?$filter=${encodeURIComponent('Priority le 2')}&$top=1&$skip=2`);
      expect(alone.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(Number(await alone.text())).toBe(body['@odata.count']);
    });

    it('filters booleans and quoted strings as the interface shows', async () => {
      const active = await json(await get('/Accounts?$filter=IsActive%20eq%20true'));
      expect(active.value!.every((r) => r['IsActive'] === true)).toBe(true);
      const one = active.value![0]!;
      const exact = await json(
        await get(`/Accounts?$filter=${encodeURIComponent(`Account eq '${String(one['Account'])}'`)}`),
      );
      expect(exact.value).toEqual([one]);
    });

    it('pages by Prefer: odata.maxpagesize, never past the service page size, and says so', async () => {
      const all = Number(await (await get('/WorkOrders/$count')).text());
      const seen: unknown[] = [];
      let url: string | undefined = `${s.root}/WorkOrders?$select=WorkOrderID`;
      let pages = 0;
      while (url !== undefined) {
        const response = await fetch(url, { headers: { API_KEY: s.key, prefer: 'odata.maxpagesize=7' } });
        expect(response.headers.get('preference-applied')).toBe('odata.maxpagesize=7');
        const body = await json(response);
        expect(body.value!.length).toBeLessThanOrEqual(7);
        seen.push(...body.value!.map((r) => r['WorkOrderID']));
        url = body['@odata.nextLink'] as string | undefined;
        pages++;
      }
      expect(new Set(seen).size).toBe(all);
      expect(pages).toBe(Math.ceil(all / 7));
      // a larger preference is honoured by the service's own page (20 here)
      const capped = await get('/WorkOrders?$select=WorkOrderID', { prefer: 'odata.maxpagesize=1000' });
      expect(capped.headers.get('preference-applied')).toBe('odata.maxpagesize=1000');
      expect((await json(capped)).value!.length).toBe(Math.min(20, all));
    });

    it('pages with an absolute @odata.nextLink that a client can follow to the end', async () => {
      const seen: unknown[] = [];
      let url: string | undefined = `${s.root}/POLineItems?$select=PONumber,LineNumber&$count=true`;
      let count = 0;
      let pages = 0;
      while (url !== undefined) {
        const body = await json(await fetch(url, { headers: { API_KEY: s.key } }));
        if (pages === 0) count = body['@odata.count'] as number;
        expect(body.value!.length).toBeLessThanOrEqual(20);
        seen.push(...body.value!.map((r) => `${String(r['PONumber'])}/${String(r['LineNumber'])}`));
        url = body['@odata.nextLink'] as string | undefined;
        if (url !== undefined) expect(url.startsWith(`${s.root}/POLineItems?`)).toBe(true);
        pages++;
      }
      expect(pages).toBeGreaterThan(1);
      expect(seen.length).toBe(count);
      expect(new Set(seen).size).toBe(count);
    });

    it('answers Set/$count as plain text, honouring $filter', async () => {
      const all = await get('/WorkOrders/$count');
      expect(all.headers.get('content-type')).toMatch(/^text\/plain/);
      const total = Number(await all.text());
      const urgent = Number(
        await (await get(`/WorkOrders/$count?$filter=${encodeURIComponent('Priority le 2')}`)).text(),
      );
      expect(total).toBeGreaterThan(0);
      expect(urgent).toBeLessThan(total);
      const listed = await json(
        await get(`/WorkOrders?$filter=${encodeURIComponent('Priority le 2')}&$count=true&$top=0`),
      );
      expect(listed['@odata.count']).toBe(urgent);
    });

    it('keeps $top across pages', async () => {
      const first = await json(await get('/POLineItems?$top=45'));
      expect(first.value!.length).toBe(20);
      const second = await json(await fetch(String(first['@odata.nextLink']), { headers: { API_KEY: s.key } }));
      const third = await json(await fetch(String(second['@odata.nextLink']), { headers: { API_KEY: s.key } }));
      expect(third.value!.length).toBe(5);
      expect(third['@odata.nextLink']).toBeUndefined();
    });

    it('writes decimals with their exact digits, and as strings for IEEE754Compatible=true', async () => {
      const text = await (await get('/POLineItems?$top=1&$select=UnitPrice')).text();
      expect(text).toMatch(/"UnitPrice":-?\d+(\.\d+)?[,}]/);
      const compatible = await (
        await get('/POLineItems?$top=1&$select=UnitPrice', { accept: 'application/json;IEEE754Compatible=true' })
      ).text();
      expect(compatible).toMatch(/"UnitPrice":"-?\d+(\.\d+)?"/);
    });
  });

  describe('single entities and contained collections', () => {
    it("reads WorkOrders('<id>') and its Comments and ActualLabor, with query options", async () => {
      const [wo] = (await json(await get('/WorkOrders?$top=1'))).value!;
      const id = String(wo!['WorkOrderID']);
      const one = await get(`/WorkOrders('${id}')`);
      expect(one.status).toBe(200);
      const body = await json(one);
      expect(body['@odata.context']).toBe(`${s.root}/$metadata#WorkOrders/$entity`);
      expect(body['WorkOrderID']).toBe(id);
      const encoded = await get(`/WorkOrders(%27${encodeURIComponent(id)}%27)?$select=Description`);
      expect(Object.keys(await json(encoded)).filter((k) => !k.startsWith('@'))).toEqual(['Description']);
      for (const nav of ['Comments', 'ActualLabor']) {
        const children = await get(`/WorkOrders('${id}')/${nav}?$top=2&$count=true`);
        expect(children.status).toBe(200);
        const c = await json(children);
        expect(Array.isArray(c.value)).toBe(true);
        expect(typeof c['@odata.count']).toBe('number');
      }
    });

    it('reads composite keys and meter history', async () => {
      const [line] = (await json(await get('/POLineItems?$top=1'))).value!;
      const path = `/POLineItems(PONumber='${String(line!['PONumber'])}',LineNumber=${String(line!['LineNumber'])})`;
      expect((await json(await get(path)))['LineNumber']).toBe(line!['LineNumber']);
      const [meter] = (await json(await get('/MeterReadings?$top=1'))).value!;
      const history = await json(
        await get(`/MeterReadings('${String(meter!['MeterID'])}')/History?$orderby=ReadingID desc`),
      );
      expect(history.value!.length).toBeGreaterThan(0);
    });

    it('reads a navigation collection of one parent only (PurchaseOrders(...)/Lines)', async () => {
      const [po] = (await json(await get(`/PurchaseOrders?$filter=${encodeURIComponent('Lines/any()')}&$top=1`)))
        .value!;
      const number = String(po!['PONumber']);
      const lines = await json(await get(`/PurchaseOrders('${number}')/Lines?$count=true`));
      const direct = await json(
        await get(`/POLineItems?$filter=${encodeURIComponent(`PONumber eq '${number}'`)}&$count=true`),
      );
      expect(lines['@odata.count']).toBe(direct['@odata.count']);
      expect(lines.value!.every((l) => l['PONumber'] === number)).toBe(true);
    });

    it('answers 404 for an unknown key and 400 for a malformed one', async () => {
      expect((await get("/WorkOrders('WO-NOPE')")).status).toBe(404);
      expect((await get("/WorkOrders('unterminated)")).status).toBe(400);
      expect((await get("/POLineItems(PONumber='PO-1')")).status).toBe(400);
    });
  });

  describe('writes', () => {
    it('creates a purchase order (server-assigned key, defaults) and patches it by body key and by path', async () => {
      const created = await send('POST', '/PurchaseOrders', { VendorID: 'V-0001', FreightAmount: 12.5 });
      expect(created.status).toBe(201);
      const po = await json(created);
      expect(po['PONumber']).toMatch(/^PO-\d{6}$/);
      expect(po['Status']).toBe('Draft');
      expect(po['Currency']).toBe('USD');
      expect(created.headers.get('location')).toBe(`${s.root}/PurchaseOrders('${String(po['PONumber'])}')`);
      const patched = await send('PATCH', '/PurchaseOrders', { PONumber: po['PONumber'], Status: 'Approved' });
      expect(patched.status).toBe(200);
      expect((await json(patched))['Status']).toBe('Approved');
      const byPath = await send('PATCH', `/PurchaseOrders('${String(po['PONumber'])}')`, { Buyer: 'kim' });
      expect((await json(byPath))['Buyer']).toBe('kim');
      const read = await json(await get(`/PurchaseOrders('${String(po['PONumber'])}')`));
      expect(read['Status']).toBe('Approved');
      expect(read['Buyer']).toBe('kim');
      const minimal = await send(
        'PATCH',
        '/PurchaseOrders',
        { PONumber: po['PONumber'], Buyer: 'lee' },
        { prefer: 'return=minimal' },
      );
      expect(minimal.status).toBe(204);
    });

    it('creates lines with the next free line number and a computed extended price', async () => {
      const po = await json(await send('POST', '/PurchaseOrders', { VendorID: 'V-0002' }));
      const line = {
        PONumber: po['PONumber'],
        Description: 'Seal kit',
        QuantityOrdered: 3,
        UnitOfMeasure: 'EA',
        UnitPrice: '12.345',
      };
      const first = await json(await send('POST', '/POLineItems', line));
      const second = await json(await send('POST', '/POLineItems', line));
      expect([first['LineNumber'], second['LineNumber']]).toEqual([1, 2]);
      expect(first['ExtendedPrice']).toBe(37.035);
      const orphan = await send('POST', '/POLineItems', { ...line, PONumber: 'PO-NOPE' });
      expect(orphan.status).toBe(400);
      expect(((await json(orphan))['error'] as { target: string }).target).toBe('PONumber');
    });

    it('refuses bad bodies with 400 naming the field, and writes nothing', async () => {
      const before = (await json(await get('/PurchaseRequests?$count=true&$top=0')))['@odata.count'];
      const cases: [unknown, string | undefined][] = [
        [{ RequestedBy: 'x', Priority: 9 }, 'Priority'],
        [{ RequestedBy: 'x', Status: 'Lost' }, 'Status'],
        [{ RequestedBy: 'x', Nope: 1 }, 'Nope'],
        [{ RequestedBy: 'x', CreatedDate: '2024-01-01T00:00:00Z' }, 'CreatedDate'],
        [{ Priority: 2 }, 'RequestedBy'],
        [{ RequestedBy: 'x'.repeat(41) }, 'RequestedBy'],
        [[1, 2], undefined],
      ];
      for (const [body, target] of cases) {
        const response = await send('POST', '/PurchaseRequests', body);
        expect(response.status, JSON.stringify(body)).toBe(400);
        const error = (await json(response))['error'] as { code: string; target?: string; message: string };
        if (target !== undefined) expect(error.target, error.message).toBe(target);
      }
      const after = (await json(await get('/PurchaseRequests?$count=true&$top=0')))['@odata.count'];
      expect(after).toBe(before);
    });

    it('answers 409 for a duplicate key and 404 for patching an unknown one', async () => {
      const bpo = {
        BlanketPONumber: `BPO-${Date.now() % 1_000_000}`,
        VendorID: 'V-1',
        StartDate: '2024-01-01',
        LimitAmount: 1000,
      };
      expect((await send('POST', '/BlanketPOs', bpo)).status).toBe(201);
      expect((await send('POST', '/BlanketPOs', bpo)).status).toBe(409);
      expect((await send('PATCH', '/BlanketPOs', { BlanketPONumber: 'BPO-NOPE', VendorID: 'V-2' })).status).toBe(404);
      expect((await send('PATCH', '/BlanketPOs', { VendorID: 'V-2' })).status).toBe(400);
    });

    it('takes attachments as base64 (never returned), counts their bytes, and answers 413 beyond 10 MiB', async () => {
      const po = await json(await send('POST', '/PurchaseOrders', { VendorID: 'V-ATT' }));
      const content = Buffer.from('%PDF-1.4 quote');
      const response = await send('POST', '/POAttachments', {
        PONumber: po['PONumber'],
        FileName: 'quote.pdf',
        ContentType: 'application/pdf',
        DocumentType: 'Quote',
        ContentBase64: content.toString('base64'),
      });
      expect(response.status).toBe(201);
      const attachment = await json(response);
      expect(attachment['SizeBytes']).toBe(content.length);
      expect(attachment['UploadedBy']).toMatch(/^key:k/);
      expect(attachment).not.toHaveProperty('ContentBase64');
      expect(attachment['AttachmentID']).toMatch(/^[0-9a-f-]{36}$/);
      const location = response.headers.get('location')!;
      expect((await fetch(location, { headers: { API_KEY: s.key } })).status).toBe(200);
      const bad = await send('POST', '/POAttachments', {
        PONumber: po['PONumber'],
        FileName: '../etc/passwd',
        ContentType: 'text/plain',
      });
      expect(bad.status).toBe(400);
      const large = await send('POST', '/POAttachments', {
        PONumber: po['PONumber'],
        FileName: 'big.bin',
        ContentType: 'application/octet-stream',
        ContentBase64: Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64'),
      });
      expect(large.status).toBe(413);
      expect(((await json(large))['error'] as { code: string }).code).toBe('PayloadTooLarge');
    });

    it('records meter readings, keeping history and the latest as current', async () => {
      const meter = `M-${Date.now() % 1_000_000}`;
      const first = await send('POST', '/MeterReadings', {
        MeterID: meter,
        MeterReading: 10.5,
        ReadingDate: '2024-05-01T08:30:00',
      });
      expect(first.status).toBe(201);
      await send('POST', '/MeterReadings', { MeterID: meter, MeterReading: 9, ReadingDate: '2024-04-01T08:30:00Z' });
      const current = await json(await get(`/MeterReadings('${meter}')`));
      expect(current['MeterReading']).toBe(10.5);
      expect(current['ReadingDate']).toBe('2024-05-01T08:30:00.000Z');
      const history = await json(await get(`/MeterReadings('${meter}')/History?$count=true`));
      expect(history['@odata.count']).toBe(2);
      expect((await send('POST', '/MeterReadings', { MeterReading: 1 })).status).toBe(400);
    });
  });

  describe('actions', () => {
    it('AddComment answers true and adds a comment; names with quotes work, encoded or not', async () => {
      const [wo] = (await json(await get('/WorkOrders?$top=1'))).value!;
      const id = String(wo!['WorkOrderID']);
      const response = await send('POST', `/WorkOrders('${id}')/AddComment`, {
        Comment: 'Checked the seal',
        Username: 'kim',
      });
      expect(response.status).toBe(200);
      // the interface's answer is the JSON text `true` itself (MODEL.md), not OData's {"value":true}
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(await response.text()).toBe('true');
      const comments = await json(await get(`/WorkOrders('${id}')/Comments?$orderby=CommentID desc&$top=1`));
      expect(comments.value![0]!['Comment']).toBe('Checked the seal');
      const encoded = await send('POST', `/WorkOrders(%27${encodeURIComponent(id)}%27)/AddComment`, {
        Comment: 'again',
        Username: 'kim',
      });
      expect(encoded.status).toBe(200);
      expect((await send('POST', `/WorkOrders('O''Neil')/AddComment`, { Comment: 'x', Username: 'y' })).status).toBe(
        404,
      );
      expect((await send('POST', `/WorkOrders('${id}')/AddComment`, { Comment: '  ', Username: 'kim' })).status).toBe(
        400,
      );
      expect((await send('POST', `/WorkOrders('${id}')/AddComment`, { Comment: 'x' })).status).toBe(400);
    });

    it('RemoveActualLabor removes one matching record (decimals and instants by value) and keeps the sums', async () => {
      const [wo] = (await json(await get(`/WorkOrders?$filter=${encodeURIComponent('ActualLabor/any()')}&$top=1`)))
        .value!;
      const id = String(wo!['WorkOrderID']);
      const labor = await json(await get(`/WorkOrders('${id}')/ActualLabor?$count=true`));
      const record = labor.value![0]!;
      const start = new Date(String(record['StartDate']));
      const shifted = new Date(start.getTime() + 2 * 3_600_000)
        .toISOString()
        .replace('.000Z', '+02:00')
        .replace('Z', '+02:00');
      const body = {
        Craft: record['Craft'],
        // the same decimal written with a trailing zero: 1.5 → "1.50", 8 → "8.0"
        Hours: String(record['Hours']).includes('.') ? `${String(record['Hours'])}0` : `${String(record['Hours'])}.0`,
        PeopleID: record['PeopleID'],
        StartDate: shifted,
        ...(record['OTHours'] === 0 ? {} : { OTHours: record['OTHours'] }),
      };
      const response = await send('POST', `/WorkOrders('${id}')/RemoveActualLabor`, body);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await response.text()).toBe('true');
      const after = await json(await get(`/WorkOrders('${id}')/ActualLabor?$count=true`));
      expect(after['@odata.count']).toBe((labor['@odata.count'] as number) - 1);
      const missing = await send('POST', `/WorkOrders('${id}')/RemoveActualLabor`, { ...body, PeopleID: 'NOBODY' });
      expect(missing.status).toBe(404);
      expect(((await json(missing))['error'] as { code: string }).code).toBe('LaborRecordNotFound');
    });
  });

  describe('service document, metadata and protocol errors', () => {
    it('serves the service document and $metadata (XML, and JSON on request)', async () => {
      const root = await json(await get(''));
      expect((root.value ?? []).map((v) => v['name'])).toEqual([...entitySetNames]);
      const xml = await get('/$metadata');
      expect(xml.headers.get('content-type')).toMatch(/^application\/xml/);
      const parser = new SaxesParser({ xmlns: true });
      const sets: string[] = [];
      parser.on('opentag', (tag) => {
        if (tag.local === 'EntitySet') sets.push(String(tag.attributes['Name']?.value ?? ''));
      });
      parser.write(await xml.text()).close();
      expect(sets).toEqual([...entitySetNames]);
      const csdl = await json(await get('/$metadata?$format=json'));
      expect(csdl['$Version']).toBeDefined();
    });

    it('answers 405 with Allow, 415 for a non-JSON body, 413 for an oversized one, 404 for unknown sites, sets and paths', async () => {
      const wrong = await send('DELETE', '/Accounts', '');
      expect(wrong.status).toBe(405);
      expect(wrong.headers.get('allow')).toBe('GET');
      const postAccounts = await send('POST', '/Accounts', {});
      expect(postAccounts.status).toBe(405);
      const form = await send('POST', '/PurchaseRequests', 'a=b', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(form.status).toBe(415);
      const huge = await send('POST', '/PurchaseRequests', JSON.stringify({ Notes: 'x'.repeat(17 * 1024 * 1024) }));
      expect(huge.status).toBe(413);
      expect((await fetch(`${s.origin}/nosuchsite/ODataApi/v1/Accounts`, { headers: { API_KEY: s.key } })).status).toBe(
        404,
      );
      expect((await get('/Acounts')).status).toBe(404);
      expect((await fetch(`${s.origin}/${s.site}/ODataApi/v2/Accounts`, { headers: { API_KEY: s.key } })).status).toBe(
        404,
      );
      const error = await json(await get('/Acounts'));
      expect((error['error'] as { message: string }).message).toContain('Accounts');
    });

    it('answers 400 with position for bad query options', async () => {
      const misspelled = await get(`/Accounts?$filter=${encodeURIComponent("Acount eq 'x'")}`);
      expect(misspelled.status).toBe(400);
      const body = (await json(misspelled))['error'] as { code: string; target: string; message: string };
      expect(body.code).toBe('UnknownProperty');
      expect(body.target).toBe('$filter');
      const unquoted = await get(`/Accounts?$filter=${encodeURIComponent('Account eq 5100-200x')}`);
      expect(unquoted.status).toBe(400);
      const doubleQuoted = await get(`/Accounts?$filter=${encodeURIComponent('Account eq "5100"')}`);
      expect(doubleQuoted.status).toBe(400);
    });
  });

  describe('authentication and tenancy', () => {
    const at = (path: string, headers: Record<string, string>) => fetch(`${s.root}${path}`, { headers });
    const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

    it('answers 401 with WWW-Authenticate without credentials, with a bad key, and with another site key', async () => {
      for (const headers of [{}, { API_KEY: 'nope' }, { API_KEY: `${s.key}x` }, { API_KEY: s.otherKey }]) {
        const response = await at('/Accounts', headers);
        expect(response.status, JSON.stringify(headers)).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Basic/);
        expect(((await json(response))['error'] as { code: string }).code).toBe('Unauthorized');
      }
    });

    it('accepts Basic credentials of a site user; the API key decides when both are sent', async () => {
      expect((await at('/Accounts', { authorization: basic(s.user.name, s.user.password) })).status).toBe(200);
      expect((await at('/Accounts', { authorization: basic(s.user.name, 'wrong password') })).status).toBe(401);
      expect(
        (await at('/Accounts', { authorization: basic(s.user.name, s.user.password), API_KEY: 'bad' })).status,
      ).toBe(401);
      expect((await at('/Accounts', { authorization: basic('nobody', s.user.password), API_KEY: s.key })).status).toBe(
        200,
      );
    });

    it('keeps sites apart: each key reads its own site only', async () => {
      const mine = await json(await at('/WorkOrders?$select=WorkOrderID,Description&$top=5', { API_KEY: s.key }));
      const theirs = await json(
        await fetch(`${s.origin}/${s.otherSite}/ODataApi/v1/WorkOrders?$select=WorkOrderID,Description&$top=5`, {
          headers: { API_KEY: s.otherKey },
        }),
      );
      expect(mine.value).not.toEqual(theirs.value);
      const written = await json(await send('POST', '/PurchaseOrders', { VendorID: 'V-ISOLATION' }));
      const other = await json(
        await fetch(
          `${s.origin}/${s.otherSite}/ODataApi/v1/PurchaseOrders?$filter=${encodeURIComponent("VendorID eq 'V-ISOLATION'")}`,
          {
            headers: { API_KEY: s.otherKey },
          },
        ),
      );
      expect(written['VendorID']).toBe('V-ISOLATION');
      expect(other.value).toEqual([]);
    });

    it('stops accepting a revoked key', async () => {
      const { id, key } = await s.backend.directory.createKey(s.site, 'temporary');
      expect((await at('/Accounts', { API_KEY: key })).status).toBe(200);
      await s.backend.directory.revokeKey(s.site, id);
      expect((await at('/Accounts', { API_KEY: key })).status).toBe(401);
    });
  });
});
