// The validator: type-checking across operators and functions, resolution of names and lambdas,
// the $orderby tie-break, $select, limits, and errors with code, option and position.
import { describe, expect, it } from 'vitest';
import {
  defaultLimits,
  defineEntityType,
  isODataError,
  parseQuery,
  validateQuery,
  type BoundExpr,
  type ErrorCode,
  type QueryLimits,
} from '../../src/index.js';
import { Item, Line } from './fixtures.js';

function bindFilter(filter: string, limits?: QueryLimits): BoundExpr {
  return validateQuery(parseQuery(`$filter=${encodeURIComponent(filter)}`), Item, limits).filter!;
}

function errorOf(run: () => unknown): {
  code: ErrorCode;
  target: string | undefined;
  position: number | undefined;
  message: string;
} {
  try {
    run();
  } catch (error) {
    if (isODataError(error))
      return { code: error.code, target: error.target, position: error.position, message: error.message };
    throw error;
  }
  throw new Error('expected an ODataError');
}

type Case = readonly [filter: string, expected: 'ok' | readonly [ErrorCode, number]];

// Each invalid case names the code and the position the error must point at.
const typeCases: readonly Case[] = [
  // comparisons and promotion
  ["Name eq 'a'", 'ok'],
  ['Name eq null', 'ok'],
  ['null eq Name', 'ok'],
  ['Count32 eq 1', 'ok'],
  ['Count32 eq Count64', 'ok'],
  ['Count64 lt 3000000000', 'ok'],
  ['Price gt 1', 'ok'],
  ['Price ge 1.50', 'ok'],
  ['Price lt Ratio', 'ok'],
  ['Ratio le 1e3', 'ok'],
  ['Active eq true', 'ok'],
  ['Active gt false', 'ok'],
  ['Due eq 2024-05-01', 'ok'],
  ['Due lt Created', 'ok'],
  ['Created ge 2024-05-01T00:00:00Z', 'ok'],
  ['Created ge 2024-05-01', 'ok'],
  ['At gt 08:30:00', 'ok'],
  ["Span eq duration'P1D'", 'ok'],
  ["Span eq 'P1DT2H'", 'ok'],
  ['Guid eq 01234567-89ab-cdef-0123-456789abcdef', 'ok'],
  ["Blob eq binary'Zm9v'", 'ok'],
  ["Active eq 'yes'", ['TypeMismatch', 7]],
  ['Name eq 1', ['TypeMismatch', 5]],
  ['Due eq 08:30:00', ['TypeMismatch', 4]],
  ["Span eq 'soon'", ['TypeMismatch', 5]],
  ["Blob gt binary'Zm9v'", ['TypeMismatch', 5]],
  ['Guid eq 1', ['TypeMismatch', 5]],
  // logic
  ['Active and Flag', 'ok'],
  ['not Active', 'ok'],
  ['Active or null', 'ok'],
  ['Name and Active', ['TypeMismatch', 0]],
  ['not Count32', ['TypeMismatch', 4]],
  // arithmetic
  ['Count32 add 1 gt 2', 'ok'],
  ['Price mul 2 eq 5.10', 'ok'],
  ['Count32 div 2 eq 1', 'ok'],
  ['Count32 divby 2 eq 0.5', 'ok'],
  ['Count64 mod 5 eq 0', 'ok'],
  ['-Price lt 0', 'ok'],
  ["Created add duration'PT1H' gt now()", 'ok'],
  ["Created sub Created eq duration'PT0S'", 'ok'],
  ["Span add Span gt duration'P1D'", 'ok'],
  ['Due sub Due eq Span', 'ok'],
  ["Name add 1 eq 'a'", ['TypeMismatch', 5]],
  ['-Name eq Name', ['TypeMismatch', 0]],
  ["Due add duration'P1D' eq Due", ['TypeMismatch', 4]],
  ['Active mul 2 eq 2', ['TypeMismatch', 7]],
  // in
  ["Name in ('a','b')", 'ok'],
  ['Count32 in (1, 2, 3000000000)', 'ok'],
  ["Name in ('a', null)", 'ok'],
  ['Price in (Count32, 1.5)', 'ok'],
  ["Name in ('a', 1)", ['TypeMismatch', 14]],
  ['Name in Name', ['TypeMismatch', 8]],
  // has
  ["Name has Sales.Pattern'Yellow'", ['TypeMismatch', 9]],
  // string functions
  ["contains(Name,'x')", 'ok'],
  ["startswith(Notes,'x') and endswith(Name,'y')", 'ok'],
  ["indexof(Name,'x') eq 0", 'ok'],
  ['length(Name) gt 3', 'ok'],
  ["substring(Name,1) eq 'a'", 'ok'],
  ["substring(Name,1,2) eq 'a'", 'ok'],
  ['tolower(Name) eq toupper(Notes)', 'ok'],
  ["trim(concat(Name,Notes)) eq 'a'", 'ok'],
  ["matchesPattern(Name,'^A.*e$')", 'ok'],
  ['contains(Name)', ['WrongArgumentCount', 0]],
  ["contains(Count32,'1')", ['TypeMismatch', 9]],
  ["substring(Name,'1') eq 'a'", ['TypeMismatch', 15]],
  ["substring(Name,-1) eq 'a'", ['InvalidLiteral', 15]],
  ["matchesPattern(Name,'(')", ['InvalidLiteral', 21]], // the group opened at the pattern's first character
  ["matchesPattern(Name,'ab''c[')", ['InvalidLiteral', 26]], // a doubled quote is one character of the pattern
  ["matchesPattern(Name,'(a)\\1')", ['NotImplemented', 24]], // a backreference needs a backtracking engine
  ['length(Name)', ['NotBoolean', 0]],
  // date and time functions
  ['year(Due) eq 2024 and month(Created) eq 5 and day(Created) eq 1', 'ok'],
  ['hour(Created) eq 8 and minute(At) eq 30 and second(At) eq 0', 'ok'],
  ['fractionalseconds(Created) lt 0.5', 'ok'],
  ['date(Created) eq Due and time(Created) lt At', 'ok'],
  ['totaloffsetminutes(Created) eq 0 and totalseconds(Span) gt 60', 'ok'],
  ['Created lt now() and Created gt mindatetime() and Created lt maxdatetime()', 'ok'],
  ['year(Name) eq 2024', ['TypeMismatch', 5]],
  ['hour(Due) eq 1', ['TypeMismatch', 5]],
  ['now(Created) eq Created', ['WrongArgumentCount', 0]],
  // arithmetic functions
  ['round(Price) eq 2 and floor(Ratio) eq 1 and ceiling(Count32) eq 3', 'ok'],
  ['round(Name) eq 1', ['TypeMismatch', 6]],
  // type functions
  ["cast(Count32,Edm.String) eq '1'", 'ok'],
  ['cast(Name,Edm.Int32) eq 1', 'ok'],
  ['cast(Due,Edm.DateTimeOffset) eq Created', 'ok'],
  ['isof(Count32,Edm.Int32)', 'ok'],
  ['cast(Active,Edm.Date) eq Due', ['TypeMismatch', 0]],
  ['cast(Count32,Edm.Strin) eq 1', ['UnknownType', 13]],
  ['isof(Model.Customer)', ['NotImplemented', 0]],
  ["case(Count32 gt 5:'high',true:'low') eq 'high'", 'ok'],
  ["case(Count32:'high') eq 'high'", ['TypeMismatch', 5]],
  ["case(Active:'a',true:1) eq 'a'", ['TypeMismatch', 21]],
  // lambdas and counts
  ['Lines/any(l: l/Qty gt 1 and l/Part eq $it/Name)', 'ok'],
  ['Lines/all(l: l/Qty gt 0)', 'ok'],
  ['Lines/any()', 'ok'],
  ['Lines/$count gt 2', 'ok'],
  ['Lines/$count($filter=Qty gt 1) gt 2', 'ok'],
  ['Lines/any(l: l/Qty)', ['TypeMismatch', 13]],
  ['Lines/any(l: l/Nope eq 1)', ['UnknownProperty', 15]],
  ['Lines eq 1', ['TypeMismatch', 0]],
  ['Name/any(x: true)', ['TypeMismatch', 5]],
  ['Lines/Qty eq 1', ['TypeMismatch', 6]],
  // names
  ["Nam eq 'a'", ['UnknownProperty', 0]],
  ['Secret eq null', ['NotQueryable', 0]],
  ['$it eq 1', ['TypeMismatch', 0]],
  ['$root/Items eq 1', ['NotImplemented', 0]],
  ["Model.Vip/Name eq 'a'", ['UnknownType', 0]],
  ['Lines(1)/Qty eq 1', ['NotImplemented', 5]],
  ["Price/@Measures.Currency eq 'EUR'", ['NotImplemented', 6]],
  ['geo.distance(Name,Name) lt 1', ['NotImplemented', 0]],
  ['Count32 eq {"a":1}', ['TypeMismatch', 11]],
];

