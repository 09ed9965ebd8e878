import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DECIMAL_EXPONENT_LIMIT,
  addDecimal,
  ceilingDecimal,
  compareDecimal,
  decimalFromBigInt,
  decimalToNumber,
  decimalToString,
  divDecimal,
  exactDouble,
  floorDecimal,
  isIntegral,
  modDecimal,
  mulDecimal,
  negateDecimal,
  parseDecimal,
  roundDecimal,
  subDecimal,
  type Decimal,
} from '../../src/values/decimal.js';

// ---------------------------------------------------------------------------------------------------------
// An independent reference: exact rationals n / d (d > 0, reduced), read from the text with a regular expression.

interface Rational {
  n: bigint;
  d: bigint;
}

const abs = (x: bigint): bigint => (x < 0n ? -x : x);
function gcd(a: bigint, b: bigint): bigint {
  a = abs(a);
  b = abs(b);
  while (b) [a, b] = [b, a % b];
  return a;
}
function rat(n: bigint, d = 1n): Rational {
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
}
const refAdd = (a: Rational, b: Rational): Rational => rat(a.n * b.d + b.n * a.d, a.d * b.d);
const refSub = (a: Rational, b: Rational): Rational => rat(a.n * b.d - b.n * a.d, a.d * b.d);
const refMul = (a: Rational, b: Rational): Rational => rat(a.n * b.n, a.d * b.d);
const refDiv = (a: Rational, b: Rational): Rational => rat(a.n * b.d, a.d * b.n);
const refCompare = (a: Rational, b: Rational): number => Math.sign(Number(a.n * b.d - b.n * a.d));
/** Truncation toward zero (BigInt division truncates). */
const refTrunc = (a: Rational): bigint => a.n / a.d;
const refFloor = (a: Rational): bigint => (a.n < 0n && a.n % a.d !== 0n ? a.n / a.d - 1n : a.n / a.d);
const refCeiling = (a: Rational): bigint => -refFloor(rat(-a.n, a.d));
/** Half away from zero: floor(|a| + 1/2) with a's sign. */
const refRound = (a: Rational): bigint => {
  const m = refFloor(rat(2n * abs(a.n) + a.d, 2n * a.d));
  return a.n < 0n ? -m : m;
};

function refParse(text: string): Rational {
  const match = /^([+-]?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) throw new Error(`not a decimal: ${text}`);
  const [, sign, int, frac = '', exp = '0'] = match;
  const digits = BigInt(`${sign === '-' ? '-' : ''}${int}${frac}`);
  const e = Number(exp) - frac.length;
  return e >= 0 ? rat(digits * 10n ** BigInt(e)) : rat(digits, 10n ** BigInt(-e));
}

/** The rational a Decimal stands for, from its fields alone. */
function refOf(x: Decimal): Rational {
  return x.exponent >= 0
    ? rat(x.coefficient * 10n ** BigInt(x.exponent))
    : rat(x.coefficient, 10n ** BigInt(-x.exponent));
}

function isNormalized(x: Decimal): boolean {
  return x.coefficient === 0n ? x.exponent === 0 : x.coefficient % 10n !== 0n && Number.isInteger(x.exponent);
}

function parsed(text: string | number | bigint): Decimal {
  const x = parseDecimal(text);
  if (x === undefined) throw new Error(`parseDecimal(${String(text)}) is undefined`);
  return x;
}

const dec = (coefficient: bigint, exponent = 0): Decimal => ({ coefficient, exponent });

// ---------------------------------------------------------------------------------------------------------
// Arbitraries.

const digitString = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 1, maxLength });

/** Decimal literal text, with leading and trailing zeros, optional sign, fraction and exponent. */
const decimalText = fc
  .record({
    sign: fc.constantFrom('', '-', '+'),
    int: fc.oneof(digitString(3), digitString(25)),
    frac: fc.option(fc.oneof(digitString(3), digitString(25)), { nil: undefined }),
    exp: fc.option(fc.integer({ min: -40, max: 40 }), { nil: undefined }),
    e: fc.constantFrom('e', 'E'),
  })
  .map(
    ({ sign, int, frac, exp, e }) =>
      `${sign}${int}${frac === undefined ? '' : `.${frac}`}${exp === undefined ? '' : `${e}${exp}`}`,
  );

