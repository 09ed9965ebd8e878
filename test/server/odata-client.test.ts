// A real OData client from npm (@odata/client, OData V4) against the running server: it reads every collection,
// pages through @odata.nextLink, and performs a create, a patch and both work-order actions.
import { OData } from '@odata/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entitySetNames } from '../../src/server/model.js';
import { startServer, storages, type RunningServer } from './harness.js';

type Row = Record<string, unknown>;
const kinds = await storages({ mysql: true });

describe.each(kinds)('@odata/client against the server on %s', (storage) => {
  let s: RunningServer;
  let client: ReturnType<typeof OData.New4>;
  beforeAll(async () => {
    s = await startServer(storage, { pageSize: 15 });
    client = OData.New4({ serviceEndpoint: `${s.root}/`, commonHeaders: { API_KEY: s.key }, processCsrfToken: false });
  }, 60_000);
  afterAll(async () => s?.close());

  it.each(entitySetNames)('reads %s, with a filter built by the client', async (set) => {
    const rows = await client.getEntitySet<Row>(set).query(client.newParam().top(5));
    expect(rows.length).toBeGreaterThan(0);
    expect(await client.getEntitySet<Row>(set).count()).toBeGreaterThanOrEqual(rows.length);
  });

  it('filters, orders and retrieves by key', async () => {
    const workOrders = client.getEntitySet<Row>('WorkOrders');
    const urgent = await workOrders.query(
      client.newParam().filter(client.newFilter().property('Priority').le(2)).orderby('WorkOrderID').top(5),
    );
    expect(urgent.every((w) => (w['Priority'] as number) <= 2)).toBe(true);
    const one = await workOrders.retrieve(String(urgent[0]!['WorkOrderID']));
    expect(one['WorkOrderID']).toBe(urgent[0]!['WorkOrderID']);
  });

  it('pages through a collection by following @odata.nextLink to the end', async () => {
    const total = await client.getEntitySet<Row>('POLineItems').count();
    const seen = new Set<string>();
    let params = client.newParam().select(['PONumber', 'LineNumber']);
    for (let page = 0; page < 1000; page++) {
      const response = await client.newRequest<Row>({ collection: 'POLineItems', params });
      for (const row of response.value ?? []) seen.add(`${String(row['PONumber'])}/${String(row['LineNumber'])}`);
      const next = (response as unknown as Row)['@odata.nextLink'];
      if (typeof next !== 'string') break;
      // the client builds its own URLs: carry the next link's $skiptoken over (keyset paging: no $skip)
      const token = new URL(next).searchParams.get('$skiptoken');
      expect(new URL(next).searchParams.has('$skip')).toBe(false);
      expect(token).toMatch(/^[\w-]+\.[\w-]{22}$/);
      params = client.newParam().select(['PONumber', 'LineNumber']).custom('$skiptoken', token);
    }
    expect(seen.size).toBe(total);
  });

  it('creates and patches a purchase order, and calls both actions', async () => {
    const orders = client.getEntitySet<Row>('PurchaseOrders');
    const created = await orders.create({ VendorID: 'V-CLIENT', Buyer: 'kim' });
    expect(created['PONumber']).toMatch(/^PO-\d{6}$/);
    await orders.update(String(created['PONumber']), { Status: 'Approved' });
    expect((await orders.retrieve(String(created['PONumber'])))['Status']).toBe('Approved');

    const workOrders = client.getEntitySet<Row>('WorkOrders');
    const [withLabor] = await workOrders.query(client.newParam().filter('ActualLabor/any()').top(1));
    const id = String(withLabor!['WorkOrderID']);
    // the interface's answer is the JSON text `true` (MODEL.md); the client hands back what it parsed
    const added: unknown = await workOrders.action('AddComment', id, { Comment: 'via @odata/client', Username: 'kim' });
    expect(added).toBe(true);
    const [record] = (
      await client.newRequest<Row>({ collection: `WorkOrders('${id}')/ActualLabor`, params: client.newParam().top(1) })
    ).value!;
    const removed: unknown = await workOrders.action('RemoveActualLabor', id, {
      Craft: record!['Craft'],
      Hours: record!['Hours'],
      OTHours: record!['OTHours'],
      PeopleID: record!['PeopleID'],
      StartDate: record!['StartDate'],
    });
    expect(removed).toBe(true);
  });
});
