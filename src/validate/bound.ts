// The bound query: the syntax tree resolved against an entity type. Every name is a Property or
// NavigationProperty, every node has its EDM type, and promotions are explicit (`convert` nodes, or
// literals retyped at bind time). Backends take only this tree; they never see names as text.
import type { EdmPrimitiveType } from '../values/edm.js';
import type { EntityType, NavigationProperty, Property } from '../model/schema.js';
import type {
  AggregationMethod,
  ArithmeticOperator,
  CanonicalFunctionName,
  ComparisonOperator,
  LiteralValue,
  Span,
} from '../syntax/ast.js';

/** The type of a bound expression: an EDM primitive type, or `null` for the untyped null literal. */
export type BoundType = EdmPrimitiveType | 'null';

interface Typed {
  readonly type: BoundType;
  /** False when the expression can never be null (comparisons, non-nullable properties, non-null literals). */
  readonly nullable: boolean;
  readonly span: Span;
}

/**
 * Where a property is read from: the entity being filtered, the row a lambda variable ranges over, or the row a
 * single-valued navigation leads to from one of those (`PurchaseOrder/VendorID` on a line). A navigation that finds
 * no row gives null for every property read through it.
 */
export type PropertySource =
  | { readonly kind: 'root' }
  | { readonly kind: 'variable'; readonly name: string }
  | {
      readonly kind: 'navigation';
      /** A single-valued navigation of the type `from` reads. */
      readonly navigation: NavigationProperty;
      readonly from: PropertySource;
    };

export interface BoundLiteral extends Typed {
  readonly kind: 'literal';
  /** The literal's value, retyped to `type` where binding promoted it (Int32 5 compared with a Decimal is Decimal '5'). */
  readonly value: LiteralValue;
}

export interface BoundProperty extends Typed {
  readonly kind: 'property';
  readonly type: EdmPrimitiveType;
  readonly property: Property;
  readonly source: PropertySource;
}

/** An explicit promotion: Int32 → Int64 → Decimal → Double, Date → DateTimeOffset (midnight UTC). */
export interface BoundConvert extends Typed {
  readonly kind: 'convert';
  readonly type: EdmPrimitiveType;
  readonly operand: BoundExpr;
}

/** `eq ne gt ge lt le`: both operands have the same type (or one is the null literal). Never null. */
export interface BoundComparison extends Typed {
  readonly kind: 'comparison';
  readonly type: 'Edm.Boolean';
  readonly operator: ComparisonOperator;
  readonly left: BoundExpr;
  readonly right: BoundExpr;
}

/** `and`, `or`: three-valued. */
export interface BoundLogical extends Typed {
  readonly kind: 'logical';
  readonly type: 'Edm.Boolean';
  readonly operator: 'and' | 'or';
  readonly left: BoundExpr;
  readonly right: BoundExpr;
}

export interface BoundNot extends Typed {
  readonly kind: 'not';
  readonly type: 'Edm.Boolean';
  readonly operand: BoundExpr;
}

/**
 * Arithmetic on numbers (operands promoted to `type`, except `divby`, whose operands keep their
 * promoted type and whose result is Decimal or Double), and on instants and durations:
 * DateTimeOffset ± Duration, Duration ± Duration, DateTimeOffset − DateTimeOffset, Date − Date.
 */
export interface BoundArithmetic extends Typed {
  readonly kind: 'arithmetic';
  readonly type: EdmPrimitiveType;
  readonly operator: ArithmeticOperator;
  readonly left: BoundExpr;
  readonly right: BoundExpr;
}

export interface BoundNegate extends Typed {
  readonly kind: 'negate';
  readonly type: EdmPrimitiveType;
  readonly operand: BoundExpr;
}

/** `left in (items)`: every item has the left operand's type (or is the null literal). */
export interface BoundIn extends Typed {
  readonly kind: 'in';
  readonly type: 'Edm.Boolean';
  readonly left: BoundExpr;
  readonly items: readonly BoundExpr[];
}

/** A canonical function other than cast, isof and case, its arguments promoted to the chosen signature. */
export interface BoundCall extends Typed {
  readonly kind: 'call';
  readonly type: EdmPrimitiveType;
  readonly name: CanonicalFunctionName;
  readonly args: readonly BoundExpr[];
}

/** `cast(x, Edm.T)`: null when the value cannot be represented (SEMANTICS.md). */
export interface BoundCast extends Typed {
  readonly kind: 'cast';
  readonly type: EdmPrimitiveType;
  readonly operand: BoundExpr;
}

