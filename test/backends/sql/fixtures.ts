// The entity types and edge values the SQL backend's tests share: one nullable column of every stored type, a
// child collection for lambdas and $count, and single-valued navigations for paths that join (a part's owner, and a
// thing's twin: the thing whose Id is its I, often none).
import fc from 'fast-check';
import { defineEntityType, type EntityType } from '../../../src/model/schema.js';
import { filterFunctions, moreFilterFunctions, type QueryArbitraryOptions } from '../../../src/testing/index.js';

export const Part: EntityType = defineEntityType({
  name: 'Part',
  key: ['PartId'],
  properties: {
    PartId: { type: 'Edm.Int32' },
    ThingId: { type: 'Edm.Int32', nullable: false },
    Q: { type: 'Edm.Int32' },
    Name: { type: 'Edm.String', maxLength: 40 },
  },
  navigation: { Owner: { target: () => Thing, foreignKey: { ThingId: 'Id' }, collection: false } },
});

export const Thing: EntityType = defineEntityType({
  name: 'Thing',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    // (searchable: `$search` and `$apply`'s search look in them)
    S: { type: 'Edm.String', maxLength: 40, searchable: true },
    T: { type: 'Edm.String', maxLength: 40, searchable: true },
    B: { type: 'Edm.Boolean' },
    I: { type: 'Edm.Int32' },
    L: { type: 'Edm.Int64' },
    D: { type: 'Edm.Decimal', precision: 18, scale: 4 },
    F: { type: 'Edm.Double' },
    Day: { type: 'Edm.Date' },
    At: { type: 'Edm.DateTimeOffset' },
    G: { type: 'Edm.Guid' },
  },
  navigation: {
    Parts: { target: () => Part, foreignKey: { Id: 'ThingId' } },
    Twin: { target: () => Thing, foreignKey: { I: 'Id' }, collection: false },
  },
});

/** Strings that find the traps: case, accents, astral characters, LIKE wildcards, quotes, trailing spaces. */
export const edgeStrings = [
  '',
  'a',
  'A',
  'b',
  'ab',
  'a ',
  ' a',
  "O'Neil",
  '%',
  '_',
  '\\',
  'a%b_c\\',
  '*?[a]',
  '[',
  'é',
  'É',
  'ß',
  'İ',
  'ǅ',
  '🚀',
  'x🚀y',
  '\uE000',
  'z',
  'Z',
  '\u00a0a\u2003',
  'aa',
  // text a cast to a number reads (SEMANTICS.md "cast": the literal syntax only, else null)
  '12',
  '-2.5',
  '+7',
  '007',
  '1e3',
  '2.5E-1',
  '9223372036854775807',
  '9223372036854775808',
  '-2147483648.5',
  '2147483647.49',
  '1e400',
  '0.5e-7000',
  ' 1',
  '1.',
  '١٢',
] as const;
export const edgeDecimals = [
  '0',
  '1',
  '-1',
  '0.5',
  '-0.5',
  '2.5',
  '-2.5',
  '1.5',
  '0.0001',
  '-0.0001',
  '12.3456',
  '99999999999999.9999',
  '-99999999999999.9999',
  '100',
] as const;
export const edgeInt32 = [0, 1, -1, 2, 3, -7, 100, 2147483647, -2147483648] as const;
export const edgeInt64 = [
  '0',
  '1',
  '-1',
  '3',
  '9223372036854775807',
  '-9223372036854775808',
  '4294967296',
  '-9007199254740993',
] as const;
export const edgeDoubles = [
  0, 1, -1, 0.5, -0.5, 2.5, -2.5, 0.1, 0.30000000000000004, 1e10, -1e-10, 123.456, 1e300, -1e300, 1.7e308, 5e-324,
  1234567890123456789, 4503599627370496.5,
] as const;
export const edgeDates = ['0001-01-01', '1970-01-01', '2024-02-29', '2024-03-01', '9999-12-31'] as const;
export const edgeInstants = [
  '0001-01-01T00:00:00.000Z',
  '1969-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00.000Z',
  '2024-02-29T12:30:45.678Z',
  '2024-02-29T00:00:00.000Z',
  '2024-03-01T23:59:59.001Z',
  '9999-12-31T23:59:59.999Z',
] as const;
export const edgeGuids = [
  '00000000-0000-0000-0000-000000000000',
  '0a1b2c3d-4e5f-6789-abcd-ef0123456789',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
] as const;

