// Random patterns of the supported subset (as text, the way a client writes them) and random strings that probe
// what differs between engines: astral characters and lone surrogates, every line terminator, NUL, case pairs,
// combining marks, word and non-word characters, white space that only some engines call space.
import fc from 'fast-check';

/** Code points (and lone surrogates) strings are made of. */
export const TEXT_ALPHABET: readonly string[] = [
  'a',
  'b',
  'c',
  'A',
  'B',
  'Z',
  '0',
  '9',
  '_',
  ' ',
  '-',
  '.',
  '\n',
  '\r',
  '\u2028',
  '\u2029',
  '\t',
  '\u000b',
  '\u00a0',
  '\ufeff',
  '\u0000',
  'é',
  'e',
  '\u0301',
  'ß',
  'İ',
  'ı',
  'K',
  '\u212a',
  'ſ',
  's',
  '😀',
  '😁',
  '\ud83d',
  '\ude00',
  'α',
  'Ω',
  'ǅ',
  '\u1680',
  '\u3000',
  '\u180e',
  'x',
  'y',
];

/** Strings for the databases: no lone surrogate (UTF-8 cannot hold one); PostgreSQL also no NUL. */
export const sqlText = (nul: boolean): fc.Arbitrary<string> =>
  fc
    .array(fc.constantFrom(...TEXT_ALPHABET.filter((c) => !/^[\ud800-\udfff]$/.test(c) && (nul || c !== '\u0000'))), {
      maxLength: 12,
    })
    .map((cs) => cs.join(''));

export const text = (maxLength = 12): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...TEXT_ALPHABET), { maxLength }).map((cs) => cs.join(''));

// Literal characters a pattern may hold as they are (syntax characters come escaped).
const LITERALS = [
  'a',
  'b',
  'c',
  'A',
  'B',
  '0',
  '9',
  '_',
  ' ',
  '-',
  'é',
  'e',
  '\u0301',
  'ß',
  'K',
  's',
  'x',
  '😀',
  '/',
  ',',
  '\n',
];
const SYNTAX = [
  '\\.',
  '\\*',
  '\\+',
  '\\?',
  '\\(',
  '\\)',
  '\\[',
  '\\]',
  '\\{',
  '\\}',
  '\\|',
  '\\^',
  '\\$',
  '\\\\',
  '\\/',
];
const ESCAPES = [
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\s',
  '\\S',
  '\\n',
  '\\r',
  '\\t',
  '\\v',
  '\\f',
  '\\0',
  '\\x41',
  '\\x00',
  '\\u00e9',
  '\\u{1F600}',
  '\\u{61}',
  '\\uD83D\\uDE00',
  '\\uD83D',
  '\\uDE00',
  '\\cJ',
  '\\cm',
  '\\p{Lu}',
  '\\P{L}',
  '\\p{Script=Greek}',
  '\\p{Nd}',
  '\\u2028',
  '\\u212A',
  '\\u017F',
];
// Class members: code points for ranges in order, and class escapes.
const CLASS_POINTS = [
  '\\0',
  '\\t',
  '\\n',
  ' ',
  '-',
  '0',
  '9',
  'A',
  'Z',
  '_',
  'a',
  'e',
  'z',
  'é',
  'ß',
  '\\u2028',
  '\\uD83D',
  '\\uDE00',
  '😀',
  '😁',
];
const CLASS_ESCAPES = [
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\s',
  '\\S',
  '\\p{L}',
  '\\P{Lu}',
  '\\b',
  '\\-',
  '\\]',
  '\\^',
  '.',
  '$',
  '(',
  '{',
  '|',
];

const classArbitrary: fc.Arbitrary<string> = fc
  .tuple(
    fc.boolean(),
    fc.array(
      fc.oneof(
        fc.constantFrom(...CLASS_POINTS),
        fc.constantFrom(...CLASS_ESCAPES),
        fc
          .tuple(fc.nat(CLASS_POINTS.length - 1), fc.nat(CLASS_POINTS.length - 1))
          .map(([i, j]) => `${CLASS_POINTS[Math.min(i, j)]}-${CLASS_POINTS[Math.max(i, j)]}`),
      ),
      { maxLength: 4 },
    ),
  )
  .map(([negated, items]) => `[${negated ? '^' : ''}${items.join('')}]`);

const quantifier: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: fc.constant('') },
      fc.constantFrom('*', '+', '?'),
      fc.nat(3).map((n) => `{${n}}`),
      fc.nat(2).map((n) => `{${n},}`),
      fc.tuple(fc.nat(2), fc.nat(2)).map(([n, d]) => `{${n},${n + d}}`),
    ),
    fc.boolean(),
  )
  .map(([q, lazy]) => (q !== '' && lazy ? `${q}?` : q));

/** A pattern of the supported subset, as source text. */
export const patternArbitrary: fc.Arbitrary<string> = fc.letrec<{ pattern: string; term: string; atom: string }>(
  (tie) => ({
    pattern: fc
      .array(
        fc.array(tie('term'), { minLength: 1, maxLength: 5 }).map((terms) => terms.join('')),
        {
          minLength: 1,
          maxLength: 3,
        },
      )
      .map((alternatives) => alternatives.join('|')),
    term: fc.oneof(
      { weight: 6, arbitrary: fc.tuple(tie('atom'), quantifier).map(([a, q]) => a + q) },
      { weight: 1, arbitrary: fc.constantFrom('^', '$', '\\b', '\\B') },
    ),
    atom: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 5, arbitrary: fc.constantFrom(...LITERALS) },
      { weight: 1, arbitrary: fc.constantFrom(...SYNTAX) },
      { weight: 2, arbitrary: fc.constant('.') },
      { weight: 2, arbitrary: fc.constantFrom(...ESCAPES) },
      { weight: 2, arbitrary: classArbitrary },
      {
        weight: 2,
        arbitrary: fc.tuple(fc.constantFrom('(', '(?:'), tie('pattern')).map(([open, inner]) => `${open}${inner})`),
      },
    ),
  }),
).pattern;

/** Text that is mostly pattern syntax, for the validity property. */
export const syntaxSoup: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        '(',
        ')',
        '[',
        ']',
        '{',
        '}',
        '|',
        '^',
        '$',
        '.',
        '*',
        '+',
        '?',
        '\\',
        '-',
        ',',
        '<',
        '>',
        '=',
        '!',
        ':',
        'a',
        'b',
        'k',
        'u',
        'x',
        'p',
        'P',
        'c',
        'd',
        'B',
        '0',
        '1',
        '2',
        '9',
        'D',
        'F',
        '{1}',
        '{1,2}',
        '{2,1}',
        '(?',
        '(?<a>',
        '(?<b>',
        '\\k<a>',
        '\\u{',
        '\\u',
        '\\x',
        '\\p{',
        'L}',
        'Lu}',
        '\ud83d',
        '\ude00',
        '😀',
        'i',
        'm',
        's',
        '-',
        '/',
      ),
    ),
    { maxLength: 10 },
  )
  .map((parts) => parts.join(''));
