// Binding `$apply` (OData Data Aggregation 4.0 CS03): each transformation is bound to the type of the instances the one
// before it gives, starting with the entity type. Transformations that reshape the instances (aggregate, groupby,
// compute, concat) give a new type of their own, made here: their dynamic properties (aliases, grouping properties)
// as ordinary Property objects, so that the transformations after them and `$filter`, `$orderby`, `$select`, `$top`,
// `$skip` and `$count` bind to them as to any entity type.
import type { AggregateItem, AggregationMethod, ApplyTransformation, ComputeItem, Span } from '../syntax/ast.js';
import type { EntityType, NavigationProperty, Property } from '../model/schema.js';
import { aggregateResultType, isNumeric, widerNumeric, type EdmPrimitiveType } from '../values/edm.js';
import { atPosition, ODataError } from '../errors.js';
import type { BoundApply, BoundApplyStep, BoundAggregate, BoundExpr, BoundGroupKey, BoundSearch } from './bound.js';
import { andOf, Binder, rootProperty, type DefaultLimits } from './bind.js';
import { andSearch, bindSearch } from './search.js';

/** Binds `$apply` to the entity type it reads; throws the first problem as an ODataError (400, or 501). */
export function bindApply(
  steps: readonly ApplyTransformation[],
  entityType: EntityType,
  limits: DefaultLimits,
  text: string | undefined,
): BoundApply {
  const binder = new ApplyBinder(limits, text);
  const { steps: bound, output, entities } = binder.sequence(steps, entityType, entityType);
  // once the instances are made by a grouping, their navigations are those that nest a grouping path's values
  const nested = entities === undefined ? [...output.navigation.values()] : [];
  return { input: entityType, steps: bound, output, ...(nested.length === 0 ? {} : { nested }) };
}

class ApplyBinder {
  constructor(
    private readonly limits: DefaultLimits,
    private readonly text: string | undefined,
  ) {}

  fail(code: 'InvalidSyntax' | 'NotImplemented' | 'TypeMismatch', span: Span, what: string, hint?: string): never {
    throw new ODataError(code, atPosition(what, span.start, '$apply', hint), {
      target: '$apply',
      position: span.start,
    });
  }

  /**
   * A sequence of transformations, each bound to the output type of the one before. `entities`: the entity type whose
   * entities the instances of `input` are, if they still are (no aggregate, groupby or concat made them yet).
   */
  sequence(
    steps: readonly ApplyTransformation[],
    input: EntityType,
    entities: EntityType | undefined,
  ): { steps: BoundApplyStep[]; output: EntityType; entities: EntityType | undefined } {
    let type = input;
    let entityType = entities;
    const bound: BoundApplyStep[] = [];
    for (const step of steps) {
      const next = this.step(step, type, entityType);
      if (next === undefined) continue;
      bound.push(next);
      if ('output' in next) type = next.output;
      // a compute keeps the entities (with their aliases beside); a grouping or a concat makes instances of their own
      if (next.kind === 'aggregate' || next.kind === 'groupby' || next.kind === 'concat') entityType = undefined;
    }
    return { steps: bound, output: type, entities: entityType };
  }

  private binder(type: EntityType): Binder {
    return new Binder(type, this.limits, '$apply', this.text);
  }

  /**
   * An expression bound to `type`. It may read through navigations (`PurchaseOrder/VendorID`, `Lines/any(...)`) while
   * the instances are still entities; the store must then make the transformation (see applyReadsNavigation).
   */
  private expression(type: EntityType, expr: Parameters<Binder['bind']>[0]): BoundExpr {
    return this.binder(type).bind(expr);
  }

