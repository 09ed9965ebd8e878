// The $apply grammar (Data Aggregation 4.0 CS03): printed trees parse back to themselves, and every mistake is a 400
// (501 for what is recognised but not supported) naming $apply and the position where the text goes wrong.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aggregationMethods,
  type AggregateItem,
  type ApplyTransformation,
  type PathExpr,
  type SearchExpr,
} from '../../src/syntax/ast.js';
import { parseApply } from '../../src/syntax/parser.js';
import { printApply } from '../../src/syntax/print.js';
import { parseQuery } from '../../src/syntax/query-string.js';
import { ODataError } from '../../src/errors.js';
import { expr, propertyName, withoutSpans } from '../properties/syntax-arbitraries.js';

const none = { start: 0, end: 0 };
const path = propertyName.map((name): PathExpr => ({
  kind: 'path',
  root: { kind: 'implicit' },
  segments: [{ kind: 'property', name, span: none }],
  span: none,
}));
const aggregateItem: fc.Arbitrary<AggregateItem> = fc.oneof(
  fc.record({
    kind: fc.constant('method' as const),
    expr,
    method: fc.constantFrom(...aggregationMethods),
    methodSpan: fc.constant(none),
    alias: propertyName,
    aliasSpan: fc.constant(none),
    span: fc.constant(none),
  }),
  fc.record({
    kind: fc.constant('count' as const),
    alias: propertyName,
    aliasSpan: fc.constant(none),
    span: fc.constant(none),
  }),
  // a custom aggregate, with or without an alias of its own
  fc.tuple(propertyName, fc.option(propertyName, { nil: undefined })).map(([name, alias]): AggregateItem => ({
    kind: 'custom',
    name,
    nameSpan: none,
    alias: alias ?? name,
    aliasSpan: none,
    span: none,
  })),
);
const orderItem = fc.record({
  expr,
  direction: fc.constantFrom('asc' as const, 'desc' as const),
  span: fc.constant(none),
});

/**
 * Search expressions as `search(...)` takes them: words of the characters a word may hold (`/`, `,`, `'`, `$`... which
 * mean something else in $apply), phrases with parentheses, quotes and backslashes in them, NOT, AND, OR.
 */
const searchExpr: fc.Arbitrary<SearchExpr> = fc.letrec<{ e: SearchExpr }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small' },
    fc
      .stringMatching(/^[A-Za-z0-9'$,.!*+:@/?=é\\-]{1,8}$/)
      .filter((w) => !w.startsWith("'") && !['AND', 'OR', 'NOT'].includes(w))
      .map((text): SearchExpr => ({ kind: 'word', text, span: none })),
    fc.stringMatching(/^[a-z ()"\\',/;]{1,8}$/).map((text): SearchExpr => ({ kind: 'phrase', text, span: none })),
    tie('e').map((operand): SearchExpr => ({ kind: 'not', operand, span: none })),
    fc
      .tuple(fc.constantFrom('and' as const, 'or' as const), tie('e'), tie('e'))
      .map(([kind, left, right]): SearchExpr => ({ kind, left, right, span: none })),
  ),
})).e;

const transformations: fc.Arbitrary<ApplyTransformation[]> = fc.letrec<{ sequence: ApplyTransformation[] }>((tie) => {
  const step: fc.Arbitrary<ApplyTransformation> = fc.oneof(
    { depthSize: 'small' },
    fc.record({ kind: fc.constant('filter' as const), predicate: expr, span: fc.constant(none) }),
    fc.record({ kind: fc.constant('search' as const), search: searchExpr, span: fc.constant(none) }),
    fc.record({
      kind: fc.constant('aggregate' as const),
      items: fc.array(aggregateItem, { minLength: 1, maxLength: 3 }),
      span: fc.constant(none),
    }),
    fc
      .record({
        properties: fc.array(path, { minLength: 1, maxLength: 3 }),
        apply: fc.option(tie('sequence'), { nil: undefined }),
      })
      .map(({ properties, apply }): ApplyTransformation => ({
        kind: 'groupby',
        properties,
        ...(apply === undefined ? {} : { apply }),
        span: none,
      })),
    fc.record({
      kind: fc.constant('compute' as const),
      items: fc.array(fc.record({ expr, alias: propertyName, aliasSpan: fc.constant(none), span: fc.constant(none) }), {
        minLength: 1,
        maxLength: 3,
      }),
      span: fc.constant(none),
    }),
    fc.record({
      kind: fc.constant('orderby' as const),
      items: fc.array(orderItem, { minLength: 1, maxLength: 3 }),
      span: fc.constant(none),
    }),
    fc.record({ kind: fc.constantFrom('top' as const, 'skip' as const), count: fc.nat(), span: fc.constant(none) }),
    fc.record({
      kind: fc.constantFrom('topcount' as const, 'bottomsum' as const, 'toppercent' as const),
      n: expr,
      value: expr,
      span: fc.constant(none),
    }),
    fc.record({
      kind: fc.constant('concat' as const),
      sequences: fc.array(tie('sequence'), { minLength: 2, maxLength: 3 }),
      span: fc.constant(none),
    }),
    fc.constant({ kind: 'identity' as const, span: none }),
  );
  return { sequence: fc.array(step, { minLength: 1, maxLength: 4 }) };
}).sequence;