/**
 * The testing kit's options for Thing in the differential tests: every construct it generates (paths, lambdas and
 * counts two navigations deep, every function, a bare null where a value is taken, mixed types, casts, `$orderby`
 * expressions), with the edge values above as what rows hold and literals are drawn from.
 */
export const thingKit = {
  navigation: 2,
  functions: [...filterFunctions, ...moreFilterFunctions],
  nulls: true,
  mixedTypes: true,
  casts: true,
  orderByExpressions: true,
  values: {
    S: edgeStrings,
    T: edgeStrings,
    Name: edgeStrings,
    I: [...edgeInt32, -20, 5, 20],
    Q: [0, 1, -1, 2, 3, -3],
    L: edgeInt64,
    D: edgeDecimals,
    F: [...edgeDoubles, 7.5],
    Day: edgeDates,
    At: [...edgeInstants, '2024-02-29T14:30:45.678+02:00'],
    G: [...edgeGuids, '0A1B2C3D-4E5F-6789-ABCD-EF0123456789'],
  },
} satisfies QueryArbitraryOptions;

const nullable = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { nil: null, freq: 4 });

export type Row = Record<string, unknown>;

export const thingRow = (id: number): fc.Arbitrary<Row> =>
  fc.record({
    Id: fc.constant(id),
    S: nullable(fc.constantFrom(...edgeStrings)),
    T: nullable(fc.constantFrom(...edgeStrings)),
    B: nullable(fc.boolean()),
    I: nullable(fc.oneof(fc.constantFrom(...edgeInt32), fc.integer({ min: -20, max: 20 }))),
    L: nullable(fc.constantFrom(...edgeInt64)),
    D: nullable(fc.constantFrom(...edgeDecimals)),
    F: nullable(fc.constantFrom(...edgeDoubles)),
    Day: nullable(fc.constantFrom(...edgeDates)),
    At: nullable(fc.constantFrom(...edgeInstants)),
    G: nullable(fc.constantFrom(...edgeGuids)),
  });

/** Up to 10 things with ids 1..n, and up to 3 parts for each. */
export const dataSet: fc.Arbitrary<{ things: Row[]; parts: Row[] }> = fc
  .integer({ min: 0, max: 10 })
  .chain((n) =>
    fc.tuple(
      fc.tuple(...Array.from({ length: n }, (_, i) => thingRow(i + 1))),
      fc.array(
        fc.record({
          ThingId: fc.integer({ min: 1, max: Math.max(n, 1) }),
          Q: nullable(fc.integer({ min: -3, max: 3 })),
          Name: nullable(fc.constantFrom(...edgeStrings)),
        }),
        { maxLength: 3 * n },
      ),
    ),
  )
  .map(([things, parts]) => ({ things, parts: parts.map((p, i) => ({ PartId: i + 1, ...p })) }));

/**
 * Things with their related rows attached, the form the memory backend reads navigation from by default: `row.Parts`
 * (each part with its `Owner`) and `row.Twin` (a thing, or null).
 */
export function withParts(things: readonly Row[], parts: readonly Row[]): Row[] {
  const graph = things.map((t) => ({ ...t }));
  const byId = new Map(graph.map((t) => [t.Id, t]));
  const linked: Row[] = parts.map((p) => ({ ...p, Owner: byId.get(p.ThingId) ?? null }));
  for (const t of graph) {
    t.Parts = linked.filter((p) => p.ThingId === t.Id);
    t.Twin = byId.get(t.I) ?? null;
  }
  return graph;
}