describe('type checking', () => {
  it('has at least 60 cases', () => expect(typeCases.length).toBeGreaterThanOrEqual(60));

  it.each(typeCases)('%s → %j', (filter, expected) => {
    if (expected === 'ok') {
      const bound = bindFilter(filter);
      expect(['Edm.Boolean', 'null']).toContain(bound.type);
      return;
    }
    const error = errorOf(() => bindFilter(filter));
    expect([error.code, error.position]).toEqual(expected);
    expect(error.target).toBe('$filter');
    expect(error.message).toContain(`at position ${expected[1]} of $filter`);
  });
});

describe('binding', () => {
  it('promotes explicitly: literals are retyped, other operands converted', () => {
    expect(bindFilter('Price gt 1')).toMatchObject({
      kind: 'comparison',
      left: { kind: 'property', type: 'Edm.Decimal' },
      right: { kind: 'literal', type: 'Edm.Decimal', value: { type: 'Edm.Decimal', value: '1' } },
    });
    expect(bindFilter('Price lt Ratio')).toMatchObject({
      left: { kind: 'convert', type: 'Edm.Double', operand: { kind: 'property', type: 'Edm.Decimal' } },
      right: { kind: 'property', type: 'Edm.Double' },
    });
    expect(bindFilter('Created ge 2024-05-01')).toMatchObject({
      right: { kind: 'literal', type: 'Edm.DateTimeOffset', value: { epochMilliseconds: Date.UTC(2024, 4, 1) } },
    });
    expect(bindFilter('Count32 divby 2 eq 0.5')).toMatchObject({ left: { kind: 'arithmetic', type: 'Edm.Decimal' } });
  });

  it('resolves lambda variables, $it and $count filters to their sources', () => {
    const bound = bindFilter('Lines/any(l: l/Part eq $it/Name)');
    expect(bound).toMatchObject({
      kind: 'lambda',
      operator: 'any',
      variable: 'l',
      navigation: { name: 'Lines' },
      source: { kind: 'root' },
      predicate: { left: { source: { kind: 'variable', name: 'l' } }, right: { source: { kind: 'root' } } },
    });
    const count = bindFilter('Lines/$count($filter=Qty gt 1) gt 2');
    expect(count).toMatchObject({ left: { kind: 'count', filter: { left: { source: { kind: 'variable' } } } } });
  });

  it('suggests the nearest property name', () => {
    expect(errorOf(() => bindFilter("Nam eq 'a'")).message).toBe(
      "Unknown property 'Nam' on Item at position 0 of $filter; did you mean 'Name'?",
    );
    expect(errorOf(() => bindFilter("Active eq 'yes'")).message).toBe(
      'Cannot compare Edm.Boolean with Edm.String at position 7 of $filter',
    );
  });

  it('binds alias values and reports their errors against the alias', () => {
    const bound = validateQuery(parseQuery('$filter=Price gt @p&@p=1.5'), Item).filter!;
    expect(bound).toMatchObject({ right: { kind: 'literal', type: 'Edm.Decimal' } });
    const error = errorOf(() => validateQuery(parseQuery("$filter=Price gt @p&@p=Nam eq 'a'"), Item));
    expect([error.code, error.target, error.position]).toEqual(['UnknownProperty', '@p', 0]);
  });

  it('binds a 10,000-term or chain without exhausting the stack', () => {
    const filter = Array.from({ length: 10_000 }, (_, i) => `Count32 eq ${i}`).join(' or ');
    expect(
      validateQuery(parseQuery(`$filter=${filter}`), Item, { maxQueryLength: 1_000_000, maxNodes: 100_000 }).filter
        ?.kind,
    ).toBe('logical');
  });
});

