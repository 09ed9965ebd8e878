// The $search grammar: precedence (NOT, then AND, then OR), implicit AND, AND/OR/NOT as words where no operator can
// stand, phrases with escapes, quoted text, a round trip over random trees, and each mistake at its position.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isODataError, parseQuery } from '../../src/index.js';
import type { SearchExpr } from '../../src/syntax/ast.js';
import { parseSearch, printSearch } from '../../src/syntax/search.js';
import { withoutSpans } from '../properties/syntax-arbitraries.js';

/** A tree as nested arrays: ['or', a, b], ['not', a], 'word', '"phrase"', "'text'". */
type Shape = string | readonly [string, ...Shape[]];
function shape(e: SearchExpr): Shape {
  switch (e.kind) {
    case 'word':
      return e.text;
    case 'phrase':
      return `"${e.text}"`;
    case 'text':
      return `'${e.text}'`;
    case 'not':
      return ['not', shape(e.operand)];
    case 'and':
    case 'or':
      return [e.kind, shape(e.left), shape(e.right)];
  }
}

function errorOf(text: string): { code: string; position?: number; message: string } {
  try {
    parseSearch(text);
  } catch (error) {
    if (isODataError(error))
      return {
        code: error.code,
        message: error.message,
        ...(error.position === undefined ? {} : { position: error.position }),
      };
    throw error;
  }
  throw new Error(`expected ${text} to fail`);
}

describe('$search grammar', () => {
  it('binds NOT tighter than AND, AND tighter than OR, and reads a space as AND', () => {
    expect(shape(parseSearch('blue green'))).toEqual(['and', 'blue', 'green']);
    expect(shape(parseSearch('blue OR green AND red'))).toEqual(['or', 'blue', ['and', 'green', 'red']]);
    expect(shape(parseSearch('NOT blue green'))).toEqual(['and', ['not', 'blue'], 'green']);
    expect(shape(parseSearch('NOT (blue OR green) red'))).toEqual(['and', ['not', ['or', 'blue', 'green']], 'red']);
    expect(shape(parseSearch('a OR b OR c'))).toEqual(['or', ['or', 'a', 'b'], 'c']);
    expect(shape(parseSearch('"blue green" NOT "red \\"hot\\""'))).toEqual([
      'and',
      '"blue green"',
      ['not', '"red "hot""'],
    ]);
  });

  it('reads AND, OR and NOT as words where no operator can stand, and lowercase ones always', () => {
    expect(shape(parseSearch('AND'))).toEqual('AND');
    expect(shape(parseSearch('NOT NOT'))).toEqual(['not', 'NOT']);
    expect(shape(parseSearch('AND OR'))).toEqual(['and', 'AND', 'OR']);
    expect(shape(parseSearch('blue OR'))).toEqual(['and', 'blue', 'OR']);
    expect(shape(parseSearch('blue or green'))).toEqual(['and', ['and', 'blue', 'or'], 'green']);
    expect(shape(parseSearch("brand-new O'Neil 9,81 $search"))).toEqual([
      'and',
      ['and', ['and', 'brand-new', "O'Neil"], '9,81'],
      '$search',
    ]);
    expect(shape(parseSearch("'\"blue ''n'' green'"))).toEqual(`'"blue 'n' green'`);
  });

  it('is the $search option of a query, given with or without $', () => {
    expect(shape(parseQuery('$search=blue%20OR%20green').search!)).toEqual(['or', 'blue', 'green']);
    expect(shape(parseQuery('search=blue').search!)).toEqual('blue');
  });

  it('round-trips: parseSearch(printSearch(t)) is t for random trees', () => {
    const word = fc.stringMatching(/^[A-Za-z0-9'$,.!*+:@\/?=é-]{1,8}$/).filter((w) => !w.startsWith("'"));
    const phrase = fc.stringMatching(/^[a-z "\\]{1,8}$/);
    const tree: fc.Arbitrary<SearchExpr> = fc.letrec<{ e: SearchExpr }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small' },
        word.map((text): SearchExpr => ({ kind: 'word', text, span: { start: 0, end: 0 } })),
        phrase.map((text): SearchExpr => ({ kind: 'phrase', text, span: { start: 0, end: 0 } })),
        tie('e').map((operand): SearchExpr => ({ kind: 'not', operand, span: { start: 0, end: 0 } })),
        fc
          .tuple(fc.constantFrom('and' as const, 'or' as const), tie('e'), tie('e'))
          .map(([kind, left, right]): SearchExpr => ({ kind, left, right, span: { start: 0, end: 0 } })),
      ),
    })).e;
    fc.assert(
      fc.property(tree, (t) => {
        const text = printSearch(t);
        expect(withoutSpans(parseSearch(text)), text).toEqual(withoutSpans(t));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses each mistake at its position', () => {
    expect(errorOf('blue "green')).toMatchObject({
      code: 'InvalidSyntax',
      position: 5,
      message: expect.stringContaining('Unclosed phrase'),
    });
    expect(errorOf('a;b')).toMatchObject({ position: 1, message: expect.stringContaining('Unexpected ;') });
    expect(errorOf('(blue OR green')).toMatchObject({ position: 14, message: expect.stringContaining('expected )') });
    expect(errorOf('blue)')).toMatchObject({ position: 4 });
    expect(errorOf('blue(green)')).toMatchObject({
      position: 4,
      message: expect.stringContaining('separate search terms'),
    });
    expect(errorOf('""')).toMatchObject({ position: 0 });
    expect(errorOf("'a' b")).toMatchObject({ position: 0, message: expect.stringContaining('stands alone') });
    expect(errorOf('   ')).toMatchObject({ position: 0 });
    const deep = `${'('.repeat(150)}a${')'.repeat(150)}`;
    expect(errorOf(deep)).toMatchObject({ code: 'LimitExceeded', position: 100 });
  });
});
