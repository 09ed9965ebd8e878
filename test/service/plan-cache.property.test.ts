// The plan cache by query shape (src/service/plan-cache.ts, src/syntax/shape.ts, src/syntax/lifted.ts): a query that
// differs from an earlier one only in its `$filter` literals reuses that one's plan with its own values. Shown here:
// - the shape scan lifts exactly the string and number literals it must (and nothing the lexer reads otherwise);
// - as a property on every SQL store: a service with the cache answers every request (status and body, errors with
//   their positions included) exactly as a service without it, over random values in a few dozen shapes;
// - a new literal in a cached shape is not parsed again, and runs the same SQL text (so the same prepared statement);
// - no plan crosses stores (sites) or services (models).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel } from '../../src/model/schema.js';
import { createODataService, type ODataService } from '../../src/service/service.js';
import type { SqlStore } from '../../src/service/sql/sql-store.js';
import { queryShape } from '../../src/syntax/shape.js';
import { libraryModel, libraryRows } from './library-model.js';
import { storeFactories, type OpenStore } from './stores.js';

// 150 sequences of 8 requests per SQL store (PLAN_CACHE_RUNS to change)
const RUNS = Number(process.env.PLAN_CACHE_RUNS ?? 150);

describe('queryShape', () => {
  const key = (query: string): string | undefined => queryShape(query)?.key;
  const lifted = (query: string): string[] | undefined => queryShape(query)?.literals.map((l) => l.text);

  it('gives queries that differ only in string and number literals one key', () => {
    expect(key("$filter=Title eq 'A' and Price gt 5&$top=2")).toBe(
      key("$filter=Title eq 'O''B' and Price gt 7&$top=2"),
    );
    expect(key('$filter=Price%20gt%205')).toBe(key('$filter=Price gt 12345'));
    expect(lifted("$filter=contains(Title,'x') or AuthorID in (1, 2,3)")).toEqual(["'x'", '1', '2', '3']);
  });

  it('keeps the literal types and everything else in the key', () => {
    expect(key('$filter=Price gt 5')).not.toBe(key('$filter=Price gt 5.5'));
    expect(key('$filter=Price gt 5')).not.toBe(key('$filter=Price gt 5e0'));
    expect(key('$filter=Price gt 5')).not.toBe(key('$filter=Price gt 12345678901'));
    expect(key('$filter=Price gt 5&$top=1')).not.toBe(key('$filter=Price gt 5&$top=2'));
    expect(key('$filter=Price gt 5')).not.toBe(key('filter=Price gt 5'));
    expect(key("$filter=Title eq 'a'")).not.toBe(key("$filter=Title ne 'a'"));
    // a `&` decoded inside the filter cannot pass for an option boundary
    expect(key('$filter=Price gt 5%26$top=1')).not.toBe(key('$filter=Price gt 5&$top=1'));
  });

  it('lifts nothing the lexer reads as another token', () => {
    // dates, instants, times, Guids, signed numbers, numbers glued to names, prefixed and enumeration literals
    for (const filter of [
      'Published eq 2024-01-01',
      'Updated lt 2024-01-01T10:00:00Z',
      'T eq 12:30:00',
      'G eq 01234567-89ab-cdef-0123-456789abcdef',
      'G eq 12345678-1234-1234-1234-123456789012',
      'Price gt -5',
      'Price gt +5',
      'Price gt 5x',
      'Field1 eq Field2',
      "D eq duration'P1D'",
      "B eq binary'AAEC'",
      "E eq Ns.Color'Red'",
      'Price gt 1.',
    ]) {
      expect(queryShape(`$filter=${filter}`), filter).toBeUndefined();
    }
    // a quote inside a JSON string is not the start of a literal
    expect(lifted(`$filter=Title in ["it's", "x"] and AuthorID eq 1`)).toEqual(['1']);
  });

  it('has no shape for aliases, a repeated $filter, an open quote or a bad escape', () => {
    expect(queryShape("$filter=Title eq @t&@t='a'")).toBeUndefined();
    expect(queryShape('$filter=Price gt 1&$filter=Price gt 2')).toBeUndefined();
    expect(queryShape("$filter=Title eq 'a")).toBeUndefined();
    expect(queryShape('$filter=Price gt 1%ZZ')).toBeUndefined();
    expect(queryShape('$top=1')).toBeUndefined();
  });
});

interface Served {
  readonly name: string;
  readonly open: OpenStore;
  readonly cached: ODataService;
  readonly uncached: ODataService;
}

let served: Served[] = [];
beforeAll(async () => {
  const factories = await storeFactories();
  for (const name of ['sqlite', 'postgres', 'mysql']) {
    const factory = factories[name];
    if (factory === undefined) continue; // said by storeFactories; under CI=true it throws instead
    const open = await factory(libraryModel, libraryRows());
    // (one skip-token secret: equal next links from both)
    const options = { model: libraryModel, store: open.store, pageSize: 4, skipTokenSecret: 'plans' };
    served.push({
      name,
      open,
      cached: createODataService(options),
      uncached: createODataService({ ...options, planCacheSize: 0 }),
    });
  }
}, 60_000);
afterAll(async () => {
  for (const { open } of served) await open.close();
  served = [];
});

