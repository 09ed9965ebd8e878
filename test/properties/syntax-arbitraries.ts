// fast-check arbitraries for syntax trees that the printer can print: every tree built here is one
// the parser can produce (lambda variables only inside their lambda, key predicates only after a
// property, `in` only with a list, array or path on its right...). Spans are placeholders.
import fc from 'fast-check';
import type { ExpandItem, Expr, LiteralValue, NestedExpandOptions, PathSegment, Span } from '../../src/index.js';
import { canonicalFunctions } from '../../src/index.js';
import { decodeDateTimeOffset } from '../../src/syntax/literals.js';
import { parseDuration } from '../../src/values/temporal.js';

const at: Span = { start: 0, end: 0 };

const reserved = new Set([
  ...['and', 'or', 'not', 'eq', 'ne', 'gt', 'ge', 'lt', 'le', 'has', 'in', 'add', 'sub', 'mul', 'div', 'divby', 'mod'],
  ...['asc', 'desc', 'true', 'false', 'null', 'any', 'all', 'inf', 'nan'],
  ...canonicalFunctions.map((f) => f.toLowerCase()),
]);

/** Property names: ASCII identifiers that are not keywords or function names and never start with `v_` (lambda variables do). */
export const propertyName = fc
  .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/)
  .filter((name) => !reserved.has(name.toLowerCase()) && !name.startsWith('v_') && !/^[0-9a-fA-F]{8}/.test(name));

const qualifiedName = fc
  .tuple(fc.constantFrom('Model', 'Sales', 'Ns.Sub'), propertyName)
  .map(([ns, name]) => `${ns}.${name}`);

