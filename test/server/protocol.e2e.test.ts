// OData protocol details of the reference server over real HTTP (issue 12's protocol findings): property paths and
// `/$value`, navigation paths with their context URLs (Protocol §10), `/$count` and keys under a navigation, 501 for
// resources OData defines that the service does not offer yet, content negotiation (406, `$format`,
// `odata.metadata=none`, IEEE754Compatible on `@odata.count` and in Content-Type, no charset unless asked), and
// absolute-form request targets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, storages, type RunningServer } from './harness.js';
import { exchange } from './raw-http.js';

const kinds = await storages({ mysql: true });

type Json = Record<string, unknown> & { value?: Record<string, unknown>[] };

describe.each(kinds)('OData protocol on %s', (storage) => {
  let s: RunningServer;
  let port: number;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 20 });
    port = Number(new URL(s.origin).port);
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${s.root}${path}`, { headers: { API_KEY: s.key, ...headers } });
  const json = async (response: Response): Promise<Json> => (await response.json()) as Json;
  const context = (path: string): string => `${s.root}/$metadata#${path}`;

  async function anOrderWithLines(): Promise<{ order: string; lines: Record<string, unknown>[] }> {
    const lines = (await json(await get(`/POLineItems?$top=20&$orderby=PONumber,LineNumber`))).value!;
    const order = String(lines[0]!['PONumber']);
    return { order, lines: lines.filter((l) => l['PONumber'] === order) };
  }

  describe('property paths', () => {
    it('serves a property and its raw value, and 204 for a null one', async () => {
      const part = (await json(await get('/Parts?$top=1'))).value![0]!;
      const id = String(part['PartID']);
      const response = await get(`/Parts('${encodeURIComponent(id)}')/Description`);
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body).toEqual({
        '@odata.context': context(`Parts('${encodeURIComponent(id)}')/Description`),
        value: part['Description'],
      });
      const raw = await get(`/Parts('${encodeURIComponent(id)}')/Description/$value`);
      expect(raw.status).toBe(200);
      expect(raw.headers.get('content-type')).toBe('text/plain;charset=utf-8');
      expect(await raw.text()).toBe(part['Description']);
      // a decimal keeps its digits, as a number or (IEEE754Compatible) a string
      const cost = await json(await get(`/Parts('${encodeURIComponent(id)}')/QuantityOnHand`));
      expect(cost['value']).toBe(part['QuantityOnHand']);
      const asString = await json(
        await get(`/Parts('${encodeURIComponent(id)}')/QuantityOnHand`, {
          accept: 'application/json;IEEE754Compatible=true',
        }),
      );
      expect(asString['value']).toBe(String(part['QuantityOnHand']));
      const withNull = (await json(await get(`/PurchaseOrders?$filter=Notes eq null&$top=1`))).value![0]!;
      const empty = await get(`/PurchaseOrders('${encodeURIComponent(String(withNull['PONumber']))}')/Notes`);
      expect(empty.status).toBe(204);
      expect(await empty.text()).toBe('');
      expect(
        (await get(`/PurchaseOrders('${encodeURIComponent(String(withNull['PONumber']))}')/Notes/$value`)).status,
      ).toBe(204);
    });

    it('answers 404 for a name that is nothing of the entity, 400 for a write-only property, 405 for a write', async () => {
      const part = (await json(await get('/Parts?$top=1'))).value![0]!;
      const id = encodeURIComponent(String(part['PartID']));
      const unknown = await get(`/Parts('${id}')/Descriptoin`);
      expect(unknown.status).toBe(404);
      expect(((await json(unknown))['error'] as { message: string }).message).toMatch(
        /no property, navigation or action/,
      );
      expect((await get(`/Parts('NO-SUCH-PART')/Description`)).status).toBe(404);
      const attachment = (await json(await get('/POAttachments?$top=1'))).value![0];
      if (attachment !== undefined) {
        const writeOnly = await get(`/POAttachments(${String(attachment['AttachmentID'])})/ContentBase64`);
        expect(writeOnly.status).toBe(400);
        expect(((await json(writeOnly))['error'] as { code: string }).code).toBe('NotQueryable');
      }
      const patch = await fetch(`${s.root}/Parts('${id}')/Description`, {
        method: 'PATCH',
        headers: { API_KEY: s.key, 'content-type': 'application/json' },
        body: '{"value":"x"}',
      });
      expect(patch.status).toBe(405);
      expect(patch.headers.get('allow')).toBe('GET');
    });
  });

  describe('navigation paths', () => {
    it('names the target entity set in the context URL of a non-contained navigation (Protocol §10)', async () => {
      const { order, lines } = await anOrderWithLines();
      const response = await get(`/PurchaseOrders('${order}')/Lines?$select=LineNumber`);
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(body['@odata.context']).toBe(context('POLineItems(LineNumber)'));
      expect(body.value!.map((l) => l['LineNumber'])).toEqual(lines.map((l) => l['LineNumber']));
      expect((await json(await get(`/PurchaseOrders('${order}')/Lines`)))['@odata.context']).toBe(
        context('POLineItems'),
      );
    });

    it('names the containing entity in the context URL of a contained navigation', async () => {
      const [wo] = (await json(await get(`/WorkOrders?$filter=${encodeURIComponent('Comments/any()')}&$top=1`))).value!;
      const id = encodeURIComponent(String(wo!['WorkOrderID']));
      const comments = await json(await get(`/WorkOrders('${id}')/Comments?$select=Comment`));
      expect(comments['@odata.context']).toBe(context(`WorkOrders('${id}')/Comments(Comment)`));
      const first = (await json(await get(`/WorkOrders('${id}')/Comments?$top=1`))).value![0]!;
      const one = await get(`/WorkOrders('${id}')/Comments(${String(first['CommentID'])})`);
      expect(one.status).toBe(200);
      const entity = await json(one);
      expect(entity['@odata.context']).toBe(context(`WorkOrders('${id}')/Comments/$entity`));
      expect(entity['Comment']).toBe(first['Comment']);
      const text = await get(`/WorkOrders('${id}')/Comments(${String(first['CommentID'])})/Comment/$value`);
      expect(await text.text()).toBe(first['Comment']);
      expect((await get(`/WorkOrders('${id}')/Comments(999999)`)).status).toBe(404);
    });

    it('counts a navigation collection and reads one of its entities by the key parts the parent leaves open', async () => {
      const { order, lines } = await anOrderWithLines();
      const count = await get(`/PurchaseOrders('${order}')/Lines/$count`);
      expect(count.status).toBe(200);
      expect(count.headers.get('content-type')).toBe('text/plain;charset=utf-8');
      expect(await count.text()).toBe(String(lines.length));
      const filtered = await get(
        `/PurchaseOrders('${order}')/Lines/$count?$filter=${encodeURIComponent(`LineNumber eq ${String(lines[0]!['LineNumber'])}`)}`,
      );
      expect(await filtered.text()).toBe('1');
      const line = lines[0]!;
      const short = await json(await get(`/PurchaseOrders('${order}')/Lines(${String(line['LineNumber'])})`));
      expect(short['@odata.context']).toBe(context('POLineItems/$entity'));
      expect(short['Description']).toBe(line['Description']);
      const full = await json(
        await get(`/PurchaseOrders('${order}')/Lines(PONumber='${order}',LineNumber=${String(line['LineNumber'])})`),
      );
      expect(full['Description']).toBe(line['Description']);
      // a key part that contradicts the parent names nothing
      expect(
        (await get(`/PurchaseOrders('${order}')/Lines(PONumber='ELSEWHERE',LineNumber=${String(line['LineNumber'])})`))
          .status,
      ).toBe(404);
    });
  });

  describe('what OData defines and the service does not offer yet', () => {
    it.each([
      ['GET', '/$all'],
      ['GET', '/$crossjoin(Parts,Accounts)'],
      ['GET', '/$entity?$id=Parts(%27P-1%27)'],
    ])('%s %s is a 501, not a 404', async (method, path) => {
      const response = await fetch(`${s.root}${path}`, {
        method,
        headers: { API_KEY: s.key, 'content-type': 'multipart/mixed;boundary=b' },
        ...(method === 'POST' ? { body: '--b--' } : {}),
      });
      expect(response.status).toBe(501);
      expect(((await json(response))['error'] as { code: string }).code).toBe('NotImplemented');
    });

    it('answers $ref with 501 where the navigation exists and 404 where it does not', async () => {
      const { order } = await anOrderWithLines();
      expect((await get(`/PurchaseOrders('${order}')/Lines/$ref`)).status).toBe(501);
      expect((await get(`/PurchaseOrders('${order}')/Lins/$ref`)).status).toBe(404);
    });

    it('still asks for credentials first', async () => {
      expect((await fetch(`${s.root}/$batch`, { method: 'POST' })).status).toBe(401);
    });
  });

  describe('content negotiation', () => {
    it('writes @odata.count as a string and echoes IEEE754Compatible=true in Content-Type', async () => {
      const response = await get('/Parts?$count=true&$top=1', { accept: 'application/json;IEEE754Compatible=true' });
      expect(response.headers.get('content-type')).toBe(
        'application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=true',
      );
      const body = await json(response);
      expect(typeof body['@odata.count']).toBe('string');
      const plain = await json(await get('/Parts?$count=true&$top=1'));
      expect(body['@odata.count']).toBe(String(plain['@odata.count']));
      expect(typeof plain['@odata.count']).toBe('number');
    });

    it('adds no charset parameter unless the client names one', async () => {
      expect((await get('/Accounts?$top=1')).headers.get('content-type')).toBe(
        'application/json;odata.metadata=minimal;odata.streaming=true',
      );
      expect(
        (await get('/Accounts?$top=1', { accept: 'application/json;charset=utf-8' })).headers.get('content-type'),
      ).toBe('application/json;odata.metadata=minimal;odata.streaming=true;charset=utf-8');
      expect((await get('/$metadata')).headers.get('content-type')).toBe('application/xml');
    });

    it('answers odata.metadata=none without a context URL', async () => {
      const response = await get('/Accounts?$top=2&$count=true', { accept: 'application/json;odata.metadata=none' });
      expect(response.headers.get('content-type')).toBe('application/json;odata.metadata=none;odata.streaming=true');
      const body = await json(response);
      expect(body['@odata.context']).toBeUndefined();
      expect(typeof body['@odata.count']).toBe('number');
      expect(body.value).toHaveLength(2);
    });

    it('answers odata.metadata=full with each entity’s type, id, links and navigation links', async () => {
      const response = await get('/PurchaseOrders?$top=1&$select=PONumber,Status&$orderby=PONumber', {
        accept: 'application/json;odata.metadata=full',
      });
      expect(response.headers.get('content-type')).toBe('application/json;odata.metadata=full;odata.streaming=true');
      const [order] = (await json(response)).value as Record<string, unknown>[];
      const id = `${s.root}/PurchaseOrders('${String(order!['PONumber'])}')`;
      expect(order).toEqual({
        '@odata.type': '#PlantData.PurchaseOrder',
        '@odata.id': id,
        '@odata.editLink': id,
        '@odata.etag': expect.stringMatching(/^W\/"\d{4}-\d\d-\d\dT[\d:.]+Z"$/),
        'Lines@odata.navigationLink': `${id}/Lines`,
        'Attachments@odata.navigationLink': `${id}/Attachments`,
        PONumber: order!['PONumber'],
        Status: order!['Status'],
      });
      // read-only entities have a read link; contained ones an id under their parent
      const workOrder = await json(
        await get('/WorkOrders?$top=1&$filter=Comments/any()', { accept: 'application/json;odata.metadata=full' }),
      );
      const first = (workOrder.value as Record<string, unknown>[])[0]!;
      expect(first['@odata.readLink']).toBe(first['@odata.id']);
      const comments = await json(
        await get(`/WorkOrders('${String(first['WorkOrderID'])}')/Comments?$top=1`, {
          accept: 'application/json;odata.metadata=full',
        }),
      );
      expect(comments.value).toHaveLength(1);
      for (const comment of comments.value as Record<string, unknown>[])
        expect(comment['@odata.id']).toBe(
          `${s.root}/WorkOrders('${String(first['WorkOrderID'])}')/Comments(${String(comment['CommentID'])})`,
        );
    });

    it.each([
      ['application/xml', '/Accounts'],
      ['text/html', '/Accounts'],
      ['application/json;q=0, text/csv', '/Accounts'],
      ['application/json;charset=iso-8859-1', '/Accounts'],
      ['text/html', '/$metadata'],
      ['application/json', '/Accounts/$count'],
    ])('answers Accept: %s on %s with 406 NotAcceptable', async (accept, path) => {
      const response = await get(path, { accept });
      expect(response.status).toBe(406);
      expect(((await json(response))['error'] as { code: string }).code).toBe('NotAcceptable');
    });

    it('takes $format over the Accept header', async () => {
      expect((await get('/Accounts?$top=1&$format=json', { accept: 'application/xml' })).status).toBe(200);
      expect((await get('/Accounts?$top=1&$format=xml')).status).toBe(406);
      const none = await get(`/Accounts?$top=1&$format=${encodeURIComponent('application/json;odata.metadata=none')}`);
      expect((await json(none))['@odata.context']).toBeUndefined();
      expect((await get('/$metadata?$format=json')).headers.get('content-type')).toBe('application/json');
    });

    it('accepts what browsers and generic clients send', async () => {
      const browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
      expect((await get('/Accounts?$top=1', { accept: browser })).status).toBe(200);
      expect((await get('/$metadata', { accept: browser })).headers.get('content-type')).toBe('application/xml');
      expect((await get('/$metadata', { accept: 'application/json' })).headers.get('content-type')).toBe(
        'application/json',
      );
      expect((await get('/Accounts/$count', { accept: '*/*' })).status).toBe(200);
      expect((await get('/Accounts?$top=1', { accept: 'application/*' })).status).toBe(200);
    });

    it('refuses an unacceptable format before it writes anything', async () => {
      const response = await fetch(`${s.root}/PurchaseRequests`, {
        method: 'POST',
        headers: { API_KEY: s.key, 'content-type': 'application/json', accept: 'application/xml' },
        body: JSON.stringify({ PRNumber: 'PR-NEG-406', RequestedBy: 'kim' }),
      });
      expect(response.status).toBe(406);
      expect((await get(`/PurchaseRequests('PR-NEG-406')`)).status).toBe(404);
    });
  });

  it('reads an absolute-form request target (RFC 9112 §3.2.2), its authority naming the host', async () => {
    const outcome = await exchange(
      port,
      `GET http://odata.example.test:8080/${s.site}/ODataApi/v1/Accounts?$top=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAPI_KEY: ${s.key}\r\nConnection: close\r\n\r\n`,
    );
    expect(outcome.kind).toBe('response');
    if (outcome.kind !== 'response') return;
    expect(outcome.response.status).toBe(200);
    expect((JSON.parse(outcome.response.body) as Json)['@odata.context']).toBe(
      `http://odata.example.test:8080/${s.site}/ODataApi/v1/$metadata#Accounts`,
    );
  });
});

