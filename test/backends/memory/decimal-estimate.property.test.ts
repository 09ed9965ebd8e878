// Decimal arithmetic compared with a literal (`A mul B gt 1234.5678`) is decided in doubles when the double result is
// farther from the literal than rounding can reach, and exactly otherwise (src/backends/memory/source.ts). These
// properties compare the compiled filter with exact rational arithmetic written here, over operands in every form a
// row may hold them (numbers, decimal text at any scale, bigints, Int32 and Int64 values promoted, unreadable values)
// and literals placed where doubles cannot decide: the exact result itself, a hair either side of it, the nearest
// double's text. Instants compared with literals (read by a hand-rolled parser) are checked the same way.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileQuery, type Row } from '../../../src/backends/memory/index.js';
import { defineEntityType, parseQuery, validateQuery } from '../../../src/index.js';
import { isDecimal, readDecimal, readInstant, readInt64, readNumber } from '../../../src/values/read.js';

const Line = defineEntityType({
  name: 'Line',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    A: { type: 'Edm.Decimal' },
    B: { type: 'Edm.Decimal', scale: 4 },
    N: { type: 'Edm.Int32' },
    L: { type: 'Edm.Int64' },
    T: { type: 'Edm.DateTimeOffset' },
  },
});

const compile = (filter: string) =>
  compileQuery(validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), Line));

// ── exact rationals: coefficient × 10^exponent ──────────────────────────────────────────────────────────

interface Exact {
  readonly c: bigint;
  readonly e: number;
}

const DECIMAL_TEXT = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

function exactOfText(text: string): Exact {
  const match = DECIMAL_TEXT.exec(text);
  if (match === null) throw new Error(`not decimal text: ${text}`);
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  const c = BigInt(`${whole}${fraction}`);
  return { c: sign === '-' ? -c : c, e: Number(exponent) - fraction.length };
}

/** A working value (what the readers give) as an exact rational; a number by its shortest text. */
function exactOf(value: unknown): Exact | null {
  if (value === null) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? exactOfText(String(value)) : null;
  if (typeof value === 'bigint') return { c: value, e: 0 };
  if (typeof value === 'string') return exactOfText(value);
  if (isDecimal(value)) return { c: value.coefficient, e: value.exponent };
  throw new Error(`unexpected working value ${String(value)}`);
}

