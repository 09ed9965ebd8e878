// Laws of the memory backend (fast-check): logical identities, ne/not eq, in/eq chains, a total
// order, paging as a slice, and agreement with a plain interpreter written here from SEMANTICS.md. The identities
// and the order are checked a second time over the testing kit's rows and filters of a plant entity type (every
// operator and function, decimals at their precision, instants in offsets), the kit's first user here.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileQuery, runQuery, type Row } from '../../src/backends/memory/index.js';
import { defineEntityType, parseQuery, validateQuery } from '../../src/index.js';
import { POLineItem } from '../../src/server/model.js';
import { filterOf, orderByOf, rowsOf } from '../../src/testing/index.js';

const Thing = defineEntityType({
  name: 'Thing',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    S: { type: 'Edm.String' },
    B: { type: 'Edm.Boolean' },
    N: { type: 'Edm.Int32' },
    D: { type: 'Edm.Decimal', scale: 4 },
    T: { type: 'Edm.DateTimeOffset' },
  },
});

// ── data ────────────────────────────────────────────────────────────────────

const strings = fc.constantFrom('', 'a', 'A', 'b', 'ab', "O'Neil", '%', '_', 'é', 'É', '🚀', '\uE000', 'z');
const decimalText = fc
  .tuple(fc.integer({ min: -999, max: 999 }), fc.integer({ min: 0, max: 9999 }), fc.nat(4))
  .map(([whole, fraction, digits]) =>
    digits === 0 ? String(whole) : `${whole}.${String(fraction).padStart(4, '0').slice(0, digits)}`,
  );
const instants = fc
  .tuple(fc.integer({ min: 0, max: 48 }), fc.constantFrom('Z', '+02:00', '-05:00'))
  .map(([hour, zone]) => {
    const ms = Date.UTC(2024, 0, 1) + hour * 3_600_000;
    const offset = zone === 'Z' ? 0 : (zone.startsWith('+') ? 1 : -1) * Number(zone.slice(1, 3)) * 60;
    return `${new Date(ms + offset * 60_000).toISOString().slice(0, 19)}${zone}`;
  });
const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });

const row = (id: number) =>
  fc.record({
    Id: fc.constant(id),
    S: nullable(strings),
    B: nullable(fc.boolean()),
    N: nullable(fc.integer({ min: -5, max: 5 })),
    // decimals arrive as numbers or as text, as from JSON or a driver
    D: nullable(fc.oneof(decimalText, decimalText.map(Number))),
    T: nullable(instants),
  });

const rows = fc.integer({ min: 0, max: 12 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => row(i + 1))));

// ── filters: generated as text, with a reference evaluation ─────────────────

type Tri = boolean | null;
interface Filter {
  readonly text: string;
  readonly eval: (r: Row) => Tri;
}

const codePoints = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0)!);
function ordinal(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return x.length - y.length;
}
/** Exact decimal as an integer number of 1/10000 (every value here has at most 4 decimals). */
const scaled = (v: unknown): bigint => {
  const [whole, fraction = ''] = String(v).split('.');
  const negative = whole!.startsWith('-');
  const magnitude = BigInt(whole!.replace('-', '')) * 10000n + BigInt(fraction.padEnd(4, '0').slice(0, 4) || '0');
  return negative ? -magnitude : magnitude;
};

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const ops = ['eq', 'ne', 'gt', 'ge', 'lt', 'le'] as const;
type Op = (typeof ops)[number];

function compare(op: Op, a: unknown, b: unknown, cmp: (a: never, b: never) => number): boolean {
  if (a === null || b === null) return op === 'eq' ? a === b : op === 'ne' ? a !== b : false;
  const c = cmp(a as never, b as never);
  return { eq: c === 0, ne: c !== 0, gt: c > 0, ge: c >= 0, lt: c < 0, le: c <= 0 }[op];
}

const atom: fc.Arbitrary<Filter> = fc.oneof(
  fc.tuple(fc.constantFrom(...ops), nullable(strings)).map(([op, lit]) => ({
    text: `S ${op} ${lit === null ? 'null' : quote(lit)}`,
    eval: (r: Row) => compare(op, r.S, lit, ordinal),
  })),
  fc.tuple(fc.constantFrom(...ops), nullable(fc.integer({ min: -5, max: 5 }))).map(([op, lit]) => ({
    text: `N ${op} ${lit ?? 'null'}`,
    eval: (r: Row) => compare(op, r.N, lit, (a: number, b: number) => a - b),
  })),
  fc.tuple(fc.constantFrom(...ops), decimalText).map(([op, lit]) => ({
    text: `D ${op} ${lit.includes('.') ? lit : `${lit}.0`}`,
    eval: (r: Row) =>
      compare(op, r.D === null ? null : scaled(r.D), scaled(lit), (a: bigint, b: bigint) =>
        a < b ? -1 : a > b ? 1 : 0,
      ),
  })),
  fc.tuple(fc.constantFrom(...ops), instants).map(([op, lit]) => ({
    text: `T ${op} ${lit}`,
    eval: (r: Row) =>
      compare(op, r.T === null ? null : Date.parse(r.T as string), Date.parse(lit), (a: number, b: number) => a - b),
  })),
  fc.constant({ text: 'B', eval: (r: Row) => r.B as Tri }),
  fc.tuple(fc.array(nullable(fc.integer({ min: -5, max: 5 })), { minLength: 1, maxLength: 4 })).map(([items]) => ({
    text: `N in (${items.map((i) => i ?? 'null').join(',')})`,
    eval: (r: Row) => items.some((i) => (r.N === null ? i === null : i === r.N)),
  })),
);