/** `isof(x, Edm.T)`: true when x is not null and its bound type is exactly T. */
export interface BoundIsOf extends Typed {
  readonly kind: 'isof';
  readonly type: 'Edm.Boolean';
  readonly operand: BoundExpr;
  readonly target: EdmPrimitiveType;
}

/** `case(c1:r1, c2:r2, ...)`: the first true condition's result, null when none is true. */
export interface BoundCase extends Typed {
  readonly kind: 'case';
  readonly branches: readonly { readonly condition: BoundExpr; readonly result: BoundExpr }[];
}

/** `Nav/any(v: p)`, `Nav/any()`, `Nav/all(v: p)` over the child rows of a navigation collection. */
export interface BoundLambda extends Typed {
  readonly kind: 'lambda';
  readonly type: 'Edm.Boolean';
  readonly operator: 'any' | 'all';
  readonly navigation: NavigationProperty;
  /** The rows the navigation starts from. */
  readonly source: PropertySource;
  /** The range variable, bound to each child row while `predicate` is evaluated. */
  readonly variable: string;
  readonly predicate?: BoundExpr;
}

/** `Nav/$count` or `Nav/$count($filter=p)`: the number of child rows (matching `filter`, evaluated per child as `variable`). */
export interface BoundCount extends Typed {
  readonly kind: 'count';
  readonly type: 'Edm.Int32';
  readonly navigation: NavigationProperty;
  readonly source: PropertySource;
  readonly variable: string;
  readonly filter?: BoundExpr;
}

export type BoundExpr =
  | BoundLiteral
  | BoundProperty
  | BoundConvert
  | BoundComparison
  | BoundLogical
  | BoundNot
  | BoundArithmetic
  | BoundNegate
  | BoundIn
  | BoundCall
  | BoundCast
  | BoundIsOf
  | BoundCase
  | BoundLambda
  | BoundCount;

export type BoundExprKind = BoundExpr['kind'];

export interface BoundOrderBy {
  readonly expr: BoundExpr;
  readonly direction: 'asc' | 'desc';
  /** True for the key properties the engine appends so that every order is total (SEMANTICS.md). */
  readonly tieBreak: boolean;
}

/** A query bound to an entity type, ready for any backend. */
export interface BoundQuery {
  readonly entityType: EntityType;
  /** A Boolean expression; absent means every row. */
  readonly filter?: BoundExpr;
  /** The requested order followed by the key properties not already in it (ascending). Never empty. */
  readonly orderBy: readonly BoundOrderBy[];
  /** The properties to return, in entity-type order; `$select=*` or no `$select` gives every readable property. */
  readonly select: readonly Property[];
  /**
   * The navigations named in `$select` (`$select=Title,Author`): the client asked for their links, not their
   * entities (those are `$expand`'s). The context URL lists them.
   */
  readonly selectNavigation?: readonly NavigationProperty[];
  readonly top?: number;
  readonly skip?: number;
  readonly count: boolean;
  /**
   * The navigations to expand, each with the query of its related entities. Backends read only the entities of the
   * query itself; the service reads each expansion with its store, one statement per expanded navigation.
   */
  readonly expand?: readonly BoundExpand[];
  /**
   * `$apply`: the transformations that make the instances the rest of the query reads. `entityType` is then the type
   * of those instances (`apply.output`), and the filter, order, selection and paging apply to them; the rows are read
   * from the collection of `apply.input`.
   */
  readonly apply?: BoundApply;
  /**
   * `$compute`: the computed properties, each with its expression over the entity's own properties. `select` may
   * hold them (the service computes them for the rows it writes; the memory backend projects them); a filter or an
   * order that named one holds its expression instead.
   */
  readonly compute?: readonly BoundCompute[];
  /** `$search`: kept are the entities it matches, beside the filter. */
  readonly search?: BoundSearch;
}

/** `$search` bound: its terms as lower-cased words, and the searchable properties each term is looked for in. */
export interface BoundSearch {
  readonly properties: readonly Property[];
  readonly expr: BoundSearchExpr;
}

/**
 * A term (a word or a phrase: its words, consecutive, in one property of the entity), NOT, AND or OR. Every node is
 * true or false, never unknown: an entity whose properties are null matches no term.
 */
export type BoundSearchExpr =
  | { readonly kind: 'words'; readonly words: readonly string[] }
  | { readonly kind: 'not'; readonly operand: BoundSearchExpr }
  | { readonly kind: 'and' | 'or'; readonly left: BoundSearchExpr; readonly right: BoundSearchExpr };

