// The service answers the same from every store: random rows of every stored type (edge values included) loaded
// into the memory, tiny, SQLite, PostgreSQL and MariaDB stores, then random well-typed queries through the service
// (a collection with $filter/$orderby/$top/$skip/$count, its /$count, an entity by key, a navigation), then random
// writes (PATCH, PUT, DELETE, POST) and a read of everything, compared as status and body text. A difference is a bug
// of a store or of the service.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineModel, type Row } from '../../src/model/schema.js';
import { createODataService, type ODataService } from '../../src/service/service.js';
import { collectionsOf, type Store } from '../../src/service/store.js';
import { dataSet, edgeInt32, edgeStrings, Part, Thing } from '../backends/sql/fixtures.js';
import { thingQuery } from '../backends/sql/filters.js';
import { storeFactories, type OpenStore } from './stores.js';

// 350 data sets of 11 requests: 3,850 requests a run on each store (STORE_DATA_SETS=1400 runs four times as many)
const DATA_SETS = Number(process.env.STORE_DATA_SETS ?? 350);

const model = defineModel({
  namespace: 'Things',
  entitySets: { Things: { type: Thing, insertable: true, updatable: true, deletable: true }, Parts: Part },
});
const things = collectionsOf(model).get('Things')!;
const parts = collectionsOf(model).get('Parts')!;

const opened: { name: string; open: OpenStore; service: ODataService }[] = [];

beforeAll(async () => {
  for (const [name, factory] of Object.entries(await storeFactories())) {
    const open = await factory(model, {});
    opened.push({ name, open, service: createODataService({ model, store: open.store, pageSize: 1000 }) });
  }
}, 60_000);
afterAll(async () => {
  for (const { open } of opened) await open.close();
});

/** Replaces every row of the store with the data set's. */
async function reload(store: Store, rows: { things: Row[]; parts: Row[] }): Promise<void> {
  await store.transaction(async (tx) => {
    for (const c of [parts, things]) for (const row of await tx.children(c, {})) await tx.delete(c, row);
    for (const row of rows.things) await tx.insert(things, row);
    for (const row of rows.parts) await tx.insert(parts, row);
  });
}

/** Writes whose bodies JSON carries exactly (strings, booleans, Int32): a PATCH, a PUT, a DELETE and a POST. */
const writes = fc.tuple(
  fc.integer({ min: 1, max: 11 }),
  fc.record(
    { S: fc.constantFrom(...edgeStrings, null), I: fc.constantFrom(...edgeInt32, null), B: fc.boolean() },
    { requiredKeys: [] },
  ),
  fc.integer({ min: 1, max: 11 }),
  fc.integer({ min: 1, max: 11 }),
  fc.integer({ min: 1, max: 12 }),
);

interface Request {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
}

async function answer(service: ODataService, { method, url, body }: Request): Promise<string> {
  const response = await service.handle({
    method,
    url,
    headers: { host: 'test', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
  });
  return `${response.status} ${typeof response.body === 'string' ? response.body : ''}`;
}

describe('every store answers the service the same', () => {
  it(`on ${DATA_SETS} random data sets of random requests`, async () => {
    expect(opened.map((o) => o.name)).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    let sent = 0;
    const statuses = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(
        dataSet,
        fc.array(thingQuery, { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 11 }),
        writes,
        async (rows, queries, count, id, [patched, fields, replaced, deleted, posted]) => {
          for (const { open } of opened) await reload(open.store, rows);
          const get = (url: string): Request => ({ method: 'GET', url });
          const filter = queries[0]!.split('&').filter((p) => p.startsWith('$filter='));
          const requests: Request[] = [
            ...queries.map((q, i) => get(`/Things?${q}${count && i === 0 ? `${q === '' ? '' : '&'}$count=true` : ''}`)),
            get(`/Things/$count?${filter.join('&')}`),
            get(`/Things(${id})`),
            get(`/Things(${id})/Parts?$orderby=Q desc,Name`),
            { method: 'PATCH', url: `/Things(${patched})`, body: fields },
            { method: 'PUT', url: `/Things(${replaced})`, body: { ...fields, T: 'replaced' } },
            { method: 'DELETE', url: `/Things(${deleted})` },
            { method: 'POST', url: '/Things', body: { Id: posted, ...fields } },
            get('/Things?$orderby=Id'),
          ];
          for (const request of requests) {
            const url = `${request.method} ${request.url}`;
            const [first, ...rest] = await Promise.all(opened.map(({ service }) => answer(service, request)));
            for (const [i, other] of rest.entries()) {
              if (other !== first) {
                throw new Error(
                  `${opened[i + 1]!.name} and ${opened[0]!.name} differ on ${url}\n` +
                    `rows: ${JSON.stringify(rows)}\n${opened[0]!.name}: ${first}\n${opened[i + 1]!.name}: ${other}`,
                );
              }
            }
            sent++;
            const key = `${request.method} ${first!.slice(0, 3)}`;
            statuses.set(key, (statuses.get(key) ?? 0) + 1);
          }
        },
      ),
      { numRuns: DATA_SETS },
    );
    console.log(
      `stores differential: ${sent} requests on each of ${opened.map((o) => o.name).join(', ')}; ` +
        [...statuses]
          .sort()
          .map(([k, n]) => `${k}: ${n}`)
          .join(', '),
    );
    // the writes must mostly land, or the comparison after them says little
    for (const method of ['PATCH', 'PUT', 'DELETE', 'POST'])
      expect(
        statuses.get(`${method} ${method === 'POST' ? 201 : method === 'DELETE' ? 204 : 200}`) ?? 0,
      ).toBeGreaterThan(0);
  }, 600_000);
});