  private step(
    step: ApplyTransformation,
    type: EntityType,
    entities: EntityType | undefined,
  ): BoundApplyStep | undefined {
    switch (step.kind) {
      case 'identity':
        return undefined;
      case 'search': {
        if (entities === undefined) {
          this.fail(
            'InvalidSyntax',
            step.span,
            'search applies to entities, and the instances here are made by an aggregate, groupby or concat before it',
            'search first, as in search(pump)/groupby((Status),aggregate($count as N)), or inside the groupby before its aggregate',
          );
        }
        // (a compute before it keeps the entities' properties: the searchable ones are read from the rows as they are)
        return { kind: 'search', search: bindSearch(step.search, entities, { transformation: step.span }) };
      }
      case 'filter': {
        const predicate = this.expression(type, step.predicate);
        if (predicate.type !== 'Edm.Boolean' && predicate.type !== 'null') {
          this.fail('TypeMismatch', step.predicate.span, `filter takes a Boolean expression, found ${predicate.type}`);
        }
        return { kind: 'filter', predicate };
      }
      case 'orderby': {
        return { kind: 'orderby', orderBy: this.binder(type).orderBy(step.items) };
      }
      case 'top':
      case 'skip':
        return { kind: step.kind, count: step.count };
      case 'topcount':
      case 'bottomcount':
      case 'toppercent':
      case 'bottompercent':
      case 'topsum':
      case 'bottomsum': {
        const n = this.expression(type, step.n);
        if (n.kind !== 'literal' || n.value.type === 'null' || !isNumeric(n.value.type as EdmPrimitiveType)) {
          this.fail('NotImplemented', step.n.span, `${step.kind} takes a number literal as its first parameter here`);
        }
        const count = step.kind.endsWith('count');
        const number = Number(n.value.value as number | bigint | string);
        if (count ? !Number.isInteger(number) || number < 0 : !(number >= 0)) {
          this.fail(
            'InvalidSyntax',
            step.n.span,
            `${step.kind} takes ${count ? 'a non-negative integer' : 'a non-negative number'}`,
          );
        }
        if (step.kind.endsWith('percent') && number > 100) {
          this.fail('InvalidSyntax', step.n.span, `${step.kind} takes a percentage of at most 100`);
        }
        const value = this.expression(type, step.value);
        if (value.type === 'null' || !isNumeric(value.type)) {
          this.fail('TypeMismatch', step.value.span, `${step.kind} ranks by a number, found ${value.type}`);
        }
        return { kind: step.kind, n: number, value };
      }
      case 'compute':
        return this.compute(step.items, type);
      case 'aggregate': {
        const aggregates = this.aggregates(step.items, type, []);
        return {
          kind: 'aggregate',
          aggregates,
          output: this.shape(
            aggregates.map((a) => a.property),
            [],
          ),
        };
      }
      case 'groupby':
        return this.groupby(step, type, entities);
      case 'concat': {
        const sequences = step.sequences.map((sequence) => this.sequence(sequence, type, entities));
        for (const [i, sequence] of sequences.entries()) {
          if (sequence.entities === undefined && sequence.output.navigation.size > 0) {
            this.fail(
              'NotImplemented',
              step.sequences[i]![0]?.span ?? step.span,
              'concat of a grouping by a navigation path is not supported yet',
              'compute the path as an alias first and group by the alias: compute(Nav/Property as Alias)/groupby((Alias),...)',
            );
          }
        }
        // the output holds the instances of every sequence: a property any of them has, null where one lacks it
        const properties = new Map<string, Property>();
        for (const { output } of sequences) {
          for (const property of output.properties.values()) {
            const seen = properties.get(property.name);
            if (seen === undefined) properties.set(property.name, { ...property, isKey: false });
            else if (seen.type !== property.type && isNumeric(seen.type) && isNumeric(property.type)) {
              // (one sequence's Int32 beside another's Int64 sum: the wider type holds both)
              properties.set(property.name, { ...seen, type: widerNumeric(seen.type, property.type), nullable: true });
            } else if (seen.type !== property.type) {
              this.fail(
                'TypeMismatch',
                step.span,
                `The sequences of concat give ${property.name} as ${seen.type} and as ${property.type}`,
                'give each alias one type',
              );
            } else if (property.nullable && !seen.nullable) properties.set(property.name, { ...seen, nullable: true });
          }
        }
        const all = [...properties.values()].map((p) =>
          sequences.every(({ output }) => output.properties.has(p.name)) ? p : { ...p, nullable: true },
        );
        return {
          kind: 'concat',
          sequences: sequences.map((s) => s.steps),
          output: this.shape(all, []),
        };
      }
    }
  }

