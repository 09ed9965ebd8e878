import { describe, expect, it } from 'vitest';
import {
  parseFilter,
  parseOrderBy,
  parseQuery,
  parseSelect,
  parseSkip,
  parseTop,
  printFilter,
  type Expr,
  type LiteralValue,
} from '../../src/index.js';
import { withoutSpans as shape } from '../properties/syntax-arbitraries.js';

const literalOf = (text: string): LiteralValue => {
  const expr = parseFilter(text);
  if (expr.kind !== 'literal') throw new Error(`${text} is a ${expr.kind}`);
  return expr.literal;
};

describe('literals are decoded to typed values', () => {
  it.each<[string, LiteralValue]>([
    ['null', { type: 'null' }],
    ['true', { type: 'Edm.Boolean', value: true }],
    ['FALSE', { type: 'Edm.Boolean', value: false }],
    ['42', { type: 'Edm.Int32', value: 42 }],
    ['-2147483648', { type: 'Edm.Int32', value: -2147483648 }],
    ['2147483648', { type: 'Edm.Int64', value: 2147483648n }],
    ['9223372036854775808', { type: 'Edm.Decimal', value: '9223372036854775808' }],
    ['1.50', { type: 'Edm.Decimal', value: '1.50' }],
    ['+42', { type: 'Edm.Int32', value: 42 }],
    ['1e3', { type: 'Edm.Double', value: 1000 }],
    ['-0.314e1', { type: 'Edm.Double', value: -3.14 }],
    ['INF', { type: 'Edm.Double', value: Infinity }],
    ['-INF', { type: 'Edm.Double', value: -Infinity }],
    ["'O''Neil'", { type: 'Edm.String', value: "O'Neil" }],
    ["''", { type: 'Edm.String', value: '' }],
    ["'🚀 ü %_'", { type: 'Edm.String', value: '🚀 ü %_' }],
    ['2024-05-01', { type: 'Edm.Date', value: '2024-05-01' }],
    ['2024-02-29', { type: 'Edm.Date', value: '2024-02-29' }],
    ['08:30:00.125', { type: 'Edm.TimeOfDay', value: '08:30:00.125' }],
    ["duration'P1DT2H'", { type: 'Edm.Duration', value: 'P1DT2H', milliseconds: 93_600_000 }],
    ["duration'-PT0.5S'", { type: 'Edm.Duration', value: '-PT0.5S', milliseconds: -500 }],
    ['01234567-89AB-cdef-0123-456789abcdef', { type: 'Edm.Guid', value: '01234567-89ab-cdef-0123-456789abcdef' }],
    ["Sales.Pattern'Yellow'", { type: 'enum', typeName: 'Sales.Pattern', value: 'Yellow' }],
    ["geography'SRID=0;Point(142.1 64.1)'", { type: 'Edm.Geography', value: 'SRID=0;Point(142.1 64.1)' }],
  ])('%s', (text, expected) => expect(literalOf(text)).toEqual(expected));

  it('keeps the offset of a DateTimeOffset and its instant in milliseconds', () => {
    expect(literalOf('2024-05-01T08:30:00+02:00')).toEqual({
      type: 'Edm.DateTimeOffset',
      value: '2024-05-01T08:30:00+02:00',
      epochMilliseconds: Date.UTC(2024, 4, 1, 6, 30),
      offsetMinutes: 120,
    });
    const fraction = literalOf('2012-08-31T18:19:22.1234567Z');
    expect(fraction.type === 'Edm.DateTimeOffset' && fraction.epochMilliseconds).toBe(
      Date.UTC(2012, 7, 31, 18, 19, 22, 123),
    );
    const yearZero = literalOf('0000-01-01T00:00Z');
    expect(yearZero.type === 'Edm.DateTimeOffset' && new Date(yearZero.epochMilliseconds).getUTCFullYear()).toBe(0);
  });

  it('decodes binary base64url', () => {
    const binary = literalOf("binary'Zm9vYmFy'");
    expect(binary.type === 'Edm.Binary' && Buffer.from(binary.bytes).toString()).toBe('foobar');
  });

  it.each([
    '2023-02-29',
    '2024-04-31',
    '2024-05-01T24:00Z',
    '2024-05-01T23:60Z',
    "duration'P1Y'",
    "binary'a'",
    '24:00:00',
  ])('rejects the impossible value %s', (text) =>
    expect(() => parseFilter(text)).toThrow(/at position \d+ of \$filter/),
  );
});

