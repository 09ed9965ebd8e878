// Request bodies end to end (issue 12), on a real port over SQLite and the PostgreSQL server: numbers are stored
// with the digits sent (JSON.parse would have made 1234567890123.4567 into …4568, refused 99999999999999.9999 and
// stored 1e-400 as 0), in POST, PATCH, action parameters and `import`'s JSON files; and every string has a maximum
// (a 15 MiB Notes is refused instead of making every read of its set a 500). Stored decimals are read back digit for
// digit from the raw answer text (a JSON.parse of the answer would lose the digits under test), as JSON numbers and,
// with IEEE754Compatible=true, as strings; the server writes them canonically (no exponent, no trailing zeros).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminError, importRecords, parseRecords } from '../../src/server/admin.js';
import { decimalSent } from './decimal-forms.js';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages({ mysql: true });

const IEEE = 'application/json;IEEE754Compatible=true';

/** The raw JSON text of one member of an answer: `"Name":<token>` (the answers put no space after the colon). */
function member(text: string, name: string): string | undefined {
  const match = new RegExp(`"${name}":("[^"]*"|[^,}]*)`).exec(text);
  return match?.[1];
}

describe.each(kinds)('request body values on %s', (storage) => {
  let s: RunningServer;
  let orderNumber = '';
  beforeAll(async () => {
    s = await startServer(storage);
    const created = await post('/PurchaseOrders', '{"VendorID":"V-EXACT"}');
    orderNumber = String((JSON.parse(await created.text()) as Record<string, unknown>)['PONumber']);
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string, accept?: string) =>
    fetch(`${s.root}${path}`, { headers: { API_KEY: s.key, ...(accept === undefined ? {} : { accept }) } });
  const write = (method: string, path: string, body: string, contentType = 'application/json') =>
    fetch(`${s.root}${path}`, { method, headers: { API_KEY: s.key, 'content-type': contentType }, body });
  function post(path: string, body: string, contentType?: string) {
    return write('POST', path, body, contentType);
  }
  const count = async (set: string): Promise<number> => Number(await (await get(`/${set}/$count`)).text());
  async function errorOf(response: Response): Promise<{ code: string; message: string; target?: string }> {
    expect(response.status).toBe(400);
    return (JSON.parse(await response.text()) as { error: { code: string; message: string; target?: string } }).error;
  }
  /** The member as a JSON number in a plain read and as a string in an IEEE754Compatible one. */
  async function expectStored(path: string, name: string, canonical: string): Promise<void> {
    expect(member(await (await get(path)).text(), name), `${path} ${name}`).toBe(canonical);
    expect(member(await (await get(path, IEEE)).text(), name), `${path} ${name} (IEEE754Compatible)`).toBe(
      `"${canonical}"`,
    );
  }

  describe('numbers keep the digits sent', () => {
    it('POST: 1234567890123.4567 and 99999999999999.9999 (Decimal(18,4)) are stored and answered digit for digit', async () => {
      const response = await post(
        '/PurchaseOrders',
        '{"VendorID":"V-1","FreightAmount":1234567890123.4567,"TaxAmount":99999999999999.9999}',
      );
      const text = await response.text();
      expect(response.status, text).toBe(201);
      expect([member(text, 'FreightAmount'), member(text, 'TaxAmount')]).toEqual([
        '1234567890123.4567',
        '99999999999999.9999',
      ]);
      const path = `/PurchaseOrders('${String(JSON.parse(text).PONumber)}')`;
      await expectStored(path, 'FreightAmount', '1234567890123.4567');
      await expectStored(path, 'TaxAmount', '99999999999999.9999');
      const negative = await post('/PurchaseOrders', '{"VendorID":"V-1","FreightAmount":-99999999999999.9999}');
      expect(member(await negative.text(), 'FreightAmount')).toBe('-99999999999999.9999');
    });

    it('exponent forms, -0 and trailing zeros are stored as their value', async () => {
      const cases: [json: string, canonical: string][] = [
        ['1.5E+3', '1500'],
        ['1.5e3', '1500'],
        ['15000E-1', '1500'],
        ['-0', '0'],
        ['0.10', '0.1'],
        ['-1.2345E+2', '-123.45'],
        ['123456789012345678E-4', '12345678901234.5678'],
        [`12.34${'0'.repeat(394)}`, '12.34'], // a number of 400 characters
      ];
      for (const [json, canonical] of cases) {
        const response = await post('/PurchaseOrders', `{"VendorID":"V-2","FreightAmount":${json}}`);
        const text = await response.text();
        expect(response.status, `${json}: ${text}`).toBe(201);
        await expectStored(`/PurchaseOrders('${String(JSON.parse(text).PONumber)}')`, 'FreightAmount', canonical);
      }
    });

    it('1e-400, 1.000…0001 (400 characters) and 100000000000000.0001 are refused by the facets, and nothing is written', async () => {
      const before = await count('PurchaseOrders');
      const cases: [json: string, message: RegExp][] = [
        ['1e-400', /^FreightAmount must have at most 4 digits after the decimal point .*; received 1e-400$/],
        [
          `1.${'0'.repeat(397)}1`,
          /^FreightAmount must have at most 4 digits after the decimal point .*; received 1\.0{38}… \(400 characters\)$/,
        ],
        ['100000000000000.0001', /^FreightAmount must have at most 14 digits before the decimal point/],
        ['1e99999', /received 1e99999 \(its exponent is out of range\)$/],
      ];
      for (const [json, message] of cases) {
        const error = await errorOf(await post('/PurchaseOrders', `{"VendorID":"V-3","FreightAmount":${json}}`));
        expect([error.code, error.target]).toEqual(['InvalidBody', 'FreightAmount']);
        expect(error.message).toMatch(message);
      }
      expect(await count('PurchaseOrders')).toBe(before);
    });

    it('PATCH, and a Content-Type with IEEE754Compatible=true (decimals as strings both ways)', async () => {
      const created = await post('/PurchaseOrders', '{"VendorID":"V-4"}');
      const number = String(JSON.parse(await created.text()).PONumber);
      const path = `/PurchaseOrders('${number}')`;
      const patched = await write('PATCH', path, '{"FreightAmount":1234567890123.4567}');
      expect(member(await patched.text(), 'FreightAmount')).toBe('1234567890123.4567');
      await expectStored(path, 'FreightAmount', '1234567890123.4567');
      const byBody = await write(
        'PATCH',
        '/PurchaseOrders',
        `{"PONumber":"${number}","TaxAmount":"99999999999999.9999","FreightAmount":"0.0001"}`,
        IEEE,
      );
      const text = await byBody.text();
      expect(byBody.status, text).toBe(200);
      expect([member(text, 'TaxAmount'), member(text, 'FreightAmount')]).toEqual(['"99999999999999.9999"', '"0.0001"']);
      await expectStored(path, 'TaxAmount', '99999999999999.9999');
    });

    it('action parameters: a Hours a double reads as 1 is refused, not matched against a 1-hour record', async () => {
      const id = String(
        (
          JSON.parse(await (await get('/WorkOrders?$top=1&$select=WorkOrderID')).text()) as {
            value: { WorkOrderID: string }[];
          }
        ).value[0]!.WorkOrderID,
      );
      await importRecords(s.backend, s.site, 'ActualLabor', [
        { WorkOrderID: id, PeopleID: 'P-EXACT', Craft: 'MECH', Hours: '1', StartDate: '2024-02-09T18:45:00Z' },
      ]);
      const remove = (hours: string) =>
        post(
          `/WorkOrders('${id}')/RemoveActualLabor`,
          `{"Craft":"MECH","Hours":${hours},"PeopleID":"P-EXACT","StartDate":"2024-02-09T18:45:00Z"}`,
        );
      const refused = await errorOf(await remove('1.0000000000000001'));
      expect([refused.code, refused.target]).toEqual(['InvalidBody', 'Hours']);
      const removed = await remove('1.00E0');
      expect([removed.status, await removed.text()]).toEqual([200, 'true']);
    });

    it('Int64: a computed SizeBytes sent anyway is named with the digits sent, at both extremes', async () => {
      for (const json of ['9223372036854775807', '-9223372036854775808']) {
        const error = await errorOf(
          await post(
            '/POAttachments',
            `{"PONumber":"${orderNumber}","FileName":"a.txt","ContentType":"text/plain","SizeBytes":${json}}`,
          ),
        );
        expect([error.target, error.message]).toEqual([
          'SizeBytes',
          `SizeBytes is set by the server and cannot be sent in a POAttachment body; received ${json}`,
        ]);
      }
    });

    it("import's JSON files keep the digits too, and refuse a name twice in a record", async () => {
      const records = parseRecords(
        '[\n  {"PONumber":"PO-IMPORT-1","VendorID":"V-5","FreightAmount":1234567890123.4567,"TaxAmount":99999999999999.9999}\n]',
        'json',
      );
      await importRecords(s.backend, s.site, 'PurchaseOrders', records);
      await expectStored(`/PurchaseOrders('PO-IMPORT-1')`, 'FreightAmount', '1234567890123.4567');
      await expectStored(`/PurchaseOrders('PO-IMPORT-1')`, 'TaxAmount', '99999999999999.9999');
      expect(() => parseRecords('[\n {"VendorID":"V","VendorID":"W"}\n]', 'json')).toThrowError(
        new AdminError(
          'The file is not valid JSON: the name "VendorID" appears twice in one object at position 19 (line 2, column 18)',
        ),
      );
      expect(() => parseRecords('[1]', 'json')).toThrowError(new AdminError('Record 1 is not a JSON object'));
      const refused = parseRecords('[{"VendorID":"V-6","FreightAmount":1e-400}]', 'json');
      await expect(importRecords(s.backend, s.site, 'PurchaseOrders', refused)).rejects.toThrow(
        /^Record 1 \(FreightAmount\): FreightAmount must have at most 4 digits after the decimal point/,
      );
    });

    it('property: decimals of both facets of the model, as JSON numbers or strings, read back digit for digit', async () => {
      await fc.assert(
        fc.asyncProperty(
          decimalSent(18, 4),
          decimalSent(12, 2),
          fc.boolean(),
          fc.boolean(),
          fc.boolean(),
          async (price, received, priceAsString, receivedAsString, compatible) => {
            const json = (sent: { token: string }, asString: boolean) =>
              asString ? JSON.stringify(sent.token) : sent.token;
            const body =
              `{"PONumber":"${orderNumber}","Description":"d","QuantityOrdered":1,"UnitOfMeasure":"EA",` +
              `"UnitPrice":${json(price, priceAsString)},"QuantityReceived":${json(received, receivedAsString)}}`;
            const response = await post('/POLineItems', body, compatible ? IEEE : 'application/json');
            const text = await response.text();
            expect(response.status, `${body} → ${text}`).toBe(201);
            const quote = compatible ? '"' : '';
            expect([
              member(text, 'UnitPrice'),
              member(text, 'QuantityReceived'),
              member(text, 'ExtendedPrice'),
            ]).toEqual([price.canonical, received.canonical, price.canonical].map((c) => `${quote}${c}${quote}`));
            const path = `/POLineItems(PONumber='${orderNumber}',LineNumber=${String(JSON.parse(text).LineNumber)})`;
            await expectStored(path, 'UnitPrice', price.canonical);
            await expectStored(path, 'QuantityReceived', received.canonical);
          },
        ),
        { numRuns: 60 },
      );
    }, 60_000);
  });

  describe('bodies that are not JSON', () => {
    it('are 400 InvalidBody with the position, a name twice and 100,000 [ included; nothing is written', async () => {
      const before = await count('PurchaseRequests');
      const cases: [body: string, message: string][] = [
        [
          '{"RequestedBy":"KIM",}',
          "The body is not valid JSON: expected a property name in double quotes at position 21; found '}'",
        ],
        [
          '{"RequestedBy":"KIM","Priority":1,"Priority":5}',
          'The body is not valid JSON: the name "Priority" appears twice in one object at position 34',
        ],
        [
          '['.repeat(100_000),
          'The body is not valid JSON: arrays and objects are nested more than 100 deep at position 100',
        ],
        [
          `{"RequestedBy":${'['.repeat(100_000)}`,
          'The body is not valid JSON: arrays and objects are nested more than 100 deep at position 114',
        ],
      ];
      for (const [body, message] of cases) {
        const error = await errorOf(await post('/PurchaseRequests', body));
        expect([error.code, error.message, error.target]).toEqual(['InvalidBody', message, undefined]);
      }
      expect(await count('PurchaseRequests')).toBe(before);
    });
  });

  describe('every string has a maximum', () => {
    it.each(['PurchaseOrders', 'PurchaseRequests'])(
      '%s.Notes: 4000 characters are stored, 4001 and 15 MiB are refused',
      async (set) => {
        const base = set === 'PurchaseOrders' ? '"VendorID":"V-7"' : '"RequestedBy":"KIM"';
        const notes = 'ñ'.repeat(3999) + '🚀'; // 4000 code points
        const created = await post(`/${set}`, `{${base},"Notes":${JSON.stringify(notes)}}`);
        const text = await created.text();
        expect(created.status, text).toBe(201);
        const key = set === 'PurchaseOrders' ? 'PONumber' : 'PRNumber';
        const path = `/${set}('${String(JSON.parse(text)[key])}')`;
        expect(JSON.parse(await (await get(path)).text()).Notes).toBe(notes);
        const before = await count(set);
        for (const length of [4001, 15 * 1024 * 1024]) {
          const error = await errorOf(await post(`/${set}`, `{${base},"Notes":"${'n'.repeat(length)}"}`));
          expect([error.code, error.target]).toEqual(['InvalidBody', 'Notes']);
          expect(error.message).toMatch(
            new RegExp(`^Notes must be at most 4000 characters long; received ${length} characters`),
          );
        }
        const patch = await errorOf(await write('PATCH', path, `{"Notes":"${'n'.repeat(4001)}"}`));
        expect(patch.target).toBe('Notes');
        expect(await count(set)).toBe(before);
        expect(JSON.parse(await (await get(path)).text()).Notes).toBe(notes);
        // the plain read of the set keeps answering
        expect((await get(`/${set}`)).status).toBe(200);
      },
    );

    it('$metadata shows MaxLength 4000 on Notes', async () => {
      const xml = await (await get('/$metadata')).text();
      const notes = xml.match(/<Property Name="Notes"[^>]*>/g) ?? [];
      expect(notes).toHaveLength(2);
      for (const property of notes) expect(property).toContain('MaxLength="4000"');
    });
  });
});
