// $expand as a property: random expand trees with nested options ($select, $filter, $orderby, $top, $skip, $count,
// $expand, $ref) over random rows of the library model give the same status and body from every store: memory, the
// tests' tiny store (no readRelated: one read per entity), SQLite, PostgreSQL and MariaDB. The answers are not written
// down anywhere: the stores check each other. Each run loads random rows, then asks REQUESTS random expansions.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row } from '../../src/model/schema.js';
import { libraryModel, libraryOperations } from './library-model.js';
import { EveryStore } from './stores.js';

// 100 row sets × 20 requests: 2,000 expansions a run on each store (EXPAND_RUNS scales the row sets)
const RUNS = Number(process.env.EXPAND_RUNS ?? 100);
const REQUESTS = 20;

let stores: EveryStore;
beforeAll(async () => {
  stores = await EveryStore.open(libraryModel, { pageSize: 4, ...libraryOperations });
}, 60_000);
afterAll(() => stores.close());

type TypeName = 'Book' | 'Author' | 'Edition' | 'Review';

/** What the generator may ask of each entity type: filters, orders, properties and navigations. */
const types: Record<
  TypeName,
  {
    readonly filters: readonly string[];
    readonly orders: readonly string[];
    readonly properties: readonly string[];
    readonly navigation: readonly { readonly name: string; readonly target: TypeName; readonly collection: boolean }[];
  }
> = {
  Book: {
    filters: [
      'Price gt 9',
      "Title lt 'M'",
      'Price eq null',
      'Editions/any()',
      "contains(Title,'a')",
      'AuthorID eq 2',
      // through the author, who may not be there (then null)
      "Author/Name ge 'S'",
      'Author/Name eq null',
      'Author/Books/$count gt 1',
    ],
    orders: ['Price desc', 'Title', 'Published desc,Title', 'AuthorID,Price', 'Author/Name desc,Price'],
    properties: ['ISBN', 'Title', 'AuthorID', 'Price', 'Published'],
    navigation: [
      { name: 'Author', target: 'Author', collection: false },
      { name: 'Editions', target: 'Edition', collection: true },
      { name: 'Reviews', target: 'Review', collection: true },
    ],
  },
  Author: {
    filters: ['AuthorID le 2', "Name ge 'S'", 'Books/any(b: b/Price gt 9)', 'Books/all(b: b/Author/Name eq Name)'],
    orders: ['Name desc', 'AuthorID desc'],
    properties: ['AuthorID', 'Name'],
    navigation: [{ name: 'Books', target: 'Book', collection: true }],
  },
  Edition: {
    filters: [
      'Year ge 1990',
      'Number eq 1',
      'Year lt 1980 or Number gt 2',
      'Book/Price gt 9',
      'Book/Author/Name ne null',
    ],
    orders: ['Year desc', 'Number', 'Year,ISBN desc', 'Book/Title desc,Number', 'Book/Author/Name,Year'],
    properties: ['ISBN', 'Number', 'Year'],
    navigation: [{ name: 'Book', target: 'Book', collection: false }],
  },
  Review: {
    filters: ['Stars ge 3', 'Text ne null', "startswith(Text,'G')"],
    orders: ['Stars desc', 'ReviewID desc', 'Text'],
    properties: ['ReviewID', 'Stars', 'Text'],
    navigation: [],
  },
};

/** The options of one expanded navigation, up to `depth` more levels inside. */
function nestedOptions(type: TypeName, collection: boolean, depth: number): fc.Arbitrary<string> {
  const t = types[type];
  const parts: fc.Arbitrary<string | undefined>[] = [
    fc.option(
      fc.subarray([...t.properties], { minLength: 1 }).map((p) => `$select=${p.join(',')}`),
      { nil: undefined },
    ),
    fc.option(
      fc.constantFrom(...t.filters).map((f) => `$filter=${f}`),
      { nil: undefined },
    ),
  ];
  if (collection) {
    parts.push(
      fc.option(
        fc.constantFrom(...t.orders).map((o) => `$orderby=${o}`),
        { nil: undefined },
      ),
      fc.option(
        fc.integer({ min: 0, max: 3 }).map((n) => `$top=${n}`),
        { nil: undefined },
      ),
      fc.option(
        fc.integer({ min: 1, max: 2 }).map((n) => `$skip=${n}`),
        { nil: undefined },
      ),
      fc.option(
        fc.boolean().map((b) => `$count=${b}`),
        { nil: undefined },
      ),
    );
  }
  if (depth > 0 && t.navigation.length > 0) {
    parts.push(
      fc.option(
        expandOf(type, depth - 1).map((e) => `$expand=${e}`),
        { nil: undefined },
      ),
    );
  }
  return fc.tuple(...parts).map((given) => given.filter((p) => p !== undefined).join(';'));
}