/** One computed property of `$compute` (`expr as Alias`): the alias as a property of the expression's type. */
export interface BoundCompute {
  readonly property: Property;
  readonly expr: BoundExpr;
}

/** `$apply` bound (Data Aggregation 4.0): its transformations, each bound to the type the one before it gives. */
export interface BoundApply {
  /** The entity type of the collection the transformations start from. */
  readonly input: EntityType;
  readonly steps: readonly BoundApplyStep[];
  /** The type of the instances the last transformation gives. */
  readonly output: EntityType;
  /**
   * The navigations of `output` that hold a grouping's values nested (`groupby((PurchaseOrder/VendorID))` gives
   * `{"PurchaseOrder":{"VendorID":...}}`): made by the grouping, each single-valued, its target a type of the grouped
   * properties (and of deeper such navigations). A row holds their values as objects under their names.
   */
  readonly nested?: readonly NavigationProperty[];
}

/**
 * A grouping property of `groupby`: a property of the instances, or a path through single-valued navigations ending in
 * a primitive property (`PurchaseOrder/VendorID`), whose value the instances made hold nested under the navigations'
 * names.
 */
export interface BoundGroupKey {
  /** The grouped property as the output holds it (for a path, a property of the innermost nested type). */
  readonly property: Property;
  /** The names of the navigations the path goes through (none: a property of the instances). */
  readonly path: readonly string[];
  /** What is read from each instance: the property itself, or through the navigations. */
  readonly expr: BoundProperty;
}

/** One aggregate of `aggregate(...)`: `expr with method as property`, or `$count as property`. */
export interface BoundAggregate {
  readonly method: AggregationMethod | '$count';
  /** What is aggregated (absent for `$count`); nulls are left out of every method. */
  readonly expr?: BoundExpr;
  /** The alias, with the type of the result. */
  readonly property: Property;
  readonly aliasSpan: Span;
}

/** A transformation of `$apply`, bound. Those that make instances of a new type give it as `output`. */
export type BoundApplyStep =
  | { readonly kind: 'filter'; readonly predicate: BoundExpr }
  /** The entities a search matches (only while the instances are the input's entities: before any grouping). */
  | { readonly kind: 'search'; readonly search: BoundSearch }
  | { readonly kind: 'orderby'; readonly orderBy: readonly BoundOrderBy[] }
  | { readonly kind: 'top' | 'skip'; readonly count: number }
  | {
      readonly kind: 'topcount' | 'bottomcount' | 'toppercent' | 'bottompercent' | 'topsum' | 'bottomsum';
      readonly n: number;
      readonly value: BoundExpr;
    }
  | {
      readonly kind: 'compute';
      readonly computed: readonly { readonly property: Property; readonly expr: BoundExpr }[];
      readonly output: EntityType;
    }
  /** One instance of the aggregates over all the instances given, even none. */
  | { readonly kind: 'aggregate'; readonly aggregates: readonly BoundAggregate[]; readonly output: EntityType }
  /**
   * The instances split by the values of `keys`; `steps` (ending with an aggregate, or none: the distinct values) made
   * of each group's instances, with the group's values beside.
   */
  | {
      readonly kind: 'groupby';
      readonly keys: readonly BoundGroupKey[];
      readonly steps: readonly BoundApplyStep[];
      readonly output: EntityType;
    }
  /** The instances each sequence gives of the same input, one sequence after the other. */
  | {
      readonly kind: 'concat';
      readonly sequences: readonly (readonly BoundApplyStep[])[];
      readonly output: EntityType;
    };

/** One expanded navigation (`$expand=Lines($filter=...;$top=5)`): the related entities of each entity read. */
export interface BoundExpand {
  readonly navigation: NavigationProperty;
  /**
   * The related entities' own query, bound to the navigation's target type: its `$select`, `$filter`, `$orderby`,
   * `$top`, `$skip` (per entity, not across them), `$count` and nested `$expand`.
   */
  readonly query: BoundQuery;
  /** `/$ref`: the related entities' ids (`@odata.id`) instead of the entities. */
  readonly ref: boolean;
  /**
   * `/$count` (`$expand=Lines/$count($filter=...)`): each entity's count of related entities alone
   * (`Lines@odata.count`), none of them; `query` then counts (`count`, `$top` 0) and selects the key.
   */
  readonly countOnly?: boolean;
}
