// The protocol on a second model, as a property: random sequences of requests over the library model (composite
// keys, single- and collection-valued navigations, a contained collection, a bound and an unbound function, an
// unbound action; reads, creates, merges, replaces, deletes) give the same status and body from every store. The
// answers are not written down anywhere: the stores check each other.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createODataService, type ODataService } from '../../src/service/service.js';
import { collectionsOf, type Store } from '../../src/service/store.js';
import { libraryModel, libraryOperations, libraryRows } from './library-model.js';
import { storeFactories, type OpenStore } from './stores.js';

// 120 sequences of 12 requests: 1,440 requests a run on each store (LIBRARY_RUNS=480 runs four times as many)
const RUNS = Number(process.env.LIBRARY_RUNS ?? 120);

const opened: { name: string; open: OpenStore; service: ODataService }[] = [];

beforeAll(async () => {
  for (const [name, factory] of Object.entries(await storeFactories())) {
    const open = await factory(libraryModel, {});
    opened.push({
      name,
      open,
      service: createODataService({ model: libraryModel, store: open.store, pageSize: 3, ...libraryOperations }),
    });
  }
}, 60_000);
afterAll(async () => {
  for (const { open } of opened) await open.close();
});

/** Every collection back to the library's rows. */
async function reset(store: Store): Promise<void> {
  const collections = [...collectionsOf(libraryModel).values()];
  const rows = libraryRows();
  await store.transaction(async (tx) => {
    for (const c of collections) for (const row of await tx.children(c, {})) await tx.delete(c, row);
    for (const c of collections) for (const row of rows[c.name] ?? []) await tx.insert(c, row);
  });
}

interface Request {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
}

const isbn = fc.constantFrom('978-0441478125', '978-0547773742', '978-0156027601', '978-0156836715', '978-0000000001');
const quoted = isbn.map((v) => encodeURIComponent(`'${v}'`));
const price = fc.constantFrom('9.99', '10', '0.5', '14.95', '99999.99', null, 12, 7.25);
const bookFields = fc.record(
  { Title: fc.constantFrom('Solaris', 'Ärger', 'a\u0301', ''), AuthorID: fc.integer({ min: 1, max: 3 }), Price: price },
  { requiredKeys: [] },
);
const get = (url: string): Request => ({ method: 'GET', url });

const request: fc.Arbitrary<Request> = fc.oneof(
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
  fc.integer({ min: -50, max: 120 }).map((p): Request => ({ method: 'POST', url: '/Reprice', body: { Percent: p } })),
  fc
    .tuple(isbn, bookFields)
    .map(([ISBN, fields]): Request => ({
      method: 'POST',
      url: '/Books',
      body: { ISBN, Title: 'New', AuthorID: 2, ...fields },
    })),
  fc.tuple(quoted, bookFields).map(([k, body]): Request => ({ method: 'PATCH', url: `/Books(${k})`, body })),
  fc.tuple(quoted, bookFields).map(([k, body]): Request => ({ method: 'PUT', url: `/Books(${k})`, body })),
  quoted.map((k): Request => ({ method: 'DELETE', url: `/Books(${k})` })),
  fc
    .tuple(isbn, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1900, max: 2030 }))
    .map(([ISBN, Number, Year]): Request => ({ method: 'POST', url: '/Editions', body: { ISBN, Number, Year } })),
);

async function answer(service: ODataService, { method, url, body }: Request): Promise<string> {
  const response = await service.handle({
    method,
    url,
    headers: { host: 'test', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
  });
  const text = typeof response.body === 'string' ? response.body : '';
  // the time of a write is each store's own
  return `${response.status} ${text.replace(/"Updated":"[^"]*"/g, '"Updated":"time"')}`;
}

describe('the library model answers the same from every store', () => {
  it(`on ${RUNS} random sequences of requests`, async () => {
    expect(opened.map((o) => o.name)).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    const statuses = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(request, { minLength: 12, maxLength: 12 }), async (requests) => {
        for (const { open } of opened) await reset(open.store);
        for (const [step, sent] of requests.entries()) {
          const [first, ...rest] = await Promise.all(opened.map(({ service }) => answer(service, sent)));
          for (const [i, other] of rest.entries()) {
            if (other !== first) {
              throw new Error(
                `${opened[i + 1]!.name} and ${opened[0]!.name} differ at step ${step}, ${sent.method} ${sent.url} ${JSON.stringify(sent.body ?? '')}\n` +
                  `${opened[0]!.name}: ${first}\n${opened[i + 1]!.name}: ${other}`,
              );
            }
          }
          const key = `${sent.method} ${first!.slice(0, 3)}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
        }
      }),
      { numRuns: RUNS },
    );
    console.log(
      `library differential on ${opened.map((o) => o.name).join(', ')}: ` +
        [...statuses]
          .sort()
          .map(([k, n]) => `${k}: ${n}`)
          .join(', '),
    );
    // the writes must land often enough for the comparison after them to say something
    for (const accepted of ['POST 201', 'PATCH 200', 'PUT 200', 'DELETE 204', 'POST 200'])
      expect(statuses.get(accepted) ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