const date = fc
  .record({
    year: fc.integer({ min: -9999, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 28 }),
  })
  .map(({ year, month, day }) => {
    const y = year < 0 ? `-${String(-year).padStart(4, '0')}` : String(year).padStart(4, '0');
    return `${y}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
  });

const time = fc
  .record({
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.option(fc.integer({ min: 0, max: 59 }), { nil: undefined }),
    fraction: fc.option(fc.stringMatching(/^[0-9]{1,7}$/), { nil: undefined }),
  })
  .map(({ hour, minute, second, fraction }) => {
    const hm = `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`;
    if (second === undefined) return hm;
    return `${hm}:${String(second).padStart(2, '0')}${fraction === undefined ? '' : `.${fraction}`}`;
  });

const offset = fc.oneof(
  fc.constant('Z'),
  fc
    .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 14 }), fc.constantFrom(0, 30, 45))
    .map(([sign, h, m]) => `${sign}${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`),
);

const duration = fc
  .record({
    negative: fc.boolean(),
    days: fc.option(fc.nat(400), { nil: undefined }),
    hours: fc.option(fc.nat(23), { nil: undefined }),
    seconds: fc.option(fc.stringMatching(/^[0-9]{1,2}(\.[0-9]{1,3})?$/), { nil: undefined }),
  })
  .filter((d) => d.days !== undefined || d.hours !== undefined || d.seconds !== undefined)
  .map((d) => {
    const timePart = `${d.hours === undefined ? '' : `${d.hours}H`}${d.seconds === undefined ? '' : `${d.seconds}S`}`;
    return `${d.negative ? '-' : ''}P${d.days === undefined ? '' : `${d.days}D`}${timePart === '' ? '' : `T${timePart}`}`;
  });

export const literalValue: fc.Arbitrary<LiteralValue> = fc.oneof(
  fc.constant<LiteralValue>({ type: 'null' }),
  fc.boolean().map((value): LiteralValue => ({ type: 'Edm.Boolean', value })),
  fc.integer().map((value): LiteralValue => ({ type: 'Edm.Int32', value })),
  fc
    .bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
    .filter((v) => v < -(2n ** 31n) || v >= 2n ** 31n)
    .map((value): LiteralValue => ({ type: 'Edm.Int64', value })),
  fc.stringMatching(/^-?[0-9]{1,20}\.[0-9]{1,12}$/).map((value): LiteralValue => ({ type: 'Edm.Decimal', value })),
  fc.stringMatching(/^[1-9][0-9]{19,30}$/).map((value): LiteralValue => ({ type: 'Edm.Decimal', value })),
  fc.double().map((value): LiteralValue => ({ type: 'Edm.Double', value })),
  fc.string({ unit: 'binary', maxLength: 12 }).map((value): LiteralValue => ({ type: 'Edm.String', value })),
  date.map((value): LiteralValue => ({ type: 'Edm.Date', value })),
  time.map((value): LiteralValue => ({ type: 'Edm.TimeOfDay', value })),
  fc
    .tuple(date, time, offset)
    .filter(([d]) => !d.startsWith('-'))
    .map(([d, t, o]) => decodeDateTimeOffset(`${d}T${t}${o}`, 0, { target: '$filter' })),
  duration.map((value): LiteralValue => ({ type: 'Edm.Duration', value, milliseconds: parseDuration(value)! })),
  fc.uuid().map((value): LiteralValue => ({ type: 'Edm.Guid', value })),
  fc
    .uint8Array({ maxLength: 12 })
    .map((bytes): LiteralValue => ({ type: 'Edm.Binary', value: Buffer.from(bytes).toString('base64url'), bytes })),
  fc
    .tuple(qualifiedName, fc.constantFrom('Yellow', 'Solid,Yellow', "O'Neil", '42'))
    .map(([typeName, value]): LiteralValue => ({ type: 'enum', typeName, value })),
  fc.constantFrom<LiteralValue>(
    { type: 'Edm.Geography', value: 'SRID=4326;Point(142.1 64.1)' },
    { type: 'Edm.Geometry', value: 'SRID=0;LineString(1 1,2 2)' },
  ),
);

const literal = literalValue.map((value): Expr => ({ kind: 'literal', literal: value, span: at }));

/** Literals that can stand alone in a key predicate: `Items(1)`, `Items('a')`. */
const keyLiteral = fc
  .oneof(
    fc.integer().map((value): LiteralValue => ({ type: 'Edm.Int32', value })),
    fc.string({ maxLength: 6 }).map((value): LiteralValue => ({ type: 'Edm.String', value })),
    fc.uuid().map((value): LiteralValue => ({ type: 'Edm.Guid', value })),
  )
  .map((value): Expr => ({ kind: 'literal', literal: value, span: at }));

const binaryOperators = [
  'and',
  'or',
  'eq',
  'ne',
  'gt',
  'ge',
  'lt',
  'le',
  'add',
  'sub',
  'mul',
  'div',
  'divby',
  'mod',
] as const;
const plainFunctions = canonicalFunctions.filter((f) => f !== 'cast' && f !== 'isof' && f !== 'case');

let variableCounter = 0;

/** Syntax trees up to `depth` levels. */
export const expr: fc.Arbitrary<Expr> = fc.letrec<{ expr: Expr; path: Expr; primary: Expr }>((tie) => {
  const segmentAfterSlash = fc.oneof(
    propertyName.map((name): PathSegment[] => [{ kind: 'property', name, span: at }]),
    fc.tuple(propertyName, keyLiteral).map(([name, value]): PathSegment[] => [
      { kind: 'property', name, span: at },
      { kind: 'key', values: [{ value }], span: at },
    ]),
    qualifiedName.map((typeName): PathSegment[] => [{ kind: 'cast', typeName, span: at }]),
    fc.constant<PathSegment[]>([{ kind: 'count', span: at }]),
    tie('expr').map((filter): PathSegment[] => [{ kind: 'count', filter, span: at }]),
    tie('expr').map((predicate): PathSegment[] => [{ kind: 'filter', predicate, span: at }]),
    fc.constant<PathSegment[]>([{ kind: 'any', span: at }]),
    qualifiedName.map((name): PathSegment[] => [{ kind: 'function', name, parameters: [], span: at }]),
    fc
      .tuple(qualifiedName, propertyName, keyLiteral)
      .map(([name, parameter, value]): PathSegment[] => [
        { kind: 'function', name, parameters: [{ name: parameter, value, span: at }], span: at },
      ]),
    qualifiedName.map((term): PathSegment[] => [{ kind: 'annotation', term, span: at }]),
    // a lambda whose predicate compares a property of its range variable
    fc
      .tuple(fc.constantFrom<'any' | 'all'>('any', 'all'), propertyName, tie('primary'))
      .map(([kind, property, value]): PathSegment[] => {
        const variable = `v_${variableCounter++ % 10}`;
        const left: Expr = {
          kind: 'path',
          root: { kind: 'variable', name: variable },
          segments: [{ kind: 'property', name: property, span: at }],
          span: at,
        };
        return [
          { kind, variable, predicate: { kind: 'binary', operator: 'eq', left, right: value, span: at }, span: at },
        ];
      }),
  );

  const path = fc
    .tuple(
      fc.oneof(
        { weight: 6, arbitrary: fc.constant<'implicit'>('implicit') },
        { weight: 1, arbitrary: fc.constantFrom<'$it' | '$this' | '$root'>('$it', '$this', '$root') },
      ),
      propertyName,
      fc.option(keyLiteral, { nil: undefined }),
      fc.array(segmentAfterSlash, { maxLength: 2 }),
    )
    .map(([root, first, key, rest]): Expr => {
      const segments: PathSegment[] = [];
      if (root === 'implicit' || root === '$root' || rest.length > 0 || key !== undefined) {
        segments.push({ kind: 'property', name: first, span: at });
        if (key !== undefined && root === 'implicit')
          segments.push({ kind: 'key', values: [{ value: key }], span: at });
      }
      for (const part of rest) segments.push(...part);
      return { kind: 'path', root: { kind: root }, segments, span: at };
    });

  const call = fc.oneof(
    fc
      .tuple(fc.constantFrom(...plainFunctions), fc.array(tie('expr'), { maxLength: 3 }))
      .map(([name, args]): Expr => ({ kind: 'call', name, args, span: at })),
    fc
      .tuple(
        fc.constantFrom<'cast' | 'isof'>('cast', 'isof'),
        fc.option(tie('expr'), { nil: undefined }),
        fc.oneof(qualifiedName, propertyName),
      )
      .map(([name, value, type]): Expr => ({
        kind: 'call',
        name,
        args: [...(value === undefined ? [] : [value]), { kind: 'typeName', name: type, span: at }],
        span: at,
      })),
    fc.array(fc.tuple(tie('expr'), tie('expr')), { minLength: 1, maxLength: 2 }).map((branches): Expr => ({
      kind: 'call',
      name: 'case',
      args: branches.map(([condition, result]) => ({ kind: 'caseBranch', condition, result, span: at })),
      span: at,
    })),
  );

  const collection = fc.oneof(
    fc.array(tie('expr'), { maxLength: 3 }).map((items): Expr => ({ kind: 'list', items, span: at })),
    fc.array(tie('expr'), { maxLength: 3 }).map((items): Expr => ({ kind: 'array', items, span: at })),
    tie('path'),
  );

  return {
    path,
    primary: fc.oneof(
      { weight: 4, arbitrary: literal },
      { weight: 4, arbitrary: tie('path') },
      {
        weight: 1,
        arbitrary: fc.stringMatching(/^@[a-z][a-z0-9]{0,5}$/).map((name): Expr => ({ kind: 'alias', name, span: at })),
      },
    ),
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      { weight: 6, arbitrary: tie('primary') },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom(...binaryOperators), tie('expr'), tie('expr'))
          .map(([operator, left, right]): Expr => ({ kind: 'binary', operator, left, right, span: at })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(tie('expr'), tie('primary'))
          .map(([left, right]): Expr => ({ kind: 'binary', operator: 'has', left, right, span: at })),
      },
      {
        weight: 1,
        arbitrary: fc
          .tuple(tie('expr'), collection)
          .map(([left, right]): Expr => ({ kind: 'in', left, right, span: at })),
      },
      { weight: 1, arbitrary: tie('expr').map((operand): Expr => ({ kind: 'not', operand, span: at })) },
      { weight: 1, arbitrary: tie('expr').map((operand): Expr => ({ kind: 'negate', operand, span: at })) },
      { weight: 2, arbitrary: call },
      {
        weight: 1,
        arbitrary: fc.array(tie('expr'), { maxLength: 3 }).map((items): Expr => ({ kind: 'array', items, span: at })),
      },
      {
        weight: 1,
        arbitrary: fc
          .array(fc.tuple(fc.string({ maxLength: 5 }), tie('expr')), { maxLength: 2 })
          .map((members): Expr => ({
            kind: 'object',
            members: members.map(([name, value]) => ({ name, value, span: at })),
            span: at,
          })),
      },
    ),
  };
}).expr;

/** The tree without spans (`span`, and the `aliasSpan`s of $apply), for comparing up to spans. */
export function withoutSpans(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSpans);
  if (value instanceof Uint8Array || value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'span' && !key.endsWith('Span'))
      .map(([key, inner]) => [key, withoutSpans(inner)]),
  );
}

/** `$expand` trees: navigation paths with `/$ref` or options (nested filters, orders, paging, expands, levels). */
export const expandItems: fc.Arbitrary<ExpandItem[]> = fc.letrec<{ items: ExpandItem[] }>((tie) => {
  const orderItem = fc.record({
    expr: expr,
    direction: fc.constantFrom('asc' as const, 'desc' as const),
    span: fc.constant({ start: 0, end: 0 }),
  });
  const options: fc.Arbitrary<NestedExpandOptions> = fc.record(
    {
      filter: expr,
      orderBy: fc.array(orderItem, { minLength: 1, maxLength: 2 }),
      top: fc.nat({ max: 1000 }),
      skip: fc.nat({ max: 1000 }),
      count: fc.boolean(),
      expand: tie('items'),
      levels: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.constant('max' as const)),
    },
    { requiredKeys: [] },
  );
  const segment = propertyName.map((name) => ({ kind: 'property' as const, name, span: { start: 0, end: 0 } }));
  const path = fc
    .record({
      segments: fc.array(segment, { minLength: 1, maxLength: 2 }),
      ref: fc.boolean(),
      options: fc.option(options, { nil: undefined }),
    })
    .map(({ segments, ref, options }): ExpandItem => {
      // with $ref only the options ABNF expandRefOption allows
      const kept =
        options === undefined
          ? undefined
          : ref
            ? Object.fromEntries(
                Object.entries(options).filter(([key]) => ['filter', 'orderBy', 'top', 'skip', 'count'].includes(key)),
              )
            : options;
      const given = kept === undefined || Object.keys(kept).length === 0 ? undefined : kept;
      return {
        kind: 'path',
        segments,
        ...(ref ? { suffix: '$ref' as const } : {}),
        ...(given === undefined ? {} : { options: given }),
        span: { start: 0, end: 0 },
      };
    });
  const star = fc.constantFrom<ExpandItem>(
    { kind: 'star', ref: false, span: { start: 0, end: 0 } },
    { kind: 'star', ref: true, span: { start: 0, end: 0 } },
    { kind: 'star', ref: false, levels: 3, span: { start: 0, end: 0 } },
  );
  return {
    items: fc.array(fc.oneof({ weight: 5, arbitrary: path }, { weight: 1, arbitrary: star }), {
      minLength: 1,
      maxLength: 3,
      depthIdentifier: 'expand',
    }),
  };
}).items;
