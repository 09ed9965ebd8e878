// What differs between the SQL dialects, as hooks over one emitter (emit.ts), and everything a dialect knows about its
// database: how each EDM type is stored (`storage`) and the statements on tables the server runs (`statements`). A
// dialect never decides what a query means (SEMANTICS.md does, in emit.ts); it only says how its database spells that
// meaning. Each dialect lives in its own folder (sqlite/, postgres/, mysql/); nothing outside them asks which
// dialect it has.
import type { EdmPrimitiveType } from '../../values/edm.js';
import type { Pattern } from '../../values/regex.js';
import type { Property } from '../../model/schema.js';
import type { LiteralValue } from '../../syntax/ast.js';

export type SqlDialectName = 'sqlite' | 'postgres' | 'mysql';

/** A parameter value as the dialect's driver takes it. */
export type SqlParam = string | number | bigint | boolean | Uint8Array | null;

/** A SQL fragment whose parameters are still markers (emit.ts numbers them when the statement is finished). */
export type Sql = string;

export type NumericOperator = 'add' | 'sub' | 'mul' | 'div' | 'mod';

/**
 * What a search index is asked: terms (words of ASCII letters and digits, lower-cased, each term's words in a row in
 * one column) joined by AND and OR, as the `$search` expression joins them (a row holds an AND when it holds both).
 */
export type IndexedSearch =
  | { readonly kind: 'words'; readonly words: readonly string[] }
  | { readonly kind: 'and' | 'or'; readonly left: IndexedSearch; readonly right: IndexedSearch };

/** A dialect's full-text index for `$search` (Dialect.searchIndex). Names are unquoted. */
export interface SearchIndex {
  /**
   * DDL, idempotent (run every time a store opens): the index of `columns` of `table`, whose rows `key` (the table's
   * whole key) tells apart, kept current by the database on every write from then on, and filled with the rows the
   * table already has when it is made.
   */
  indexSql(table: TableName, key: readonly string[], columns: readonly string[]): Sql[];
  /**
   * A condition on the row read as `alias` from `table`, true wherever `search` holds as the exact match reads it (it
   * may hold for more rows, never for fewer). `key` holds key columns of the row (all of them, or some: then more rows
   * pass); `param` makes a string parameter. Undefined: the index cannot narrow this search.
   */
  prefilter(
    row: {
      readonly table: TableName;
      readonly alias: Sql;
      readonly key: readonly string[];
      readonly columns: readonly string[];
    },
    search: IndexedSearch,
    param: (value: string) => Sql,
  ): Sql | undefined;
  /**
   * Where the index holds what `prefilter` asks of it only under some server settings: a query of them (one row),
   * and whether that row's settings fit. A store whose server's do not fit scans (SqlOptions.searchIndex false).
   */
  readonly settings?: { readonly sql: Sql; fits(row: Readonly<Record<string, unknown>>): boolean };
}

export interface Dialect {
  readonly name: SqlDialectName;
  /** A name as an identifier (a quote inside it doubled): the only quoting of names there is. */
  quoteIdentifier(name: string): string;
  /** The placeholder for the `index`-th parameter (0-based) in textual order. */
  placeholder(index: number): string;
  /** How each EDM type is kept in this database: column types, parameters and the values read back. */
  readonly storage: Storage;
  /** CREATE TABLE and the statements on stored rows the server runs. */
  readonly statements: Statements;
  /** The most parameters one statement may have. */
  readonly maxParameters: number;
  /**
   * A typed parameter: `param` is the marker emit.ts made; the dialect adds the cast its database needs. `value` is
   * the parameter's value, for a dialect whose cast depends on it (MySQL sizes a DECIMAL to the literal's digits).
   */
  typedParam(param: Sql, type: EdmPrimitiveType, value?: SqlParam): Sql;
  /**
   * A condition true for every row, evaluated each time a WHERE visits a row, that stops the statement past its
   * deadline (SqlOptions.deadlineChecks); undefined where the database stops statements itself.
   */
  readonly rowCheck?: (alias: string) => Sql;
  /** A null of an EDM type, where an untyped NULL would leave the database unable to choose an operator. */
  typedNull(type: EdmPrimitiveType): Sql;
  /** The Boolean constants, as this dialect's WHERE accepts them. */
  readonly true: Sql;
  readonly false: Sql;

