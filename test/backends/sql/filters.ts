// Well-typed random queries over Thing (fixtures.ts), written as query text: the differential test runs each on
// the memory backend and every database. Only constructs every dialect translates appear here; what a dialect
// refuses (501) is tested on its own in sql.test.ts.
import fc from 'fast-check';
import {
  edgeDates,
  edgeDecimals,
  edgeDoubles,
  edgeGuids,
  edgeInstants,
  edgeInt32,
  edgeInt64,
  edgeStrings,
} from './fixtures.js';

type T = 'String' | 'Int32' | 'Int64' | 'Decimal' | 'Double' | 'Date' | 'Instant' | 'Guid' | 'Boolean';

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const pick = <V>(...values: V[]): fc.Arbitrary<V> => fc.constantFrom(...values);

const literal: Record<Exclude<T, 'Boolean'>, fc.Arbitrary<string>> = {
  String: pick(...edgeStrings).map(quote),
  Int32: fc.oneof(pick(...edgeInt32), fc.integer({ min: -5, max: 5 })).map(String),
  Int64: pick(...edgeInt64),
  Decimal: pick(...edgeDecimals, '0.00005', '3.14159', '-12.34565').map((d) => (d.includes('.') ? d : `${d}.0`)),
  Double: pick(...edgeDoubles.filter((d) => Math.abs(d) < 1e100), 7.5).map((d) =>
    `${d}e0`.replace('e0', d.toString().includes('e') ? '' : 'e0'),
  ),
  Date: pick(...edgeDates),
  Instant: pick(...edgeInstants, '2024-02-29T14:30:45.678+02:00'),
  Guid: pick(...edgeGuids, '0A1B2C3D-4E5F-6789-ABCD-EF0123456789'),
};

const fn = (name: string, ...args: fc.Arbitrary<string>[]): fc.Arbitrary<string> =>
  fc.tuple(...args).map((a) => `${name}(${a.join(',')})`);