const decimalArb = decimalText.map(parsed);

/** Finite doubles: any bit pattern, plus the "price-like" m / 10^k values that dominate real data. */
const finiteDouble = fc
  .oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 12 })).map(([m, k]) => m / 10 ** k),
    fc.tuple(fc.maxSafeInteger(), fc.integer({ min: -330, max: 300 })).map(([m, k]) => Number(`${m}e${k}`)),
  )
  .filter(Number.isFinite);

/** Texts around the shortest representation of doubles: itself, with zeros appended, perturbed, re-exponented. */
const doubleText = fc
  .tuple(finiteDouble, fc.integer({ min: 0, max: 4 }), fc.constantFrom('', '0', '00', '1', '9', '5', '000000001'))
  .map(([x, variant, tail]) => {
    const plain = decimalToString(parsed(x));
    switch (variant) {
      case 0:
        return String(x).replace('e+', 'e');
      case 1:
        return plain;
      case 2:
        return plain.includes('.') ? plain + tail : `${plain}.${tail || '0'}`;
      case 3: {
        const d = parsed(x);
        return `${d.coefficient}e${d.exponent}`;
      }
      default:
        return `${plain}${tail}`;
    }
  });

const anyText = fc.oneof(decimalText, doubleText);

// ---------------------------------------------------------------------------------------------------------