async function answer(service: ODataService, url: string): Promise<string> {
  const response = await service.handle({ method: 'GET', url, headers: { host: 'test' } });
  return `${response.status} ${typeof response.body === 'string' ? response.body : ''}`;
}

const text = fc.oneof(
  fc.constantFrom('Solaris', 'solaris', 'The', '', "O'Neil", '%', '_', '*', '[a]', 'Ärger', 'a\u0301', '😀', 'Lem'),
  fc.string({ maxLength: 6, unit: 'grapheme' }),
);
const quoted = text.map((s) => `'${s.replace(/'/g, "''")}'`);
const int = fc.oneof(
  fc.integer({ min: 0, max: 20 }),
  fc.integer({ min: 0, max: 2147483647 }),
  fc.constantFrom('2147483647', '2147483648', '9223372036854775807', '9223372036854775808'),
);
const decimal = fc.oneof(
  fc.tuple(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 0, max: 999 })).map(([a, b]) => `${a}.${b}`),
  fc.constantFrom('9.99', '9.990', '8.5', '14.949', '14.95', '0.001', '1'.repeat(101) + '.5', '99999999999999999999.5'),
);
const double = fc.constantFrom('1e1', '1.5E1', '9.99e0', '1e999', '2e-3');
const number = fc.oneof(int.map(String), decimal, double);

/** Shapes of $filter with their literal slots, and the options beside them. */
const filters: ((n: () => string, s: () => string, i: () => string) => string)[] = [
  (n) => `Price gt ${n()}`,
  (n) => `Price eq ${n()}`,
  (n) => `Price ne ${n()}`,
  (n, s) => `Price le ${n()} and Title ne ${s()}`,
  (_n, s) => `Title eq ${s()}`,
  (_n, s) => `Title lt ${s()} or Title ge ${s()}`,
  (_n, s) => `contains(Title,${s()})`,
  (_n, s) => `startswith(Title,${s()}) eq true`,
  (_n, _s, i) => `AuthorID in (${i()}, ${i()})`,
  (n, _s, i) => `AuthorID eq ${i()} or Price lt ${n()}`,
  (n) => `Price add ${n()} gt ${n()}`,
  (_n, s, i) => `substring(Title,${i()}) eq ${s()}`,
  (n) => `Price in (${n()}, ${n()}, 9.99)`,
  (_n, s) => `Editions/any(e:e/ISBN ne ${s()})`,
  (_n, _s, i) => `Editions/any(e:e/Year gt ${i()})`,
  (_n, s) => `Title eq ${s()} and Price eq null`,
];
const beside = ['', '&$top=2', '&$orderby=Price desc,Title', '&$count=true&$skip=1', '&$select=Title,Price'];

const requestUrl = fc
  .tuple(
    fc.nat(filters.length - 1),
    fc.nat(beside.length - 1),
    fc.array(number, { minLength: 4, maxLength: 4 }),
    fc.array(quoted, { minLength: 4, maxLength: 4 }),
    fc.array(int.map(String), { minLength: 4, maxLength: 4 }),
    fc.boolean(),
  )
  .map(([f, b, numbers, strings, ints, counted]) => {
    const next = (list: string[]) => {
      let at = 0;
      return () => list[at++ % list.length]!;
    };
    const filter = filters[f]!(next(numbers), next(strings), next(ints));
    // a read, or `/$count` (whose plans are kept the same way)
    return counted
      ? `/Books/$count?$filter=${encodeURIComponent(filter)}`
      : `/Books?$filter=${encodeURIComponent(filter)}${beside[b]}`;
  });

