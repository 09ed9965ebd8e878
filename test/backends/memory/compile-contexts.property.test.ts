// A predicate shape is decided once (src/backends/memory/source.ts), whether it ends inline in the generated filter
// or as a function of its own under a closure. This checks that every context gives a random filter the same
// answer, over row values of every form a row may hold (numeric text, bigints, NaN, Date objects, junk):
// the filter itself, inside a lambda over one child, under three-valued logic, and as a sort key.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileQuery, type CompiledQuery, type Row } from '../../../src/backends/memory/index.js';
import { defineEntityType, parseQuery, validateQuery, type EntityType } from '../../../src/index.js';

const Kid: EntityType = defineEntityType({
  name: 'Kid',
  key: ['Id'],
  properties: { Id: { type: 'Edm.Int32' }, Parent: { type: 'Edm.Int32' }, Q: { type: 'Edm.String', nullable: true } },
});

const Thing: EntityType = defineEntityType({
  name: 'Thing',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    S: { type: 'Edm.String', nullable: true },
    G: { type: 'Edm.Guid', nullable: true },
    B: { type: 'Edm.Boolean', nullable: true },
    N: { type: 'Edm.Int32', nullable: true },
    L: { type: 'Edm.Int64', nullable: true },
    X: { type: 'Edm.Double', nullable: true },
    D: { type: 'Edm.Decimal', nullable: true },
    Dt: { type: 'Edm.Date', nullable: true },
    T: { type: 'Edm.DateTimeOffset', nullable: true },
    Tm: { type: 'Edm.TimeOfDay', nullable: true },
    Du: { type: 'Edm.Duration', nullable: true },
  },
  navigation: { Kids: { target: () => Kid, foreignKey: { Id: 'Parent' } } },
});

// ── rows: each property in its usual forms, other readable forms, and forms that read as null ──

const unreadable = [null, undefined, {}, true, 'x', 7, 7n] as const;
const rowValues: Readonly<Record<string, readonly unknown[]>> = {
  S: ['', 'a', 'A', 'ab', 'é', '🚀', '\uE000', ...unreadable],
  G: ['01234567-89ab-cdef-0123-456789abcdef', '01234567-89AB-CDEF-0123-456789ABCDEF', ...unreadable],
  B: [true, false, 'true', ...unreadable],
  N: [-1, 0, 3, '3', ' ', 'NaN', Number.NaN, Infinity, 3n, 1.5, -0, 2 ** 60, ...unreadable],
  L: [3n, -3n, 3, 9007199254740993n, '9007199254740993', 1.5, ...unreadable],
  X: [1.5, 0, -0, Number.NaN, Infinity, -Infinity, '1e3', 1e308, 5e-324, 3n, ...unreadable],
  D: [
    1.5,
    0.1,
    0.30000000000000004,
    3,
    '1.50',
    '3.00',
    '-0.000',
    '1234.5678',
    '1.',
    2n,
    Number.NaN,
    Infinity,
    1e-310,
    1e20,
    -2.5,
    ...unreadable,
  ],
  Dt: [
    '2024-01-15',
    '2024-01-16',
    '0001-01-01',
    '2024-1-15',
    '-12a-45-67',
    'abcd-efghi',
    '20240-01-01',
    '-0001-01-01',
    '2024-01-15T10:00Z',
    new Date(Date.UTC(2024, 0, 15)),
    ...unreadable,
  ],
  T: [
    '2024-01-01T00:00:00Z',
    '2024-01-01T02:00:00+02:00',
    '2023-12-31T18:30:00.9999999-05:30',
    '2024-01-01 14:00:00+1400',
    '2023-02-29T00:00:00Z',
    '2024-01-01T00:00:00',
    1704067200000,
    1704067200000.7,
    Number.NaN,
    new Date(Date.UTC(2024, 0, 1)),
    ...unreadable,
  ],
  Tm: ['10:00:00', '10:00', '09:59:59.999', 36000000, ...unreadable],
  Du: ['PT1H', 'P1DT2H', 3600000, '-PT1H', ...unreadable],
};
const names = Object.keys(rowValues);

const row = (id: number): fc.Arbitrary<Row> =>
  fc
    .record(Object.fromEntries(names.map((name) => [name, fc.constantFrom(...rowValues[name]!)])))
    .map((values) => ({ Id: id, ...values, Kids: [{ Id: id, Parent: id, Q: id % 2 === 0 ? 'a' : null }] }));
const rows = fc.integer({ min: 1, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => row(i + 1))));

// ── filters: every shape with a template, and some without ──

const literals: Readonly<Record<string, readonly string[]>> = {
  S: ["'a'", "''", "'é'", "'🚀'", 'null'],
  G: ['01234567-89ab-cdef-0123-456789abcdef', 'null'],
  B: ['true', 'false', 'null'],
  N: ['-1', '0', '3', 'null'],
  L: ['3', '9007199254740993', 'null'],
  X: ['1.5', 'NaN', 'INF', '-INF', '0', 'null'],
  D: ['1.5', '0.1', '3.00', '12345678901234567890.123', 'null'],
  Dt: ['2024-01-15', '0001-01-01', 'null'],
  T: ['2024-01-01T00:00:00Z', '2024-01-01T00:00:00.5Z', 'null'],
  Tm: ['10:00:00', 'null'],
  Du: ["duration'PT1H'", 'null'],
};
const literalOf = (name: string) => fc.constantFrom(...literals[name]!);
const ops = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;