describe.each(kinds)('pages capped in bytes on %s', (storage) => {
  let s: RunningServer;
  const cap = 4096;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 100, maxPageBytes: cap });
  }, 60_000);
  afterAll(async () => s?.close());

  it('ends a page early at maxPageBytes, with a next link that continues where it stopped', async () => {
    const all = (await (await fetch(`${s.root}/POLineItems/$count`, { headers: { API_KEY: s.key } })).text()) as string;
    let url: string | undefined = `${s.root}/POLineItems?$orderby=PONumber,LineNumber&$count=true`;
    const seen: string[] = [];
    let pages = 0;
    while (url !== undefined) {
      const response = await fetch(url, { headers: { API_KEY: s.key } });
      const text = await response.text();
      const body = JSON.parse(text) as Json & { '@odata.nextLink'?: string };
      pages++;
      // the cap holds unless one entity alone is larger (a page holds at least one)
      if (body.value!.length > 1) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(cap + 300);
      seen.push(...body.value!.map((l) => `${String(l['PONumber'])}/${String(l['LineNumber'])}`));
      url = body['@odata.nextLink'];
    }
    expect(pages).toBeGreaterThan(3);
    expect(seen).toHaveLength(Number(all));
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('keeps $top across pages cut by bytes', async () => {
    let url: string | undefined = `${s.root}/POLineItems?$top=25`;
    let total = 0;
    while (url !== undefined) {
      const body = (await (await fetch(url, { headers: { API_KEY: s.key } })).json()) as Json & {
        '@odata.nextLink'?: string;
      };
      total += body.value!.length;
      url = body['@odata.nextLink'];
    }
    expect(total).toBe(25);
  });

  it('sends one entity larger than the cap alone', async () => {
    // 3,000 characters of 2-byte text: 6,000 bytes, more than the 4,096-byte cap
    for (let i = 0; i < 2; i++) {
      const created = await fetch(`${s.root}/PurchaseOrders`, {
        method: 'POST',
        headers: { API_KEY: s.key, 'content-type': 'application/json' },
        body: JSON.stringify({ VendorID: 'V-BIG', Notes: 'é'.repeat(3000) }),
      });
      expect(created.status).toBe(201);
    }
    const first = (await (
      await fetch(
        `${s.root}/PurchaseOrders?$filter=${encodeURIComponent("VendorID eq 'V-BIG'")}&$select=PONumber,Notes`,
        {
          headers: { API_KEY: s.key },
        },
      )
    ).json()) as Json & { '@odata.nextLink'?: string };
    expect(first.value).toHaveLength(1);
    expect(first['@odata.nextLink']).toBeDefined();
    const second = (await (await fetch(first['@odata.nextLink']!, { headers: { API_KEY: s.key } })).json()) as Json & {
      '@odata.nextLink'?: string;
    };
    expect(second.value).toHaveLength(1);
    expect(second['@odata.nextLink']).toBeUndefined();
  });
});