const scale = (x: Exact, e: number): bigint => x.c * 10n ** BigInt(x.e - e);
const align = (x: Exact, y: Exact): [bigint, bigint, number] => {
  const e = Math.min(x.e, y.e);
  return [scale(x, e), scale(y, e), e];
};
function apply(operator: string, x: Exact, y: Exact): Exact {
  if (operator === 'mul') return { c: x.c * y.c, e: x.e + y.e };
  const [a, b, e] = align(x, y);
  return { c: operator === 'add' ? a + b : a - b, e };
}
function compareExact(x: Exact, y: Exact): number {
  const [a, b] = align(x, y);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Plain decimal text, no exponent (a literal with one would be a Double). */
function plainText(x: Exact): string {
  const negative = x.c < 0n;
  let digits = (negative ? -x.c : x.c).toString();
  let text: string;
  if (x.e >= 0) text = digits + '0'.repeat(x.e);
  else {
    digits = digits.padStart(-x.e + 1, '0');
    text = `${digits.slice(0, digits.length + x.e)}.${digits.slice(digits.length + x.e)}`;
  }
  return negative ? `-${text}` : text;
}

// ── operands and rows ───────────────────────────────────────────────────────────────────────────────

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
const decimalNumbers = fc.oneof(
  fc.tuple(fc.integer({ min: -10_000_000, max: 10_000_000 }), fc.nat(7)).map(([m, k]) => m / 10 ** k),
  fc.double(),
  fc.constantFrom(0, -0, 0.1, 0.2, 0.3, 0.30000000000000004, 1e-7, 1e21, 2 ** 53, 2 ** 53 + 2, 1e-310, 5e-324),
  fc.constantFrom(1e300, -1e300, 1.7976931348623157e308, Number.NaN, Infinity, -Infinity),
);
const decimalTexts = fc.oneof(
  // a driver's fixed scale, up to 25 digits either side
  fc
    .tuple(fc.constantFrom('', '-', '+'), fc.oneof(digits(1, 4), digits(1, 25)), fc.oneof(digits(1, 4), digits(1, 25)))
    .map(([s, w, f]) => `${s}${w}.${f}`),
  fc.tuple(fc.constantFrom('', '-'), digits(1, 20)).map(([s, w]) => s + w),
  fc.constantFrom('0.000', '-0.0000', '1234.5678', '12.5000', '1e3', '2.5E-3', '9007199254740993', '1e400'),
  // not decimals: read as null
  fc.constantFrom('1.', '.5', ' 1', '1 ', '', '-', '0x10', 'NaN', 'Infinity', '1e99999', '١٢'),
);
const unreadable = fc.constantFrom(null, undefined, {}, true, [1]);

const decimalValues = fc.oneof(
  { arbitrary: decimalNumbers, weight: 3 },
  { arbitrary: decimalTexts, weight: 3 },
  { arbitrary: fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), weight: 1 },
  { arbitrary: fc.constant({ coefficient: 15n, exponent: -1 }), weight: 1 },
  { arbitrary: unreadable, weight: 1 },
);
const int32Values = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.integer(),
  fc.constantFrom(1.5, -0, Number.NaN, Infinity, '3', ' 7 ', '1e3', 'x', 3n, 2 ** 60),
  unreadable,
);
const int64Values = fc.oneof(
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.bigInt({ min: -1000n, max: 1000n }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.integer({ min: -1000, max: 1000 }).map(String),
  fc.constantFrom(1.5, 2 ** 60, 2 ** 53 + 2, '9007199254740993', '-12', '+12', '1.5', '', Infinity),
  unreadable,
);

/** What the exact path reads from a row value of each operand: a working value, by the general readers. */
const readAs = {
  A: (v: unknown) => exactOf(readDecimal(v)),
  B: (v: unknown) => exactOf(readDecimal(v)),
  N: (v: unknown) => exactOf(readNumber(v)),
  L: (v: unknown) => exactOf(readInt64(v)),
} as const;
type Operand = keyof typeof readAs;

/** A Decimal literal as an operand: short, many digits (not a double: a Decimal value), tiny or negative. */
const literalOperands = fc.oneof(
  fc
    .tuple(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: 1, max: 6 }))
    .map(([m, k]) => plainText({ c: BigInt(m), e: -k })),
  fc.constantFrom('0.1', '-2.25', '1.5', '0.0', '12345678901234567890.123', '0.000000000000000000000000001'),
);

const operation = fc.record({
  left: fc.oneof(fc.constantFrom<Operand>('A', 'N', 'L'), literalOperands),
  operator: fc.constantFrom('add', 'sub', 'mul'),
  // one side a Decimal property or a literal with a point, so the arithmetic is Decimal
  right: fc.oneof(fc.constant<Operand>('B'), fc.constant<Operand>('A'), literalOperands),
  comparison: fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le'),
  mirrored: fc.boolean(),
});
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

const rowOf = fc.record({ A: decimalValues, B: decimalValues, N: int32Values, L: int64Values });
type Values = typeof rowOf extends fc.Arbitrary<infer T> ? T : never;

const isOperand = (x: string): x is Operand => x in readAs;
const operandValue = (x: string, row: Values): Exact | null => (isOperand(x) ? readAs[x](row[x]) : exactOfText(x));

function exactResult(op: Operation, row: Values): Exact | null {
  const a = operandValue(op.left, row);
  const b = operandValue(op.right, row);
  return a === null || b === null ? null : apply(op.operator, a, b);
}

const MIRRORED = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const;

