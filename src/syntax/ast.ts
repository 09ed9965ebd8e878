// The syntax tree of OData query options. It knows no schema: names are unresolved text and every
// node carries the half-open span `[start, end)` of the characters it came from, counted in the
// percent-decoded option value. Nodes are readonly data; dispatch on `kind` with an exhaustive switch.
import type { AggregationMethod } from '../values/edm.js';

/** Half-open character range `[start, end)` in the decoded option value. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

// ── Literals ────────────────────────────────────────────────────────────────

/**
 * A literal's decoded value, tagged with the EDM type the literal has on its own
 * (SEMANTICS.md: an integer is Int32 if it fits, else Int64, else Decimal; with `.` Decimal;
 * with an exponent, INF or NaN Double).
 */
export type LiteralValue =
  | { readonly type: 'null' }
  | { readonly type: 'Edm.Boolean'; readonly value: boolean }
  | { readonly type: 'Edm.Int32'; readonly value: number }
  | { readonly type: 'Edm.Int64'; readonly value: bigint }
  /** Exact digits as written, without a leading `+` (`1.50` stays `1.50`). */
  | { readonly type: 'Edm.Decimal'; readonly value: string }
  | { readonly type: 'Edm.Double'; readonly value: number }
  | { readonly type: 'Edm.String'; readonly value: string }
  /** `YYYY-MM-DD` as written (years may be signed or longer than four digits). */
  | { readonly type: 'Edm.Date'; readonly value: string }
  /**
   * The text as written (`2024-05-01T08:30:00+02:00`), the instant in epoch milliseconds
   * (truncated to milliseconds, SEMANTICS.md), and the literal's own offset in minutes.
   */
  | {
      readonly type: 'Edm.DateTimeOffset';
      readonly value: string;
      readonly epochMilliseconds: number;
      readonly offsetMinutes: number;
    }
  /** `HH:MM[:SS[.fff]]` as written. */
  | { readonly type: 'Edm.TimeOfDay'; readonly value: string }
  /** The ISO 8601 duration as written (`P1DT2H`, `-PT0.5S`) and its length in milliseconds. */
  | { readonly type: 'Edm.Duration'; readonly value: string; readonly milliseconds: number }
  /** Lower-case `8-4-4-4-12` form. */
  | { readonly type: 'Edm.Guid'; readonly value: string }
  /** base64url text as written (padding optional) and the decoded bytes. */
  | { readonly type: 'Edm.Binary'; readonly value: string; readonly bytes: Uint8Array }
  /** `Namespace.Type'Member'`; `value` is the text between the quotes (members or numbers, comma-separated). */
  | { readonly type: 'enum'; readonly typeName: string; readonly value: string }
  /** `geography'...'` or `geometry'...'`: the well-known text is kept, not interpreted. */
  | { readonly type: 'Edm.Geography' | 'Edm.Geometry'; readonly value: string };

export type LiteralType = LiteralValue['type'];

export interface LiteralExpr {
  readonly kind: 'literal';
  readonly literal: LiteralValue;
  readonly span: Span;
}

// ── Operators ───────────────────────────────────────────────────────────────

export type LogicalOperator = 'and' | 'or';
export type ComparisonOperator = 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le';
export type ArithmeticOperator = 'add' | 'sub' | 'mul' | 'div' | 'divby' | 'mod';
export type BinaryOperator = LogicalOperator | ComparisonOperator | ArithmeticOperator | 'has';