  /** Null-safe equality (`null = null` is true), never null. */
  nullSafeEqual(a: Sql, b: Sql): Sql;
  /**
   * Wraps a string operand so that comparison and ordering are by code point (binary UTF-8 order). `column` says
   * the operand is a bare column, whose storage collation (its column type) a dialect may rely on to keep its index usable.
   */
  ordinal(a: Sql, column?: boolean): Sql;

  // Strings: code points, 0-based where OData is (SEMANTICS.md).
  length(s: Sql): Sql;
  /** 1-based position of `t` in `s`, 0 when absent. */
  position(s: Sql, t: Sql): Sql;
  /**
   * `$search`'s text of a string (searchText in src/values/text.ts): lower-cased as `lower`, each run of separators
   * one space, a space before and after; `param` makes a string parameter (the separators' pattern).
   */
  searchText(s: Sql, param: (value: string) => Sql): Sql;
  /**
   * Set where a full-text index can serve `$search` (PostgreSQL's GIN, SQLite's FTS5, MariaDB's FULLTEXT): what makes the
   * index of a table's indexed columns, and a condition that the index serves and that holds wherever the exact match
   * does (a prefilter), for a term of ASCII letters and digits only.
   */
  readonly searchIndex?: SearchIndex;
  /** `s` from the 0-based `start`, `count` characters (or to the end). Both are non-negative integers. */
  substring(s: Sql, start: Sql, count?: Sql): Sql;
  concat(a: Sql, b: Sql): Sql;
  lower(s: Sql): Sql;
  upper(s: Sql): Sql;
  /** `trim`: `param` makes a string parameter (for the set of White_Space characters). */
  trim(s: Sql, param: (value: string) => Sql): Sql;
  /**
   * contains/startswith/endswith without LIKE, for a dialect whose LIKE is not exact; else the emitter uses `like`.
   * `literal` is the second argument's text when it is a literal (`param` makes a string parameter).
   */
  textMatch?(
    kind: 'contains' | 'startswith' | 'endswith',
    s: Sql,
    t: Sql,
    literal: string | undefined,
    param: (value: string) => Sql,
  ): Sql;
  /** `s LIKE pattern` where the pattern escapes `%`, `_` and `\` with `\` (`column` as for `ordinal`). */
  like(s: Sql, pattern: Sql, column: boolean): Sql;
  /**
   * `matchesPattern` for any pattern, literal or not, as SEMANTICS.md means it (SQLite: the registered linear-time
   * matcher). A dialect without it may translate literal patterns (`regexMatch`); otherwise matchesPattern is a 501.
   */
  matchesPattern?(s: Sql, pattern: Sql): Sql;
  /**
   * `matchesPattern` with a literal pattern, in the database's own regular expressions: the pattern written for it
   * (src/values/regex.ts), as a parameter, or why this pattern cannot be written exactly.
   */
  regexMatch?(s: Sql, pattern: Pattern, param: (value: string) => Sql): Sql | { readonly unsupported: string };