/** An `$expand` value for `type`: some of its navigations, each plain, with options, or as `$ref`. */
function expandOf(type: TypeName, depth: number): fc.Arbitrary<string> {
  const t = types[type];
  return fc
    .subarray([...t.navigation], { minLength: 1 })
    .chain((navigations) =>
      fc.tuple(
        ...navigations.map((n) =>
          fc.oneof(
            {
              weight: 4,
              arbitrary: nestedOptions(n.target, n.collection, depth).map((o) =>
                o === '' ? n.name : `${n.name}(${o})`,
              ),
            },
            { weight: 1, arbitrary: fc.constant(`${n.name}/$ref`) },
            // each entity's count alone, filtered or not (collections only)
            {
              weight: n.collection ? 1 : 0,
              arbitrary: fc
                .option(fc.constantFrom(...types[n.target].filters), { nil: undefined })
                .map((f) => (f === undefined ? `${n.name}/$count` : `${n.name}/$count($filter=${f})`)),
            },
          ),
        ),
      ),
    )
    .map((items) => items.join(','));
}

const isbns = ['978-0441478125', '978-0547773742', '978-0156027601', '978-0000000001', '978-0000000002'];

/** Random rows: authors, books (some by an author who is not there), editions and reviews of them. */
const rows: fc.Arbitrary<Record<string, Row[]>> = fc
  .record({
    // (author 2 and the first two books are always there: the single-entity roots below read them)
    authors: fc.subarray([1, 3, 4]).map((others) => [2, ...others].sort()),
    books: fc.subarray(isbns.slice(2)).map((others) => [...isbns.slice(0, 2), ...others]),
    bookFields: fc.array(
      fc.record({
        Title: fc.constantFrom('Solaris', 'Ärger', 'Annals', 'Zed', 'a\u0301b'),
        AuthorID: fc.integer({ min: 1, max: 5 }),
        Price: fc.constantFrom('9.99', '10.00', '0.50', null, '14.95'),
        Published: fc.constantFrom('1969-03-01', '1990-01-01', null),
      }),
      { minLength: 5, maxLength: 5 },
    ),
    editions: fc.array(
      fc.tuple(fc.constantFrom(...isbns), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1960, max: 2020 })),
      {
        maxLength: 10,
      },
    ),
    reviews: fc.array(
      fc.tuple(
        fc.constantFrom(...isbns),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom('Good', 'Grand', null, 'meh'),
      ),
      {
        maxLength: 10,
      },
    ),
  })
  .map(({ authors, books, bookFields, editions, reviews }) => {
    const editionKeys = new Set<string>();
    const reviewNumbers = new Map<string, number>();
    return {
      Authors: authors.map((AuthorID) => ({
        AuthorID,
        Name: ['Le Guin', 'Lem', 'Sapkowski', 'Tokarczuk'][AuthorID - 1]!,
      })),
      Books: books.map((ISBN, i) => ({ ISBN, ...bookFields[i]!, Updated: '2026-01-02T03:04:05.000Z' })),
      Editions: editions
        .filter(
          ([isbn, number]) =>
            books.includes(isbn) && !editionKeys.has(`${isbn}/${number}`) && editionKeys.add(`${isbn}/${number}`),
        )
        .map(([ISBN, Number, Year]) => ({ ISBN, Number, Year })),
      Review: reviews
        .filter(([isbn]) => books.includes(isbn))
        .map(([ISBN, Stars, Text]) => {
          const ReviewID = (reviewNumbers.get(ISBN) ?? 0) + 1;
          reviewNumbers.set(ISBN, ReviewID);
          return { ISBN, ReviewID, Stars, Text };
        }),
    };
  });

const roots: readonly { readonly url: string; readonly type: TypeName }[] = [
  { url: '/Books', type: 'Book' },
  { url: '/Books?$orderby=Title&$top=3', type: 'Book' },
  { url: `/Books(${encodeURIComponent(`'${isbns[0]}'`)})`, type: 'Book' },
  { url: '/Authors', type: 'Author' },
  { url: '/Authors(2)', type: 'Author' },
  { url: '/Editions?$filter=Year gt 1970', type: 'Edition' },
  { url: "/Editions?$filter=Book/Author/Name ge 'S'&$orderby=Book/Price desc,Year", type: 'Edition' },
  { url: '/Books?$orderby=Author/Name,Title&$top=4', type: 'Book' },
  { url: `/Books(${encodeURIComponent(`'${isbns[1]}'`)})/Editions`, type: 'Edition' },
];

const request = fc
  .constantFrom(...roots)
  .chain(({ url, type }) =>
    expandOf(type, 2).map((expand) => `${url}${url.includes('?') ? '&' : '?'}$expand=${encodeURIComponent(expand)}`),
  );

/** The time of a write is each store's own. */
const withoutTimes = (text: string): string => text.replace(/"Updated":"[^"]*"/g, '"Updated":"time"');

describe('$expand answers the same from every store', () => {
  it(`on ${RUNS} random row sets, ${REQUESTS} random expansions each`, async () => {
    expect(stores.names).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    let expanded = 0;
    await fc.assert(
      fc.asyncProperty(rows, fc.array(request, { minLength: REQUESTS, maxLength: REQUESTS }), async (data, urls) => {
        await stores.replaceRows(data);
        for (const url of urls) {
          const answer = await stores.same({ method: 'GET', url }, '', withoutTimes);
          if (answer.startsWith('200')) expanded++;
        }
      }),
      { numRuns: RUNS },
    );
    console.log(`expand differential on ${stores.names.join(', ')}: ${stores.summary()}`);
    // nearly every request must be answered with entities, or the comparison says little
    expect(expanded).toBeGreaterThan(RUNS * REQUESTS * 0.9);
  }, 600_000);
});