describe('the plan cache by query shape (property, every SQL store)', () => {
  it('answers every request exactly as a service without the cache', async () => {
    expect(served.length).toBeGreaterThan(0);
    for (const { name, cached, uncached } of served) {
      await fc.assert(
        fc.asyncProperty(fc.array(requestUrl, { minLength: 8, maxLength: 8 }), async (urls) => {
          for (const url of urls)
            expect(await answer(cached, url), `${name}: ${url}`).toBe(await answer(uncached, url));
        }),
        { numRuns: RUNS },
      );
      const stats = cached.planCacheStats();
      // the cache was used (most requests of a run share a shape with an earlier one), the other service's never
      expect(stats.shapeHits, name).toBeGreaterThan(RUNS);
      expect(uncached.planCacheStats().shapeHits + uncached.planCacheStats().hits, name).toBe(0);
    }
  }, 600_000);

  it('parses a shape once and runs one SQL text for every new literal', async () => {
    for (const { name, open } of served) {
      const service = createODataService({ model: libraryModel, store: open.store });
      const store = open.store as SqlStore;
      const texts = new Set<string>();
      // (rows come through `values` where the driver has it, counts through `all`)
      const all = store.driver.all.bind(store.driver);
      store.driver.all = (sql, params, options) => {
        texts.add(sql);
        return all(sql, params, options);
      };
      const values = store.driver.values?.bind(store.driver);
      if (values !== undefined) {
        store.driver.values = (sql, params, options) => {
          texts.add(sql);
          return values(sql, params, options);
        };
      }
      try {
        const bodies = new Set<string>();
        for (let i = 0; i < 40; i++) {
          // (decimals of one size: MySQL's placeholder is a DECIMAL cast sized to the value, so another size is
          // another statement there)
          const filter = `Price gt ${10 + (i % 20)}.${10 + i}5 and Title ne 'x${i}' and AuthorID in (1, ${i})`;
          bodies.add(await answer(service, `/Books?$filter=${encodeURIComponent(filter)}&$count=true`));
        }
        expect(
          [...bodies].filter((body) => !body.startsWith('200 ')),
          name,
        ).toEqual([]);
        expect(bodies.size, `${name}: the answers follow the values`).toBeGreaterThan(1);
        expect(service.planCacheStats(), name).toMatchObject({ misses: 1, shapeHits: 39 });
        // the page and the count: one text each, whatever the values
        expect(texts.size, `${name}: ${[...texts].join('\n')}`).toBe(2);
        // `/$count` alike: one more plan and one more text for any number of values
        const counts = new Set<string>();
        for (let i = 0; i < 20; i++) {
          const filter = `Price lt ${10 + i}.55 and Title ne 'y${i}'`;
          counts.add(await answer(service, `/Books/$count?$filter=${encodeURIComponent(filter)}`));
        }
        expect(
          [...counts].filter((count) => !count.startsWith('200 ')),
          name,
        ).toEqual([]);
        expect(counts.size, `${name}: the counts follow the values`).toBeGreaterThan(1);
        expect(service.planCacheStats(), name).toMatchObject({ misses: 2, shapeHits: 58 });
        expect(texts.size, `${name}: ${[...texts].join('\n')}`).toBe(3);
      } finally {
        store.driver.all = all;
      }
    }
  });

  it('keeps plans per store: one shape over two stores of different rows gives each its own answer', async () => {
    const factories = await storeFactories();
    const rows = libraryRows();
    const other = { ...rows, Books: rows['Books']!.map((b) => ({ ...b, Price: '1.00' })) };
    const a = await factories['sqlite']!(libraryModel, rows);
    const b = await factories['sqlite']!(libraryModel, other);
    try {
      // one service, two stores (two sites, as the reference server resolves them)
      const service = createODataService({
        model: libraryModel,
        resolve: async ({ pathname }) => {
          const [, site, ...rest] = pathname.split('/');
          const store = site === 'a' ? a.store : site === 'b' ? b.store : undefined;
          return store === undefined
            ? undefined
            : { store, context: undefined, root: `/${site}`, resource: `/${rest.join('/')}` };
        },
      });
      for (let i = 0; i < 10; i++) {
        for (const [site, open] of [
          ['a', a],
          ['b', b],
        ] as const) {
          const url = `/Books?$filter=${encodeURIComponent(`Price lt ${2 + i}`)}&$select=ISBN`;
          const alone = createODataService({ model: libraryModel, store: open.store, planCacheSize: 0 });
          const values = (text: string): unknown => (JSON.parse(text.slice(4)) as { value: unknown }).value;
          expect(values(await answer(service, `/${site}${url}`)), `${site} ${i}`).toEqual(
            values(await answer(alone, url)),
          );
        }
      }
      expect(service.planCacheStats().shapeHits).toBe(18);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('keeps plans per service: two models with a set of one name never share one', async () => {
    const factories = await storeFactories();
    const itemOf = (type: 'Edm.String' | 'Edm.Int32') =>
      defineModel({
        namespace: 'Test',
        entitySets: {
          Items: defineEntityType({
            name: 'Item',
            key: ['ID'],
            properties: { ID: { type: 'Edm.Int32' }, Code: { type } },
          }),
        },
      });
    const texts = itemOf('Edm.String');
    const numbers = itemOf('Edm.Int32');
    const a = await factories['sqlite']!(texts, { Items: [{ ID: 1, Code: '5' }] });
    const b = await factories['sqlite']!(numbers, { Items: [{ ID: 1, Code: 5 }] });
    try {
      const onTexts = createODataService({ model: texts, store: a.store });
      const onNumbers = createODataService({ model: numbers, store: b.store });
      for (const value of ['5', '6', '5']) {
        const url = `/Items?$filter=${encodeURIComponent(`Code eq ${value}`)}`;
        // a String compared with a number is a 400 on the one model, a match or not on the other
        expect((await answer(onTexts, url)).slice(0, 3)).toBe('400');
        expect(await answer(onNumbers, url)).toContain(value === '5' ? '"Code":5' : '"value":[]');
      }
    } finally {
      await a.close();
      await b.close();
    }
  });
});