const op = (a: fc.Arbitrary<string>, operator: fc.Arbitrary<string>, b: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(a, operator, b).map(([x, o, y]) => `(${x} ${o} ${y})`);

function valueOf(type: Exclude<T, 'Boolean'>, depth: number): fc.Arbitrary<string> {
  const lit = literal[type];
  const leaf: Record<Exclude<T, 'Boolean'>, fc.Arbitrary<string>> = {
    String: pick('S', 'T'),
    Int32: pick('I', 'Id'),
    Int64: pick('L'),
    Decimal: pick('D'),
    Double: pick('F'),
    Date: pick('Day'),
    Instant: pick('At'),
    Guid: pick('G'),
  };
  if (depth <= 0) return fc.oneof({ weight: 3, arbitrary: leaf[type] }, { weight: 1, arbitrary: lit });
  const v = (t: Exclude<T, 'Boolean'>) => valueOf(t, depth - 1);
  const small = fc.integer({ min: 0, max: 4 }).map(String);
  const composite: Record<Exclude<T, 'Boolean'>, fc.Arbitrary<string>[]> = {
    String: [
      fn('tolower', v('String')),
      fn('toupper', v('String')),
      fn('trim', v('String')),
      fn('concat', v('String'), v('String')),
      fn('substring', v('String'), small),
      fn('substring', v('String'), small, small),
      fn('substring', v('String'), pick('I', 'Id', 'I sub 1')),
      fn('substring', v('String'), pick('Id', '0'), pick('I', 'Id')),
      fc.tuple(v('Int32'), v('String'), v('String')).map(([i, a, b]) => `case(${i} gt 0:${a},true:${b})`),
    ],
    Int32: [
      fn('length', v('String')),
      fn('indexof', v('String'), v('String')),
      fn('year', pick('At', 'Day')),
      fn('month', pick('At', 'Day')),
      fn('day', pick('At', 'Day')),
      fn('hour', pick('At')),
      fn('minute', pick('At')),
      fn('second', pick('At')),
      fc.tuple(v('Double')).map(([x]) => `cast(${x},Edm.Int32)`),
      op(v('Int32'), pick('add', 'sub', 'mul', 'div', 'mod'), v('Int32')),
      pick('Parts/$count', 'Parts/$count($filter=Q gt 0)'),
      fc.tuple(v('Int32')).map(([x]) => `(-${x})`),
      fc.tuple(v('Decimal')).map(([x]) => `cast(${x},Edm.Int32)`),
    ],
    Int64: [
      op(v('Int64'), pick('add', 'sub', 'mul', 'div', 'mod'), fc.oneof(v('Int64'), v('Int32'))),
      fc.tuple(v('Int32')).map(([x]) => `cast(${x},Edm.Int64)`),
      fc.tuple(v('Double')).map(([x]) => `cast(${x},Edm.Int64)`),
      fc.tuple(v('Int64')).map(([x]) => `(-${x})`),
    ],
    Decimal: [
      op(v('Decimal'), pick('add', 'sub', 'mul', 'mod'), fc.oneof(v('Decimal'), v('Int32'))),
      op(v('Decimal'), pick('divby', 'div'), pick('3', '7', '0.5', '8', '0', '-3.0', 'D')),
      fn('round', v('Decimal')),
      fn('floor', v('Decimal')),
      fn('ceiling', v('Decimal')),
      fc.tuple(v('Decimal')).map(([x]) => `(-${x})`),
      fn('fractionalseconds', pick('At')),
    ],
    Double: [
      op(v('Double'), pick('add', 'sub'), v('Double')),
      op(v('Double'), pick('mul', 'div', 'divby'), pick('0.5e0', '2e0', '0e0', '-3e0', '1e300', '1e-300', '-1.5e308')),
      op(v('Double'), pick('add', 'sub'), pick('1.7e308', '-1.7e308', '1e-300')),
      fn('round', v('Double')),
      fn('floor', v('Double')),
      fn('ceiling', v('Double')),
      fc.tuple(v('Decimal')).map(([x]) => `(${x} add 0.5e0)`),
    ],
    Date: [fn('date', pick('At'))],
    Instant: [],
    Guid: [],
  };
  const options = composite[type];
  return options.length === 0
    ? fc.oneof(leaf[type], lit)
    : fc.oneof(
        { weight: 2, arbitrary: leaf[type] },
        { weight: 1, arbitrary: lit },
        { weight: 3, arbitrary: fc.oneof(...options) },
      );
}

const comparable: Exclude<T, 'Boolean'>[] = [
  'String',
  'Int32',
  'Int64',
  'Decimal',
  'Double',
  'Date',
  'Instant',
  'Guid',
];

function booleanOf(depth: number): fc.Arbitrary<string> {
  const comparison = fc
    .constantFrom(...comparable)
    .chain((type) => op(valueOf(type, Math.min(depth, 2)), pick('eq', 'ne', 'gt', 'ge', 'lt', 'le'), valueOf(type, 1)));
  const nullTest = fc
    .tuple(pick('S', 'B', 'I', 'L', 'D', 'F', 'Day', 'At', 'G', 'tolower(S)', 'I add 1'), pick('eq', 'ne'))
    .map(([x, o]) => `(${x} ${o} null)`);
  const mixed = op(pick('Day', 'date(At)'), pick('eq', 'lt', 'ge'), pick('At', ...edgeInstants)); // Date promoted to an instant
  const numbers = op(pick('I', 'L', 'D'), pick('eq', 'lt', 'gt'), pick('F', '2.5e0', 'D', 'L')); // promotions between numeric types
  const text = fc
    .tuple(pick('contains', 'startswith', 'endswith'), valueOf('String', 1), valueOf('String', 0))
    .map(([f, a, b]) => `${f}(${a},${b})`);
  const inList = fc
    .constantFrom<Exclude<T, 'Boolean'>>('String', 'Int32', 'Decimal', 'Guid', 'Date')
    .chain((type) =>
      fc.tuple(
        valueOf(type, 1),
        fc.array(fc.oneof({ weight: 4, arbitrary: literal[type] }, { weight: 1, arbitrary: fc.constant('null') }), {
          minLength: 1,
          maxLength: 4,
        }),
      ),
    )
    .map(([x, items]) => `(${x} in (${items.join(',')}))`);
  const leaf = fc.oneof(
    { weight: 6, arbitrary: comparison },
    { weight: 2, arbitrary: nullTest },
    { weight: 1, arbitrary: mixed },
    { weight: 1, arbitrary: numbers },
    { weight: 2, arbitrary: text },
    { weight: 2, arbitrary: inList },
    {
      weight: 1,
      arbitrary: pick(
        'B',
        'true',
        'false',
        '(B eq true)',
        '(B ne false)',
        '(B lt true)',
        'isof(S,Edm.String)',
        'isof(I,Edm.String)',
      ),
    },
    {
      weight: 1,
      arbitrary: pick(
        'Parts/any()',
        'Parts/any(p:p/Q gt 0)',
        'Parts/all(p:p/Q ge 0)',
        'Parts/any(p:p/Name eq S)',
        "Parts/all(p:startswith(p/Name,'a'))",
        'Parts/any(p:p/Q eq I)',
      ),
    },
  );
  if (depth <= 0) return leaf;
  const b = booleanOf(depth - 1);
  return fc.oneof(
    { weight: 4, arbitrary: leaf },
    { weight: 2, arbitrary: op(b, pick('and', 'or'), b) },
    { weight: 1, arbitrary: b.map((x) => `not ${x.startsWith('(') ? x : `(${x})`}`) },
    { weight: 1, arbitrary: fc.tuple(b, b).map(([x, y]) => `(${x} eq ${y})`) },
  );
}

const orderItem = fc
  .tuple(
    pick(
      'S',
      'T',
      'B',
      'I',
      'L',
      'D',
      'F',
      'Day',
      'At',
      'G',
      'length(S)',
      'tolower(S)',
      'D add 1',
      'D mul D',
      'I mod 3',
      'F add 1e0',
      'Parts/$count',
    ),
    pick('', ' asc', ' desc'),
  )
  .map(([x, d]) => `${x}${d}`);

/** A query string over Thing: a filter, an order, and paging (percent-encoded: decodeURIComponent to read it). */
export const thingQuery: fc.Arbitrary<string> = fc
  .tuple(
    fc.option(booleanOf(2), { nil: undefined, freq: 8 }),
    fc.array(orderItem, { maxLength: 2 }),
    fc.option(fc.integer({ min: 0, max: 6 }), { nil: undefined }),
    fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  )
  .map(([filter, order, top, skip]) =>
    [
      filter === undefined ? '' : `$filter=${encodeURIComponent(filter)}`,
      order.length === 0 ? '' : `$orderby=${encodeURIComponent(order.join(','))}`,
      top === undefined ? '' : `$top=${top}`,
      skip === undefined ? '' : `$skip=${skip}`,
    ]
      .filter(Boolean)
      .join('&'),
  );
