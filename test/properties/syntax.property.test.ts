// Laws of the query-language front end (fast-check). fast-check prints the seed and the shrunk
// counterexample on failure; replay with fc.assert(..., { seed, path }).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isODataError,
  parseCount,
  parseExpand,
  parseFilter,
  parseOrderBy,
  parseQuery,
  parseSelect,
  parseSkip,
  parseTop,
  printExpand,
  printFilter,
} from '../../src/index.js';
import { expandItems, expr, withoutSpans } from './syntax-arbitraries.js';

/** Runs `parse`; anything thrown must be an ODataError with a 4xx/501 status. */
function totally(parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    if (!isODataError(error)) throw new Error(`not an ODataError: ${String(error)}`, { cause: error });
    expect([400, 501]).toContain(error.status);
  }
}

describe('printFilter / parseFilter', () => {
  it('round-trips every syntax tree: parseFilter(printFilter(t)) equals t up to spans', () => {
    fc.assert(
      fc.property(expr, (tree) => {
        const text = printFilter(tree);
        expect(withoutSpans(parseFilter(text))).toEqual(withoutSpans(tree));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 2000) },
    );
  });

  it('prints canonical text: printing a reparsed tree gives the same text', () => {
    fc.assert(
      fc.property(expr, (tree) => {
        const text = printFilter(tree);
        expect(printFilter(parseFilter(text))).toBe(text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('printExpand / parseExpand', () => {
  it('round-trips every $expand tree: parseExpand(printExpand(t)) equals t up to spans', () => {
    fc.assert(
      fc.property(expandItems, (items) => {
        const text = printExpand(items);
        expect(withoutSpans(parseExpand(text))).toEqual(withoutSpans(items));
        expect(printExpand(parseExpand(text))).toBe(text);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 500) },
    );
  });
});

const parsers: readonly [string, (text: string) => unknown][] = [
  ['parseFilter', parseFilter],
  ['parseSelect', parseSelect],
  ['parseExpand', parseExpand],
  ['parseOrderBy', parseOrderBy],
  ['parseTop', parseTop],
  ['parseSkip', parseSkip],
  ['parseCount', parseCount],
  ['parseQuery', (text) => parseQuery(text)],
];

/** Random edits of a valid filter: the inputs most likely to reach unusual parser states. */
const fragment = fc
  .tuple(
    expr.map(printFilter),
    fc.array(
      fc.tuple(
        fc.constantFrom('cut', 'insert', 'delete', 'duplicate'),
        fc.nat(),
        fc.nat(),
        fc.constantFrom(...`()[]{},:/='"@$%+- \t\0\u00e9\ud83d\ude80\ud800.*;&#`.split('')),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  )
  .map(([text, edits]) => {
    let result = text;
    for (const [edit, a, b, char] of edits) {
      const i = result.length === 0 ? 0 : a % result.length;
      const j = result.length === 0 ? 0 : b % result.length;
      if (edit === 'cut') result = result.slice(Math.min(i, j), Math.max(i, j) + 1);
      else if (edit === 'insert') result = result.slice(0, i) + char + result.slice(i);
      else if (edit === 'delete') result = result.slice(0, i) + result.slice(i + 1);
      else result = result.slice(0, i) + result.slice(Math.min(i, j), Math.max(i, j)) + result.slice(i);
    }
    return result;
  });

describe('totality: every input gives a result or an ODataError, never anything else', () => {
  it.each(parsers)('%s on arbitrary unicode strings', (_, parse) => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.string()), (text) =>
        totally(() => parse(text)),
      ),
      { numRuns: 1000 },
    );
  });

  it.each(parsers)('%s on random edits of valid filters', (_, parse) => {
    fc.assert(
      fc.property(fragment, (text) => totally(() => parse(text))),
      { numRuns: 1000 },
    );
  });

  it('parseQuery on random query strings built from option names, separators and fragments', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '$filter=',
        'filter=',
        '$select=',
        '$orderby=',
        '$top=',
        '$skip=',
        '$count=',
        '@a=',
        '$expand=',
        '$x=',
        '&',
        '=',
        '%',
        '%2',
        '%zz',
        '%C3',
        '%E2%82',
        '?',
      ),
      fragment,
      fc.string(),
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 8 }).map((parts) => parts.join('')),
        (query) => totally(() => parseQuery(query)),
      ),
      { numRuns: 1000 },
    );
  });
});

describe('hostile sizes give a result or a clean 400, never a stack overflow or a hang', () => {
  const clean = (text: string, parse: (t: string) => unknown = parseFilter): 'result' | string => {
    try {
      parse(text);
      return 'result';
    } catch (error) {
      if (!isODataError(error)) throw error;
      expect(error.status).toBe(400);
      return error.code;
    }
  };

  it('10,000 nested parentheses', () => {
    expect(clean(`${'('.repeat(10_000)}A eq 1${')'.repeat(10_000)}`)).toBe('LimitExceeded');
  });

  it('100,000 nested not, negations, calls, arrays and lambdas', () => {
    expect(clean(`${'not '.repeat(100_000)}A`)).toBe('LimitExceeded');
    expect(clean(`${'-'.repeat(100_000)}A eq 1`)).toBe('LimitExceeded');
    expect(clean(`${'tolower('.repeat(100_000)}A${')'.repeat(100_000)} eq 'a'`)).toBe('LimitExceeded');
    expect(clean(`A in ${'['.repeat(100_000)}${']'.repeat(100_000)}`)).toBe('LimitExceeded');
    expect(clean(`${'A/any(a:a/'.repeat(10_000)}B eq 1${')'.repeat(10_000)}`)).toBe('LimitExceeded');
    expect(clean(`${'('.repeat(100_000)}A`, parseOrderBy)).toBe('LimitExceeded');
  });

  it('a 100,000-term or chain parses in linear time', () => {
    const terms = 100_000;
    const text = Array.from({ length: terms }, (_, i) => `Status eq 'S${i}'`).join(' or ');
    const started = performance.now();
    expect(clean(text)).toBe('result');
    // not a benchmark: a quadratic parser would take minutes here, a linear one well under a second or two
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(clean(Array.from({ length: terms }, (_, i) => `A add ${i}`).join(' sub ') + ' eq 0')).toBe('result');
  });

  it('a megabyte string literal and a 100,000-item list', () => {
    expect(clean(`Name eq '${'x'.repeat(1_000_000)}'`)).toBe('result');
    expect(clean(`Id in (${Array.from({ length: 100_000 }, (_, i) => i).join(',')})`)).toBe('result');
  });
});
