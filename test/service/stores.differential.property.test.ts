// The service answers the same from every store: random rows of every stored type (edge values included) loaded
// into the memory, tiny, SQLite, PostgreSQL and MariaDB stores, then random well-typed queries through the service
// (a collection with $filter/$orderby/$top/$skip/$count, its /$count, an entity by key, a navigation), then random
// writes (PATCH, PUT, DELETE, POST) and a read of everything, compared as status and body text. A difference is a bug
// of a store or of the service.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineModel } from '../../src/model/schema.js';
import { queryOf } from '../../src/testing/index.js';
import { dataSet, edgeInt32, edgeStrings, Part, Thing, thingKit } from '../backends/sql/fixtures.js';
import { EveryStore, type SentRequest } from './stores.js';

// 350 data sets of 11 requests: 3,850 requests a run on each store (STORE_DATA_SETS=1400 runs four times as many)
const DATA_SETS = Number(process.env.STORE_DATA_SETS ?? 350);

const model = defineModel({
  namespace: 'Things',
  entitySets: { Things: { type: Thing, insertable: true, updatable: true, deletable: true }, Parts: Part },
});

let stores: EveryStore;
beforeAll(async () => {
  stores = await EveryStore.open(model, { pageSize: 1000 });
}, 60_000);
afterAll(() => stores.close());

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

describe('every store answers the service the same', () => {
  it(`on ${DATA_SETS} random data sets of random requests`, async () => {
    expect(stores.names).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(
        dataSet,
        fc.array(
          queryOf(Thing, thingKit).map((query) => query.text),
          { minLength: 3, maxLength: 3 },
        ),
        fc.boolean(),
        fc.integer({ min: 1, max: 11 }),
        writes,
        async (rows, queries, count, id, [patched, fields, replaced, deleted, posted]) => {
          await stores.replaceRows({ Things: rows.things, Parts: rows.parts });
          const get = (url: string): SentRequest => ({ method: 'GET', url });
          const filter = queries[0]!.split('&').filter((p) => p.startsWith('$filter='));
          const requests: SentRequest[] = [
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
            await stores.same(request, `rows: ${JSON.stringify(rows)}`);
            sent++;
          }
        },
      ),
      { numRuns: DATA_SETS },
    );
    console.log(`stores differential: ${sent} requests on each of ${stores.names.join(', ')}; ${stores.summary()}`);
    // the writes must mostly land, or the comparison after them says little
    for (const method of ['PATCH', 'PUT', 'DELETE', 'POST'])
      expect(
        stores.statuses.get(`${method} ${method === 'POST' ? 201 : method === 'DELETE' ? 204 : 200}`) ?? 0,
      ).toBeGreaterThan(0);
  }, 600_000);
});
