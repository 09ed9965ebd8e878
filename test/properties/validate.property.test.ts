// Laws of the validator (fast-check): every well-typed filter over any entity type binds, and a
// filter naming a property the type does not have is rejected with UnknownProperty at that name.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalFunctions,
  defineEntityType,
  isODataError,
  parseFilter,
  parseQuery,
  printFilter,
  validateQuery,
  type EdmPrimitiveType,
  type EntityType,
  type Expr,
  type LiteralValue,
  type Span,
} from '../../src/index.js';
import { propertyName } from './syntax-arbitraries.js';

const at: Span = { start: 0, end: 0 };
const scalarTypes = [
  'Edm.String',
  'Edm.Boolean',
  'Edm.Int32',
  'Edm.Int64',
  'Edm.Decimal',
  'Edm.Double',
  'Edm.Date',
  'Edm.DateTimeOffset',
] as const;
type ScalarType = (typeof scalarTypes)[number];

/** An entity type with 1–8 properties of random scalar types; the first is the key. */
const entityType: fc.Arbitrary<EntityType> = fc
  .uniqueArray(fc.tuple(propertyName, fc.constantFrom(...scalarTypes), fc.boolean()), {
    minLength: 1,
    maxLength: 8,
    selector: ([name]) => name.toLowerCase(),
  })
  .map((props) =>
    defineEntityType({
      name: 'Thing',
      key: [props[0]![0]],
      properties: Object.fromEntries(
        props.map(([name, type, nullable], i) => [name, { type, nullable: i > 0 && nullable }]),
      ),
    }),
  );

const literalOf = (type: ScalarType): fc.Arbitrary<LiteralValue> => {
  switch (type) {
    case 'Edm.String':
      return fc.string({ maxLength: 5 }).map((value) => ({ type, value }));
    case 'Edm.Boolean':
      return fc.boolean().map((value) => ({ type, value }));
    case 'Edm.Int32':
      return fc.integer().map((value) => ({ type, value }));
    case 'Edm.Int64':
      return fc.bigInt({ min: 2n ** 31n, max: 2n ** 62n }).map((value) => ({ type, value }));
    case 'Edm.Decimal':
      return fc.stringMatching(/^-?[0-9]{1,6}\.[0-9]{1,4}$/).map((value) => ({ type, value }));
    case 'Edm.Double':
      return fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ type, value }));
    case 'Edm.Date':
      return fc.constantFrom('2024-05-01', '1999-12-31').map((value) => ({ type, value }));
    case 'Edm.DateTimeOffset':
      return fc.constantFrom(
        { type, value: '2024-05-01T08:30:00Z', epochMilliseconds: Date.UTC(2024, 4, 1, 8, 30), offsetMinutes: 0 },
        {
          type,
          value: '2024-05-01T08:30:00+02:00',
          epochMilliseconds: Date.UTC(2024, 4, 1, 6, 30),
          offsetMinutes: 120,
        },
      );
  }
};

const comparable: Readonly<Record<ScalarType, readonly ScalarType[]>> = {
  'Edm.String': ['Edm.String'],
  'Edm.Boolean': ['Edm.Boolean'],
  'Edm.Int32': ['Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double'],
  'Edm.Int64': ['Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double'],
  'Edm.Decimal': ['Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double'],
  'Edm.Double': ['Edm.Int32', 'Edm.Int64', 'Edm.Decimal', 'Edm.Double'],
  'Edm.Date': ['Edm.Date', 'Edm.DateTimeOffset'],
  'Edm.DateTimeOffset': ['Edm.Date', 'Edm.DateTimeOffset'],
};

const path = (name: string): Expr => ({
  kind: 'path',
  root: { kind: 'implicit' },
  segments: [{ kind: 'property', name, span: at }],
  span: at,
});
const literal = (value: LiteralValue): Expr => ({ kind: 'literal', literal: value, span: at });
const call = (name: 'tolower' | 'length' | 'year' | 'contains' | 'round', ...args: Expr[]): Expr => ({
  kind: 'call',
  name,
  args,
  span: at,
});