function expected(op: Operation, row: Values, literal: string): boolean {
  const r = exactResult(op, row);
  if (r === null) return op.comparison === 'ne';
  const c = compareExact(r, exactOfText(literal));
  return { eq: c === 0, ne: c !== 0, gt: c > 0, ge: c >= 0, lt: c < 0, le: c <= 0 }[op.comparison];
}

function filterText(op: Operation, literal: string): string {
  const arithmetic = `${op.left} ${op.operator} ${op.right}`;
  return op.mirrored
    ? `${literal} ${MIRRORED[op.comparison]} ${arithmetic}`
    : `${arithmetic} ${op.comparison} ${literal}`;
}

/** A literal the validator takes: at most 100 digits. */
const literalSized = (text: string): boolean => text.replace(/\D/g, '').length <= 100;

/** Literals where a double cannot decide: the exact result, a hair either side, its nearest double's text. */
function boundaryLiterals(r: Exact | null): string[] {
  if (r === null) return ['0.5'];
  const text = plainText(r);
  const hair = { c: 1n, e: Math.min(r.e, -1) - 3 };
  const near = [text, plainText(apply('add', r, hair)), plainText(apply('sub', r, hair))];
  const double = Number(text);
  if (Number.isFinite(double)) near.push(plainText(exactOfText(String(double))));
  const sized = near.filter(literalSized);
  return sized.length > 0 ? sized : ['1234.5678'];
}

