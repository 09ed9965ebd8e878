// $expand's particular cases, on every store: full metadata inside expansions, `*` beside named items, `$levels`,
// what a single-valued navigation takes, foreign keys of another integer type than the key they point to, a composite
// link over many entities, and the limit on related rows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel, type Row } from '../../src/model/schema.js';
import { libraryModel, libraryOperations, libraryRows } from './library-model.js';
import { EveryStore } from './stores.js';

let library: EveryStore;
beforeAll(async () => {
  library = await EveryStore.open(libraryModel, { pageSize: 50, ...libraryOperations, limits: { maxExpandRows: 2 } });
  await library.replaceRows(libraryRows());
}, 60_000);
afterAll(() => library.close());

/** The answer every store gives (they must agree), parsed. */
async function answer(stores: EveryStore, url: string, accept?: string): Promise<{ status: number; body: any }> {
  const text = await stores.same({ method: 'GET', url, ...(accept === undefined ? {} : { headers: { accept } }) });
  const space = text.indexOf(' ');
  return { status: Number(text.slice(0, space)), body: JSON.parse(text.slice(space + 1)) };
}

describe('$expand on every store', () => {
  it('writes full metadata inside expansions from the related entities keys', async () => {
    const { status, body } = await answer(
      library,
      '/Authors(1)?$select=Name&$expand=Books($select=Title;$expand=Reviews($select=Stars))',
      'application/json;odata.metadata=full',
    );
    expect(status).toBe(200);
    const book = body.Books[0];
    expect(book['@odata.id']).toMatch(/^http:\/\/test\/Books\('978-\d+'\)$/);
    expect(book['@odata.type']).toBe('#Library.Book');
    expect(book.Reviews.length).toBeGreaterThan(0);
    // a contained review is addressed under its book
    expect(book.Reviews[0]['@odata.id']).toBe(`${book['@odata.id']}/Reviews(${book.Reviews[0].ReviewID ?? 1})`);
    expect(JSON.stringify(body)).not.toContain('undefined');
  });

  it('writes the related entities under IEEE754Compatible=true as every answer: decimals and counts as strings', async () => {
    const { status, body } = await answer(
      library,
      '/Authors(1)?$expand=Books($select=ISBN,Price;$orderby=ISBN;$top=1;$count=true)',
      'application/json;IEEE754Compatible=true',
    );
    expect(status).toBe(200);
    expect(body['Books@odata.count']).toBe('2');
    expect(body.Books[0]).toEqual({ ISBN: '978-0441478125', Price: '9.99' });
  });

  it('lets named items take precedence over *, in any order', async () => {
    for (const expand of ['*/$ref,Author', 'Author,*/$ref', '*,Author($select=Name)', 'Author($select=Name),*']) {
      const { status, body } = await answer(library, `/Books?$top=1&$expand=${encodeURIComponent(expand)}`);
      expect(status, expand).toBe(200);
      const [book] = body.value;
      expect(Object.keys(book.Author).length, expand).toBeGreaterThan(0);
      expect(book.Author['@odata.id'], expand).toBeUndefined();
      expect(book).toHaveProperty('Editions');
      expect(book).toHaveProperty('Reviews');
    }
  });

  it('expands every navigation once under *($levels=2) when none of them recurs', async () => {
    const { status, body } = await answer(library, '/Books?$top=1&$expand=*($levels=2)');
    expect(status).toBe(200);
    expect(Object.keys(body.value[0])).toEqual(expect.arrayContaining(['Author', 'Editions', 'Reviews']));
    // a named navigation that cannot recur is the client's mistake
    expect((await answer(library, '/Books?$expand=Editions($levels=2)')).status).toBe(400);
  });

  it("answers Nav/$count with each entity's count alone, filtered, and under IEEE754Compatible as a string", async () => {
    const { status, body } = await answer(
      library,
      `/Authors?$select=Name&$orderby=AuthorID&$expand=${encodeURIComponent('Books/$count($filter=Price gt 9),Books($select=Title;$top=0)')}`,
    );
    // (a navigation is expanded once: the second item is refused)
    expect(status).toBe(400);
    const counted = await answer(
      library,
      `/Authors?$select=Name&$orderby=AuthorID&$expand=${encodeURIComponent('Books/$count($filter=Price gt 9)')}`,
    );
    expect(counted).toEqual({
      status: 200,
      body: {
        '@odata.context': 'http://test/$metadata#Authors(Name)',
        value: [
          // Le Guin: 9.99 and 8.50; Lem: 14.95 and no price
          { Name: 'Ursula K. Le Guin', 'Books@odata.count': 1 },
          { Name: 'Stanisław Lem', 'Books@odata.count': 1 },
        ],
      },
    });
    const all = await answer(
      library,
      '/Authors(2)?$select=Name&$expand=Books/$count',
      'application/json;IEEE754Compatible=true',
    );
    expect(all.body).toMatchObject({ Name: 'Stanisław Lem', 'Books@odata.count': '2' });
    expect(all.body).not.toHaveProperty('Books');
    // a single related entity has no count; /$count takes only $filter
    const single = await answer(library, '/Books?$expand=Author/$count');
    expect(single.status).toBe(400);
    expect(single.body.error.message).toContain('Author is a single Author: /$count applies to collections');
    expect((await answer(library, `/Authors?$expand=${encodeURIComponent('Books/$count($top=1)')}`)).status).toBe(400);
  });

  it('takes parameter aliases inside the options, for them and the options nested in them', async () => {
    const titles = async (expand: string): Promise<unknown> => {
      const { status, body } = await answer(library, `/Authors(1)?$select=Name&$expand=${encodeURIComponent(expand)}`);
      expect(status, expand).toBe(200);
      return body.Books.map((b: { Title: string }) => b.Title);
    };
    // Le Guin's books cost 9.99 and 8.50: one value, then another of the same shape (the plan cache must not mix them)
    expect(await titles('Books($filter=Price gt @p;$select=Title;@p=9)')).toEqual(['The Left Hand of Darkness']);
    expect(await titles('Books($filter=Price gt @p;$select=Title;@p=8)')).toEqual([
      'The Left Hand of Darkness',
      'A Wizard of Earthsea',
    ]);
    // an inner definition shadows a top-level one; a nested expansion sees its enclosing options' aliases
    const shadowed = await answer(
      library,
      `/Authors(1)?$select=Name&$expand=${encodeURIComponent('Books($filter=Price gt @p;$select=Title;@p=100)')}&@p=1`,
    );
    expect(shadowed.body.Books).toEqual([]);
    const nested = await answer(
      library,
      `/Authors(1)?$select=Name&$expand=${encodeURIComponent('Books($select=Title;$orderby=Title;$expand=Editions($filter=Year lt @y;$select=Year);@y=1970)')}`,
    );
    expect(nested.body.Books).toEqual([
      { Title: 'A Wizard of Earthsea', Editions: [] },
      { Title: 'The Left Hand of Darkness', Editions: [{ Year: 1969 }] },
    ]);
    // a top-level alias works inside the options too, and one the options do not define is null
    const top = await answer(
      library,
      `/Authors(1)?$select=Name&$expand=${encodeURIComponent('Books($filter=Price gt @p;$select=Title)')}&@p=9`,
    );
    expect(top.body.Books).toEqual([{ Title: 'The Left Hand of Darkness' }]);
  });

  it('refuses what a single related entity cannot take', async () => {
    for (const option of ['$top=1', '$skip=1', '$count=true', '$orderby=Name']) {
      const { status, body } = await answer(library, `/Books?$expand=Author(${encodeURIComponent(option)})`);
      expect(status, option).toBe(400);
      expect(body.error.message, option).toContain('Author is a single Author');
    }
  });

  it('refuses an expansion that would read more related entities than maxExpandRows', async () => {
    // three editions in all, the limit is two; one per book, they fit
    const { status, body } = await answer(library, '/Books?$expand=Editions');
    expect(status).toBe(400);
    expect(body.error.code).toBe('LimitExceeded');
    expect(body.error.message).toContain('more than 2 related entities (maxExpandRows)');
    expect((await answer(library, '/Books?$expand=Editions($top=1)')).status).toBe(200);
  });
});