  // Numbers.
  /** Integer arithmetic, exact; a result outside Int64 is null (operands are non-null-checked by the caller). */
  integerArithmetic(operator: NumericOperator, a: Sql, b: Sql): Sql;
  decimalArithmetic(operator: NumericOperator | 'divby', a: Sql, b: Sql): Sql;
  doubleArithmetic(operator: NumericOperator, a: Sql, b: Sql): Sql | undefined;
  negate(a: Sql, type: EdmPrimitiveType): Sql;
  /**
   * Where a range check must not be nested (MySQL: see mysql/dialect.ts), integer results as their exact value clamped one
   * past each end, with the checks deferred to where the value is read: the emitter threads them through integer
   * arithmetic, negation and casts to integers instead of calling `integerArithmetic`, `negate` and `toInteger`.
   */
  readonly integerChecks?: IntegerChecks;
  /** round (half away from zero), floor, ceiling of a Decimal or Double. */
  rounding(name: 'round' | 'floor' | 'ceiling', a: Sql, type: 'Edm.Decimal' | 'Edm.Double'): Sql;
  /** A numeric promotion (Int32 → Int64 → Decimal → Double) of a non-null value. */
  convertNumber(a: Sql, from: EdmPrimitiveType, to: EdmPrimitiveType): Sql;
  /** cast(Double, Edm.Decimal): the double's shortest decimal text as a Decimal (null for INF and NaN). */
  doubleToDecimal: ((a: Sql) => Sql) | undefined;
  /** Decimal compared with Decimal: `a op b`, exact. */
  compareDecimal(a: Sql, operator: '=' | '<>' | '<' | '<=' | '>' | '>=', b: Sql): Sql;
  /** A Decimal as a sort key that orders exactly. */
  decimalSortKey(a: Sql): Sql;
  /** Decimal or integer as its shortest decimal text (`1.50` → `1.5`). */
  numberToText: ((a: Sql, type: EdmPrimitiveType) => Sql) | undefined;
  /** Text in the literal syntax to a Decimal, null when it is not a number (a dialect that reads it itself). */
  textToDecimal: ((a: Sql) => Sql) | undefined;
  /**
   * What the emitter needs to read numeric text itself (cast from String, emit.ts `textToNumber`), for a dialect
   * without `textToDecimal`: regular expressions and conversions of text the emitter has already checked.
   */
  readonly numericText?: NumericText;
  /** Decimal or Double to an integer type: half away from zero, null outside the target's range. */
  toInteger(a: Sql, from: EdmPrimitiveType, to: 'Edm.Int32' | 'Edm.Int64'): Sql;

  // Dates and instants, stored as each dialect keeps them (its storage).
  datePart(part: 'year' | 'month' | 'day', a: Sql, type: 'Edm.Date' | 'Edm.DateTimeOffset'): Sql;
  /** hour, minute, second (Int32) and fractionalseconds (an exact Decimal: 0.123) of an instant, in UTC. */
  timePart(part: 'hour' | 'minute' | 'second' | 'fractionalseconds', a: Sql): Sql;
  /** The UTC day of an instant, as an Edm.Date value. */
  dateOf(instant: Sql): Sql;
  /** The UTC time of day of an instant, as an Edm.TimeOfDay value: integer milliseconds since midnight. */
  timeOf(instant: Sql): Sql;
  /** hour, minute, second (Int32) and fractionalseconds (an exact Decimal) of a TimeOfDay (milliseconds, ≥ 0). */
  timeOfDayPart(part: 'hour' | 'minute' | 'second' | 'fractionalseconds', tod: Sql): Sql;
  /** Midnight UTC of a date, as an Edm.DateTimeOffset value. */
  dateToInstant(date: Sql): Sql;
  /** The current instant (milliseconds precision), as an Edm.DateTimeOffset value. */
  readonly now: Sql;

  /** `LIMIT`/`OFFSET` (either may be absent). */
  limit(top: Sql | undefined, skip: Sql | undefined): Sql;
  /** `expr` for ORDER BY with nulls first (asc) or last (desc). */
  orderItem(expr: Sql, direction: 'asc' | 'desc', nullable: boolean): Sql;
  /**
   * Set where the database's SUM of integers fails when the sum leaves 64 bits instead of widening (SQLite: "integer
   * overflow"): an aggregate giving the exact sum of integer values (or scaled decimals) as its digit text, for the
   * statement run again after such a failure.
   */
  exactIntegerSum?(value: Sql): Sql;
}