  private compute(items: readonly ComputeItem[], type: EntityType): BoundApplyStep {
    const computed: { property: Property; expr: BoundExpr }[] = [];
    const names = new Set(type.properties.keys());
    for (const item of items) {
      if (names.has(item.alias)) {
        this.fail(
          'InvalidSyntax',
          item.aliasSpan,
          `The alias ${item.alias} is already a property here`,
          'choose another alias',
        );
      }
      names.add(item.alias);
      const expr = this.expression(type, item.expr);
      if (expr.type === 'null') {
        this.fail(
          'TypeMismatch',
          item.expr.span,
          `The value of ${item.alias} is the untyped null`,
          'cast it: cast(null,Edm.String)',
        );
      }
      computed.push({ property: dynamicProperty(item.alias, expr.type, expr.nullable), expr });
    }
    return {
      kind: 'compute',
      computed,
      // the instances keep what they were (entities stay entities, with their key, navigations and custom aggregates)
      // and gain the aliases
      output: this.shape([...type.properties.values(), ...computed.map((c) => c.property)], type.key, type),
    };
  }

  private groupby(
    step: Extract<ApplyTransformation, { kind: 'groupby' }>,
    type: EntityType,
    entities: EntityType | undefined,
  ): BoundApplyStep {
    const keys: BoundGroupKey[] = [];
    const seen = new Set<string>();
    for (const path of step.properties) {
      // a path through single-valued navigations to a property (the extension nests its values in an object named
      // after each navigation); through a collection it is not supported here
      let at = type;
      const names: string[] = [];
      for (const segment of path.segments.slice(0, -1)) {
        const navigation = segment.kind === 'property' ? at.navigation.get(segment.name) : undefined;
        if (navigation === undefined) break; // (the binder says what is wrong with it)
        if (navigation.collection) {
          this.fail(
            'NotImplemented',
            segment.span,
            `Grouping by a path through the collection ${navigation.name} is not supported`,
            `group by a path through single-valued navigations, or by a property of ${at.name}`,
          );
        }
        names.push(navigation.name);
        at = navigation.target();
      }
      const bound = this.binder(type).bind(path);
      if (bound.kind !== 'property' || bound.source.kind === 'variable') {
        this.fail('InvalidSyntax', path.span, 'groupby takes properties of the instances it groups');
      }
      const text = [...names, bound.property.name].join('/');
      if (seen.has(text)) this.fail('InvalidSyntax', path.span, `${text} is grouped by twice`);
      seen.add(text);
      keys.push({
        property: { ...bound.property, isKey: false, nullable: bound.property.nullable || names.length > 0 },
        path: names,
        expr: bound,
      });
    }
    const plain = keys.filter((k) => k.path.length === 0).map((k) => k.property);
    const navigation = nestedNavigations(keys);
    // what tells the instances apart, and orders them after $apply by default: with a path among the keys none, so
    // that the groups keep the order of all their values
    const key = navigation.size === 0 ? plain : [];
    if (step.apply === undefined) {
      return { kind: 'groupby', keys, steps: [], output: this.shape(plain, key, undefined, navigation) };
    }
    // (each group's instances are what the groupby was given: entities if those were)
    const nested = this.sequence(step.apply, type, entities);
    const last = nested.steps[nested.steps.length - 1];
    if (last?.kind !== 'aggregate') {
      this.fail(
        'NotImplemented',
        step.apply[step.apply.length - 1]?.span ?? step.span,
        'The transformations of a groupby must end with aggregate here',
      );
    }
    for (const aggregate of last.aggregates) {
      const name = aggregate.property.name;
      if (plain.some((k) => k.name === name)) {
        this.fail(
          'InvalidSyntax',
          aggregate.aliasSpan,
          `The alias ${name} is also a grouping property`,
          'choose another alias',
        );
      }
      if (navigation.has(name)) {
        this.fail(
          'InvalidSyntax',
          aggregate.aliasSpan,
          `The alias ${name} is also the navigation a grouping path goes through`,
          'choose another alias',
        );
      }
    }
    return {
      kind: 'groupby',
      keys,
      steps: nested.steps,
      output: this.shape([...plain, ...last.output.properties.values()], key, undefined, navigation),
    };
  }