export interface BinaryExpr {
  readonly kind: 'binary';
  readonly operator: BinaryOperator;
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

/** `left in right`; `right` is a `list` (`(a,b)`), an `array` (`["a","b"]`) or any other collection expression. */
export interface InExpr {
  readonly kind: 'in';
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

export interface NotExpr {
  readonly kind: 'not';
  readonly operand: Expr;
  readonly span: Span;
}

export interface NegateExpr {
  readonly kind: 'negate';
  readonly operand: Expr;
  readonly span: Span;
}

// ── Calls ───────────────────────────────────────────────────────────────────

/** The canonical functions of OData 4.01 §5.1.1.5–5.1.1.11, by their canonical spelling. */
export const canonicalFunctions = [
  'concat',
  'contains',
  'endswith',
  'indexof',
  'length',
  'startswith',
  'substring',
  'hassubset',
  'hassubsequence',
  'matchesPattern',
  'tolower',
  'toupper',
  'trim',
  'date',
  'day',
  'fractionalseconds',
  'hour',
  'maxdatetime',
  'mindatetime',
  'minute',
  'month',
  'now',
  'second',
  'time',
  'totaloffsetminutes',
  'totalseconds',
  'year',
  'ceiling',
  'floor',
  'round',
  'cast',
  'isof',
  'case',
  'geo.distance',
  'geo.intersects',
  'geo.length',
] as const;

export type CanonicalFunctionName = (typeof canonicalFunctions)[number];

/**
 * A canonical function call with positional arguments. For `cast` and `isof` the last argument
 * is a `typeName`; for `case` every argument is a `caseBranch`.
 */
export interface CallExpr {
  readonly kind: 'call';
  readonly name: CanonicalFunctionName;
  readonly args: readonly Expr[];
  readonly span: Span;
}

/** A (qualified) type name argument of `cast` / `isof`: `Edm.String`, `Model.Customer`. */
export interface TypeNameExpr {
  readonly kind: 'typeName';
  readonly name: string;
  readonly span: Span;
}

/** One `condition : result` pair of the 4.01 `case(...)` function. */
export interface CaseBranchExpr {
  readonly kind: 'caseBranch';
  readonly condition: Expr;
  readonly result: Expr;
  readonly span: Span;
}

// ── Paths ───────────────────────────────────────────────────────────────────

/**
 * Where a path starts: the current instance (no prefix), `$it`, `$this`, `$root`, a lambda range
 * variable, or an annotation (`@Core.Messages/...`).
 */
export type PathRoot =
  | { readonly kind: 'implicit' }
  | { readonly kind: '$it' }
  | { readonly kind: '$this' }
  | { readonly kind: '$root' }
  | { readonly kind: 'variable'; readonly name: string };

export interface PropertySegment {
  readonly kind: 'property';
  readonly name: string;
  readonly span: Span;
}

/** A type-cast segment: `Address/Model.AddressWithLocation`. */
export interface CastSegment {
  readonly kind: 'cast';
  readonly typeName: string;
  readonly span: Span;
}

/** `/$count`, optionally with a nested `$filter`: `Products/$count($filter=Price gt 5)`. */
export interface CountSegment {
  readonly kind: 'count';
  readonly filter?: Expr;
  readonly span: Span;
}

/** `/$filter(expr)`: a filtered collection. */
export interface FilterSegment {
  readonly kind: 'filter';
  readonly predicate: Expr;
  readonly span: Span;
}

/** `any(v: predicate)`, `any()`, `all(v: predicate)`. */
export interface LambdaSegment {
  readonly kind: 'any' | 'all';
  readonly variable?: string;
  readonly predicate?: Expr;
  readonly span: Span;
}

/** A (bound) function call in a path: `Model.BestProduct()`, `Model.ProductsByColor(color='red')`. */
export interface FunctionSegment {
  readonly kind: 'function';
  readonly name: string;
  readonly parameters: readonly FunctionParameter[];
  readonly span: Span;
}

export interface FunctionParameter {
  readonly name: string;
  readonly value: Expr;
  readonly span: Span;
}

/** A key predicate after a collection: `Items(1)`, `Lines(Order=1,Line=2)`. */
export interface KeySegment {
  readonly kind: 'key';
  /** Positional single key (name absent) or named key parts. */
  readonly values: readonly { readonly name?: string; readonly value: Expr }[];
  readonly span: Span;
}

/** An annotation segment: `Price/@Measures.Currency`, `@Core.Messages`. */
export interface AnnotationSegment {
  readonly kind: 'annotation';
  readonly term: string;
  readonly span: Span;
}

export type PathSegment =
  | PropertySegment
  | CastSegment
  | CountSegment
  | FilterSegment
  | LambdaSegment
  | FunctionSegment
  | KeySegment
  | AnnotationSegment;

/** A member path: `Name`, `Address/City`, `$it/Name`, `p/Price`, `Items/any(i: ...)`, `Lines/$count`. */
export interface PathExpr {
  readonly kind: 'path';
  readonly root: PathRoot;
  readonly segments: readonly PathSegment[];
  readonly span: Span;
}

/** `@name` parameter alias; `parseQuery` fills `value` from the query string (absent means null, 4.01 §5.3). */
export interface AliasExpr {
  readonly kind: 'alias';
  readonly name: string;
  readonly value?: Expr;
  readonly span: Span;
}

// ── Collections and JSON ────────────────────────────────────────────────────

/** The parenthesized list right of `in`: `('a','b')`. */
export interface ListExpr {
  readonly kind: 'list';
  readonly items: readonly Expr[];
  readonly span: Span;
}

/** A JSON array in an expression: `["a","b"]`, `[FirstName,LastName]`. */
export interface ArrayExpr {
  readonly kind: 'array';
  readonly items: readonly Expr[];
  readonly span: Span;
}

/** A JSON object in an expression: `{"Street":"Main","Zip":Zip}`. */
export interface ObjectExpr {
  readonly kind: 'object';
  readonly members: readonly { readonly name: string; readonly value: Expr; readonly span: Span }[];
  readonly span: Span;
}

export type Expr =
  | LiteralExpr
  | BinaryExpr
  | InExpr
  | NotExpr
  | NegateExpr
  | CallExpr
  | TypeNameExpr
  | CaseBranchExpr
  | PathExpr
  | AliasExpr
  | ListExpr
  | ArrayExpr
  | ObjectExpr;

export type ExprKind = Expr['kind'];

// ── $select, $orderby ───────────────────────────────────────────────────────

/** One `$select` item: `*`, `Namespace.*`, or a path of names and casts with optional nested options. */
export type SelectItem =
  | { readonly kind: 'star'; readonly span: Span }
  | { readonly kind: 'allOperations'; readonly namespace: string; readonly span: Span }
  | {
      readonly kind: 'path';
      readonly segments: readonly SelectSegment[];
      readonly options?: NestedSelectOptions;
      readonly span: Span;
    };

export type SelectSegment =
  | PropertySegment
  | CastSegment
  | AnnotationSegment
  | {
      readonly kind: 'operation';
      readonly name: string;
      readonly parameterNames?: readonly string[];
      readonly span: Span;
    };

/** Options nested in a `$select` item: `Addresses($filter=...;$top=5)`. */
export interface NestedSelectOptions {
  readonly select?: readonly SelectItem[];
  readonly filter?: Expr;
  readonly orderBy?: readonly OrderByItem[];
  readonly top?: number;
  readonly skip?: number;
  readonly count?: boolean;
}

// ── $expand ─────────────────────────────────────────────────────────────────

/**
 * One `$expand` item: `*` (every navigation), or a navigation path (names and casts) with `/$ref` (references only)
 * or `/$count` (the number of related entities only), and nested options in parentheses.
 */
export type ExpandItem =
  | {
      readonly kind: 'star';
      readonly ref: boolean;
      /** `*($levels=n)`: the only option `*` takes. */
      readonly levels?: number | 'max';
      readonly span: Span;
    }
  /** `$value`: the media stream of a media entity. */
  | { readonly kind: 'value'; readonly span: Span }
  | {
      readonly kind: 'path';
      /** Navigation names, complex property names on the way, casts, annotation terms (`@Namespace.Term`). */
      readonly segments: readonly (PropertySegment | CastSegment | AnnotationSegment)[];
      /** The path ends with `/*`: every navigation of the complex property it names. */
      readonly star?: true;
      /** `/$ref`: entity references instead of entities; `/$count`: the count alone. */
      readonly suffix?: '$ref' | '$count';
      readonly options?: NestedExpandOptions;
      readonly span: Span;
    };

/** Options nested in a `$expand` item: `Lines($filter=...;$orderby=...;$top=5;$expand=Part)`. */
export interface NestedExpandOptions extends NestedSelectOptions {
  readonly expand?: readonly ExpandItem[];
  /** `$levels`: how deep a recursive navigation is expanded, a positive number or `max`. */
  readonly levels?: number | 'max';
  /** Parameter aliases given inside the parentheses (`@c=15`). */
  readonly aliases?: ReadonlyMap<string, Expr>;
}

export interface OrderByItem {
  readonly expr: Expr;
  readonly direction: 'asc' | 'desc';
  readonly span: Span;
}

// ── $apply, $compute ────────────────────────────────────────────────────────

/** The standard aggregation methods of the Data Aggregation extension (§3.1.3). */
export { aggregationMethods, type AggregationMethod } from '../values/edm.js';

/** An `expr as Alias` item of `compute(...)` or of `$compute`. */
export interface ComputeItem {
  readonly expr: Expr;
  readonly alias: string;
  /** Where the alias is written. */
  readonly aliasSpan: Span;
  readonly span: Span;
}

/** One item of `aggregate(...)`: `Amount with sum as Total`, or `$count as Count`. */
export type AggregateItem =
  | {
      readonly kind: 'method';
      readonly expr: Expr;
      readonly method: AggregationMethod;
      /** Where the method name is written. */
      readonly methodSpan: Span;
      readonly alias: string;
      readonly aliasSpan: Span;
      readonly span: Span;
    }
  | { readonly kind: 'count'; readonly alias: string; readonly aliasSpan: Span; readonly span: Span }
  /** A custom aggregate by its name, `Amount` or `Amount as Total` (the alias is the name when none is given). */
  | {
      readonly kind: 'custom';
      readonly name: string;
      readonly nameSpan: Span;
      readonly alias: string;
      readonly aliasSpan: Span;
      readonly span: Span;
    };

/**
 * One transformation of `$apply` (Data Aggregation 4.0 CS03 §3): each takes the instances the one before it gave and
 * gives new ones; a sequence is written with `/` between its transformations.
 */
export type ApplyTransformation =
  | { readonly kind: 'aggregate'; readonly items: readonly AggregateItem[]; readonly span: Span }
  | {
      readonly kind: 'groupby';
      /** The grouping properties: paths of property names. */
      readonly properties: readonly PathExpr[];
      /** The transformations applied to each group's instances (none: the distinct values of the properties). */
      readonly apply?: readonly ApplyTransformation[];
      readonly span: Span;
    }
  | { readonly kind: 'filter'; readonly predicate: Expr; readonly span: Span }
  /** `search(...)`: the instances a search expression (`$search`'s grammar, spans in the `$apply` text) matches. */
  | { readonly kind: 'search'; readonly search: SearchExpr; readonly span: Span }
  | { readonly kind: 'compute'; readonly items: readonly ComputeItem[]; readonly span: Span }
  | { readonly kind: 'orderby'; readonly items: readonly OrderByItem[]; readonly span: Span }
  | { readonly kind: 'top' | 'skip'; readonly count: number; readonly span: Span }
  | {
      /** `topcount(n, value)` and its kin: a subset of the instances by the values of `value`. */
      readonly kind: 'topcount' | 'bottomcount' | 'toppercent' | 'bottompercent' | 'topsum' | 'bottomsum';
      readonly n: Expr;
      readonly value: Expr;
      readonly span: Span;
    }
  | { readonly kind: 'concat'; readonly sequences: readonly (readonly ApplyTransformation[])[]; readonly span: Span }
  | { readonly kind: 'identity'; readonly span: Span };

export type ApplyTransformationKind = ApplyTransformation['kind'];

/**
 * `$search` (4.01): a word (any run of characters but spaces, parentheses, `"` and `;`), a `"phrase"`, the text of
 * a value in single quotes (`searchExpr-incomplete`, its words all searched for), NOT, AND and OR.
 */
export type SearchExpr =
  | { readonly kind: 'word' | 'phrase' | 'text'; readonly text: string; readonly span: Span }
  | { readonly kind: 'not'; readonly operand: SearchExpr; readonly span: Span }
  | { readonly kind: 'and' | 'or'; readonly left: SearchExpr; readonly right: SearchExpr; readonly span: Span };
