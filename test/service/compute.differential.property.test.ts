// $compute answers the same from every store: random computed properties of every type over random rows of edge
// values, selected, filtered on and ordered by, through the service on the memory, tiny, SQLite, PostgreSQL and
// MariaDB stores, compared as status and body text. A filter or an order that names a computed property reads its
// expression in the store's own language (SQL on the SQL stores); the selected values are computed by the service.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineModel } from '../../src/model/schema.js';
import { dataSet, Part, Thing, thingKit } from '../backends/sql/fixtures.js';
import { expressionOf } from '../../src/testing/index.js';
import { EveryStore } from './stores.js';

// 150 data sets of 6 requests: 900 a run on each store (COMPUTE_DATA_SETS=600 runs four times as many)
const DATA_SETS = Number(process.env.COMPUTE_DATA_SETS ?? 150);

const model = defineModel({ namespace: 'Things', entitySets: { Things: Thing, Parts: Part } });
/** The types of Thing's properties but Boolean (a computed Boolean is a filter's; the kit's predicates cover it). */
const types = [...new Set([...Thing.properties.values()].map((p) => p.type))].filter((t) => t !== 'Edm.Boolean');

/** `expr as C0,expr as C1`, over Thing's own properties (a computed property does not read through navigations). */
const computed = fc.array(
  fc
    .constantFrom(...types)
    // (a bare null has no type to compute)
    .chain((type) => expressionOf(Thing, type, { ...thingKit, navigation: 0, depth: 2 }).filter((e) => e !== 'null')),
  { minLength: 1, maxLength: 2 },
);

const request = computed.chain((exprs) => {
  const aliases = exprs.map((_, i) => `C${i}`);
  return fc
    .tuple(
      fc.option(fc.constantFrom(...aliases.map((a) => `${a} ne null`), ...aliases.map((a) => `${a} eq ${a}`)), {
        nil: undefined,
      }),
      fc.option(fc.tuple(fc.constantFrom(...aliases), fc.constantFrom('', ' desc')), { nil: undefined }),
      fc.option(fc.subarray(['Id', 'S', 'D', ...aliases], { minLength: 1 }), { nil: undefined }),
      fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    )
    .map(([filter, order, select, top]) =>
      [
        `$compute=${encodeURIComponent(exprs.map((e, i) => `${e} as C${i}`).join(','))}`,
        ...(filter === undefined ? [] : [`$filter=${encodeURIComponent(filter)}`]),
        ...(order === undefined ? [] : [`$orderby=${encodeURIComponent(`${order.join('')},Id`)}`]),
        ...(select === undefined ? [] : [`$select=${select.join(',')}`]),
        ...(top === undefined ? [] : [`$top=${top}`]),
      ].join('&'),
    );
});

let stores: EveryStore;
beforeAll(async () => {
  stores = await EveryStore.open(model, { pageSize: 1000 });
}, 60_000);
afterAll(() => stores.close());

describe('$compute answers the same from every store', () => {
  it(`on ${DATA_SETS} random data sets of random computed properties`, async () => {
    expect(stores.names).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    let sent = 0;
    await fc.assert(
      fc.asyncProperty(
        dataSet,
        fc.array(request, { minLength: 5, maxLength: 5 }),
        fc.integer({ min: 1, max: 11 }),
        async (rows, queries, id) => {
          await stores.replaceRows({ Things: rows.things, Parts: rows.parts });
          for (const query of queries) {
            await stores.same({ method: 'GET', url: `/Things?${query}` }, `rows: ${JSON.stringify(rows.things)}`);
            sent++;
          }
          // one entity by key, with the same computed properties
          await stores.same({ method: 'GET', url: `/Things(${id})?${queries[0]!.split('&')[0]}` });
          sent++;
        },
      ),
      { numRuns: DATA_SETS },
    );
    console.log(`$compute differential: ${sent} requests on each of ${stores.names.join(', ')}; ${stores.summary()}`);
    expect(stores.statuses.get('GET 200') ?? 0).toBeGreaterThan(sent * 0.6);
  }, 600_000);
});