/** Spellings for reading numeric text (see `Dialect.numericText`); patterns and replacements are parameters. */
export interface NumericText {
  /** The literal syntax of a number (SEMANTICS.md "cast"), anchored at the very end of the text (not before a newline). */
  readonly syntax: string;
  /** Whether `s` matches `pattern`. */
  matches(s: Sql, pattern: Sql): Sql;
  /** `s` with the first match of `pattern` replaced by `replacement`, where `\1`, `\2` are its groups. */
  replace(s: Sql, pattern: Sql, replacement: Sql): Sql;
  /** A text of at most 9 ASCII digits as an integer. */
  digitsToInteger(t: Sql): Sql;
  /** An integer as its decimal text. */
  integerToText(n: Sql): Sql;
  /** A text `[-]digits.digit` of at most 21 digits as a Decimal. */
  shortDecimal(t: Sql): Sql;
  /** A text `[-]digits` `e` `[-]digits` (exponent within ±6144) as the exact Decimal; undefined where one cannot hold it. */
  toDecimal?(t: Sql): Sql;
  /** A text `[-]0.digits` `e` `[-]digits` (within the Double range) as the nearest double; undefined where not exact. */
  toDouble?(t: Sql): Sql;
  /** `body` over `values` each evaluated once, where the dialect has a way (else `body` repeats them). */
  share?(values: readonly Sql[], alias: string, body: (refs: readonly Sql[]) => Sql): Sql;
}

/** Integer results with deferred range checks (see `Dialect.integerChecks`). */
export interface IntegerChecks {
  /** Integer arithmetic on (clamped or plain) integer values, exact and unchecked. */
  exact(operator: NumericOperator, a: Sql, b: Sql): Sql;
  /** Negation, exact and unchecked. */
  negate(a: Sql): Sql;
  /** A Decimal or Double rounded half away from zero to an exact integer, unchecked. */
  round(a: Sql, from: EdmPrimitiveType): Sql;
  /** The exact value clamped one past each end of the range. */
  clamp(exact: Sql, type: 'Edm.Int32' | 'Edm.Int64'): Sql;
  /** Whether a clamped value is within the range. */
  inRange(clamped: Sql, type: 'Edm.Int32' | 'Edm.Int64'): Sql;
  /** The value where every check holds, else null. */
  read(value: Sql, checks: readonly Sql[]): Sql;
}

// ── storage ──────────────────────────────────────────────────────────────────

/** What a column's type depends on. */
export type ColumnFacets = Pick<Property, 'type'> &
  Partial<Pick<Property, 'maxLength' | 'precision' | 'scale' | 'isKey'>>;

/** What encoding a value depends on (a decimal's column facets). */
export type ValueFacets = Pick<Property, 'type'> & Partial<Pick<Property, 'precision' | 'scale'>>;

/**
 * A literal's parameter, or why this database cannot take it: `unsupported` (a 501: the engine could, this database
 * cannot) or `invalid` (a 400: no value this database stores could ever match or hold it).
 */
export type EncodedLiteral = SqlParam | { readonly unsupported: string } | { readonly invalid: string };

