// ETags against the running server on every storage: every entity carries @odata.etag (and a single entity the ETag
// header), If-Match makes a write apply only over the version the client read (412 otherwise, 428 when the service
// requires it), If-None-Match answers 304, and concurrent writes that all hold one ETag: exactly one of them wins.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel } from '../../src/model/schema.js';
import { createODataService } from '../../src/service/service.js';
import { MemoryStore } from '../../src/service/memory-store.js';
import { createNodeServer } from '../../src/service/node-http.js';
import { startServer, storages, type RunningServer } from './harness.js';

type Row = Record<string, unknown>;
const kinds = await storages({ mysql: true });

describe.each(kinds)('ETags on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage);
  }, 60_000);
  afterAll(async () => s?.close());

  const get = (path: string, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${s.root}/${path}`, { headers: { API_KEY: s.key, ...headers } });
  const patch = (path: string, body: Row, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(`${s.root}/${path}`, {
      method: 'PATCH',
      headers: { API_KEY: s.key, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const anOrder = async (): Promise<string> => {
    const created = await fetch(`${s.root}/PurchaseOrders`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'application/json' },
      body: JSON.stringify({ VendorID: 'V-ETAG' }),
    });
    expect(created.status).toBe(201);
    return `PurchaseOrders('${String(((await created.json()) as Row)['PONumber'])}')`;
  };

  it('puts the same ETag on an entity wherever it is read: header, body, collections, expansions', async () => {
    const order = await anOrder();
    const one = await get(order);
    const etag = one.headers.get('etag');
    expect(etag).toMatch(/^W\/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
    expect(((await one.json()) as Row)['@odata.etag']).toBe(etag);
    const number = order.slice("PurchaseOrders('".length, -2);
    const list = (await (await get(`PurchaseOrders?$filter=PONumber eq '${number}'&$select=Status`)).json()) as {
      value: Row[];
    };
    expect(list.value).toEqual([{ '@odata.etag': etag, Status: 'Draft' }]);
    const withLines = await fetch(`${s.root}/${order}/Lines`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'application/json' },
      body: JSON.stringify({ Description: 'x', QuantityOrdered: 1, UnitOfMeasure: 'EA', UnitPrice: 1 }),
    });
    const line = (await withLines.json()) as Row;
    const expanded = (await (await get(`${order}?$expand=Lines`)).json()) as { Lines: Row[] };
    expect(expanded.Lines[0]!['@odata.etag']).toBe(line['@odata.etag']);
    expect(line['@odata.etag']).toBe(withLines.headers.get('etag'));
    // odata.metadata=none has no control information
    const none = (await (
      await get(`PurchaseOrders?$filter=PONumber eq '${number}'&$select=Status`, {
        accept: 'application/json;odata.metadata=none',
      })
    ).json()) as { value: Row[] };
    expect(none.value).toEqual([{ Status: 'Draft' }]);
  });

  it('applies a PATCH with the current If-Match, answers 412 to one with an old ETag, and keeps the first', async () => {
    const order = await anOrder();
    const read = (await get(order)).headers.get('etag')!;
    const first = await patch(order, { Notes: 'first' }, { 'if-match': read });
    expect(first.status).toBe(200);
    const next = first.headers.get('etag')!;
    expect(next).not.toBe(read);
    expect(((await first.json()) as Row)['@odata.etag']).toBe(next);
    const stale = await patch(order, { Notes: 'stale' }, { 'if-match': read });
    expect(stale.status).toBe(412);
    expect(((await stale.json()) as { error: Row }).error).toMatchObject({
      code: 'PreconditionFailed',
      target: 'If-Match',
    });
    expect(((await (await get(order)).json()) as Row)['Notes']).toBe('first');
    // a list of ETags, one of them current; and * (any version)
    expect((await patch(order, { Notes: 'listed' }, { 'if-match': `"nope", ${next}` })).status).toBe(200);
    expect((await patch(order, { Notes: 'any' }, { 'if-match': '*' })).status).toBe(200);
    // If-None-Match: * writes only an entity that does not exist
    expect((await patch(order, { Notes: 'x' }, { 'if-none-match': '*' })).status).toBe(412);
    // return=minimal still tells the new ETag
    const current = (await get(order)).headers.get('etag')!;
    const minimal = await patch(order, { Notes: 'minimal' }, { 'if-match': current, prefer: 'return=minimal' });
    expect(minimal.status).toBe(204);
    expect(minimal.headers.get('etag')).toBe((await get(order)).headers.get('etag'));
  });

  it('answers 304 to a GET whose If-None-Match names the current ETag', async () => {
    const order = await anOrder();
    const etag = (await get(order)).headers.get('etag')!;
    const unchanged = await get(order, { 'if-none-match': etag });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect(await unchanged.text()).toBe('');
    await patch(order, { Notes: 'changed' });
    expect((await get(order, { 'if-none-match': etag })).status).toBe(200);
  });

  it('changes the ETag with every write, even many in one millisecond', async () => {
    const order = await anOrder();
    const etags = new Set<string>([(await get(order)).headers.get('etag')!]);
    for (let i = 0; i < 15; i++) {
      const response = await patch(order, { Notes: `n${i}` }, { prefer: 'return=minimal' });
      etags.add(response.headers.get('etag')!);
    }
    expect(etags.size).toBe(16);
  });

  it('lets exactly one of many concurrent PATCHes holding the same ETag win: no lost update', async () => {
    const order = await anOrder();
    const etag = (await get(order)).headers.get('etag')!;
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        patch(order, { Notes: `writer ${i}` }, { 'if-match': etag }).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    );
    expect(statuses.filter((x) => x === 200)).toHaveLength(1);
    expect(statuses.filter((x) => x === 412)).toHaveLength(11);
  });

  it('checks If-Match on a bound action, and in a batch with an ETag reference', async () => {
    const workOrder = ((await (await get('WorkOrders?$top=1&$select=WorkOrderID')).json()) as { value: Row[] })
      .value[0]!['WorkOrderID'] as string;
    const path = `WorkOrders('${workOrder}')`;
    const etag = (await get(path)).headers.get('etag')!;
    const action = (ifMatch: string): Promise<Response> =>
      fetch(`${s.root}/${path}/AddComment`, {
        method: 'POST',
        headers: { API_KEY: s.key, 'content-type': 'application/json', 'if-match': ifMatch },
        body: JSON.stringify({ Comment: 'checked', Username: 'tester' }),
      });
    expect((await action(etag)).status).toBe(200);
    // the comment changed the work order: the old ETag is stale
    expect((await action(etag)).status).toBe(412);
    // in a batch: read the order (Content-ID 1), then patch it with If-Match: $1
    const order = await anOrder();
    const body = [
      '--b',
      'Content-Type: application/http',
      'Content-ID: 1',
      '',
      `GET ${order} HTTP/1.1`,
      '',
      '',
      '--b',
      'Content-Type: application/http',
      'Content-ID: 2',
      '',
      `PATCH ${order} HTTP/1.1`,
      'Content-Type: application/json',
      'If-Match: $1',
      '',
      '{"Notes":"by reference"}',
      '--b',
      'Content-Type: application/http',
      'Content-ID: 3',
      '',
      `PATCH ${order} HTTP/1.1`,
      'Content-Type: application/json',
      'If-Match: $1',
      '',
      '{"Notes":"stale reference"}',
      '--b--',
      '',
    ].join('\r\n');
    const batch = await fetch(`${s.root}/$batch`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'multipart/mixed; boundary=b', prefer: 'odata.continue-on-error' },
      body,
    });
    const statuses = [...(await batch.text()).matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 200, 412]);
    expect(((await (await get(order)).json()) as Row)['Notes']).toBe('by reference');
  });

  it('requires If-Match when the service says so (428), and accepts it then', async () => {
    const strict = await startServer(storage, { requireIfMatch: true });
    try {
      const created = await fetch(`${strict.root}/PurchaseOrders`, {
        method: 'POST',
        headers: { API_KEY: strict.key, 'content-type': 'application/json' },
        body: JSON.stringify({ VendorID: 'V-STRICT' }),
      });
      const order = `${strict.root}/PurchaseOrders('${String(((await created.json()) as Row)['PONumber'])}')`;
      const etag = created.headers.get('etag')!;
      const send = (headers: Record<string, string>): Promise<Response> =>
        fetch(order, {
          method: 'PATCH',
          headers: { API_KEY: strict.key, 'content-type': 'application/json', ...headers },
          body: '{"Notes":"x"}',
        });
      const without = await send({});
      expect(without.status).toBe(428);
      expect(((await without.json()) as { error: Row }).error).toMatchObject({ code: 'PreconditionRequired' });
      expect((await send({ 'if-match': etag })).status).toBe(200);
    } finally {
      await strict.close();
    }
  });
});

describe('ETags of a user model with a version counter, and DELETE with If-Match (memory store)', () => {
  const Note = defineEntityType({
    name: 'Note',
    key: ['ID'],
    properties: {
      ID: { type: 'Edm.Int32' },
      Text: { type: 'Edm.String' },
      Version: { type: 'Edm.Int64', computed: true, managed: 'version' },
    },
    concurrency: ['Version'],
  });
  const model = defineModel({
    namespace: 'Notes',
    entitySets: { Notes: { type: Note, insertable: true, updatable: true, deletable: true } },
  });
  let server: Server;
  let base: string;
  beforeAll(async () => {
    const service = createODataService({ model, store: new MemoryStore(model) });
    server = createNodeServer(service);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('counts the version up with each write, and deletes only the version named', async () => {
    const send = (method: string, path: string, body?: Row, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const created = await send('POST', '/Notes', { ID: 1, Text: 'a' });
    expect(created.headers.get('etag')).toBe('W/"1"');
    expect(((await created.json()) as Row)['Version']).toBe(1);
    const changed = await send('PATCH', '/Notes(1)', { Text: 'b' }, { 'if-match': 'W/"1"' });
    expect(changed.headers.get('etag')).toBe('W/"2"');
    expect((await send('DELETE', '/Notes(1)', undefined, { 'if-match': 'W/"1"' })).status).toBe(412);
    expect((await send('GET', '/Notes(1)')).status).toBe(200);
    expect((await send('DELETE', '/Notes(1)', undefined, { 'if-match': 'W/"2"' })).status).toBe(204);
    expect((await send('GET', '/Notes(1)')).status).toBe(404);
  });

  it('refuses a model whose ETag property the service does not change on every write', () => {
    expect(() =>
      defineEntityType({
        name: 'Bad',
        key: ['ID'],
        properties: { ID: { type: 'Edm.Int32' }, Stamp: { type: 'Edm.String' } },
        concurrency: ['Stamp'],
      }),
    ).toThrow(/changes on every write/);
  });
});