describe('precedence and associativity (OData 4.01 §5.1.1.16)', () => {
  const same = (a: string, b: string): void => expect(shape(parseFilter(a))).toEqual(shape(parseFilter(b)));

  it.each([
    ['A or B and C', 'A or (B and C)'],
    ['A and B or C', '(A and B) or C'],
    ['A eq 1 and B eq 2', '(A eq 1) and (B eq 2)'],
    ['A add 1 mul 2 eq 3', '(A add (1 mul 2)) eq 3'],
    ['A sub 1 sub 2', '(A sub 1) sub 2'],
    ['A div 2 mod 3', '(A div 2) mod 3'],
    ['not A eq B', '(not A) eq B'],
    ['not A and B', '(not A) and B'],
    ['-A add 1', '(-A) add 1'],
    ['A gt 1 eq true', '(A gt 1) eq true'],
    ['not A in (1,2)', 'not (A in (1,2))'],
    ['A eq 1 or A eq 2 or A eq 3', '((A eq 1) or (A eq 2)) or (A eq 3)'],
  ])('%s ≡ %s', same);

  it('treats operator and function names case-insensitively', () => {
    same("Name EQ 'Milk' AND Price LT 2.55", "Name eq 'Milk' and Price lt 2.55");
    same("CONTAINS(Name,'x')", "contains(Name,'x')");
    expect(parseFilter("MatchesPattern(Name,'^A')")).toMatchObject({ kind: 'call', name: 'matchesPattern' });
  });

  it('lets keywords and function names serve as property names', () => {
    expect(shape(parseFilter('Desc eq 1 and notes eq 2 and order eq 3'))).toMatchObject({
      kind: 'binary',
      operator: 'and',
    });
    expect(parseFilter('year eq 2024')).toMatchObject({ kind: 'binary', left: { kind: 'path' } });
  });
});

describe('spans', () => {
  it('puts a half-open span on every node', () => {
    const expr = parseFilter("Name eq 'abc' and contains(Desc,'x')");
    expect(expr.span).toEqual({ start: 0, end: 36 });
    if (expr.kind !== 'binary' || expr.left.kind !== 'binary' || expr.right.kind !== 'call') throw new Error('shape');
    expect(expr.left.right.span).toEqual({ start: 8, end: 13 });
    expect(expr.right.span).toEqual({ start: 18, end: 36 });
    expect(expr.right.args[0]!.span).toEqual({ start: 27, end: 31 });
  });
});

describe('paths, lambdas and collections', () => {
  it('parses lambdas with range variables and $it', () => {
    const expr = parseFilter("Lines/any(l: l/Qty gt 1 and $it/Status eq 'Open')");
    expect(shape(expr)).toMatchObject({
      kind: 'path',
      segments: [
        { kind: 'property', name: 'Lines' },
        {
          kind: 'any',
          variable: 'l',
          predicate: {
            kind: 'binary',
            left: { left: { root: { kind: 'variable', name: 'l' }, segments: [{ name: 'Qty' }] } },
            right: { left: { root: { kind: '$it' }, segments: [{ name: 'Status' }] } },
          },
        },
      ],
    });
  });

  it('parses in with lists, JSON arrays and paths', () => {
    expect(parseFilter("Status in ('A','B')")).toMatchObject({ kind: 'in', right: { kind: 'list', items: [{}, {}] } });
    expect(parseFilter('Status in ["A",\'B\']')).toMatchObject({ kind: 'in', right: { kind: 'array' } });
    expect(parseFilter('Status in ()')).toMatchObject({ kind: 'in', right: { kind: 'list', items: [] } });
    expect(parseFilter('Status in Codes')).toMatchObject({ kind: 'in', right: { kind: 'path' } });
  });

  it('parses cast, isof and case', () => {
    expect(parseFilter("cast(Qty,Edm.String) eq '1'")).toMatchObject({
      left: { name: 'cast', args: [{ kind: 'path' }, { kind: 'typeName', name: 'Edm.String' }] },
    });
    expect(parseFilter('isof(Model.Customer)')).toMatchObject({ name: 'isof', args: [{ kind: 'typeName' }] });
    expect(parseFilter("case(Qty gt 5:'high',true:'low') eq 'high'")).toMatchObject({
      left: { name: 'case', args: [{ kind: 'caseBranch' }, { kind: 'caseBranch' }] },
    });
  });

  it('parses a leading type cast and key predicates with any literal', () => {
    expect(parseFilter('Model.VipCustomer/Rating gt 3')).toMatchObject({
      left: {
        segments: [
          { kind: 'cast', typeName: 'Model.VipCustomer' },
          { kind: 'property', name: 'Rating' },
        ],
      },
    });
    expect(parseFilter('Items(true)/X')).toMatchObject({
      segments: [{}, { kind: 'key', values: [{ value: { kind: 'literal' } }] }, {}],
    });
  });

  it('parses $count segments, key predicates and annotations', () => {
    expect(parseFilter('Lines/$count gt 2')).toMatchObject({
      left: { segments: [{ kind: 'property' }, { kind: 'count' }] },
    });
    expect(parseFilter('Lines/$count($filter=Qty gt 1) gt 2')).toMatchObject({
      left: { segments: [{}, { kind: 'count', filter: { kind: 'binary' } }] },
    });
    expect(parseFilter("Lines(PONumber='PO-1',LineNumber=2)/Qty")).toMatchObject({
      segments: [{}, { kind: 'key', values: [{ name: 'PONumber' }, { name: 'LineNumber' }] }, {}],
    });
    expect(parseFilter("Price/@Measures.Currency eq 'EUR'")).toMatchObject({
      left: { segments: [{}, { kind: 'annotation', term: 'Measures.Currency' }] },
    });
  });
});