export interface Storage {
  /** The column type of a property (CREATE TABLE): the forms docs/backends.md lists, which the emitter relies on. */
  columnType(property: ColumnFacets): string;
  /** The parameter value for a literal of a query, in the form `typedParam` expects. */
  encodeLiteral(literal: Exclude<LiteralValue, { type: 'null' }>): EncodedLiteral;
  /**
   * A row value (the forms docs/backends.md lists for the memory backend) as the parameter that stores it; undefined
   * for a value the column cannot hold unchanged (the caller reports it).
   */
  encode(property: ValueFacets, value: unknown): SqlParam | undefined;
  /** A value as the driver returned it, in row form (decimals and Int64 as exact text). */
  decode(property: ValueFacets, raw: unknown): unknown;
  /** `decode` for one property, made once: for paths that decode every row (the server's JSON writer). */
  decoder(property: ValueFacets): (raw: unknown) => unknown;
  /**
   * A stored decimal (not null) as `decode` reads it when that is canonical decimal text, else undefined (a
   * PostgreSQL NaN): made once per property, so that the JSON writer can write it as a number without checking it.
   */
  decimalText(property: ValueFacets): (raw: unknown) => string | undefined;
  /** A non-negative integer as a parameter the database reads as an integer (LIMIT and OFFSET take no other). */
  integerParam(n: number): SqlParam;
  /** Set where a Decimal column holds an integer scaled by 10^scale (SQLite): see ScaledDecimals. */
  readonly scaledDecimals?: ScaledDecimals;
}

/**
 * Decimal columns kept as Int64 integers scaled by 10^scale. Such a column orders and compares as its decimals do, so
 * the emitter compares it with literals as integers (exact, and an index serves it); any other decimal value in SQL
 * is a computed one, compared only through `compareDecimal`, never with `=` or IN.
 */
export interface ScaledDecimals {
  /** The property's scale, or why its column cannot be kept this way (a 501 naming it). */
  scale(property: Pick<Property, 'name' | 'precision' | 'scale'>): number | { readonly unsupported: string };
  /** The column as a Decimal value. */
  read(column: Sql, scale: number): Sql;
  /**
   * A decimal literal times 10^scale: `exact` when it has no more places than the scale, and the floor and ceiling
   * of it, so that comparisons stay between integers.
   */
  bounds(literal: string, scale: number): { exact?: bigint; floor: bigint; ceiling: bigint };
}

// ── statements ───────────────────────────────────────────────────────────────

/** A table's name, or `[schema, name]`. Quoted as an identifier; never parsed. */
export type TableName = string | readonly [string, string];

export interface ColumnDefinition extends ColumnFacets {
  readonly name: string;
  readonly nullable: boolean;
}

export interface TableDefinition {
  readonly name: TableName;
  readonly columns: readonly ColumnDefinition[];
  /** The primary key's columns, in order. */
  readonly key: readonly string[];
}

/**
 * Statements on stored rows by column name. `where` lists columns each equal to a parameter (ANDed); the parameters
 * are numbered in the order the arguments name their columns (`update`: the SET columns, then `where`'s).
 */
export interface Statements {
  createTable(table: TableDefinition, options?: { readonly ifNotExists?: boolean }): string;
  select(table: TableName, columns: readonly string[], where?: readonly string[], orderBy?: readonly string[]): string;
  /** One row (`x`) when any row matches. */
  exists(table: TableName, where: readonly string[]): string;
  /** The largest value of a column among the matching rows (null when none), as `max`. */
  max(table: TableName, column: string, where: readonly string[]): string;
  /** INSERT of `rows` rows (default 1): each row's values in the order of `columns`. */
  insert(table: TableName, columns: readonly string[], rows?: number): string;
  update(table: TableName, set: readonly string[], where: readonly string[]): string;
  delete(table: TableName, where: readonly string[]): string;
  /**
   * Adds 1 to the `value` column of the row with the key's values, making the row with 1 where there is none: the
   * statements to run in order in one transaction, each taking the key's values as its parameters or none
   * (`keyed`); the last one returns the new value as `value`.
   */
  increment(
    table: TableName,
    key: readonly string[],
    value: string,
  ): readonly { readonly sql: string; readonly keyed: boolean }[];
  /**
   * Takes a lock named by its one parameter until the transaction ends, where concurrent transactions could
   * otherwise both read the same next number; undefined where the database runs one writing transaction at a time.
   */
  readonly transactionLock?: string;
  /** Brings the planner's statistics of a table up to date after a bulk load, where the database needs telling. */
  analyze?(table: TableName): string;
}
