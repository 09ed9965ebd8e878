// The node:http adapter: the same service without Fastify, on a real port.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNodeServer } from '../../src/service/node-http.js';
import { createPlantService } from '../../src/server/plant-service.js';
import { startServer, type RunningServer } from './harness.js';

describe('the node:http adapter', () => {
  let s: RunningServer;
  let server: ReturnType<typeof createNodeServer>;
  let root: string;
  beforeAll(async () => {
    s = await startServer('sqlite');
    server = createNodeServer(createPlantService({ backend: s.backend, maxBodyBytes: 1024 }));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${s.site}/ODataApi/v1`;
  }, 60_000);
  afterAll(async () => {
    server.close();
    await s.close();
  });

  it('answers reads, writes and errors as the Fastify app does', async () => {
    const read = await fetch(`${root}/Accounts?$top=2`, { headers: { API_KEY: s.key } });
    expect(read.status).toBe(200);
    // (no OData-MaxVersion: the highest version the service speaks)
    expect(read.headers.get('odata-version')).toBe('4.01');
    expect(((await read.json()) as { value: unknown[] }).value).toHaveLength(2);
    const created = await fetch(`${root}/PurchaseOrders`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'application/json' },
      body: JSON.stringify({ VendorID: 'V-HTTP' }),
    });
    expect(created.status).toBe(201);
    expect((await fetch(`${root}/Accounts`)).status).toBe(401);
    const large = await fetch(`${root}/PurchaseOrders`, {
      method: 'POST',
      headers: { API_KEY: s.key, 'content-type': 'application/json' },
      body: JSON.stringify({ VendorID: 'V', Notes: 'x'.repeat(2000) }),
    });
    expect(large.status).toBe(413);
  });

  it('takes the site from the host name first label when asked (the core, called without any HTTP server)', async () => {
    const service = createPlantService({
      backend: s.backend,
      siteFromHost: true,
      publicUrl: 'https://odata.example.com',
    });
    const response = await service.handle({
      method: 'GET',
      url: '/ODataApi/v1/Accounts?$top=1',
      headers: { host: `${s.site}.odata.example.com`, api_key: s.key },
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(String(response.body))['@odata.context']).toBe(
      `https://odata.example.com/${s.site}/ODataApi/v1/$metadata#Accounts`,
    );
    const elsewhere = await service.handle({
      method: 'GET',
      url: '/ODataApi/v1/Accounts',
      headers: { host: 'nosuch.odata.example.com', api_key: s.key },
    });
    expect(elsewhere.status).toBe(404);
  });
});