/** A well-typed expression of `type` over the properties of `thing`. */
function valueOf(thing: EntityType, type: ScalarType, depth: number): fc.Arbitrary<Expr> {
  const properties = [...thing.properties.values()].filter((p) => p.type === type).map((p) => path(p.name));
  const options: fc.Arbitrary<Expr>[] = [literalOf(type).map(literal)];
  if (properties.length > 0) options.push(fc.constantFrom(...properties));
  if (depth > 0) {
    if (type === 'Edm.String') options.push(valueOf(thing, 'Edm.String', depth - 1).map((s) => call('tolower', s)));
    if (type === 'Edm.Int32') {
      options.push(valueOf(thing, 'Edm.String', depth - 1).map((s) => call('length', s)));
      options.push(valueOf(thing, 'Edm.DateTimeOffset', depth - 1).map((d) => call('year', d)));
      options.push(
        fc
          .tuple(valueOf(thing, 'Edm.Int32', depth - 1), valueOf(thing, 'Edm.Int32', depth - 1))
          .map(([l, r]): Expr => ({ kind: 'binary', operator: 'add', left: l, right: r, span: at })),
      );
    }
    if (type === 'Edm.Decimal') options.push(valueOf(thing, 'Edm.Decimal', depth - 1).map((d) => call('round', d)));
  }
  return fc.oneof(...options);
}

/** A well-typed Boolean expression over `thing`. */
function booleanOf(thing: EntityType, depth: number): fc.Arbitrary<Expr> {
  const comparison = fc.constantFrom(...scalarTypes).chain((type) =>
    fc
      .tuple(
        fc.constantFrom('eq', 'ne', 'gt', 'ge', 'lt', 'le' as const),
        valueOf(thing, type, 1),
        fc.constantFrom(...comparable[type]).chain((other) => valueOf(thing, other, 1)),
      )
      .map(([operator, left, right]): Expr => ({ kind: 'binary', operator, left, right, span: at })),
  );
  const options: fc.Arbitrary<Expr>[] = [comparison, valueOf(thing, 'Edm.Boolean', 0)];
  options.push(
    fc.tuple(valueOf(thing, 'Edm.String', 1), valueOf(thing, 'Edm.String', 0)).map(([s, t]) => call('contains', s, t)),
  );
  if (depth > 0) {
    const inner = booleanOf(thing, depth - 1);
    options.push(
      fc
        .tuple(fc.constantFrom('and', 'or' as const), inner, inner)
        .map(([operator, left, right]): Expr => ({ kind: 'binary', operator, left, right, span: at })),
      inner.map((operand): Expr => ({ kind: 'not', operand, span: at })),
      fc
        .constantFrom(...scalarTypes)
        .chain((type) =>
          fc
            .tuple(valueOf(thing, type, 0), fc.array(valueOf(thing, type, 0), { maxLength: 3 }))
            .map(([left, items]): Expr => ({ kind: 'in', left, right: { kind: 'list', items, span: at }, span: at })),
        ),
    );
  }
  return fc.oneof(...options);
}

const typedFilter = entityType.chain((thing) => fc.tuple(fc.constant(thing), booleanOf(thing, 3)));

