// $search answers the same from every store: random texts of tricky words (case, accents composed and decomposed,
// ß, Greek, CJK, İ and the Kelvin sign (which lower-case to ASCII), apostrophes, hyphens, digits with commas, non-breaking and em spaces, LIKE wildcards) in the
// searchable properties of random rows, then random search expressions (words, phrases, quoted text, NOT, AND, OR,
// parentheses) beside random filters, through the service on the memory, tiny, SQLite, PostgreSQL and MariaDB stores,
// compared as status and body text. The memory backend defines what a term matches (searchText); SQLite calls the same
// code, PostgreSQL and MariaDB compute the same text with their lower() and regexp_replace. Memos are searched
// through their full-text index first where the store has one (PostgreSQL's GIN, SQLite's FTS5).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel, type Row } from '../../src/model/schema.js';
import { EveryStore } from './stores.js';

// 200 data sets of 8 searches: 1,600 a run on each store (SEARCH_DATA_SETS=800 runs four times as many)
const DATA_SETS = Number(process.env.SEARCH_DATA_SETS ?? 200);

/** The same texts searched by a scan (Notes) and, on PostgreSQL and SQLite, through full-text indexes as a prefilter (Memos). */
const noteType = (name: string, searchIndex: boolean) =>
  defineEntityType({
    name,
    key: ['Id'],
    properties: {
      Id: { type: 'Edm.Int32' },
      Title: { type: 'Edm.String', maxLength: 200, searchable: true, searchIndex },
      Body: { type: 'Edm.String', searchable: true, searchIndex },
      Tag: { type: 'Edm.String', maxLength: 40 },
      N: { type: 'Edm.Int32' },
    },
  });
const Plain = defineEntityType({ name: 'Plain', key: ['Id'], properties: { Id: { type: 'Edm.Int32' } } });
const model = defineModel({
  namespace: 'Notes',
  entitySets: { Notes: noteType('Note', false), Memos: noteType('Memo', true), Plains: Plain },
});

const vocabulary = [
  'pump',
  'Pump',
  'PUMP',
  'seal',
  'seals',
  'brand-new',
  'brand',
  'new',
  "O'Neil",
  'neil',
  'straße',
  'STRASSE',
  'Δelta',
  'δελτα',
  'é',
  'e\u0301',
  'É',
  '9,81',
  '81',
  'a_b',
  '日本',
  'İ',
  'İtem',
  'item',
  '\u212Aey',
  'key',
  'ǅ',
  '%',
  '_x',
  'and',
  'the',
  'with',
  'OR',
  'NOT',
  'x\u00a0y',
  'x',
  'y',
];
const separators = [' ', '  ', '-', ', ', '\u2003', '/', '.', '\t', '—'];

const text = fc
  .array(fc.tuple(fc.constantFrom(...vocabulary), fc.constantFrom(...separators)), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

const rows = fc
  .array(
    fc.record({
      Title: fc.option(text, { nil: null }),
      Body: fc.option(text, { nil: null }),
      N: fc.integer({ min: 0, max: 3 }),
    }),
    {
      maxLength: 8,
    },
  )
  .map((list): Row[] => list.map((row, i) => ({ Id: i + 1, Tag: null, ...row })));

/** A word of $search syntax: no space, parenthesis, `"` or `;`, not starting with `'`. */
const word = fc.constantFrom(...vocabulary, 'pum', 'seal-s', 'zzz').filter((w) => /^[^ \t()";'][^ \t()";]*$/.test(w));
const phrase = fc
  .array(fc.constantFrom(...vocabulary.filter((w) => !w.includes('"') && !w.includes('\\'))), {
    minLength: 1,
    maxLength: 3,
  })
  .map((words) => `"${words.join(' ')}"`);
const search: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    word,
    phrase,
    fc.tuple(tie('expr'), fc.constantFrom(' ', ' AND ', ' OR '), tie('expr')).map(([a, op, b]) => `(${a}${op}${b})`),
    tie('expr').map((e) => `NOT ${e}`),
  ),
})).expr as fc.Arbitrary<string>;
const query = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: search },
      { weight: 1, arbitrary: text.filter((t) => !t.includes("'")).map((t) => `'${t}'`) },
    ),
    fc.option(fc.constantFrom('N gt 0', 'N eq 1 or N eq 3', 'Tag eq null'), { nil: undefined }),
    fc.boolean(),
  )
  .map(([s, filter, count]) =>
    [
      `$search=${encodeURIComponent(s)}`,
      ...(filter === undefined ? [] : [`$filter=${encodeURIComponent(filter)}`]),
      '$select=Id',
      ...(count ? ['$count=true'] : []),
    ].join('&'),
  );

let stores: EveryStore;
beforeAll(async () => {
  stores = await EveryStore.open(model, { pageSize: 1000 });
}, 60_000);
afterAll(() => stores.close());

describe('$search answers the same from every store', () => {
  it(`on ${DATA_SETS} random data sets of random searches`, async () => {
    expect(stores.names).toEqual(expect.arrayContaining(['memory', 'tiny', 'sqlite']));
    let sent = 0;
    let found = 0;
    await fc.assert(
      fc.asyncProperty(rows, fc.array(query, { minLength: 8, maxLength: 8 }), async (notes, queries) => {
        await stores.replaceRows({ Notes: notes, Memos: notes });
        for (const q of queries) {
          const answer = await stores.same({ method: 'GET', url: `/Notes?${q}` }, `rows: ${JSON.stringify(notes)}`);
          if (answer.includes('"Id"')) found++;
          sent++;
          // the same through the indexes: the same entities
          const indexed = await stores.same({ method: 'GET', url: `/Memos?${q}` }, `rows: ${JSON.stringify(notes)}`);
          expect(indexed.replace('$metadata#Memos', '$metadata#Notes')).toBe(answer);
        }
        await stores.same({ method: 'GET', url: `/Notes/$count?${queries[0]!.split('&')[0]}` });
      }),
      { numRuns: DATA_SETS },
    );
    console.log(
      `$search differential: ${sent} searches on each of ${stores.names.join(', ')}; ${stores.summary()}; ${found} found entities`,
    );
    // most searches must be answered, and many must find something, or the comparison says little
    expect(stores.statuses.get('GET 200') ?? 0).toBeGreaterThan(sent * 0.9);
    expect(found).toBeGreaterThan(sent * 0.25);
  }, 600_000);

  it('answers a 501 for a set without searchable properties, and a 400 for a term without letters', async () => {
    const plain = await stores.same({ method: 'GET', url: '/Plains?$search=pump' });
    expect(plain).toMatch(/^501 .*none of its properties is searchable/);
    const empty = await stores.same({ method: 'GET', url: `/Notes?$search=${encodeURIComponent('pump AND ,')}` });
    expect(empty).toMatch(/^400 .*has no letter or digit to search for at position 9 of \$search/);
  });
});