// ── a model of its own: integer keys of two widths, a composite link ──────────

const Child = defineEntityType({
  name: 'Child',
  key: ['ID'],
  properties: {
    ID: { type: 'Edm.Int32' },
    Big32: { type: 'Edm.Int32' },
    PA: { type: 'Edm.Int32', nullable: false },
    PB: { type: 'Edm.String', maxLength: 10, nullable: false },
  },
  navigation: { Big: { target: () => Big, foreignKey: { Big32: 'K' }, collection: false } },
});
const Big = defineEntityType({
  name: 'Big',
  key: ['K'],
  properties: { K: { type: 'Edm.Int64' } },
  navigation: { Children: { target: () => Child, foreignKey: { K: 'Big32' } } },
});
const Pair = defineEntityType({
  name: 'Pair',
  key: ['A', 'B'],
  properties: { A: { type: 'Edm.Int32' }, B: { type: 'Edm.String', maxLength: 10 } },
  navigation: { Children: { target: () => Child, foreignKey: { A: 'PA', B: 'PB' } } },
});
const widths = defineModel({ namespace: 'Widths', entitySets: { Children: Child, Bigs: Big, Pairs: Pair } });

describe('$expand links on every store', () => {
  let stores: EveryStore;
  const pairs = 1200;
  beforeAll(async () => {
    stores = await EveryStore.open(widths, { pageSize: 5000 });
    const children: Row[] = Array.from({ length: pairs * 2 }, (_, i) => ({
      ID: i,
      Big32: i % 3 === 0 ? null : i % 5,
      PA: i % pairs,
      PB: `b${i % 7}`,
    }));
    await stores.replaceRows({
      Bigs: [0, 1, 2, 3, 4, 5].map((K) => ({ K: String(K) })),
      Children: children,
      Pairs: Array.from({ length: pairs }, (_, A) => ({ A, B: `b${A % 7}` })),
    });
  }, 120_000);
  afterAll(() => stores.close());

  it('ties an Int32 foreign key to the Int64 key it points to, both ways', async () => {
    const big = await answer(stores, '/Bigs?$filter=K le 2&$expand=Children($count=true;$top=1;$select=ID)');
    expect(big.status).toBe(200);
    const two = big.body.value.find((b: { K: number }) => b.K === 2);
    expect(two['Children@odata.count']).toBeGreaterThan(0);
    expect(two.Children).toHaveLength(1);
    const child = await answer(stores, '/Children?$top=3&$select=ID,Big32&$expand=Big');
    for (const c of child.body.value) expect(c.Big === null ? null : c.Big.K).toBe(c.Big32);
  });

  it('reads a composite link of 1,200 entities in one statement (SQLite: no expression-depth limit)', async () => {
    const { status, body } = await answer(stores, '/Pairs?$expand=Children($top=1;$count=true;$select=ID)');
    expect(status).toBe(200);
    expect(body.value).toHaveLength(pairs);
    // each pair (A, B) has the children whose PA is A and PB is B: two of every A, one of which shares its B
    for (const pair of body.value.slice(0, 50)) {
      const expected = [pair.A, pair.A + pairs].filter((id) => `b${id % 7}` === pair.B);
      expect(pair['Children@odata.count']).toBe(expected.length);
      expect(pair.Children.map((c: { ID: number }) => c.ID)).toEqual(expected.slice(0, 1));
    }
  });
});