describe('$orderby, $select, $top, limits', () => {
  it('appends the key as a tie-break unless it is already ordered', () => {
    const bound = validateQuery(parseQuery('$orderby=Price desc,Name'), Item);
    expect(
      bound.orderBy.map((o) => [
        o.expr.kind === 'property' ? o.expr.property.name : o.expr.kind,
        o.direction,
        o.tieBreak,
      ]),
    ).toEqual([
      ['Price', 'desc', false],
      ['Name', 'asc', false],
      ['Id', 'asc', true],
    ]);
    expect(validateQuery(parseQuery('$orderby=Id desc'), Item).orderBy).toHaveLength(1);
    expect(validateQuery(parseQuery(''), Item).orderBy.map((o) => o.tieBreak)).toEqual([true]);
  });

  it('rejects unordered $orderby items', () => {
    expect(errorOf(() => validateQuery(parseQuery('$orderby=Blob'), Item))).toMatchObject({
      code: 'NotSortable',
      target: '$orderby',
      position: 0,
    });
    expect(errorOf(() => validateQuery(parseQuery('$orderby=Name,Lines'), Item))).toMatchObject({
      code: 'TypeMismatch',
      position: 5,
    });
  });

  it('selects properties in entity-type order, all readable ones for * or no $select', () => {
    expect(validateQuery(parseQuery('$select=Price,Name'), Item).select.map((p) => p.name)).toEqual(['Name', 'Price']);
    const all = validateQuery(parseQuery(''), Item).select.map((p) => p.name);
    expect(all).not.toContain('Secret');
    expect(validateQuery(parseQuery('$select=*'), Item).select.map((p) => p.name)).toEqual(all);
    expect(errorOf(() => validateQuery(parseQuery('$select=Name,Nmae'), Item))).toMatchObject({
      code: 'UnknownProperty',
      target: '$select',
      position: 5,
    });
    expect(errorOf(() => validateQuery(parseQuery('$select=Secret'), Item))).toMatchObject({ code: 'NotQueryable' });
  });

  it('checks every $select item, also those after *', () => {
    expect(validateQuery(parseQuery('$select=*,Name'), Item).select.map((p) => p.name)).toEqual(
      validateQuery(parseQuery('$select=Name,*'), Item).select.map((p) => p.name),
    );
    for (const [query, code, position] of [
      ['$select=*,Nmae', 'UnknownProperty', 2],
      ['$select=*,Zzz/Foo', 'UnknownProperty', 2],
      ['$select=*,Name/Foo', 'UnknownProperty', 7],
      ['$select=*,Secret', 'NotQueryable', 2],
      // a navigation selects its link; what lies beyond it is expanded, not selected
      ['$select=*,Lines/Qty', 'TypeMismatch', 8],
    ] as const) {
      expect(
        errorOf(() => validateQuery(parseQuery(query), Item)),
        query,
      ).toMatchObject({
        code,
        target: '$select',
        position,
      });
    }
  });

  it('rejects a canonical function in $select as malformed (400), not as an unsupported operation (501)', () => {
    for (const query of ['$select=tolower(Name)', '$select=Name,TOUPPER(Notes)', '$select=*,now()']) {
      const error = errorOf(() => validateQuery(parseQuery(query), Item));
      expect([query, error.code, error.target, error.position]).toEqual([
        query,
        'InvalidSyntax',
        '$select',
        query.search(/[a-z]+\(/i) - '$select='.length,
      ]);
    }
    // an unqualified bound function with parameter names is ABNF (optionallyQualifiedFunctionName): the model has none
    expect(errorOf(() => validateQuery(parseQuery('$select=MostPopular(Location)'), Item)).code).toBe('NotImplemented');
    expect(validateQuery(parseQuery('$select=Lines'), Item)).toMatchObject({
      select: [],
      selectNavigation: [Item.navigation.get('Lines')],
    });
  });

  it('enforces the limits as LimitExceeded', () => {
    const limits: QueryLimits = {
      maxTop: 50,
      maxInItems: 3,
      maxDepth: 5,
      maxSelect: 2,
      maxOrderBy: 1,
      maxQueryLength: 100,
    };
    const cases: [string, string][] = [
      ['$top=51', '$top'],
      ['$filter=Count32 in (1,2,3,4)', '$filter'],
      ['$filter=not not not not not not Active', '$filter'],
      ['$select=Id,Name,Price', '$select'],
      ['$orderby=Id,Name', '$orderby'],
      [`$filter=Name eq '${'x'.repeat(200)}'`, undefined as unknown as string],
    ];
    for (const [query, target] of cases) {
      const error = errorOf(() => validateQuery(parseQuery(query), Item, limits));
      expect([query, error.code, error.target]).toEqual([query, 'LimitExceeded', target]);
    }
    expect(validateQuery(parseQuery('$top=50'), Item, limits).top).toBe(50);
  });

  it('bounds the nesting of any, all and $count (maxLambdaDepth) and their number (maxSubqueries)', () => {
    const nest = (n: number): string => {
      let x = `x${n - 1}/Qty gt 0`;
      for (let i = n - 1; i >= 0; i--) x = `Lines/${i % 2 === 0 ? 'any' : 'all'}(x${i}:${x})`;
      return x;
    };
    expect(defaultLimits.maxLambdaDepth).toBe(4);
    expect(bindFilter(nest(4)).kind).toBe('lambda');
    const deep = nest(5);
    expect(errorOf(() => bindFilter(deep))).toMatchObject({
      code: 'LimitExceeded',
      target: '$filter',
      position: deep.lastIndexOf('Lines/'),
    });
    expect(errorOf(() => bindFilter(deep)).message).toContain('maxLambdaDepth');
    // $count is a subquery too, and its filter one level deeper
    const counted = 'Lines/any(a:Lines/any(b:Lines/any(c:Lines/$count($filter=Qty gt 0) gt 1)))';
    expect(bindFilter(counted).kind).toBe('lambda');
    expect(errorOf(() => bindFilter(counted, { maxLambdaDepth: 3 }))).toMatchObject({
      code: 'LimitExceeded',
      position: counted.indexOf('Lines/$count'),
    });

    expect(defaultLimits.maxSubqueries).toBe(32);
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `Lines/any(l:l/Qty gt ${i})`);
    expect(bindFilter(terms(32).join(' or ')).kind).toBe('logical');
    const many = terms(33).join(' or ');
    expect(errorOf(() => bindFilter(many))).toMatchObject({
      code: 'LimitExceeded',
      target: '$filter',
      position: many.lastIndexOf('Lines/'),
    });
    expect(errorOf(() => bindFilter(many)).message).toContain('maxSubqueries');
    // $filter and $orderby run as one statement: they share the count, and an alias counts at each use
    const query = `$filter=${encodeURIComponent(terms(31).join(' or '))}&$orderby=Lines/$count,Lines/$count desc`;
    expect(errorOf(() => validateQuery(parseQuery(query), Item))).toMatchObject({
      code: 'LimitExceeded',
      target: '$orderby',
      position: 13,
    });
    const aliased = `$filter=${encodeURIComponent(Array.from({ length: 17 }, () => '@a').join(' or '))}&@a=Lines/any()`;
    expect(errorOf(() => validateQuery(parseQuery(aliased), Item, { maxSubqueries: 16 }))).toMatchObject({
      code: 'LimitExceeded',
      target: '@a',
    });
    expect(validateQuery(parseQuery(aliased), Item, { maxSubqueries: 17 }).filter?.kind).toBe('logical');
  });

  it('has no default cap on $top: any value the parser accepts is legal (SEMANTICS.md, the server pages)', () => {
    expect(defaultLimits.maxTop).toBeUndefined();
    for (const top of ['10001', '1000000', String(Number.MAX_SAFE_INTEGER)]) {
      expect(validateQuery(parseQuery(`$top=${top}`), Item).top).toBe(Number(top));
    }
    expect(errorOf(() => validateQuery(parseQuery('$top=10001'), Item, { maxTop: 10_000 }))).toMatchObject({
      code: 'LimitExceeded',
      target: '$top',
      position: 0,
    });
  });

  it('reports problems of several options together', () => {
    try {
      validateQuery(parseQuery("$filter=Nam eq 'a'&$orderby=Blob&$select=Nope"), Item);
      expect.fail('should throw');
    } catch (error) {
      if (!isODataError(error)) throw error;
      expect(error.code).toBe('UnknownProperty');
      expect(error.details.map((d) => [d.code, d.target])).toEqual([
        ['NotSortable', '$orderby'],
        ['UnknownProperty', '$select'],
      ]);
    }
  });
});

