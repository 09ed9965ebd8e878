// The embedding example, served on a real port and queried over real HTTP.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partsServer } from '../../examples/node-http.js';

const server = partsServer();
let base = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('examples/node-http.ts', () => {
  it('answers a filtered, ordered, counted page', async () => {
    const response = await fetch(
      `${base}/Parts?$filter=UnitCost%20gt%2010&$orderby=UnitCost%20desc&$top=1&$count=true&$select=PartID,UnitCost`,
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('odata-version')).toBe('4.0');
    expect(await response.json()).toEqual({
      '@odata.context': '$metadata#Parts',
      '@odata.count': 2,
      value: [{ PartID: 'P-200', UnitCost: '48.0000' }],
    });
  });

  it('answers a bad query with the OData error body', async () => {
    const response = await fetch(`${base}/Parts?$filter=UnitCots%20gt%2010`);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: 'UnknownProperty',
        message: "Unknown property 'UnitCots' on Part at position 0 of $filter; did you mean 'UnitCost'?",
        target: '$filter',
      },
    });
    expect((await fetch(`${base}/Parts?$top=500`)).status).toBe(400);
  });
});