describe('parseDecimal', () => {
  it.each<[string | number | bigint, Decimal]>([
    ['0', dec(0n)],
    ['-0.0', dec(0n)],
    ['+0e99999999999999999999', dec(0n)],
    [-0, dec(0n)],
    ['1.5', dec(15n, -1)],
    ['1.50', dec(15n, -1)],
    ['001.500', dec(15n, -1)],
    ['-0.001', dec(-1n, -3)],
    ['12000', dec(12n, 3)],
    ['1.2E4', dec(12n, 3)],
    ['1e21', dec(1n, 21)],
    ['+1e-7', dec(1n, -7)],
    ['123456789012345678901234567890.5', dec(1234567890123456789012345678905n, -1)],
    ['18446744073709551616', dec(18446744073709551616n)],
    [0.1, dec(1n, -1)],
    [0.30000000000000004, dec(30000000000000004n, -17)],
    [1e-7, dec(1n, -7)],
    [1e21, dec(1n, 21)],
    [-2.5, dec(-25n, -1)],
    [123.45, dec(12345n, -2)],
    [Number.MAX_VALUE, dec(17976931348623157n, 292)],
    [Number.MIN_VALUE, dec(5n, -324)],
    [2 ** 53, dec(9007199254740992n)],
    [1200n, dec(12n, 2)],
    [-(2n ** 70n), dec(-(2n ** 70n))],
  ])('%s', (input, expected) => {
    expect(parseDecimal(input)).toEqual(expected);
  });

  it.each([
    '',
    ' 1',
    '1 ',
    '1.',
    '.5',
    '1e',
    '1e+',
    '+',
    '-',
    'INF',
    '-INF',
    'NaN',
    '1,5',
    '0x10',
    '1_000',
    '١',
    '1.5.1',
    '--1',
  ])('rejects %j', (text) => {
    expect(parseDecimal(text)).toBeUndefined();
  });

  it.each([NaN, Infinity, -Infinity])('rejects the number %s', (n) => {
    expect(parseDecimal(n)).toBeUndefined();
  });

  it(`bounds the exponent of text at ±${DECIMAL_EXPONENT_LIMIT}`, () => {
    expect(parseDecimal(`1e${DECIMAL_EXPONENT_LIMIT}`)).toEqual(dec(1n, DECIMAL_EXPONENT_LIMIT));
    expect(parseDecimal(`1e-${DECIMAL_EXPONENT_LIMIT}`)).toEqual(dec(1n, -DECIMAL_EXPONENT_LIMIT));
    expect(parseDecimal(`10e${DECIMAL_EXPONENT_LIMIT}`)).toBeUndefined();
    expect(parseDecimal(`0.1e-${DECIMAL_EXPONENT_LIMIT}`)).toBeUndefined();
    expect(parseDecimal('1e999999999999999999999')).toBeUndefined();
  });

  it('reads any decimal text exactly, normalized', () => {
    fc.assert(
      fc.property(decimalText, (text) => {
        const x = parsed(text);
        expect(isNormalized(x)).toBe(true);
        expect(refOf(x)).toEqual(refParse(text));
      }),
    );
  });

  it('reads a number as the decimal String(n) prints (fast paths included)', () => {
    fc.assert(
      fc.property(finiteDouble, (x) => {
        const d = parsed(x);
        expect(isNormalized(d)).toBe(true);
        expect(refOf(d)).toEqual(refParse(String(x).replace('e+', 'e')));
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips through decimalToString', () => {
    fc.assert(
      fc.property(decimalArb, (x) => {
        const text = decimalToString(x);
        expect(text).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
        expect(parseDecimal(text)).toEqual(x);
      }),
    );
  });
});

describe('exact cases', () => {
  const d = (text: string): Decimal => parsed(text);
  it.each<[string, () => Decimal | null, string | null]>([
    ['0.1 + 0.2 = 0.3', () => addDecimal(d('0.1'), d('0.2')), '0.3'],
    ['0.1 + 0.2 from doubles', () => addDecimal(parsed(0.1), parsed(0.2)), '0.3'],
    ['0.5 + 0.5 = 1', () => addDecimal(d('0.5'), d('0.5')), '1'],
    ['1.5 - 1.50 = 0', () => subDecimal(d('1.5'), d('1.50')), '0'],
    ['1e21 + 1', () => addDecimal(d('1e21'), d('1')), '1000000000000000000001'],
    ['2^64 × 2^64', () => mulDecimal(d('18446744073709551616'), d('18446744073709551616')), (2n ** 128n).toString()],
    ['(2^64 + 0.5) - 2^64', () => subDecimal(d('18446744073709551616.5'), d('18446744073709551616')), '0.5'],
    ['0.2 × 5 = 1', () => mulDecimal(d('0.2'), d('5')), '1'],
    ['10 / 3', () => divDecimal(d('10'), d('3')), '3.33333333333333333333'],
    ['-2 / 3 rounds away from zero', () => divDecimal(d('-2'), d('3')), '-0.66666666666666666667'],
    ['2 / -3', () => divDecimal(d('2'), d('-3')), '-0.66666666666666666667'],
    ['2 / 8 = 0.25', () => divDecimal(d('2'), d('8')), '0.25'],
    // every quotient is rounded at 20 places, also one that terminates later (SEMANTICS.md)
    ['1 / 2^70 rounds to 0 at 20 places', () => divDecimal(d('1'), d((2n ** 70n).toString())), '0'],
    ['1 / 2^66 rounds to 1e-20', () => divDecimal(d('1'), d((2n ** 66n).toString())), '0.00000000000000000001'],
    [
      '1 / 2e20 is a half, away from zero',
      () => divDecimal(d('1'), d('200000000000000000000')),
      '0.00000000000000000001',
    ],
    ['-1 / 2e20', () => divDecimal(d('-1'), d('200000000000000000000')), '-0.00000000000000000001'],
    ['1 / (2e20 + 1) is just below a half', () => divDecimal(d('1'), d('200000000000000000001')), '0'],
    [
      '0.123456789 / 2^20 terminates at 29 places',
      () => divDecimal(d('0.123456789'), d('1048576')),
      '0.00000011773756885529',
    ],
    ['1 / 3 with 5 digits', () => divDecimal(d('1'), d('3'), 5), '0.33333'],
    ['1e-30 / 3 keeps 20 places', () => divDecimal(d('1e-30'), d('3')), '0'],
    ['1 / 0 is null', () => divDecimal(d('1'), d('0')), null],
    ['0 / 0 is null', () => divDecimal(d('0'), d('0.000')), null],
    ['0 / 7 = 0', () => divDecimal(d('0'), d('7')), '0'],
    ['-7 mod 3 = -1', () => modDecimal(d('-7'), d('3')), '-1'],
    ['7 mod -3 = 1', () => modDecimal(d('7'), d('-3')), '1'],
    ['-7 mod -3 = -1', () => modDecimal(d('-7'), d('-3')), '-1'],
    ['5.5 mod 2 = 1.5', () => modDecimal(d('5.5'), d('2')), '1.5'],
    ['1e21 mod 7', () => modDecimal(d('1e21'), d('7')), (10n ** 21n % 7n).toString()],
    ['1 mod 0 is null', () => modDecimal(d('1'), d('0')), null],
    ['round(2.5) = 3', () => roundDecimal(d('2.5')), '3'],
    ['round(-2.5) = -3', () => roundDecimal(d('-2.5')), '-3'],
    ['round(2.49) = 2', () => roundDecimal(d('2.49')), '2'],
    ['round(-0.4) = 0', () => roundDecimal(d('-0.4')), '0'],
    ['round(12000) = 12000', () => roundDecimal(d('12000')), '12000'],
    ['floor(-1.5) = -2', () => floorDecimal(d('-1.5')), '-2'],
    ['floor(1.5) = 1', () => floorDecimal(d('1.5')), '1'],
    ['ceiling(-1.5) = -1', () => ceilingDecimal(d('-1.5')), '-1'],
    ['ceiling(1.5) = 2', () => ceilingDecimal(d('1.5')), '2'],
    ['ceiling(-0.5) = 0', () => ceilingDecimal(d('-0.5')), '0'],
    ['-(0) = 0', () => negateDecimal(d('0')), '0'],
    ['-(1.5)', () => negateDecimal(d('1.5')), '-1.5'],
    ['2^64 + 2^64', () => addDecimal(d('18446744073709551616'), d('18446744073709551616')), (2n ** 65n).toString()],
  ])('%s', (_name, compute, expected) => {
    const result = compute();
    if (expected === null) expect(result).toBeNull();
    else {
      expect(result).not.toBeNull();
      expect(decimalToString(result!)).toBe(expected);
      expect(isNormalized(result!)).toBe(true);
    }
  });

  it('1.5 equals 1.50 structurally and by comparison', () => {
    expect(parsed('1.5')).toEqual(parsed('1.50'));
    expect(compareDecimal(parsed('1.5'), parsed('1.50'))).toBe(0);
    expect(compareDecimal(addDecimal(parsed('0.1'), parsed('0.2')), parsed('0.3'))).toBe(0);
  });

  it('compares across signs, exponents and magnitudes', () => {
    expect(compareDecimal(parsed('-1'), parsed('0'))).toBe(-1);
    expect(compareDecimal(parsed('0.001'), parsed('-1000'))).toBe(1);
    expect(compareDecimal(parsed('1e21'), parsed('999999999999999999999.9'))).toBe(1);
    expect(compareDecimal(parsed('-1e21'), parsed('-999999999999999999999.9'))).toBe(-1);
    expect(compareDecimal(parsed('1e-6144'), parsed('1e6144'))).toBe(-1);
  });

  it('prints the shortest plain text', () => {
    expect(decimalToString(parsed('1.50'))).toBe('1.5');
    expect(decimalToString(parsed('-0.0010'))).toBe('-0.001');
    expect(decimalToString(parsed('1.2e4'))).toBe('12000');
    expect(decimalToString(parsed('-0'))).toBe('0');
    expect(decimalToString(parsed('123.456'))).toBe('123.456');
    expect(decimalToString(parsed('1e21'))).toBe('1000000000000000000000');
  });

  it('converts to numbers, correctly rounded', () => {
    expect(decimalToNumber(parsed('0.1'))).toBe(0.1);
    expect(decimalToNumber(parsed('-2.5'))).toBe(-2.5);
    expect(decimalToNumber(parsed('1e21'))).toBe(1e21);
    expect(decimalToNumber(parsed('1e400'))).toBe(Infinity);
    expect(decimalToNumber(parsed('-1e-400'))).toBe(-0);
    expect(decimalToNumber(parsed('9007199254740993'))).toBe(9007199254740992);
    expect(decimalToNumber(parsed('0.30000000000000004'))).toBe(0.1 + 0.2);
  });

  it('knows integers', () => {
    expect(isIntegral(parsed('12000'))).toBe(true);
    expect(isIntegral(parsed('1.0'))).toBe(true);
    expect(isIntegral(parsed('0'))).toBe(true);
    expect(isIntegral(parsed('1.5'))).toBe(false);
    expect(decimalFromBigInt(-1000n)).toEqual(dec(-1n, 3));
    expect(decimalFromBigInt(0n)).toEqual(dec(0n));
  });
});

describe('arithmetic agrees with exact rationals', () => {
  const pair = fc.tuple(decimalArb, decimalArb);

  it('add, sub, mul', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        for (const [result, expected] of [
          [addDecimal(a, b), refAdd(refOf(a), refOf(b))],
          [subDecimal(a, b), refSub(refOf(a), refOf(b))],
          [mulDecimal(a, b), refMul(refOf(a), refOf(b))],
          [negateDecimal(a), rat(-refOf(a).n, refOf(a).d)],
        ] as const) {
          expect(isNormalized(result)).toBe(true);
          expect(refOf(result)).toEqual(expected);
        }
      }),
    );
  });

  it('div: rounded half away from zero at the given places, whether or not the quotient terminates', () => {
    fc.assert(
      fc.property(pair, fc.integer({ min: 0, max: 30 }), ([a, b], digits) => {
        const result = divDecimal(a, b, digits);
        if (b.coefficient === 0n) {
          expect(result).toBeNull();
          return;
        }
        expect(result).not.toBeNull();
        expect(isNormalized(result!)).toBe(true);
        const q = refDiv(refOf(a), refOf(b));
        const scale = 10n ** BigInt(digits);
        expect(refOf(result!)).toEqual(rat(refRound(refMul(q, rat(scale))), scale));
      }),
    );
  });

  it('div with the default of 20 digits', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const result = divDecimal(a, b);
        if (b.coefficient === 0n) {
          expect(result).toBeNull();
          return;
        }
        const q = refDiv(refOf(a), refOf(b));
        const scaled = refMul(q, rat(10n ** 20n));
        // Within half a unit of the 20th place, exact when the quotient has at most 20 places, and a multiple of
        // 10^-20 always (also when it terminates further on: SEMANTICS.md rounds every decimal quotient).
        const error = refSub(refMul(refOf(result!), rat(10n ** 20n)), scaled);
        expect(refCompare(rat(2n * abs(error.n), error.d), rat(1n))).toBeLessThanOrEqual(0);
        expect(refMul(refOf(result!), rat(10n ** 20n)).d).toBe(1n);
        if (scaled.d === 1n) expect(refOf(result!)).toEqual(q);
      }),
    );
  });

  it('mod has the sign of the dividend', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const result = modDecimal(a, b);
        if (b.coefficient === 0n) {
          expect(result).toBeNull();
          return;
        }
        const ra = refOf(a);
        const rb = refOf(b);
        const expected = refSub(ra, refMul(rb, rat(refTrunc(refDiv(ra, rb)))));
        expect(isNormalized(result!)).toBe(true);
        expect(refOf(result!)).toEqual(expected);
      }),
    );
  });

  it('round, floor, ceiling', () => {
    fc.assert(
      fc.property(decimalArb, (a) => {
        const ra = refOf(a);
        expect(roundDecimal(a)).toEqual(decimalFromBigInt(refRound(ra)));
        expect(floorDecimal(a)).toEqual(decimalFromBigInt(refFloor(ra)));
        expect(ceilingDecimal(a)).toEqual(decimalFromBigInt(refCeiling(ra)));
        expect(isIntegral(a)).toBe(ra.d === 1n);
      }),
    );
  });

  it('compare is a total order consistent with the sign of the difference', () => {
    fc.assert(
      fc.property(decimalArb, decimalArb, decimalArb, (a, b, c) => {
        const ab = compareDecimal(a, b);
        expect(ab).toBe(refCompare(refOf(a), refOf(b)));
        expect(ab).toBe(Math.sign(Number(subDecimal(a, b).coefficient)));
        expect(compareDecimal(b, a)).toBe(-ab || 0);
        expect(ab === 0).toBe(a.coefficient === b.coefficient && a.exponent === b.exponent);
        if (ab <= 0 && compareDecimal(b, c) <= 0) expect(compareDecimal(a, c)).toBeLessThanOrEqual(0);
        expect(compareDecimal(a, a)).toBe(0);
      }),
    );
  });

  it('decimalToNumber is the double nearest to the value', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        // V8's Number(text) is correctly rounded for any number of digits. (=== : '-0.0' is the decimal 0.)
        expect(decimalToNumber(parsed(text)) === Number(text)).toBe(true);
      }),
    );
  });
});

