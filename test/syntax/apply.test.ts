// The $apply grammar (Data Aggregation 4.0 CS03): printed trees parse back to themselves, and every mistake is a 400
// (501 for what is recognised but not supported) naming $apply and the position where the text goes wrong.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  aggregationMethods,
  type AggregateItem,
  type ApplyTransformation,
  type PathExpr,
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

const transformations: fc.Arbitrary<ApplyTransformation[]> = fc.letrec<{ sequence: ApplyTransformation[] }>((tie) => {
  const step: fc.Arbitrary<ApplyTransformation> = fc.oneof(
    { depthSize: 'small' },
    fc.record({ kind: fc.constant('filter' as const), predicate: expr, span: fc.constant(none) }),
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
    ['search(pump)', 'NotImplemented', 0, 'search'],
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

  it('is a system query option of its own: $apply and apply, once', () => {
    expect(parseQuery('apply=identity').apply).toEqual([{ kind: 'identity', span: { start: 0, end: 8 } }]);
    expect(() => parseQuery('$apply=identity&$apply=identity')).toThrow(/more than once/);
  });
});
