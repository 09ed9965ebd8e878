// The protocol on a second model, as a property: random sequences of requests over the library model (composite
// keys, single- and collection-valued navigations, a contained collection, a bound and an unbound function, an
// unbound action; reads, creates, merges, replaces, deletes) give the same status and body from every store. The
// answers are not written down anywhere: the stores check each other.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { libraryModel, libraryOperations, libraryRows } from './library-model.js';
import { EveryStore, type SentRequest } from './stores.js';

// 120 sequences of 12 requests: 1,440 requests a run on each store (LIBRARY_RUNS=480 runs four times as many)
const RUNS = Number(process.env.LIBRARY_RUNS ?? 120);

let stores: EveryStore;
beforeAll(async () => {
  stores = await EveryStore.open(libraryModel, { pageSize: 3, ...libraryOperations });
}, 60_000);
afterAll(() => stores.close());

const isbn = fc.constantFrom('978-0441478125', '978-0547773742', '978-0156027601', '978-0156836715', '978-0000000001');
const quoted = isbn.map((v) => encodeURIComponent(`'${v}'`));
const price = fc.constantFrom('9.99', '10', '0.5', '14.95', '99999.99', null, 12, 7.25);
const bookFields = fc.record(
  { Title: fc.constantFrom('Solaris', 'Ärger', 'a\u0301', ''), AuthorID: fc.integer({ min: 1, max: 3 }), Price: price },
  { requiredKeys: [] },
);
const get = (url: string): SentRequest => ({ method: 'GET', url });

const request: fc.Arbitrary<SentRequest> = fc.oneof(
  fc
    .tuple(fc.constantFrom('9', '10.5', '0'), fc.constantFrom('Title', 'Price desc', 'AuthorID,Published desc'))
    .map(([p, order]) =>
      get(
        `/Books?$filter=${encodeURIComponent(`Price gt ${p} or Price eq null`)}&$orderby=${encodeURIComponent(order)}&$count=true`,
      ),
    ),
  fc
    .constantFrom('', '?$skip=2', '?$select=ISBN,Price&$orderby=Price', '?$filter=Editions/any()')
    .map((q) => get(`/Books${q}`)),
  quoted.map((k) => get(`/Books(${k})/Author`)),
  quoted.map((k) => get(`/Books(${k})/Author/Name`)),
  quoted.map((k) => get(`/Books(${k})/Editions?$orderby=Number`)),
  quoted.map((k) => get(`/Books(${k})/Reviews?$orderby=Stars%20desc,ReviewID`)),
  quoted.map((k) => get(`/Books(${k})/Library.Rating()`)),
  fc.constantFrom('1', '9.99', '10.5', '20').map((p) => get(`/BooksBelow(Price=${p})`)),
  fc.integer({ min: 1, max: 3 }).map((a) => get(`/Authors(${a})/Books?$select=ISBN&$orderby=ISBN`)),
  fc.tuple(quoted, fc.integer({ min: 1, max: 3 })).map(([k, n]) => get(`/Editions(ISBN=${k},Number=${n})/Book/Title`)),
  fc
    .integer({ min: -50, max: 120 })
    .map((p): SentRequest => ({ method: 'POST', url: '/Reprice', body: { Percent: p } })),
  fc.tuple(isbn, bookFields).map(([ISBN, fields]): SentRequest => ({
    method: 'POST',
    url: '/Books',
    body: { ISBN, Title: 'New', AuthorID: 2, ...fields },
  })),
  fc.tuple(quoted, bookFields).map(([k, body]): SentRequest => ({ method: 'PATCH', url: `/Books(${k})`, body })),
  fc.tuple(quoted, bookFields).map(([k, body]): SentRequest => ({ method: 'PUT', url: `/Books(${k})`, body })),
  quoted.map((k): SentRequest => ({ method: 'DELETE', url: `/Books(${k})` })),
  fc
    .tuple(isbn, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1900, max: 2030 }))
    .map(([ISBN, Number, Year]): SentRequest => ({ method: 'POST', url: '/Editions', body: { ISBN, Number, Year } })),
);

/** The time of a write is each store's own. */
const withoutTimes = (text: string): string => text.replace(/"Updated":"[^"]*"/g, '"Updated":"time"');

describe('the library model answers the same from every store', () => {
  it(`on ${RUNS} random sequences of requests`, async () => {
    expect(stores.names).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 12, maxLength: 12 }), async (requests) => {
        await stores.replaceRows(libraryRows());
        for (const [step, sent] of requests.entries()) await stores.same(sent, `at step ${step}`, withoutTimes);
      }),
      { numRuns: RUNS },
    );
    console.log(`library differential on ${stores.names.join(', ')}: ${stores.summary()}`);
    // the writes must land often enough for the comparison after them to say something
    for (const accepted of ['POST 201', 'PATCH 200', 'PUT 200', 'DELETE 204', 'POST 200'])
      expect(stores.statuses.get(accepted) ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