const comparison = fc
  .constantFrom(...names)
  .chain((name) => fc.tuple(fc.constant(name), fc.constantFrom(...ops), literalOf(name), fc.boolean()))
  .map(([name, op, literal, mirrored]) => {
    const operator = name === 'G' && op !== 'eq' && op !== 'ne' ? 'eq' : op;
    return mirrored ? `${literal} ${operator} ${name}` : `${name} ${operator} ${literal}`;
  });
const membership = fc
  .constantFrom(...names)
  .chain((name) => fc.tuple(fc.constant(name), fc.array(literalOf(name), { minLength: 1, maxLength: 4 })))
  .map(([name, items]) => `${name} in (${items.join(',')})`);
const search = fc
  .tuple(
    fc.constantFrom('contains', 'startswith', 'endswith'),
    fc.constantFrom('S', 'tolower(S)'),
    fc.constantFrom("'a'", "''", "'é'"),
  )
  .map(([name, subject, literal]) => `${name}(${subject},${literal})`);
const decimalArithmetic = fc
  .tuple(
    // Int32 and Int64 operands promoted to Decimal (each beside a Decimal operand: an Int32 row value of 1.5 in
    // Int32 arithmetic, `N mul 3`, throws a RangeError in every context alike)
    fc.constantFrom('D', '2.5', 'N', 'L'),
    fc.constantFrom('add', 'sub', 'mul'),
    fc.constantFrom('D', '3', '0.2'),
    fc.constantFrom(...ops),
    fc.constantFrom('1.5', '0.3', '1000', '0'),
  )
  .map(
    ([a, operator, b, comparison, literal]) =>
      `${a} ${operator} ${b === '3' && (a === 'N' || a === 'L') ? '3.0' : b} ${comparison} ${literal}`,
  );
const untemplated = fc.constantFrom(
  'B',
  'null eq null',
  'N add 1 gt X',
  "tolower(S) in ('a', 'é')",
  "Kids/any(k: k/Q in ('a', null))",
  "case(N gt 3: S, true: 'x') eq 'a'",
  "matchesPattern(S,'^a')",
);
const atom = fc.oneof(comparison, comparison, membership, search, decimalArithmetic, untemplated);
const filter: fc.Arbitrary<string> = fc.letrec<{ f: string }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc.tuple(tie('f'), tie('f')).map(([a, b]) => `(${a}) and (${b})`),
    fc.tuple(tie('f'), tie('f')).map(([a, b]) => `(${a}) or (${b})`),
    tie('f').map((a) => `not (${a})`),
  ),
})).f;

const compile = (query: string): CompiledQuery => compileQuery(validateQuery(parseQuery(query), Thing));

describe('a predicate shape answers alike in every context it is compiled in', () => {
  it('inline in the filter, in a lambda, under three-valued logic and as a sort key', () => {
    fc.assert(
      fc.property(filter, rows, (f, data) => {
        const inline = compile(`$filter=${encodeURIComponent(f)}`);
        const expected = data.map((r) => inline.matches(r));
        // each child row is the only one of its parent, so any() is the filter's own answer
        const inLambda = compile(`$filter=${encodeURIComponent(`Kids/any(k: ${f})`)}`);
        // contains(S,'~') is false or null, never true: `or` keeps the filter's answer, but three-valued
        const threeValued = compile(`$filter=${encodeURIComponent(`(${f}) or contains(S,'~')`)}`);
        // contains('a','~') is false but, being a function, counts as possibly null: the logic is three-valued
        const negated = compile(`$filter=${encodeURIComponent(`not (not (${f}) or contains('a','~'))`)}`);
        expect(data.map((r) => inLambda.matches(r))).toEqual(expected);
        expect(data.map((r) => threeValued.matches(r))).toEqual(expected);
        expect(data.map((r) => negated.matches(r))).toEqual(expected);
        // as a sort key: the rows the filter keeps come first, then the others, each by Id
        const sorted = compile(`$orderby=${encodeURIComponent(`case(${f}: 1, true: 0)`)} desc`).run(data).rows;
        const kept = data.filter((_, i) => expected[i]);
        const dropped = data.filter((_, i) => !expected[i]);
        expect(sorted.map((r) => r.Id)).toEqual([...kept, ...dropped].map((r) => r.Id));
      }),
      { numRuns: 400 },
    );
  });

  it('takes any number of constants: a 100,000-term filter compiles and runs', () => {
    const bound = validateQuery(
      parseQuery(`$filter=${Array.from({ length: 100_000 }, (_, i) => `N eq ${i}`).join(' or ')}`),
      Thing,
      { maxNodes: 1_000_000, maxQueryLength: 10_000_000 },
    );
    const { matches } = compileQuery(bound);
    expect([{ N: 99_999 }, { N: 100_000 }, { N: null }].map(matches)).toEqual([true, false, false]);
  });
});