describe('$orderby, $select, $top, $skip', () => {
  it('parses several orderby items with directions', () => {
    const items = parseOrderBy('Name asc,Rating,ReleaseDate desc,length(Name) DESC');
    expect(items.map((i) => i.direction)).toEqual(['asc', 'asc', 'desc', 'desc']);
    expect(items[3]!.expr).toMatchObject({ kind: 'call', name: 'length' });
    expect(items[2]!.span).toEqual({ start: 16, end: 32 });
  });

  it('parses select items', () => {
    expect(shape(parseSelect('Rating,Address/Street,*'))).toEqual([
      { kind: 'path', segments: [{ kind: 'property', name: 'Rating' }] },
      {
        kind: 'path',
        segments: [
          { kind: 'property', name: 'Address' },
          { kind: 'property', name: 'Street' },
        ],
      },
      { kind: 'star' },
    ]);
    expect(parseSelect('Lines($filter=Qty gt 1;$top=5;$orderby=Qty desc)')).toMatchObject([
      { options: { filter: { kind: 'binary' }, top: 5, orderBy: [{ direction: 'desc' }] } },
    ]);
  });

  it('parses $top and $skip including 0', () => {
    expect(parseTop('0')).toBe(0);
    expect(parseSkip('120')).toBe(120);
  });
});

describe('parseQuery', () => {
  it('accepts option names case-insensitively, with or without $, percent-decoded once', () => {
    const q = parseQuery("?$Filter=Name%20eq%20'a%2527b'&TOP=5&skip=2&$count=TRUE&$orderby=Name%20desc&select=Name");
    expect(q.filter).toMatchObject({ right: { literal: { value: 'a%27b' } } });
    expect([q.top, q.skip, q.count]).toEqual([5, 2, true]);
    expect(q.orderBy?.[0]?.direction).toBe('desc');
    expect(q.select).toHaveLength(1);
    expect(q.text.$filter).toBe("Name eq 'a%27b'");
  });

  it('resolves @alias values onto the alias nodes and keeps custom options', () => {
    const q = parseQuery("$filter=contains(Title,@word)&@word='Black'&find=O%27Neil&!special");
    expect(q.filter).toMatchObject({
      kind: 'call',
      args: [{}, { kind: 'alias', name: '@word', value: { literal: { value: 'Black' } } }],
    });
    expect(q.aliases.get('@word')).toMatchObject({ kind: 'literal' });
    expect([...q.custom]).toEqual([
      ['find', "O'Neil"],
      ['!special', ''],
    ]);
  });

  it('resolves an alias used in another alias, in either order', () => {
    const q = parseQuery('$filter=Qty eq @p&@p=@q add 1&@q=41');
    expect(q.filter).toMatchObject({
      right: { kind: 'alias', value: { left: { kind: 'alias', name: '@q', value: { literal: { value: 41 } } } } },
    });
  });

  it('reads URLSearchParams as already decoded', () => {
    const q = parseQuery(new URLSearchParams({ $filter: "Name eq 'a b'", $top: '3' }));
    expect(q.filter).toMatchObject({ right: { literal: { value: 'a b' } } });
    expect(q.top).toBe(3);
  });

  it('leaves an alias without a value unresolved (null, OData 4.01 §5.3)', () => {
    expect(parseQuery('$filter=Name eq @missing').filter).toMatchObject({ right: { kind: 'alias', name: '@missing' } });
  });
});

describe('printFilter', () => {
  it.each([
    ["name EQ 'O''Neil' AND (a OR b)", "name eq 'O''Neil' and (a or b)"],
    ['A sub (B sub C)', 'A sub (B sub C)'],
    ['(A sub B) sub C', 'A sub B sub C'],
    ['- 5 add -Price', '- 5 add -Price'],
    ['not (A eq B)', 'not (A eq B)'],
    ['1e3 eq 1000.0', '1e3 eq 1000.0'],
    ["Lines/any(l:l/Qty gt 1) and Items(1)/Name eq 'x'", "Lines/any(l:l/Qty gt 1) and Items(1)/Name eq 'x'"],
  ])('%s → %s', (input, canonical) => {
    const printed = printFilter(parseFilter(input));
    expect(printed).toBe(canonical);
    expect(shape(parseFilter(printed))).toEqual(shape(parseFilter(input)));
  });

  it('prints and reparses a 100,000-term or chain without recursion limits', () => {
    const text = Array.from({ length: 100_000 }, (_, i) => `A eq ${i}`).join(' or ');
    const expr: Expr = parseFilter(text);
    expect(printFilter(expr)).toBe(text);
  });
});