describe('parseApply / printApply', () => {
  it('round-trips every $apply tree: parseApply(printApply(t)) equals t up to spans', () => {
    fc.assert(
      fc.property(transformations, (steps) => {
        const text = printApply(steps);
        expect(withoutSpans(parseApply(text))).toEqual(withoutSpans(steps));
        expect(printApply(parseApply(text))).toBe(text);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 500) },
    );
  });

  it('gives each node the span of its text', () => {
    const text = "filter(Status eq 'OPEN')/groupby((Craft),aggregate(Hours with sum as Total,$count as N))";
    const [filter, groupby] = parseApply(text);
    expect(text.slice(filter!.span.start, filter!.span.end)).toBe("filter(Status eq 'OPEN')");
    expect(text.slice(groupby!.span.start, groupby!.span.end)).toBe(
      'groupby((Craft),aggregate(Hours with sum as Total,$count as N))',
    );
    const aggregate = groupby!.kind === 'groupby' ? groupby!.apply![0]! : undefined;
    const [sum, count] = aggregate?.kind === 'aggregate' ? aggregate.items : [];
    expect(text.slice(sum!.span.start, sum!.span.end)).toBe('Hours with sum as Total');
    expect(sum!.kind === 'method' && text.slice(sum!.methodSpan.start, sum!.methodSpan.end)).toBe('sum');
    expect(text.slice(count!.aliasSpan.start, count!.aliasSpan.end)).toBe('N');
  });

  const refused = (text: string): ODataError => {
    try {
      parseApply(text);
    } catch (error) {
      expect(error).toBeInstanceOf(ODataError);
      return error as ODataError;
    }
    throw new Error(`${text} parsed`);
  };

  it.each([
    // a name alone is a custom aggregate (the binder looks it up); an expression needs a method
    ['aggregate(Amount add 1)', 'InvalidSyntax', 22, 'Expected an aggregation method'],
    ['aggregate(Amount with sum)', 'InvalidSyntax', 25, 'Expected an alias after the aggregation method'],
    ['aggregate(Amount as)', 'InvalidSyntax', 19, "Unexpected ')'"],
    ['aggregate(Amount with summ as X)', 'InvalidSyntax', 22, "Unknown aggregation method 'summ'"],
    ['aggregate(Amount with Sales.median as X)', 'NotImplemented', 22, 'custom aggregation method'],
    ['aggregate(Amount wit sum as X)', 'InvalidSyntax', 17, "Unexpected 'wit'"],
    ['aggregate($count Count)', 'InvalidSyntax', 17, "Unexpected 'Count'"],
    ['aggregat(Amount with sum as X)', 'InvalidSyntax', 0, "did you mean 'aggregate'"],
    ['Aggregate($count as N)', 'InvalidSyntax', 0, "did you mean 'aggregate'"],
    ['groupby(Status)', 'InvalidSyntax', 8, 'grouping properties in parentheses'],
    ['groupby((1))', 'InvalidSyntax', 9, 'Expected a property to group by'],
    ['groupby((rollup(A,B)))', 'NotImplemented', 9, 'rollup'],
    ['search(pump)/nest(x)', 'NotImplemented', 13, 'nest'],
    // search: $search's grammar, its mistakes at their place in $apply
    ['search()', 'InvalidSyntax', 7, 'has no search expression'],
    ['search(a;b)', 'InvalidSyntax', 8, 'Unexpected ;'],
    ['filter(A eq 1)/search(pump "heat)', 'InvalidSyntax', 27, 'Unclosed phrase'],
    ['search(blue(green))', 'InvalidSyntax', 11, 'separate search terms with a space'],
    ['search(pump', 'InvalidSyntax', 11, "expected ')'"],
    ['search((pump OR seal)', 'InvalidSyntax', 21, "expected ')'"],
    ['search((pump', 'InvalidSyntax', 12, 'Unexpected end of $apply at position 12 of $apply; expected )'],
    ['search(pump))', 'InvalidSyntax', 12, "expected '/'"],
    ["search('pump seal')", 'InvalidSyntax', 7, 'single quotes is for $search alone'],
    ['groupby((A),search(x ;)/aggregate($count as N))', 'InvalidSyntax', 21, 'Unexpected ;'],
    ['concat(identity,search(x)/search(")))', 'InvalidSyntax', 33, 'Unclosed phrase'],
    ['search', 'InvalidSyntax', 6, "Expected '(' after search"],
    [`search(${'('.repeat(120)}a${')'.repeat(120)})`, 'LimitExceeded', 107, 'nested more than 100 levels'],
    // the first mistake is reported, whether in a search or around it
    ['search(a;b)/filter(A eq #)', 'InvalidSyntax', 8, 'Unexpected ;'],
    ['filter(A eq #)/search(a;b)', 'InvalidSyntax', 12, "Unexpected '#'"],
    ['filter(A eq)/search(a;b)', 'InvalidSyntax', 11, "Unexpected ')'"],
    ['search(a;b)/filter(A eq)', 'InvalidSyntax', 8, 'Unexpected ;'],
    ['Sales.custom(x=1)', 'NotImplemented', 0, 'custom transformation'],
    ['identity()', 'InvalidSyntax', 8, 'identity takes no parameters'],
    ['filter', 'InvalidSyntax', 6, "Expected '(' after filter"],
    ['top(-1)', 'InvalidSyntax', 4, 'non-negative integer'],
    ['concat(identity)', 'InvalidSyntax', 7, 'two or more'],
    ['groupby((A),aggregate($count as N)))', 'InvalidSyntax', 35, "expected '/'"],
  ])('refuses %s', (text, code, position, message) => {
    const error = refused(text);
    expect(error.code).toBe(code);
    expect(error.target).toBe('$apply');
    expect(error.position).toBe(position);
    expect(error.message).toContain(message);
  });

  it('reads search(...) as $search reads its value, where a transformation stands', () => {
    const text = `filter(Name eq 'search(x')/search("heat (exchanger)" OR (pump seal))/groupby((A),search(NOT O'Neil,9 $x)/aggregate($count as N))`;
    const [, search, groupby] = parseApply(text);
    expect(search!.kind).toBe('search');
    expect(text.slice(search!.span.start, search!.span.end)).toBe('search("heat (exchanger)" OR (pump seal))');
    const expr = search!.kind === 'search' ? search.search : undefined;
    expect(expr?.kind === 'or' && expr.left).toMatchObject({ kind: 'phrase', text: 'heat (exchanger)' });
    // every span is a place in the $apply text
    expect(expr?.kind === 'or' && text.slice(expr.right.span.start, expr.right.span.end)).toBe('(pump seal)');
    const nested = groupby!.kind === 'groupby' ? groupby.apply![0]! : undefined;
    const and = nested?.kind === 'search' ? nested.search : undefined;
    expect(and && text.slice(and.span.start, and.span.end)).toBe("NOT O'Neil,9 $x");
    expect(and?.kind === 'and' && and.left).toMatchObject({ kind: 'not', operand: { kind: 'word', text: "O'Neil,9" } });
    expect(printApply(parseApply(text))).toBe(
      `filter(Name eq 'search(x')/search("heat (exchanger)" OR pump AND seal)/groupby((A),search(NOT O'Neil,9 AND $x)/aggregate($count as N))`,
    );
    // spaces around it as around any transformation
    expect(printApply(parseApply('search (pump) / search( seal )'))).toBe('search(pump)/search(seal)');
    // a name search in an expression is no transformation: a property, a navigation with a key
    expect(printApply(parseApply('filter(search eq 1)/groupby((search))'))).toBe(
      'filter(search eq 1)/groupby((search))',
    );
    expect(printApply(parseApply("filter(search('k')/X eq 1)"))).toBe("filter(search('k')/X eq 1)");
  });

  it('is a system query option of its own: $apply and apply, once', () => {
    expect(parseQuery('apply=identity').apply).toEqual([{ kind: 'identity', span: { start: 0, end: 8 } }]);
    expect(() => parseQuery('$apply=identity&$apply=identity')).toThrow(/more than once/);
  });
});