describe('decimal arithmetic compared with a literal', () => {
  it('answers as exact arithmetic, at the boundary and away from it, whatever form the operands take', () => {
    fc.assert(
      fc.property(
        operation,
        fc.array(rowOf, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        decimalTexts,
        (op, values, pick, random) => {
          // literals at the boundary of one row's result, and one at random (when it is a valid literal)
          const literals = boundaryLiterals(exactResult(op, values[pick % values.length]!));
          if (/^-?\d+\.\d+$/.test(random)) literals.push(random);
          for (const literal of literals) {
            const text = filterText(op, literal);
            const { matches } = compile(text);
            const inverse = compile(`not (${text})`).matches;
            values.forEach((v, i) => {
              const row: Row = { Id: i, ...v };
              const want = expected(op, v, literal);
              expect([text, v, matches(row)]).toEqual([text, v, want]);
              expect([text, v, inverse(row)]).toEqual([text, v, !want]);
            });
          }
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it('a Decimal property compared with a literal answers exactly, its text decided in doubles only when far', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Operand>('A', 'B'),
        fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le'),
        fc.boolean(),
        fc.array(decimalValues, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        literalOperands,
        (name, comparison, mirrored, values, pick, random) => {
          // literals at one row's value (text a hair either side, its double's text) and one at random
          const literals = [...boundaryLiterals(readAs[name](values[pick % values.length])), random];
          for (const literal of literals) {
            const text = mirrored
              ? `${literal} ${MIRRORED[comparison as keyof typeof MIRRORED]} ${name}`
              : `${name} ${comparison} ${literal}`;
            const { matches } = compile(text);
            values.forEach((value, i) => {
              const exact = readAs[name](value);
              const c = exact === null ? undefined : compareExact(exact, exactOfText(literal));
              const want =
                c === undefined
                  ? comparison === 'ne'
                  : { eq: c === 0, ne: c !== 0, gt: c > 0, ge: c >= 0, lt: c < 0, le: c <= 0 }[comparison]!;
              expect([text, value, matches({ Id: i, [name]: value })]).toEqual([text, value, want]);
            });
          }
        },
      ),
      { numRuns: 3_000 },
    );
  });

  const finiteOrOther = (v: unknown): boolean => typeof v !== 'number' || Number.isFinite(v);
  it('two Decimal values of a row compared answer exactly, in every form and a hair apart', () => {
    // B near A: the same value in another form, a hair either side, or its double's text
    const near = (a: unknown): fc.Arbitrary<unknown> => {
      const exact = readAs.A(a);
      return exact === null ? decimalValues : fc.oneof(fc.constantFrom(...boundaryLiterals(exact)), decimalValues);
    };
    const pair = decimalValues.chain((a) => fc.tuple(fc.constant(a), near(a)));
    fc.assert(
      fc.property(
        fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le'),
        fc.constantFrom('A', 'N', 'L'),
        // (an Int32 row value that is an infinite number or NaN compares as that number: not modelled here)
        fc.array(fc.tuple(pair, int32Values.filter(finiteOrOther), int64Values), { minLength: 1, maxLength: 6 }),
        (comparison, left, rows) => {
          const text = `${left} ${comparison} B`;
          const { matches } = compile(text);
          rows.forEach(([[a, b], n, l], i) => {
            const row = { A: a, B: b, N: n, L: l };
            const x = readAs[left as Operand](row[left as Operand]);
            const y = readAs.B(b);
            const c = x === null || y === null ? undefined : compareExact(x, y);
            // null eq null is true, null ne a value is true (SEMANTICS.md)
            const want =
              c === undefined
                ? { eq: x === y, ne: x !== y, gt: false, ge: false, lt: false, le: false }[comparison]!
                : { eq: c === 0, ne: c !== 0, gt: c > 0, ge: c >= 0, lt: c < 0, le: c <= 0 }[comparison]!;
            expect([text, row, matches({ Id: i, ...row })]).toEqual([text, row, want]);
          });
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it.each([
    // two properties a hair apart, whose doubles are equal
    ['A lt B', { A: '0.1', B: '0.10000000000000000001' }, true],
    ['A eq B', { A: 0.1, B: '0.1000' }, true],
    ['A ne B', { A: '2.5', B: 2.5 }, false],
    ['A gt B', { A: null, B: '1' }, false],
    ['A eq B', { A: null, B: null }, true],
    // a property's text a hair from the literal, whose doubles are equal
    ['A gt 0.1', { A: '0.10000000000000000001' }, true],
    ['A eq 0.1', { A: '0.1000' }, true],
    ['A lt 1234.5678', { A: '1234.56779999999999' }, true],
    ['A ne 2.5', { A: '2.5' }, false],
    ['A ge 100', { A: '99999999999999.9999' }, true],
    // products exactly at the literal, whose doubles miss it
    ['A mul B eq 0.02', { A: '0.1', B: '0.2000' }, true],
    ['A mul B gt 0.02', { A: '0.1', B: 0.2 }, false],
    ['A mul B ge 1234.5678', { A: '1.000', B: '1234.5678' }, true],
    ['A mul B gt 1234.5678', { A: '1.000', B: '1234.5678' }, false],
    ['N mul B eq 0.3', { N: 3, B: '0.1000' }, true],
    ['L mul B eq 0.3', { L: '3', B: 0.1 }, true],
    ['L mul B eq 0.3', { L: 3n, B: '0.1' }, true],
    ['L mul B eq 0.3', { L: 3.5, B: '0.1' }, false],
    ['A add B eq 0.3', { A: '0.1', B: '0.2' }, true],
    ['A add B lt 0.3', { A: 0.1, B: '0.2' }, false],
    ['0.3 eq A add B', { A: 0.1, B: 0.2 }, true],
    ['1234.5678 lt A mul B', { A: '2', B: '617.2839' }, false],
    ['1234.5678 le A mul B', { A: '2', B: '617.2839' }, true],
    // a literal that is not a double's shortest text (a Decimal value)
    ['A mul B gt 0.123456789012345678901', { A: '0.123456789012345678901', B: '1.0000' }, false],
    ['A mul B ge 0.123456789012345678901', { A: '0.123456789012345678901', B: '1' }, true],
    ['A mul B lt 0.123456789012345678901', { A: 0.12345678901234568, B: 1 }, false],
    // unreadable text is null whatever the double says
    ['A mul B gt 0', { A: '1.', B: '2' }, false],
    ['A mul B ne 0', { A: ' 1', B: '2' }, true],
    ['N mul B gt 0', { N: 'x', B: '2' }, false],
  ] as const)('%s, case %#', (filter, row, want) => {
    expect(compile(filter).matches({ Id: 1, ...row })).toBe(want);
  });
});

// ── instants ─────────────────────────────────────────────────────────────────────────────────────────

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Instant text in the forms rows bring, near the literals, with a wide spread of offsets and fractions. */
const instantTexts = fc
  .record({
    minutes: fc.integer({ min: -3 * 24 * 60, max: 3 * 24 * 60 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.oneof(fc.constant(''), fc.stringMatching(/^\d{1,13}$/)),
    offset: fc.oneof(fc.integer({ min: -14 * 60, max: 14 * 60 }), fc.constantFrom(0, 14 * 60, -14 * 60, 330, -570)),
    form: fc.constantFrom('colon', 'colon', 'Z', 'hhmm', 'none', 'space'),
  })
  .map(({ minutes, second, fraction, offset, form }) => {
    const wall = new Date(Date.UTC(2024, 1, 29, 12) + minutes * 60_000 + offset * 60_000).toISOString();
    const a = Math.abs(offset);
    const sign = offset < 0 ? '-' : '+';
    const zone =
      form === 'Z'
        ? 'Z'
        : form === 'none'
          ? ''
          : form === 'hhmm'
            ? `${sign}${pad(Math.floor(a / 60))}${pad(a % 60)}`
            : `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
    const time = `${wall.slice(11, 17)}${pad(second)}${fraction === '' ? '' : `.${fraction}`}`;
    return `${wall.slice(0, 10)}${form === 'space' ? ' ' : 'T'}${time}${zone}`;
  });
const instantLiterals = fc
  .tuple(fc.integer({ min: -2 * 24 * 60, max: 2 * 24 * 60 }), fc.integer({ min: -14 * 60, max: 14 * 60 }))
  .map(([minutes, offset]) => {
    const wall = new Date(Date.UTC(2024, 1, 29, 12) + minutes * 60_000 + offset * 60_000).toISOString();
    const a = Math.abs(offset);
    const zone = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
    return `${wall.slice(0, 19)}${zone}`;
  });
const instantValues = fc.oneof(
  { arbitrary: instantTexts, weight: 6 },
  {
    arbitrary: fc.constantFrom(
      '2024-02-29T12:00:00Z',
      '2023-02-29T12:00:00Z',
      '2024-02-29T24:00:00Z',
      '2024-02-29T12:00:00+24:00',
      '2024-02-29',
      '2024-02-29T12:00:00 +02:00',
      'x',
    ),
    weight: 1,
  },
  { arbitrary: fc.oneof(fc.integer(), fc.date()), weight: 1 },
  { arbitrary: unreadable, weight: 1 },
);

describe('instants compared with a literal', () => {
  it('answer as the general reader reads the row value, alone and as a range', () => {
    fc.assert(
      fc.property(
        fc.array(instantValues, { minLength: 1, maxLength: 8 }),
        fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le'),
        instantLiterals,
        instantLiterals,
        (values, op, low, high) => {
          const lowMs = Date.parse(low);
          const highMs = Date.parse(high);
          const single = compile(`T ${op} ${low}`).matches;
          const range = compile(`T ge ${low} and T lt ${high}`).matches;
          values.forEach((value, i) => {
            const t = readInstant(value);
            const want =
              t === null
                ? op === 'ne'
                : { eq: t === lowMs, ne: t !== lowMs, gt: t > lowMs, ge: t >= lowMs, lt: t < lowMs, le: t <= lowMs }[
                    op
                  ];
            const row: Row = { Id: i, T: value };
            expect([value, op, low, single(row)]).toEqual([value, op, low, want]);
            expect([value, low, high, range(row)]).toEqual([value, low, high, t !== null && t >= lowMs && t < highMs]);
          });
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