describe('validateQuery laws', () => {
  it('binds every well-typed filter over an arbitrary entity type', () => {
    fc.assert(
      fc.property(typedFilter, ([thing, filter]) => {
        const bound = validateQuery(parseQuery(`$filter=${encodeURIComponent(printFilter(filter))}`), thing);
        expect(['Edm.Boolean', 'null']).toContain(bound.filter?.type);
      }),
      { numRuns: 1000 },
    );
  });

  it('rejects a reference to a property the type does not have, pointing at it', () => {
    fc.assert(
      fc.property(typedFilter, propertyName, fc.nat(), ([thing, filter], unknown, pick) => {
        fc.pre(!thing.properties.has(unknown));
        const references = propertyPaths(filter);
        fc.pre(references.length > 0);
        const victim = references[pick % references.length]!;
        const broken = printFilter(renamed(filter, victim, unknown));
        // where the unknown name stands in the text that is actually validated
        const expected = propertyPaths(parseFilter(broken)).find((p) => propertyNameOf(p) === unknown)!.span.start;
        try {
          validateQuery(parseQuery(`$filter=${encodeURIComponent(broken)}`), thing);
          expect.fail(`bound ${broken}`);
        } catch (error) {
          if (!isODataError(error)) throw error;
          expect([error.code, error.target, error.position]).toEqual(['UnknownProperty', '$filter', expected]);
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('$select laws', () => {
  const item = (thing: EntityType): fc.Arbitrary<string> =>
    fc.oneof(fc.constant('*'), fc.constantFrom(...[...thing.properties.keys()]));

  it('checks every item, wherever it stands (also after *)', () => {
    const selects = entityType.chain((thing) =>
      fc.tuple(fc.constant(thing), fc.array(item(thing), { minLength: 1, maxLength: 5 }), propertyName, fc.nat()),
    );
    fc.assert(
      fc.property(selects, ([thing, items, unknown, pick]) => {
        fc.pre(!thing.properties.has(unknown));
        const at = pick % (items.length + 1);
        const list = [...items.slice(0, at), unknown, ...items.slice(at)];
        const text = list.join(',');
        try {
          validateQuery(parseQuery(`$select=${text}`), thing);
          expect.fail(`bound $select=${text}`);
        } catch (error) {
          if (!isODataError(error)) throw error;
          const position = list.slice(0, at).reduce((n, s) => n + s.length + 1, 0);
          expect([error.code, error.target, error.position]).toEqual(['UnknownProperty', '$select', position]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('rejects every canonical function as malformed $select syntax (400), at its name', () => {
    fc.assert(
      fc.property(entityType, fc.constantFrom(...canonicalFunctions), fc.boolean(), (thing, name, upper) => {
        const first = [...thing.properties.keys()][0]!;
        const spelled = upper ? name.toUpperCase() : name;
        const text = `${first},${spelled}(${first})`;
        try {
          validateQuery(parseQuery(`$select=${text}`), thing);
          expect.fail(`bound $select=${text}`);
        } catch (error) {
          if (!isODataError(error)) throw error;
          expect([error.code, error.status, error.target, error.position]).toEqual([
            'InvalidSyntax',
            400,
            '$select',
            first.length + 1,
          ]);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('subquery limits', () => {
  const Node: EntityType = defineEntityType({
    name: 'Node',
    key: ['Id'],
    properties: { Id: { type: 'Edm.Int32' }, Parent: { type: 'Edm.Int32' } },
    navigation: { Children: { target: () => Node, foreignKey: { Id: 'Parent' } } },
  });
  interface Tree {
    readonly text: string;
    readonly depth: number;
    readonly count: number;
  }
  const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant({ text: 'Id gt 0', depth: 0, count: 0 }),
      fc.tuple(fc.constantFrom('any', 'all'), tie('tree')).map(([op, t]) => ({
        text: `Children/${op}(c:${t.text})`,
        depth: t.depth + 1,
        count: t.count + 1,
      })),
      tie('tree').map((t) => ({
        text: `Children/$count($filter=${t.text}) gt 0`,
        depth: t.depth + 1,
        count: t.count + 1,
      })),
      fc.tuple(tie('tree'), tie('tree')).map(([a, b]) => ({
        text: `(${a.text}) or (${b.text})`,
        depth: Math.max(a.depth, b.depth),
        count: a.count + b.count,
      })),
    ),
  })).tree;

  it('accept a query exactly when its nesting and its number of any/all/$count are within the limits', () => {
    fc.assert(
      fc.property(
        tree,
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 12 }),
        (t, maxLambdaDepth, maxSubqueries) => {
          const within = t.depth <= maxLambdaDepth && t.count <= maxSubqueries;
          try {
            validateQuery(parseQuery(`$filter=${encodeURIComponent(t.text)}`), Node, { maxLambdaDepth, maxSubqueries });
            expect(within, t.text).toBe(true);
          } catch (error) {
            if (!isODataError(error)) throw error;
            expect([error.code, error.target, typeof error.position, within]).toEqual([
              'LimitExceeded',
              '$filter',
              'number',
              false,
            ]);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

/** The property path nodes of a tree, left to right. */
function propertyPaths(expr: Expr): Expr[] {
  switch (expr.kind) {
    case 'path':
      return [expr];
    case 'binary':
      return [...propertyPaths(expr.left), ...propertyPaths(expr.right)];
    case 'in':
      return [...propertyPaths(expr.left), ...propertyPaths(expr.right)];
    case 'list':
      return expr.items.flatMap(propertyPaths);
    case 'not':
    case 'negate':
      return propertyPaths(expr.operand);
    case 'call':
      return expr.args.flatMap(propertyPaths);
    default:
      return [];
  }
}

function propertyNameOf(expr: Expr): string | undefined {
  return expr.kind === 'path' && expr.segments[0]?.kind === 'property' ? expr.segments[0].name : undefined;
}

/** The tree with one path node (by identity) renamed. */
function renamed(expr: Expr, victim: Expr, name: string): Expr {
  if (expr === victim) return path(name);
  switch (expr.kind) {
    case 'binary':
      return { ...expr, left: renamed(expr.left, victim, name), right: renamed(expr.right, victim, name) };
    case 'in':
      return { ...expr, left: renamed(expr.left, victim, name), right: renamed(expr.right, victim, name) };
    case 'list':
      return { ...expr, items: expr.items.map((i) => renamed(i, victim, name)) };
    case 'not':
    case 'negate':
      return { ...expr, operand: renamed(expr.operand, victim, name) };
    case 'call':
      return { ...expr, args: expr.args.map((a) => renamed(a, victim, name)) };
    default:
      return expr;
  }
}
