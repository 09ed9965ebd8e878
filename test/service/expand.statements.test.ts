// $expand costs one statement per expanded navigation, whatever the number of entities: an expand of depth d runs at
// most d + 1 statements (the entities' own read, then one per level) on every SQL store, counted at the driver.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row } from '../../src/model/schema.js';
import { createODataService, type ODataService } from '../../src/service/service.js';
import type { SqlDriver } from '../../src/service/sql/driver.js';
import { libraryModel } from './library-model.js';
import { storeFactories, type OpenStore } from './stores.js';

/** 60 authors, 300 books, 3 editions and 2 reviews of each. */
function manyRows(): Record<string, Row[]> {
  const authors = Array.from({ length: 60 }, (_, i) => ({ AuthorID: i + 1, Name: `Author ${i + 1}` }));
  const books = Array.from({ length: 300 }, (_, i) => ({
    ISBN: `978-${String(i).padStart(10, '0')}`,
    Title: `Book ${i}`,
    AuthorID: (i % 60) + 1,
    Price: `${(i % 40) + 0.5}`,
    Published: null,
    Updated: '2026-01-02T03:04:05.000Z',
  }));
  return {
    Authors: authors,
    Books: books,
    Editions: books.flatMap((b, i) =>
      [1, 2, 3].map((Number) => ({ ISBN: b.ISBN, Number, Year: 1950 + ((i + Number) % 70) })),
    ),
    Review: books.flatMap((b, i) =>
      [1, 2].map((ReviewID) => ({ ISBN: b.ISBN, ReviewID, Stars: ((i + ReviewID) % 5) + 1, Text: null })),
    ),
  };
}

interface Counted {
  readonly name: string;
  readonly open: OpenStore;
  readonly service: ODataService;
  statements: number;
}

const served: Counted[] = [];
/** The store whose statements are being counted (none while the rows are loaded). */
let counted: Counted | undefined;

beforeAll(async () => {
  const counting = (driver: SqlDriver): SqlDriver => ({
    dialect: driver.dialect,
    all: (sql, params, options) => {
      if (counted !== undefined) counted.statements++;
      return driver.all(sql, params, options);
    },
    // (the stores read rows through `values` where the driver has it)
    ...(driver.values === undefined
      ? {}
      : {
          values: (sql, params, options) => {
            if (counted !== undefined) counted.statements++;
            return driver.values!(sql, params, options);
          },
        }),
    run: (sql, params) => driver.run(sql, params),
    transaction: (work) => driver.transaction(work),
    close: () => driver.close(),
  });
  for (const [name, factory] of Object.entries(await storeFactories({ sql: counting, sqlOnly: true }))) {
    const open = await factory(libraryModel, manyRows());
    const service = createODataService({ model: libraryModel, store: open.store, pageSize: 1000 });
    served.push({ name, open, service, statements: 0 });
  }
}, 120_000);
afterAll(async () => {
  for (const s of served) await s.open.close();
});

async function statementsOf(s: Counted, url: string): Promise<{ statements: number; body: string }> {
  s.statements = 0;
  counted = s;
  const response = await s.service.handle({ method: 'GET', url, headers: { host: 'test' } });
  counted = undefined;
  expect(response.status, `${s.name} ${url}: ${String(response.body).slice(0, 300)}`).toBe(200);
  return { statements: s.statements, body: String(response.body) };
}

const cases: readonly { readonly url: string; readonly depth: number }[] = [
  { url: '/Authors?$expand=Books', depth: 1 },
  { url: '/Authors?$expand=Books($top=2;$count=true;$orderby=Price desc)', depth: 1 },
  { url: '/Authors?$expand=Books($expand=Editions)', depth: 2 },
  { url: '/Authors?$expand=Books($filter=Price gt 5;$expand=Editions($top=1;$expand=Book))', depth: 3 },
  { url: '/Authors?$expand=Books($expand=Editions($expand=Book($expand=Author)))', depth: 4 },
  { url: '/Editions?$expand=Book($expand=Author)', depth: 2 },
  { url: '/Books?$expand=Reviews/$ref', depth: 1 },
];

describe('$expand runs one statement per level on every SQL store', () => {
  it('the stores are there', () => {
    expect(served.map((s) => s.name)).toContain('sqlite');
    if (process.env.CI === 'true') expect(served.map((s) => s.name)).toEqual(['sqlite', 'postgres', 'mysql']);
  });

  for (const { url, depth } of cases) {
    it(`${url}: at most ${depth + 1} statements, for 2 entities or for all`, async () => {
      for (const s of served) {
        for (const top of [2, 1000]) {
          const { statements, body } = await statementsOf(s, `${url}&$top=${top}`);
          expect(statements, `${s.name}, $top=${top}`).toBeLessThanOrEqual(depth + 1);
          expect(statements, `${s.name}, $top=${top}`).toBeGreaterThan(0);
          // the answer does hold the entities and their expansions
          expect(JSON.parse(body).value.length).toBe(
            Math.min(top, url.startsWith('/Authors') ? 60 : url.startsWith('/Books') ? 300 : 900),
          );
        }
      }
    }, 60_000);
  }

  it('a breadth of expansions costs one statement each', async () => {
    for (const s of served) {
      const { statements } = await statementsOf(s, '/Books?$expand=Author,Editions($count=true),Reviews&$top=1000');
      expect(statements, s.name).toBe(4);
    }
  });
});
