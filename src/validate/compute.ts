// `$compute` (OData 4.01 §11.2.5.3): properties computed per entity, `expr as Alias`, that `$select`, `$filter` and
// `$orderby` may name. The aliases are bound as properties of a type made for the other options to read; a filter or
// an order that names one reads its expression instead (substituted here), so a store filters and orders by it as by
// any expression, and only the selected values are computed, by the service, for the rows it writes.
import type { ComputeItem } from '../syntax/ast.js';
import type { EntityType, Property } from '../model/schema.js';
import { atPosition, ODataError } from '../errors.js';
import type { BoundCompute, BoundExpr } from './bound.js';
import type { Binder } from './bind.js';
import { readsNavigation } from './apply.js';

/**
 * `$compute` bound to `type` (by `binder`): each item's expression and its alias, and the type the other options
 * bind to (the entity type with the aliases as properties). Throws the first problem: an alias that names a
 * property or a navigation or is given twice, an untyped null (400); an expression that reads through a navigation
 * (501: the service computes the values from the entity's own properties).
 */
export function bindCompute(
  items: readonly ComputeItem[],
  type: EntityType,
  binder: Binder,
): { readonly computed: readonly BoundCompute[]; readonly type: EntityType } {
  const fail = (code: 'InvalidSyntax' | 'NotImplemented' | 'TypeMismatch', at: number, what: string, hint?: string) =>
    new ODataError(code, atPosition(what, at, '$compute', hint), { target: '$compute', position: at });
  const computed: BoundCompute[] = [];
  const names = new Set([...type.properties.keys(), ...type.navigation.keys()]);
  for (const item of items) {
    if (names.has(item.alias)) {
      throw fail(
        'InvalidSyntax',
        item.aliasSpan.start,
        computed.some((c) => c.property.name === item.alias)
          ? `The alias ${item.alias} is given twice`
          : `The alias ${item.alias} is already a property of ${type.name}`,
        'choose another alias',
      );
    }
    names.add(item.alias);
    const expr = binder.bind(item.expr);
    if (expr.type === 'null') {
      throw fail(
        'TypeMismatch',
        item.expr.span.start,
        `The value of ${item.alias} is the untyped null`,
        'cast it: cast(null,Edm.String)',
      );
    }
    if (readsNavigation(expr)) {
      throw fail(
        'NotImplemented',
        item.expr.span.start,
        'A computed property that reads through a navigation is not supported yet',
        "filter or order by the path itself ($filter=PurchaseOrder/Status eq 'Issued')",
      );
    }
    computed.push({
      property: { name: item.alias, type: expr.type, nullable: expr.nullable, isKey: false, computed: true },
      expr,
    });
  }
  return {
    computed,
    type: {
      ...type,
      properties: new Map([...type.properties, ...computed.map((c) => [c.property.name, c.property] as const)]),
    },
  };
}

/**
 * `expr` with each computed property it names replaced by a copy of that property's expression: a new node each time,
 * since a backend may tell nodes apart by identity (MySQL's emitter tests the range of an integer chain once per node).
 */
export function substituteComputed(expr: BoundExpr, computed: ReadonlyMap<Property, BoundExpr>): BoundExpr {
  const copy = (e: BoundExpr): BoundExpr => map(e, (leaf) => ({ ...leaf }));
  const walk = (e: BoundExpr): BoundExpr =>
    map(e, (leaf) => {
      const replaced =
        leaf.kind === 'property' && leaf.source.kind === 'root' ? computed.get(leaf.property) : undefined;
      return replaced === undefined ? leaf : copy(replaced);
    });
  return computed.size === 0 ? expr : walk(expr);
}

/** `e` rebuilt with `leaf` applied to its properties and literals (every inner node a new object). */
function map(e: BoundExpr, leaf: (e: Extract<BoundExpr, { kind: 'property' | 'literal' }>) => BoundExpr): BoundExpr {
  const walk = (e: BoundExpr): BoundExpr => {
    switch (e.kind) {
      case 'property':
      case 'literal':
        return leaf(e);
      case 'convert':
      case 'negate':
      case 'not':
      case 'cast':
      case 'isof':
        return { ...e, operand: walk(e.operand) } as BoundExpr;
      case 'comparison':
      case 'logical':
      case 'arithmetic':
        return { ...e, left: walk(e.left), right: walk(e.right) } as BoundExpr;
      case 'in':
        return { ...e, left: walk(e.left), items: e.items.map(walk) };
      case 'call':
        return { ...e, args: e.args.map(walk) };
      case 'case':
        return { ...e, branches: e.branches.map((b) => ({ condition: walk(b.condition), result: walk(b.result) })) };
      case 'lambda':
        return e.predicate === undefined ? { ...e } : { ...e, predicate: walk(e.predicate) };
      case 'count':
        return e.filter === undefined ? { ...e } : { ...e, filter: walk(e.filter) };
    }
  };
  return walk(e);
}