  private aggregates(items: readonly AggregateItem[], type: EntityType, taken: readonly string[]): BoundAggregate[] {
    const names = new Set(taken);
    return items.map((item): BoundAggregate => {
      if (names.has(item.alias)) {
        this.fail(
          'InvalidSyntax',
          item.aliasSpan,
          `The alias ${item.alias} is given twice`,
          'give each aggregate its own alias',
        );
      }
      names.add(item.alias);
      if (item.kind === 'count') {
        return {
          method: '$count',
          property: dynamicProperty(item.alias, 'Edm.Decimal', false, 0),
          aliasSpan: item.aliasSpan,
        };
      }
      // a custom aggregate is the method and property the model declares for its name
      const { method, methodSpan, expr } =
        item.kind === 'custom'
          ? this.custom(item, type)
          : { method: item.method, methodSpan: item.methodSpan, expr: this.expression(type, item.expr) };
      const result = aggregateResultType(method, expr.type);
      if (result === undefined) {
        this.fail(
          'TypeMismatch',
          methodSpan,
          `${method} cannot aggregate ${expr.type === 'null' ? 'null' : `an ${expr.type} value`}`,
          method === 'sum' || method === 'average'
            ? 'sum and average take numbers'
            : method === 'countdistinct'
              ? undefined
              : 'min and max take values with an order',
        );
      }
      const source = expr.kind === 'property' ? expr.property : undefined;
      return {
        method,
        expr,
        property: dynamicProperty(
          item.alias,
          result.type,
          method !== 'countdistinct',
          result.scale,
          // min and max keep the facets of the property they read
          (method === 'min' || method === 'max') && source !== undefined ? source : undefined,
        ),
        aliasSpan: item.aliasSpan,
      };
    });
  }

  /** A custom aggregate's method and property (EntityType.aggregates); an unknown name is a 400 at it. */
  private custom(
    item: Extract<AggregateItem, { kind: 'custom' }>,
    type: EntityType,
  ): { method: AggregationMethod; methodSpan: Span; expr: BoundExpr } {
    const declared = type.aggregates?.get(item.name);
    if (declared === undefined) {
      const names = [...(type.aggregates?.keys() ?? [])];
      return this.fail(
        'InvalidSyntax',
        item.nameSpan,
        `${item.name} is not a custom aggregate of ${type.name}`,
        names.length === 0
          ? `write the method and an alias: ${item.name} with sum as Total`
          : `its custom aggregates are ${names.join(', ')}; or write the method: ${item.name} with sum as Total`,
      );
    }
    return { method: declared.method, methodSpan: item.nameSpan, expr: rootProperty(declared.property) };
  }

  /** A type of instances made by a transformation: its properties, and those that tell its instances apart. */
  private shape(
    properties: readonly Property[],
    key: readonly Property[],
    like?: EntityType,
    nested?: ReadonlyMap<string, NavigationProperty>,
  ): EntityType {
    const navigation = like?.navigation ?? nested ?? new Map<string, NavigationProperty>();
    const byName = new Map(properties.map((p) => [p.name, p]));
    return {
      // (the name errors give it: `Unknown property 'Qty' on the result of $apply`)
      name: 'the result of $apply',
      key: key.map((k) => byName.get(k.name)!),
      properties: byName,
      navigation,
      ...(like?.aggregates === undefined ? {} : { aggregates: like.aggregates }),
      defaultOrder: [],
      rules: [],
      concurrency: [],
    };
  }
}

/**
 * The navigations a grouping's paths nest their values under (`PurchaseOrder/VendorID` and `PurchaseOrder/Status`: one
 * PurchaseOrder holding both), each single-valued, its target a type of the grouped properties and deeper navigations.
 * A row holds their values as objects under their names, as a row's related row (closures.ts ownMember).
 */
function nestedNavigations(keys: readonly BoundGroupKey[]): Map<string, NavigationProperty> {
  interface Level {
    readonly properties: Map<string, Property>;
    readonly navigation: Map<string, Level>;
  }
  const top: Level = { properties: new Map(), navigation: new Map() };
  for (const key of keys) {
    if (key.path.length === 0) continue;
    let level = top;
    for (const name of key.path) {
      let next = level.navigation.get(name);
      if (next === undefined) level.navigation.set(name, (next = { properties: new Map(), navigation: new Map() }));
      level = next;
    }
    level.properties.set(key.property.name, key.property);
  }
  const navigations = (level: Level): Map<string, NavigationProperty> =>
    new Map(
      [...level.navigation].map(([name, inner]) => {
        const target: EntityType = {
          name: `the ${name} of the result of $apply`,
          key: [],
          properties: inner.properties,
          navigation: navigations(inner),
          defaultOrder: [],
          rules: [],
          concurrency: [],
        };
        return [name, { name, collection: false, foreignKey: {}, target: () => target }];
      }),
    );
  return navigations(top);
}

