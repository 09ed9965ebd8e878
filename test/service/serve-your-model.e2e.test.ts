// A user's own model served by odata-engine/service from every store (memory arrays, SQLite, PostgreSQL, MariaDB,
// and a tiny store of the test's own) through every adapter (Fastify, node:http, Express, fetch), each on a real port.
// One script of requests runs against each pairing; the answers must be the same everywhere (with the server's own
// origin taken out), and the first is checked against what the protocol says.
import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createODataService, type Store } from '../../src/service/index.js';
import { odataPlugin } from '../../src/service/fastify.js';
import { fetchHandler } from '../../src/service/fetch.js';
import { createNodeServer, odataMiddleware } from '../../src/service/node-http.js';
import { libraryModel, libraryOperations, libraryRows, type BookRow } from './library-model.js';
import { storeFactories } from './stores.js';

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const stores = await storeFactories();
/** One secret for every service of the comparison, as the instances of one deployment share it: equal next links. */
const skipTokenSecret = 'library';

/** Listens on a free port; the origin and how to close. */
async function listen(server: Server): Promise<{ origin: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Served = { origin: string; close(): Promise<void> };
const adapters: Record<string, (store: Store) => Promise<Served>> = {
  fastify: async (store) => {
    const app = Fastify();
    await app.register(odataPlugin, {
      service: createODataService({
        model: libraryModel,
        store,
        basePath: '/odata',
        skipTokenSecret,
        ...libraryOperations,
      }),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { origin: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
  node: (store) =>
    listen(
      createNodeServer(
        createODataService({ model: libraryModel, store, basePath: '/odata', skipTokenSecret, ...libraryOperations }),
      ),
    ),
  express: (store) => {
    const app = express();
    app.get('/hello', (_request, response) => {
      response.send('the app goes on serving its own routes');
    });
    app.use(
      '/odata',
      odataMiddleware(
        createODataService({ model: libraryModel, store, basePath: '/odata', skipTokenSecret, ...libraryOperations }),
      ),
    );
    return listen(createHttpServer(app));
  },
  fetch: (store) => {
    const handle = fetchHandler(
      createODataService({ model: libraryModel, store, basePath: '/odata', skipTokenSecret, ...libraryOperations }),
    );
    // what a fetch-style host (Hono's node server, Bun, Deno) does: a Request in, the Response's bytes out
    return listen(
      createHttpServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const body = chunks.length === 0 ? undefined : Buffer.concat(chunks);
          const headers = new Headers();
          for (const [name, value] of Object.entries(request.headers))
            if (typeof value === 'string') headers.set(name, value);
          void handle(
            new Request(`http://${request.headers.host}${request.url}`, {
              method: request.method!,
              headers,
              ...(body === undefined ? {} : { body }),
            }),
          ).then(async (answer) => {
            response.writeHead(answer.status, Object.fromEntries(answer.headers));
            response.end(Buffer.from(await answer.arrayBuffer()));
          });
        });
      }),
    );
  },
};

interface Exchange {
  readonly request: string;
  readonly status: number;
  readonly contentType: string | null;
  readonly location: string | null;
  readonly preferenceApplied: string | null;
  readonly body: unknown;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const FULL = { accept: 'application/json;odata.metadata=full' };

/** The requests every pairing answers, in order (writes included, so later reads see them). */
async function script(origin: string): Promise<Exchange[]> {
  const root = `${origin}/odata`;
  const steps: [string, string, RequestInit?][] = [
    ['service document', ''],
    ['filter, order, count', '/Books?$filter=Price%20gt%209&$orderby=Price%20desc&$count=true&$select=Title,Price'],
    ['composite of options', '/Books?$filter=startswith(Title,%27The%27)%20or%20Published%20eq%20null&$top=2&$skip=1'],
    ['entity by key', "/Books('978-0156027601')"],
    ['property', "/Books('978-0156027601')/Title"],
    ['raw value', "/Books('978-0156027601')/Price/$value"],
    ['navigation', '/Authors(2)/Books?$orderby=Title&$select=ISBN,Title'],
    ['navigation count', '/Authors(1)/Books/$count'],
    ['contained collection', "/Books('978-0156027601')/Reviews?$orderby=Stars,ReviewID"],
    ['contained entity', "/Books('978-0156027601')/Reviews(2)"],
    ['any over a contained collection', '/Books?$filter=Reviews/any(r:r/Stars%20eq%205)&$select=ISBN'],
    [
      'create',
      '/Books',
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ ISBN: '978-0060512750', Title: 'The Dispossessed', AuthorID: 1, Price: 10.5 }),
      },
    ],
    ['created', "/Books('978-0060512750')?$select=ISBN,Title,Price,Published"],
    [
      'create with no such author',
      '/Books',
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ ISBN: '978-0000000000', Title: 'Nobody', AuthorID: 9 }),
      },
    ],
    [
      'create an existing key',
      '/Books',
      {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify({ ISBN: '978-0156027601', Title: 'Again', AuthorID: 2 }),
      },
    ],
    ['update', "/Books('978-0156836715')", { method: 'PATCH', headers: JSON_TYPE, body: '{"Price":"12.00"}' }],
    ['updated', "/Books('978-0156836715')?$select=Price"],
    [
      'update, the representation asked for',
      "/Books('978-0156027601')",
      { method: 'PATCH', headers: { ...JSON_TYPE, prefer: 'return=representation' }, body: '{"Price":"14.95"}' },
    ],
    [
      'replace',
      "/Books('978-0547773742')",
      { method: 'PUT', headers: JSON_TYPE, body: JSON.stringify({ Title: 'Earthsea', AuthorID: 1 }) },
    ],
    ['replaced', "/Books('978-0547773742')?$select=Title,Price,Published"],
    [
      'replace without a required property',
      "/Books('978-0547773742')",
      { method: 'PUT', headers: JSON_TYPE, body: '{"Price":1}' },
    ],
    ['delete', "/Books('978-0156836715')", { method: 'DELETE' }],
    ['deleted', "/Books('978-0156836715')"],
    ['delete again', "/Books('978-0156836715')", { method: 'DELETE' }],
    ['count after the writes', '/Books/$count'],
    ['single-valued navigation', "/Books('978-0156027601')/Author"],
    ['a property through it', "/Books('978-0156027601')/Author/Name"],
    ['composite key', "/Editions(ISBN='978-0156027601',Number=2)"],
    ['composite key, parts in another order', "/Editions(Number=2,ISBN='978-0156027601')/Year"],
    ['navigation to a composite key', "/Books('978-0156027601')/Editions?$orderby=Number%20desc"],
    ['one of them by the rest of its key', "/Books('978-0156027601')/Editions(1)"],
    ['back to the book', "/Editions(ISBN='978-0441478125',Number=1)/Book/Title"],
    ['a filter through a single-valued navigation', "/Books?$filter=startswith(Author/Name,'Stan')&$select=Title"],
    [
      'paths through two single-valued navigations',
      '/Editions?$filter=Book/Author/AuthorID%20eq%202%20and%20Book/Price%20gt%2010&$orderby=Book/Title,Number%20desc&$select=Number',
    ],
    ['an order through a single-valued navigation', '/Books?$orderby=Author/Name%20desc,Price&$select=Title'],
    ['a navigation selected', "/Books?$select=Author&$filter=Title%20eq%20'Solaris'"],
    [
      'a preferred page size',
      '/Books?$select=Title&$orderby=Title',
      { headers: { prefer: 'return=representation, odata.maxpagesize=2' } },
    ],
    [
      'a preferred page size past the service',
      '/Books?$select=Title&$top=3',
      { headers: { prefer: 'maxpagesize=500' } },
    ],
    ['an unreadable page size', '/Books?$select=Title&$top=1', { headers: { prefer: 'odata.maxpagesize=0' } }],
    ['a navigation selected, full metadata', "/Books?$select=Author&$filter=Title%20eq%20'Solaris'", { headers: FULL }],
    ['a property through a navigation selected', '/Books?$select=Author/Name'],
    [
      'an edition of no book',
      '/Editions',
      { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ ISBN: '978-9999999999', Number: 1, Year: 2000 }) },
    ],
    [
      'an edition',
      '/Editions',
      { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ ISBN: '978-0156027601', Number: 3, Year: 2020 }) },
    ],
    [
      'full metadata of a contained collection',
      "/Books('978-0156027601')/Reviews?$select=Stars&$orderby=ReviewID",
      { headers: FULL },
    ],
    ['full metadata of one entity', "/Editions(ISBN='978-0156027601',Number=1)", { headers: FULL }],
    [
      'an edition, return=minimal',
      '/Editions',
      {
        method: 'POST',
        headers: { ...JSON_TYPE, prefer: 'return=minimal' },
        body: JSON.stringify({ ISBN: '978-0441478125', Number: 2, Year: 1976 }),
      },
    ],
    ['metadata', '/$metadata'],
    ['bound function', "/Books('978-0156027601')/Library.Rating()"],
    ['bound function without reviews', "/Books('978-0547773742')/Rating()"],
    ['unbound function', '/BooksBelow(Price=10)'],
    ['unbound function, one parameter unnamed', '/BooksBelow(9.99)'],
    ['function without parentheses', '/BooksBelow'],
    ['function with a wrong parameter', '/BooksBelow(Prize=10)'],
    ['function with a wrong type', "/BooksBelow(Price='10')"],
    ['unbound action', '/Reprice', { method: 'POST', headers: JSON_TYPE, body: '{"Percent":10}' }],
    ['unbound action out of range', '/Reprice', { method: 'POST', headers: JSON_TYPE, body: '{"Percent":1000}' }],
    ['repriced', '/Books?$select=ISBN,Price&$orderby=ISBN'],
    ['read-only set', '/Authors', { method: 'POST', headers: JSON_TYPE, body: '{"AuthorID":3,"Name":"X"}' }],
    ['no such set', '/Bookz'],
    ['bad filter', '/Books?$filter=Prize%20gt%201'],
    [
      'key in body is not offered',
      '/Books',
      { method: 'PATCH', headers: JSON_TYPE, body: '{"ISBN":"978-0156836715"}' },
    ],
  ];
  const out: Exchange[] = [];
  for (const [name, path, init] of steps) {
    const response = await fetch(`${root}${path}`, init);
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // plain text ($count, $value) stays text
    }
    // the Updated timestamp is the time of the write, a request id each adapter's own: compared by presence
    const json = JSON.stringify(body, (key, value: unknown) =>
      key === 'Updated' && value !== null
        ? 'time'
        : key === 'details' && Array.isArray(value)
          ? value.map((d: { code: string }) => (d.code === 'RequestId' ? 'request id' : d))
          : value,
    );
    out.push({
      request: name,
      status: response.status,
      contentType: response.headers.get('content-type'),
      location: response.headers.get('location')?.replace(origin, 'ORIGIN') ?? null,
      preferenceApplied: response.headers.get('preference-applied'),
      body: JSON.parse(json.replaceAll(origin, 'ORIGIN')) as unknown,
    });
  }
  return out;
}

