import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  codePointIndexOf,
  codePointLength,
  codePointSubstring,
  compareCodePoints,
  patternMatcher,
  toLowerSimple,
  toUpperSimple,
  trimWhiteSpace,
} from '../../src/values/text.js';

// ---------------------------------------------------------------------------------------------------------
// References, written on arrays of code points (Array.from splits a string into code points; a lone surrogate
// is a code point of its own).

const codePoints = (s: string): number[] => Array.from(s, (c) => c.codePointAt(0)!);

function refCompare(a: string, b: string): number {
  const x = codePoints(a);
  const y = codePoints(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! < y[i]! ? -1 : 1;
  return Math.sign(x.length - y.length);
}

function refIndexOf(s: string, search: string): number {
  const x = codePoints(s);
  const y = codePoints(search);
  outer: for (let i = 0; i + y.length <= x.length; i++) {
    for (let j = 0; j < y.length; j++) if (x[i + j] !== y[j]) continue outer;
    return i;
  }
  return -1;
}

const refSubstring = (s: string, start: number, length?: number): string =>
  Array.from(s)
    .slice(start, length === undefined ? undefined : start + length)
    .join('');

/**
 * Unicode's simple mappings (UnicodeData.txt) where the full mapping expands but a simple one exists; written out
 * by hand from UnicodeData.txt rather than computed.
 */
const SIMPLE_LOWER: Record<string, string> = { İ: 'i' };
const SIMPLE_UPPER: Record<string, string> = {
  ...Object.fromEntries(Array.from('ᾀᾁᾂᾃᾄᾅᾆᾇᾐᾑᾒᾓᾔᾕᾖᾗᾠᾡᾢᾣᾤᾥᾦᾧ', (c, i) => [c, 'ᾈᾉᾊᾋᾌᾍᾎᾏᾘᾙᾚᾛᾜᾝᾞᾟᾨᾩᾪᾫᾬᾭᾮᾯ'[i]!])),
  ᾳ: 'ᾼ',
  ῃ: 'ῌ',
  ῳ: 'ῼ',
};
/** One code point at a time: the simple mapping if listed, else the full one if it is one code point, else keep. */
const refMap = (s: string, upper: boolean): string =>
  Array.from(s, (c) => {
    const simple = (upper ? SIMPLE_UPPER : SIMPLE_LOWER)[c];
    if (simple !== undefined) return simple;
    const full = upper ? c.toUpperCase() : c.toLowerCase();
    return Array.from(full).length === 1 ? full : c;
  }).join('');

const WHITE_SPACE =
  '\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000';
const refTrim = (s: string): string => {
  const x = Array.from(s);
  while (x.length > 0 && WHITE_SPACE.includes(x[0]!)) x.shift();
  while (x.length > 0 && WHITE_SPACE.includes(x[x.length - 1]!)) x.pop();
  return x.join('');
};

// ---------------------------------------------------------------------------------------------------------
// Arbitraries: small alphabets so that strings share prefixes and contain each other, with every kind of unit.

const ROCKET = '🚀'; // U+1F680 = \ud83d\ude80
const unit = fc.oneof(
  fc.constantFrom(
    'a',
    'b',
    'A',
    'é',
    'ß',
    'İ',
    'Σ',
    'ς',
    ' ',
    '\u3000',
    '\ufeff',
    '\u0085',
    ROCKET,
    '\ud83d',
    '\ude80',
  ),
  fc.integer({ min: 0xe000, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)),
  fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
);
const text = fc.string({ unit, maxLength: 8 });
/** Two strings with a common prefix, so that the comparison is decided past the first unit. */
const related = fc.tuple(text, text, text).map(([p, s, t]) => [p + s, p + t] as const);
/** Case-mapping material: letters whose mappings expand, context-dependent sigma, Greek, astral letters. */
const caseUnit = fc.oneof(
  fc.constantFrom(
    'a',
    'Z',
    'ß',
    'İ',
    'ı',
    'Σ',
    'σ',
    'ς',
    'ﬀ',
    'ᾳ',
    'ᾼ',
    'ᾀ',
    'ᾈ',
    'ῳ',
    'ŉ',
    'ǰ',
    'é',
    'Ω',
    '𐐀',
    '𐐨',
    ' ',
    '.',
  ),
  fc.integer({ min: 0x1f00, max: 0x1fff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0, max: 0x2fff }).map((c) => String.fromCharCode(c)),
  fc.integer({ min: 0x10400, max: 0x1e943 }).map((c) => String.fromCodePoint(c)),
);

// ---------------------------------------------------------------------------------------------------------

describe('compareCodePoints', () => {
  it.each<[string, string, -1 | 0 | 1]>([
    ['a', 'a', 0],
    ['a', 'b', -1],
    ['b', 'a', 1],
    ['a', 'ab', -1],
    ['', 'a', -1],
    ['A', 'a', -1],
    ['\ue000', ROCKET, -1], // JavaScript's < says the opposite
    ['\uffff', '\u{10000}', -1],
    [ROCKET, '\uffff', 1],
    ['x\ufb01', `x${ROCKET}`, -1],
    ['\ud83d', ROCKET, -1], // a lone lead surrogate is less than the pair it starts
    ['\ud83dz', ROCKET, -1],
    ['\ude80', ROCKET, -1], // a lone trail U+DE80 < U+1F680
    ['\ud83d\ue000', ROCKET, -1], // lone U+D83D then U+E000 versus U+1F680
    ['\ud83d\ude80', '\ud83d\udc00', 1],
  ])('%j vs %j → %i', (a, b, expected) => {
    expect(compareCodePoints(a, b)).toBe(expected);
    expect(compareCodePoints(b, a)).toBe(-expected || 0);
  });

  it('agrees with lexicographic comparison of code points', () => {
    fc.assert(
      fc.property(related, ([a, b]) => {
        expect(compareCodePoints(a, b)).toBe(refCompare(a, b));
      }),
      { numRuns: 3000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 6 }), (a, b) => {
        expect(compareCodePoints(a, b)).toBe(refCompare(a, b));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('code point positions', () => {
  it.each<[string, number]>([
    ['', 0],
    ['abc', 3],
    [ROCKET, 1],
    [`a${ROCKET}b`, 3],
    ['\ud83d', 1],
    ['\ude80\ud83d', 2],
  ])('length(%j) = %i', (s, expected) => {
    expect(codePointLength(s)).toBe(expected);
  });

  it.each<[string, string, number]>([
    [`${ROCKET}abc`, 'b', 2],
    [`${ROCKET}${ROCKET}x`, 'x', 2],
    ['abc', '', 0],
    ['', '', 0],
    ['', 'a', -1],
    ['abc', 'd', -1],
    [ROCKET, '\ude80', -1], // half of a pair is not a code point of the string
    [ROCKET, '\ud83d', -1],
    [`\ude80${ROCKET}`, '\ude80', 0],
    [`${ROCKET}\ude80`, '\ude80', 1],
    [`a${ROCKET}`, ROCKET, 1],
  ])('indexof(%j, %j) = %i', (s, search, expected) => {
    expect(codePointIndexOf(s, search)).toBe(expected);
  });

  it.each<[string, number, number | undefined, string | null]>([
    [`${ROCKET}abc`, 1, undefined, 'abc'],
    [`${ROCKET}abc`, 0, 1, ROCKET],
    [`a${ROCKET}${ROCKET}b`, 1, 2, `${ROCKET}${ROCKET}`],
    [`a${ROCKET}`, 2, undefined, ''],
    ['abc', 5, 1, ''],
    ['abc', 1, 99, 'bc'],
    ['abc', 1, 0, ''],
    ['abc', 0, undefined, 'abc'],
    ['abc', -1, undefined, null],
    ['abc', 0, -1, null],
  ])('substring(%j, %i, %s) = %j', (s, start, length, expected) => {
    expect(codePointSubstring(s, start, length)).toBe(expected);
  });

  it('agree with arrays of code points', () => {
    fc.assert(
      fc.property(related, fc.nat(10), fc.option(fc.nat(10), { nil: undefined }), ([s, t], start, length) => {
        expect(codePointLength(s)).toBe(Array.from(s).length);
        expect(codePointIndexOf(s, t)).toBe(refIndexOf(s, t));
        const tail = t.slice(Math.floor(t.length / 2));
        expect(codePointIndexOf(s + t, tail)).toBe(refIndexOf(s + t, tail));
        expect(codePointSubstring(s, start, length)).toBe(refSubstring(s, start, length));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('simple case mapping', () => {
  it.each<[string, string, string]>([
    ['abcXYZ', 'ABCXYZ', 'abcxyz'],
    ['ß', 'ß', 'ß'],
    ['straße', 'STRAßE', 'straße'],
    ['é', 'É', 'é'],
    ['É', 'É', 'é'],
    ['İ', 'İ', 'i'], // simple lowercase is i; JavaScript's full mapping gives i + U+0307
    ['ı', 'I', 'ı'],
    ['ΟΔΟΣ', 'ΟΔΟΣ', 'οδοσ'], // no final sigma: Σ is σ wherever it stands
    ['ς', 'Σ', 'ς'],
    ['ﬀ', 'ﬀ', 'ﬀ'],
    ['ᾳ', 'ᾼ', 'ᾳ'], // simple uppercase is ᾼ; the full mapping gives ΑΙ
    ['ᾀ', 'ᾈ', 'ᾀ'],
    ['ᾈ', 'ᾈ', 'ᾀ'], // titlecase letter: no simple uppercase (full: ἈΙ)
    ['ῶ', 'ῶ', 'ῶ'], // no simple uppercase (full: Ω + two combining marks)
    ['ǰŉ', 'ǰŉ', 'ǰŉ'],
    ['Straße İstanbul ᾳ', 'STRAßE İSTANBUL ᾼ', 'straße istanbul ᾳ'],
    ['𐐀𐐨', '𐐀𐐀', '𐐨𐐨'],
    [`${ROCKET}é`, `${ROCKET}É`, `${ROCKET}é`],
    ['\ud83d', '\ud83d', '\ud83d'],
    ['', '', ''],
  ])('%j: upper %j, lower %j', (s, upper, lower) => {
    expect(toUpperSimple(s)).toBe(upper);
    expect(toLowerSimple(s)).toBe(lower);
  });

  it('maps one code point to one, as the per-code-point rule says', () => {
    fc.assert(
      fc.property(fc.string({ unit: caseUnit, maxLength: 12 }), (s) => {
        expect(toUpperSimple(s)).toBe(refMap(s, true));
        expect(toLowerSimple(s)).toBe(refMap(s, false));
        expect(codePointLength(toUpperSimple(s))).toBe(codePointLength(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('follows the rule for every code point, alone and on the slow path', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      const upper = refMap(c, true);
      const lower = refMap(c, false);
      // 'ß' and 'Σ' force the slow path (mayExpand, native runs, per-code-point fallback) for what follows them.
      if (toUpperSimple(c) !== upper || toUpperSimple(`ß${c}`) !== `ß${upper}`)
        expect.fail(`toUpperSimple U+${cp.toString(16)}`);
      if (toLowerSimple(c) !== lower || toLowerSimple(`Σ${c}`) !== `σ${lower}`)
        expect.fail(`toLowerSimple U+${cp.toString(16)}`);
    }
  });

  it("holds the facts the whole-string fast path relies on, for every code point of this engine's Unicode", () => {
    // No mapping is shorter in UTF-16 units than its code point, and one that yields several code points is
    // longer: so "same length" means "every code point mapped to exactly one".
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      for (const full of [c.toUpperCase(), c.toLowerCase()]) {
        if (full === c) continue;
        const ok = Array.from(full).length === 1 ? full.length === c.length : full.length > c.length;
        if (!ok) expect.fail(`U+${cp.toString(16)} maps to ${JSON.stringify(full)}`);
      }
    }
  });
});

describe('trimWhiteSpace', () => {
  it.each<[string, string]>([
    ['  a b  ', 'a b'],
    ['\t\n\v\f\r a \r\n', 'a'],
    ['\u0085a\u0085', 'a'], // NEL is White_Space; JavaScript's trim keeps it
    ['\u00a0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000a\u3000', 'a'],
    ['\ufeffa\ufeff', '\ufeffa\ufeff'], // U+FEFF is not White_Space; JavaScript's trim removes it
    ['\u200ba\u200b', '\u200ba\u200b'], // nor is ZERO WIDTH SPACE
    ['\u180ea', '\u180ea'], // nor, since Unicode 6.3, the Mongolian vowel separator
    ['   ', ''],
    ['', ''],
  ])('%j → %j', (s, expected) => {
    expect(trimWhiteSpace(s)).toBe(expected);
  });

  it('differs from String.prototype.trim exactly on U+FEFF and U+0085', () => {
    expect('\ufeffa'.trim()).toBe('a');
    expect('\u0085a'.trim()).toBe('\u0085a');
  });

  it('agrees with the White_Space list', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(unit, fc.constantFrom(...WHITE_SPACE)), maxLength: 10 }), (s) => {
        expect(trimWhiteSpace(s)).toBe(refTrim(s));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('patternMatcher', () => {
  it('answers as RegExp with the u flag does, on code points', () => {
    const cases: [string, string][] = [
      ['^.$', ROCKET],
      ['^\\p{Lu}', 'Élan'],
      ['^[🚀x]+$', `x${ROCKET}`],
      ['b+', 'abbc'],
      ['^b', 'abc'],
      ['\\bpump\\b', 'a pump.'],
      ['\\B', `a${ROCKET}a`], // V8 also tries an empty match between the halves of a pair
    ];
    for (const [pattern, s] of cases) expect(patternMatcher(pattern)!.test(s)).toBe(new RegExp(pattern, 'u').test(s));
  });

  it.each(['(', '[', 'a{2,1}', '\\', '\\p{Nope}', '\\-'])(
    'is undefined for the invalid pattern %j (null)',
    (pattern) => {
      expect(() => new RegExp(pattern, 'u')).toThrow(SyntaxError);
      expect(patternMatcher(pattern)).toBeUndefined();
    },
  );

  it.each(['(a)\\1', 'a(?=b)', '(?<!a)b', '(a{1000}){1000}'])(
    'is undefined for %j, which a linear-time engine does not run (null)',
    (pattern) => {
      expect(patternMatcher(pattern)).toBeUndefined();
    },
  );

  it('takes linear time on the pattern of issue 12, and compiles each pattern once', () => {
    const matcher = patternMatcher(`${'.*'.repeat(8)}\u0000`)!;
    expect(patternMatcher(`${'.*'.repeat(8)}\u0000`)).toBe(matcher);
    const { matched, steps } = matcher.measure('x'.repeat(10_000));
    expect(matched).toBe(false);
    expect(steps).toBeLessThan(100 * 10_000); // RegExp: about 10,000^8 / 8! steps
  });
});