describe('exactDouble', () => {
  it.each<[string, number | undefined]>([
    ['0.1', 0.1],
    ['1.50', 1.5],
    ['-0.0', 0],
    ['0', 0],
    ['12000', 12000],
    ['1e21', 1e21],
    ['1E-7', 1e-7],
    ['0.30000000000000004', 0.30000000000000004],
    ['0.3000000000000000400', 0.30000000000000004],
    ['0.30000000000000005', undefined], // reads as the same double, but that double prints ...04
    ['0.1000000000000000055511151231257827', undefined], // the exact value of the double 0.1, not its shortest decimal
    ['9007199254740993', undefined], // 2^53 + 1 is not a double
    ['9007199254740992', 9007199254740992],
    ['5e-324', 5e-324],
    ['4.9e-324', undefined], // reads as 5e-324, whose shortest decimal is 5e-324
    ['1e-400', undefined],
    ['1e400', undefined],
    ['1.7976931348623157e308', Number.MAX_VALUE],
    ['1.', undefined],
    ['', undefined],
    ['0x10', undefined],
    [' 1', undefined],
    ['Infinity', undefined],
  ])('%j → %s', (text, expected) => {
    const result = exactDouble(text);
    expect(result).toBe(expected);
  });

  it('is defined exactly when the text is the shortest decimal of Number(text)', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const n = Number(text);
        const expected =
          Number.isFinite(n) && compareDecimal(parsed(text), parsed(n)) === 0 ? (n === 0 ? 0 : n) : undefined;
        expect(exactDouble(text)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('makes double comparison agree with exact decimal comparison for row values that are numbers', () => {
    fc.assert(
      fc.property(finiteDouble, anyText, (x, text) => {
        const n = exactDouble(text);
        if (n === undefined) return;
        // Independent reference: x is worth the decimal String(x) prints.
        const exact = refCompare(refParse(String(x).replace('e+', 'e')), refParse(text));
        expect(x < n ? -1 : x > n ? 1 : 0).toBe(exact);
        expect(compareDecimal(parsed(x), parsed(text))).toBe(exact);
      }),
      { numRuns: 3000 },
    );
  });

  it('orders two exact texts like their decimals', () => {
    fc.assert(
      fc.property(anyText, anyText, (s, t) => {
        const m = exactDouble(s);
        const n = exactDouble(t);
        if (m === undefined || n === undefined) return;
        expect(m < n ? -1 : m > n ? 1 : 0).toBe(compareDecimal(parsed(s), parsed(t)));
      }),
      { numRuns: 3000 },
    );
  });
});