const answers = new Map<string, Exchange[]>();

describe('a user model served by odata-engine/service', () => {
  for (const [storeName, open] of Object.entries(stores)) {
    for (const [adapterName, serve] of Object.entries(adapters)) {
      it(`answers the script from the ${storeName} store through the ${adapterName} adapter`, async () => {
        const { store, close } = await open(libraryModel, libraryRows());
        cleanups.push(close);
        const served = await serve(store);
        cleanups.push(() => served.close());
        answers.set(`${storeName}/${adapterName}`, await script(served.origin));
        if (adapterName === 'express') {
          const own = await fetch(`${served.origin}/hello`);
          expect(await own.text()).toBe('the app goes on serving its own routes');
        }
      });
    }
  }

  it('gives the answers the protocol asks for', () => {
    const first = answers.get('memory/fastify')!;
    const by = (name: string): Exchange => first.find((e) => e.request === name)!;
    expect(by('service document').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata',
      value: [
        { name: 'Authors', kind: 'EntitySet', url: 'Authors' },
        { name: 'Books', kind: 'EntitySet', url: 'Books' },
        { name: 'Editions', kind: 'EntitySet', url: 'Editions' },
      ],
    });
    expect(by('filter, order, count').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Books(Title,Price)',
      '@odata.count': 2,
      value: [
        { Title: 'Solaris', Price: 14.95 },
        { Title: 'The Left Hand of Darkness', Price: 9.99 },
      ],
    });
    expect(by('raw value')).toMatchObject({ status: 200, body: 14.95 });
    expect(by('navigation').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Books(ISBN,Title)',
      value: [
        { ISBN: '978-0156027601', Title: 'Solaris' },
        { ISBN: '978-0156836715', Title: 'The Cyberiad' },
      ],
    });
    expect(by('navigation count')).toMatchObject({ status: 200, body: 2 });
    expect(by('contained collection').body).toMatchObject({
      '@odata.context': "ORIGIN/odata/$metadata#Books('978-0156027601')/Reviews",
      value: [
        { ReviewID: 2, Stars: 4 },
        { ReviewID: 1, Stars: 5 },
      ],
    });
    expect(by('any over a contained collection').body).toMatchObject({
      value: [{ ISBN: '978-0156027601' }, { ISBN: '978-0441478125' }],
    });
    expect(by('create')).toMatchObject({ status: 201, location: "ORIGIN/odata/Books('978-0060512750')" });
    expect(by('created').body).toMatchObject({ Title: 'The Dispossessed', Price: 10.5, Published: null });
    expect(by('create with no such author')).toMatchObject({
      status: 400,
      body: { error: { code: 'InvalidBody', target: 'AuthorID' } },
    });
    expect(by('create an existing key')).toMatchObject({ status: 409 });
    expect(by('updated').body).toMatchObject({ Price: 12 });
    expect(by('replaced').body).toMatchObject({ Title: 'Earthsea', Price: null, Published: null });
    expect(by('replace without a required property')).toMatchObject({
      status: 400,
      body: { error: { code: 'InvalidBody', target: 'Title' } },
    });
    expect(by('delete')).toMatchObject({ status: 204 });
    expect(by('deleted')).toMatchObject({ status: 404 });
    expect(by('delete again')).toMatchObject({ status: 404 });
    expect(by('count after the writes')).toMatchObject({ status: 200, body: 4 });
    expect(by('single-valued navigation').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Authors/$entity',
      AuthorID: 2,
      Name: 'Stanisław Lem',
    });
    expect(by('a property through it').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Authors(2)/Name',
      value: 'Stanisław Lem',
    });
    expect(by('composite key').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Editions/$entity',
      ISBN: '978-0156027601',
      Number: 2,
      Year: 2002,
    });
    expect(by('composite key, parts in another order').body).toMatchObject({ value: 2002 });
    expect(by('navigation to a composite key').body).toMatchObject({
      '@odata.context': 'ORIGIN/odata/$metadata#Editions',
      value: [{ Number: 2 }, { Number: 1 }],
    });
    expect(by('one of them by the rest of its key').body).toMatchObject({ Number: 1, Year: 1970 });
    expect(by('back to the book').body).toMatchObject({ value: 'The Left Hand of Darkness' });
    // (The Cyberiad is deleted by then)
    expect(by('a filter through a single-valued navigation').body).toMatchObject({ value: [{ Title: 'Solaris' }] });
    expect(by('paths through two single-valued navigations').body).toMatchObject({
      value: [{ Number: 2 }, { Number: 1 }],
    });
    // Ursula K. Le Guin before Stanisław Lem; a null price first among an author's books
    expect(by('an order through a single-valued navigation').body).toMatchObject({
      value: [
        { Title: 'Earthsea' },
        { Title: 'The Left Hand of Darkness' },
        { Title: 'The Dispossessed' },
        { Title: 'Solaris' },
      ],
    });
    // selecting a navigation selects its link, which only full metadata writes
    expect(by('a navigation selected').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Books(Author)',
      value: [{}],
    });
    const solaris = "ORIGIN/odata/Books('978-0156027601')";
    // (full metadata writes every navigation's link, selected or not, as Olingo does)
    expect(by('a navigation selected, full metadata').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Books(Author)',
      value: [
        {
          '@odata.type': '#Library.Book',
          '@odata.id': solaris,
          '@odata.editLink': solaris,
          'Author@odata.navigationLink': `${solaris}/Author`,
          'Editions@odata.navigationLink': `${solaris}/Editions`,
          'Reviews@odata.navigationLink': `${solaris}/Reviews`,
        },
      ],
    });
    // pages of at most the size asked, said in Preference-Applied; a client follows the next link with the header
    expect(by('a preferred page size')).toMatchObject({
      status: 200,
      preferenceApplied: 'odata.maxpagesize=2',
      body: {
        value: [{ Title: 'Earthsea' }, { Title: 'Solaris' }],
        // after the last book's title and key (keyset paging)
        '@odata.nextLink': expect.stringMatching(
          /^ORIGIN\/odata\/Books\?\$select=Title&\$orderby=Title&\$skiptoken=[\w-]+\.[\w-]{22}$/,
        ),
      },
    });
    // (the 4.01 spelling without `odata.`; $top ends the answer before any page does)
    const past = by('a preferred page size past the service');
    expect(past.preferenceApplied).toBe('odata.maxpagesize=500');
    expect((past.body as { value: unknown[] }).value).toHaveLength(3);
    expect(past.body).not.toHaveProperty('@odata.nextLink');
    expect(by('an unreadable page size')).toMatchObject({ status: 200, preferenceApplied: null });
    expect(by('update, the representation asked for')).toMatchObject({
      status: 200,
      preferenceApplied: 'return=representation',
      body: { ISBN: '978-0156027601', Title: 'Solaris', Price: 14.95 },
    });
    // without the preference, no Preference-Applied
    expect(by('update')).toMatchObject({ status: 200, preferenceApplied: null });
    expect(by('a property through a navigation selected')).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'TypeMismatch',
          target: '$select',
          message: expect.stringContaining('expand it: $expand=Author($select=Name)'),
        },
      },
    });
    expect(by('an edition of no book')).toMatchObject({
      status: 400,
      body: { error: { code: 'InvalidBody', target: 'ISBN', message: 'ISBN 978-9999999999 names no Book' } },
    });
    expect(by('an edition')).toMatchObject({
      status: 201,
      location: "ORIGIN/odata/Editions(ISBN='978-0156027601',Number=3)",
    });
    const review = "ORIGIN/odata/Books('978-0156027601')/Reviews";
    expect(by('full metadata of a contained collection').body).toEqual({
      '@odata.context': "ORIGIN/odata/$metadata#Books('978-0156027601')/Reviews(Stars)",
      value: [1, 2].map((n) => ({
        '@odata.type': '#Library.Review',
        '@odata.id': `${review}(${n})`,
        '@odata.readLink': `${review}(${n})`,
        Stars: n === 1 ? 5 : 4,
      })),
    });
    const edition = "ORIGIN/odata/Editions(ISBN='978-0156027601',Number=1)";
    expect(by('full metadata of one entity').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Editions/$entity',
      '@odata.type': '#Library.Edition',
      '@odata.id': edition,
      '@odata.readLink': edition,
      'Book@odata.navigationLink': `${edition}/Book`,
      ISBN: '978-0156027601',
      Number: 1,
      Year: 1970,
    });
    expect(by('an edition, return=minimal')).toEqual({
      request: 'an edition, return=minimal',
      status: 204,
      contentType: null,
      location: "ORIGIN/odata/Editions(ISBN='978-0441478125',Number=2)",
      preferenceApplied: 'return=minimal',
      body: '',
    });
    const metadata = String(by('metadata').body);
    expect(metadata).toContain('<NavigationProperty Name="Author" Type="Library.Author" Nullable="false">');
    expect(metadata).toContain('<ReferentialConstraint Property="AuthorID" ReferencedProperty="AuthorID" />');
    expect(metadata).toContain('<Function Name="Rating" IsBound="true">');
    expect(metadata).toContain('<FunctionImport Name="BooksBelow" Function="Library.BooksBelow" />');
    expect(metadata).toContain('<ActionImport Name="Reprice" Action="Library.Reprice" />');
    expect(by('bound function').body).toEqual({
      '@odata.context': 'ORIGIN/odata/$metadata#Edm.Decimal',
      value: 4.5,
    });
    expect(by('bound function without reviews').body).toMatchObject({ value: null });
    expect(by('unbound function').body).toEqual({ '@odata.context': 'ORIGIN/odata/$metadata#Edm.Int32', value: 1 });
    expect(by('unbound function, one parameter unnamed').body).toMatchObject({ value: 0 });
    expect(by('function without parentheses')).toMatchObject({ status: 400 });
    expect(by('function with a wrong parameter')).toMatchObject({
      status: 400,
      body: { error: { target: 'Prize', message: expect.stringContaining('did you mean Price?') } },
    });
    expect(by('function with a wrong type')).toMatchObject({ status: 400 });
    expect(by('unbound action').body).toEqual({ '@odata.context': 'ORIGIN/odata/$metadata#Edm.Int32', value: 3 });
    expect(by('unbound action out of range')).toMatchObject({ status: 400 });
    expect(by('repriced').body).toMatchObject({
      value: [
        { ISBN: '978-0060512750', Price: 11.55 },
        { ISBN: '978-0156027601', Price: 16.45 },
        { ISBN: '978-0441478125', Price: 10.99 },
        { ISBN: '978-0547773742', Price: null },
      ],
    });
    expect(by('read-only set')).toMatchObject({ status: 405 });
    expect(by('no such set')).toMatchObject({ status: 404 });
    expect(by('bad filter')).toMatchObject({ status: 400 });
    expect(by('key in body is not offered')).toMatchObject({ status: 405 });
  });

  it('infers the row type handlers receive from the definition (checked by tsc)', () => {
    expectTypeOf<BookRow>().toEqualTypeOf<{
      ISBN: string;
      Title: string;
      AuthorID: number;
      Price: string | number | null;
      Published: string | null;
      Updated: string | null;
    }>();
  });

  it('answers the same on every store and through every adapter', () => {
    const [first, ...rest] = [...answers];
    expect(first).toBeDefined();
    for (const [pairing, exchanges] of rest) expect({ pairing, exchanges }).toEqual({ pairing, exchanges: first![1] });
  });
});