function dynamicProperty(
  name: string,
  type: EdmPrimitiveType,
  nullable: boolean,
  scale?: number,
  like?: Property,
): Property {
  return {
    name,
    type,
    nullable,
    isKey: false,
    ...(like?.maxLength === undefined ? {} : { maxLength: like.maxLength }),
    ...(like?.precision === undefined ? {} : { precision: like.precision }),
    ...(scale !== undefined ? { scale } : like?.scale === undefined ? {} : { scale: like.scale }),
  };
}

/**
 * The leading `filter` and `search` transformations of a sequence, as one condition and one search (ANDed), and
 * where the steps after them start: what a store's read of the input rows can evaluate (an index can serve them).
 */
export function leadingConditions(steps: readonly BoundApplyStep[]): {
  readonly filter?: BoundExpr;
  readonly search?: BoundSearch;
  readonly next: number;
} {
  let filter: BoundExpr | undefined;
  let search: BoundSearch | undefined;
  let next = 0;
  for (; next < steps.length; next++) {
    const step = steps[next]!;
    if (step.kind === 'filter') filter = filter === undefined ? step.predicate : andOf(filter, step.predicate);
    else if (step.kind === 'search') search = search === undefined ? step.search : andSearch(search, step.search);
    else break;
  }
  return { ...(filter === undefined ? {} : { filter }), ...(search === undefined ? {} : { search }), next };
}

/** A grouped value set in an instance: under its navigations for a path (`{ PurchaseOrder: { VendorID: 'V1' } }`). */
export function setGrouped(
  row: Record<string, unknown>,
  key: Pick<BoundGroupKey, 'path' | 'property'>,
  value: unknown,
): void {
  let into = row;
  for (const name of key.path) into = (into[name] ??= {}) as Record<string, unknown>;
  into[key.property.name] = value;
}

/**
 * Whether transformations read anything through a navigation (in a filter, compute, aggregate, orderby, ranking or a
 * groupby's path): only a store that makes them itself (Store.prepareApply) can, since the memory backend's runApply
 * reads the rows alone, or with a store's related rows.
 */
export function applyReadsNavigation(steps: readonly BoundApplyStep[]): boolean {
  return steps.some((step) => {
    switch (step.kind) {
      case 'filter':
        return readsNavigation(step.predicate);
      case 'orderby':
        return step.orderBy.some((item) => readsNavigation(item.expr));
      case 'compute':
        return step.computed.some((c) => readsNavigation(c.expr));
      case 'aggregate':
        return step.aggregates.some((a) => a.expr !== undefined && readsNavigation(a.expr));
      case 'groupby':
        return step.keys.some((k) => readsNavigation(k.expr)) || applyReadsNavigation(step.steps);
      case 'concat':
        return step.sequences.some(applyReadsNavigation);
      case 'topcount':
      case 'bottomcount':
      case 'toppercent':
      case 'bottompercent':
      case 'topsum':
      case 'bottomsum':
        return readsNavigation(step.value);
      case 'top':
      case 'skip':
      case 'search':
        return false;
    }
  });
}

/** Whether an expression reads anything through a navigation (lambdas, counts, single-valued paths). */
export function readsNavigation(expr: BoundExpr): boolean {
  switch (expr.kind) {
    case 'lambda':
    case 'count':
      return true;
    case 'property':
      return expr.source.kind !== 'root';
    case 'literal':
      return false;
    case 'convert':
    case 'negate':
    case 'not':
    case 'cast':
    case 'isof':
      return readsNavigation(expr.operand);
    case 'comparison':
    case 'logical':
    case 'arithmetic':
      return readsNavigation(expr.left) || readsNavigation(expr.right);
    case 'in':
      return readsNavigation(expr.left) || expr.items.some(readsNavigation);
    case 'call':
      return expr.args.some(readsNavigation);
    case 'case':
      return expr.branches.some((b) => readsNavigation(b.condition) || readsNavigation(b.result));
  }
}