describe('the order of a query without $orderby', () => {
  const History = defineEntityType({
    name: 'History',
    key: ['ReadingID'],
    properties: { ReadingID: { type: 'Edm.Int32' }, ReadingDate: { type: 'Edm.DateTimeOffset' } },
    defaultOrder: [{ property: 'ReadingDate', descending: true }],
  });
  const orderOf = (query: string) =>
    validateQuery(parseQuery(query), History).orderBy.map((o) => [
      o.expr.kind === 'property' ? o.expr.property.name : o.expr.kind,
      o.direction,
      o.tieBreak,
    ]);

  it("is the type's default order, then the key breaking ties", () => {
    expect(orderOf('')).toEqual([
      ['ReadingDate', 'desc', false],
      ['ReadingID', 'asc', true],
    ]);
  });

  it('is replaced by an $orderby the client sends', () => {
    expect(orderOf('$orderby=ReadingID desc')).toEqual([['ReadingID', 'desc', false]]);
  });
});

describe('paths through single-valued navigations', () => {
  const bindLine = (query: string, limits?: QueryLimits) => validateQuery(parseQuery(query), Line, limits);

  it('reads a property of the related row, nullable where the row may be missing', () => {
    const filter = bindLine("$filter=Order/Name eq 'x'").filter!;
    expect(filter).toMatchObject({
      kind: 'comparison',
      left: {
        kind: 'property',
        property: Item.properties.get('Name'),
        // Name is not nullable, but an order that is not there reads null
        nullable: true,
        source: { kind: 'navigation', navigation: Line.navigation.get('Order'), from: { kind: 'root' } },
      },
    });
    // through two navigations, in $orderby, in a lambda and from a lambda's variable
    expect(bindLine('$orderby=Order/Price desc').orderBy[0]).toMatchObject({
      direction: 'desc',
      expr: { property: Item.properties.get('Price'), source: { kind: 'navigation' } },
    });
    expect(bindLine('$filter=Order/Lines/any(l: l/Order/Id eq OrderId)').filter).toMatchObject({
      kind: 'lambda',
      source: { kind: 'navigation' },
      predicate: { left: { source: { kind: 'navigation', from: { kind: 'variable', name: 'l' } } } },
    });
    expect(validateQuery(parseQuery('$filter=Lines/$count($filter=Order/Active) gt 1'), Item).filter).toBeDefined();
  });

  it('refuses what is not a value, with the position and what would be', () => {
    for (const [query, code, position, hint] of [
      ['$filter=Order eq null', 'TypeMismatch', 0, 'compare one of its properties, as in Order/Id'],
      ["$filter=Order/Nmae eq 'x'", 'UnknownProperty', 6, "did you mean 'Name'?"],
      ['$filter=Order/any()', 'TypeMismatch', 6, 'any(...) needs a navigation collection'],
      ['$filter=Order/Lines eq null', 'TypeMismatch', 6, 'use Lines/any(x: ...)'],
      ['$orderby=Order', 'TypeMismatch', 0, 'Order/Id'],
      ['$select=Order/Name', 'TypeMismatch', 6, 'expand it: $expand=Order($select=Name)'],
    ] as const) {
      const error = errorOf(() => bindLine(query));
      expect([query, error.code, error.position]).toEqual([query, code, position]);
      if (!error.message.includes(hint)) expect(error.message).toContain(hint);
    }
  });

  it('counts each distinct path once against maxJoins', () => {
    const limits = { maxJoins: 1 };
    // one join, read twice
    expect(() =>
      bindLine("$filter=Order/Name eq 'a' and Order/Notes eq 'b'&$orderby=Order/Price", limits),
    ).not.toThrow();
    expect(
      errorOf(() => bindLine("$filter=Order/Name eq 'a' and Order/Lines/any(l: l/Order/Notes eq 'b')", limits)),
    ).toMatchObject({ code: 'LimitExceeded', target: '$filter', message: expect.stringContaining('maxJoins') });
    // two lambdas with the same variable name are two scopes: two joins
    expect(
      errorOf(() =>
        validateQuery(
          parseQuery("$filter=Lines/any(l: l/Order/Name eq 'a') and Lines/any(l: l/Order/Name eq 'b')"),
          Item,
          limits,
        ),
      ),
    ).toMatchObject({ code: 'LimitExceeded' });
    // a lambda of $filter and one of $orderby are two scopes too, named alike or generated
    for (const query of [
      "$filter=Lines/any(l: l/Order/Name eq 'a')&$orderby=Lines/$count($filter=Order/Notes eq 'b')",
      "$filter=Lines/$count($filter=Order/Name eq 'a') gt 0&$orderby=Lines/$count($filter=Order/Name eq 'b')",
    ]) {
      expect(
        errorOf(() => validateQuery(parseQuery(query), Item, limits)),
        query,
      ).toMatchObject({
        code: 'LimitExceeded',
        message: expect.stringContaining('maxJoins'),
      });
    }
    expect(defaultLimits.maxJoins).toBe(16);
  });
});