const and = (a: Tri, b: Tri): Tri => (a === false || b === false ? false : a === true && b === true ? true : null);
const or = (a: Tri, b: Tri): Tri => (a === true || b === true ? true : a === false && b === false ? false : null);
const not = (a: Tri): Tri => (a === null ? null : !a);

const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    atom,
    fc
      .tuple(tie('f'), tie('f'))
      .map(([a, b]) => ({ text: `(${a.text}) and (${b.text})`, eval: (r: Row) => and(a.eval(r), b.eval(r)) })),
    fc
      .tuple(tie('f'), tie('f'))
      .map(([a, b]) => ({ text: `(${a.text}) or (${b.text})`, eval: (r: Row) => or(a.eval(r), b.eval(r)) })),
    tie('f').map((a) => ({ text: `not (${a.text})`, eval: (r: Row) => not(a.eval(r)) })),
  ),
})).f;

const compile = (query: string) => compileQuery(validateQuery(parseQuery(query), Thing));
const matching = (query: string, data: readonly Row[]): number[] =>
  data.filter(compile(query).matches).map((r) => r.Id as number);

describe('memory backend laws', () => {
  it('agrees with a plain interpreter of SEMANTICS.md on every row', () => {
    fc.assert(
      fc.property(filter, rows, (f, data) => {
        const compiled = compile(`$filter=${encodeURIComponent(f.text)}`);
        for (const r of data) expect([f.text, r, compiled.matches(r)]).toEqual([f.text, r, f.eval(r) === true]);
      }),
      { numRuns: 1500 },
    );
  });

  it('not (not p) ≡ p and De Morgan', () => {
    fc.assert(
      fc.property(filter, filter, rows, (a, b, data) => {
        const q = (text: string) => matching(`$filter=${encodeURIComponent(text)}`, data);
        expect(q(`not (not (${a.text}))`)).toEqual(q(a.text));
        expect(q(`not ((${a.text}) and (${b.text}))`)).toEqual(q(`(not (${a.text})) or (not (${b.text}))`));
        expect(q(`not ((${a.text}) or (${b.text}))`)).toEqual(q(`(not (${a.text})) and (not (${b.text}))`));
      }),
      { numRuns: 500 },
    );
  });

  it('ne ≡ not eq, and in ≡ a chain of eq', () => {
    fc.assert(
      fc.property(
        nullable(strings),
        fc.array(nullable(fc.integer({ min: -5, max: 5 })), { minLength: 1, maxLength: 5 }),
        rows,
        (s, items, data) => {
          const literal = s === null ? 'null' : quote(s);
          const q = (text: string) => matching(`$filter=${encodeURIComponent(text)}`, data);
          expect(q(`S ne ${literal}`)).toEqual(q(`not (S eq ${literal})`));
          const list = items.map((i) => i ?? 'null');
          expect(q(`N in (${list.join(',')})`)).toEqual(q(list.map((i) => `N eq ${i}`).join(' or ')));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('in ≡ a chain of eq also when the items have different types (each promotes with the left side alone)', () => {
    // Int32, Int64, Decimal and Double items, among them values a Double cannot tell apart from a row's value
    const near = (v: unknown): string => {
      const text = String(v);
      return `${text}${text.includes('.') ? '' : '.'}00000000000000001`;
    };
    const numbers = (data: readonly Row[]) =>
      fc.oneof(
        fc.integer({ min: -5, max: 5 }).map(String),
        fc.constantFrom('9007199254740993', '-9223372036854775808', '0.1', '2.5000', '-0.0001'),
        decimalText,
        fc.constantFrom('1e0', '2.5e0', '0.1e0', '-1e-4', '1e300', 'null'),
        ...(data.some((r) => r.D !== null)
          ? [fc.constantFrom(...data.filter((r) => r.D !== null).map((r) => near(r.D)))]
          : []),
      );
    const instant = fc.oneof(instants, fc.constantFrom('2024-01-01', '2024-01-02', '2023-12-31', 'null'));
    const cases = rows.chain((data) =>
      fc.tuple(
        fc.constant(data),
        fc.oneof(
          fc.tuple(fc.constantFrom('D', 'N', 'N add D'), fc.array(numbers(data), { minLength: 1, maxLength: 5 })),
          fc.tuple(fc.constant('T'), fc.array(instant, { minLength: 1, maxLength: 4 })),
        ),
      ),
    );
    fc.assert(
      fc.property(cases, ([data, [left, items]]) => {
        const q = (text: string) => matching(`$filter=${encodeURIComponent(text)}`, data);
        // (`in` binds as a primary, so an operator expression on its left needs parentheses)
        const x = `(${left})`;
        expect(q(`${x} in (${items.join(',')})`)).toEqual(q(items.map((i) => `${x} eq ${i}`).join(' or ')));
      }),
      { numRuns: 1000 },
    );
  });

  it('orders totally, consistently with eq, and pages as a slice of the full order', () => {
    fc.assert(
      fc.property(
        rows,
        fc.constantFrom('S', 'N desc', 'D', 'T desc', 'B,S desc'),
        fc.nat(5),
        fc.nat(5),
        (data, orderBy, top, skip) => {
          const full = compile(`$orderby=${orderBy}`);
          const sorted = [...data].sort(full.compare);
          for (const a of data) {
            for (const b of data) {
              const ab = full.compare(a, b);
              expect(Math.sign(ab) + Math.sign(full.compare(b, a))).toBe(0); // antisymmetric
              expect(ab === 0).toBe(a.Id === b.Id); // the key breaks every tie
            }
          }
          for (let i = 1; i < sorted.length; i++) expect(full.compare(sorted[i - 1]!, sorted[i]!)).toBeLessThan(0);
          const page = runQuery(
            data,
            validateQuery(parseQuery(`$orderby=${orderBy}&$top=${top}&$skip=${skip}&$count=true`), Thing),
          );
          expect(page.rows.map((r) => r.Id)).toEqual(sorted.slice(skip, skip + top).map((r) => r.Id));
          expect(page.count).toBe(data.length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('sorts nulls first ascending and last descending', () => {
    const data: Row[] = [
      { Id: 1, N: 2 },
      { Id: 2, N: null },
      { Id: 3, N: -1 },
    ];
    expect(runQuery(data, validateQuery(parseQuery('$orderby=N'), Thing)).rows.map((r) => r.Id)).toEqual([2, 3, 1]);
    expect(runQuery(data, validateQuery(parseQuery('$orderby=N desc'), Thing)).rows.map((r) => r.Id)).toEqual([
      1, 3, 2,
    ]);
  });

  describe("over the testing kit's rows and filters (POLineItem)", () => {
    const bind = (query: string) => validateQuery(parseQuery(query), POLineItem);
    const keysOf = (query: string, data: readonly Row[]): string[] =>
      runQuery(data, bind(query)).rows.map((r) => `${String(r['PONumber'])}/${String(r['LineNumber'])}`);
    const q = (filter: string, data: readonly Row[]) => keysOf(`$filter=${encodeURIComponent(filter)}`, data);

    it('not (not p) ≡ p, De Morgan, and p and not p never keep the same row', () => {
      fc.assert(
        fc.property(
          filterOf(POLineItem, { depth: 2 }),
          filterOf(POLineItem, { depth: 2 }),
          rowsOf(POLineItem),
          (a, b, data) => {
            expect(q(`not (not (${a}))`, data)).toEqual(q(a, data));
            expect(q(`not ((${a}) and (${b}))`, data)).toEqual(q(`(not (${a})) or (not (${b}))`, data));
            expect(q(`not ((${a}) or (${b}))`, data)).toEqual(q(`(not (${a})) and (not (${b}))`, data));
            // a row where p is null is kept by neither; no row by both
            const kept = new Set(q(a, data));
            expect(q(`not (${a})`, data).filter((k) => kept.has(k))).toEqual([]);
          },
        ),
        { numRuns: 300 },
      );
    });

    it('orders totally with the key last, and pages as a slice of the full order', () => {
      fc.assert(
        fc.property(
          rowsOf(POLineItem),
          orderByOf(POLineItem, { total: true }),
          fc.nat(5),
          fc.nat(5),
          (data, orderBy, top, skip) => {
            const compiled = compileQuery(bind(`$orderby=${orderBy}`));
            for (const a of data)
              for (const b of data) {
                const ab = compiled.compare(a, b);
                expect(Math.sign(ab) + Math.sign(compiled.compare(b, a))).toBe(0);
                expect(ab === 0).toBe(a === b);
              }
            const full = keysOf(`$orderby=${orderBy}`, data);
            expect(keysOf(`$orderby=${orderBy}&$top=${top}&$skip=${skip}`, data)).toEqual(full.slice(skip, skip + top));
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
