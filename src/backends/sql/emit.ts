// The dialect-neutral SQL emitter: a bound query becomes one parameterized statement. What a construct means is
// decided here, once, after SEMANTICS.md; the dialect files only spell it. Values are always parameters; the only
// text that enters the SQL is identifiers from the schema or the caller's options (quoted by the dialect) and
// fixed keywords.
//
// Parameters are written as markers while fragments are built, so a fragment may be repeated or reordered freely;
// `finish` numbers them in textual order (`?` for SQLite and MySQL, `$n` for PostgreSQL).
import type { EdmPrimitiveType } from '../../values/edm.js';
import { isIntegral, isNumeric } from '../../values/edm.js';
import type { EntityType, NavigationProperty, Property } from '../../model/schema.js';
import { errorAt, ODataError } from '../../errors.js';
import type { BoundExpr, BoundQuery, BoundSearch, BoundSearchExpr, PropertySource } from '../../validate/bound.js';
import { alwaysNull } from '../../validate/bind.js';
import type { LiteralValue } from '../../syntax/ast.js';
import type {
  Dialect,
  EncodedLiteral,
  IndexedSearch,
  ScaledDecimals,
  SqlDialectName,
  SqlParam,
  Sql,
} from './dialect.js';
import { parsePattern } from '../../values/regex.js';
import { INT64_MAX, INT64_MIN } from '../../values/arithmetic.js';
import { MAX_STORABLE_INSTANT, MIN_STORABLE_INSTANT } from '../../values/calendar.js';
import { DECIMAL_EXPONENT_LIMIT, DOUBLE_OVERFLOW_DIGITS, DOUBLE_UNDERFLOW_DIGITS } from './common.js';
import { quoteTable } from './statements.js';
import { liftedSlot, pinLiteral, type LiteralSlot } from '../../syntax/lifted.js';

/** Where an entity type's rows live: the table and, where they differ from the property names, the columns. */
export interface SqlTable {
  /** A table name, or `[schema, table]`. Quoted as an identifier; never parsed. */
  readonly table: string | readonly [string, string];
  /** Property name → column name, for the properties whose column is named differently. */
  readonly columns?: Readonly<Record<string, string>>;
}

export interface SqlOptions extends SqlTable {
  readonly dialect: SqlDialectName;
  /**
   * The tables of the navigations a query reads through: child tables of collections (`any`, `all`, `$count`) and the
   * tables single-valued navigations join (`PurchaseOrder/VendorID`). By navigation name, or, where one name leads to
   * different tables from different types (`Lines` of orders and of requests), a function of the navigation.
   */
  readonly navigation?: Readonly<Record<string, SqlTable>> | ((navigation: NavigationProperty) => SqlTable | undefined);
  /**
   * Column values every row must have, on the root table and every child and joined table (the tenant's site):
   * ANDed outside the user's filter, so no filter can reach another scope's rows.
   */
  readonly scope?: Readonly<Record<string, SqlParam>>;
  /**
   * Column values the root table's rows must have beside `scope`, and only they (the parent of a contained
   * collection read under it: `WONumber` of a work order's comments).
   */
  readonly parent?: Readonly<Record<string, SqlParam>>;
  /**
   * Puts the dialect's row check first in every WHERE (the root's and each subquery's), so that the statement can be
   * stopped at a deadline even inside the database's own code. SQLite only (`odata_deadline()` for one row in 64 by
   * rowid, so the tables need one; run the statement under runWithDeadline); ignored by dialects without one.
   */
  readonly deadlineChecks?: boolean;
  /**
   * Whether the tables' full-text indexes (Dialect.searchIndex, made by schemaSql for properties with `searchIndex`)
   * serve `$search`; false: `$search` scans. Default true.
   */
  readonly searchIndex?: boolean;
}

/**
 * One aggregated column of SqlEmitter.grouped: `count` counts the non-null values; `exactsum` is a sum of integers (or
 * scaled decimals) that cannot overflow, for a dialect whose SUM fails when it would (Dialect.exactIntegerSum).
 */
export interface GroupedAggregate {
  readonly method: '$count' | 'count' | 'countdistinct' | 'min' | 'max' | 'sum' | 'exactsum';
  readonly expr?: BoundExpr;
}

/** The link of related rows to the entities they belong to (see SqlEmitter.related). */
export interface RelatedLink {
  /** The properties of the related rows that hold the entities' values (a navigation's foreign key). */
  readonly properties: readonly string[];
  /** The value tuples to find, encoded for the storage, in the order of `properties`; none holds a null. */
  readonly tuples: readonly (readonly SqlParam[])[];
  /** At most this many rows in all (a LIMIT; the caller learns from a full answer that there would be more). */
  readonly limit?: number;
}

export interface SqlStatement {
  readonly sql: string;
  readonly params: SqlParam[];
  /**
   * Beside `params`, for the statement of a query with lifted literals (src/syntax/lifted.ts): how each parameter
   * that holds one follows from the written literals. `rebindStatement` uses them.
   */
  readonly lifted?: readonly (LiftedParam | undefined)[];
}

/**
 * A parameter computed from the written literals of a query's shape; undefined where the statement would not be
 * the same for them (the query is then translated anew).
 */
export type LiftedParam = (written: readonly LiteralValue[]) => { readonly value: SqlParam } | undefined;

/**
 * The statement for other values of the lifted literals it was made from, or undefined where it would not be the
 * same statement (then the query must be translated anew). A statement without lifted literals is returned as is.
 */
export function rebindStatement(statement: SqlStatement, written: readonly LiteralValue[]): SqlStatement | undefined {
  const { lifted } = statement;
  if (lifted === undefined) return statement;
  const params = statement.params.slice();
  for (let i = 0; i < lifted.length; i++) {
    const param = lifted[i];
    if (param === undefined) continue;
    const next = param(written);
    if (next === undefined) return undefined;
    params[i] = next.value;
  }
  return { sql: statement.sql, params, lifted };
}

/** Generated SQL beyond this many characters is refused (a 400), so no query can make the emitter run away. */
export const MAX_SQL_LENGTH = 1_000_000;
/**
 * Subqueries in the generated SQL beyond this many are refused (a 400). The validator allows 32 (`maxSubqueries`),
 * but some translations name an operand more than once (MariaDB's exact decimal division and range checks), and a
 * subquery inside it is then written, planned and run once per copy: five nested quotients of a `$count` made 1,024
 * copies on PostgreSQL before its quotient named each operand once, and it planned them for minutes.
 */
export const MAX_SQL_SUBQUERIES = 128;
const SUBQUERY = /\(SELECT /g;

const MARKER_OPEN = '\u0001';
const MARKER_CLOSE = '\u0002';
const MARKER = /\u0001(\d+)\u0002/g;

type Mode = 'where' | 'exact';

interface Scope {
  /** The alias rows of this scope are read through. */
  readonly alias: string;
  readonly table: SqlTable;
  /**
   * The tables single-valued navigations from this scope's rows join, by navigation name (one join however many
   * properties are read through it), in the order they were needed. A LEFT JOIN: a row without a related row stays,
   * and reads null through it.
   */
  readonly joins: Map<string, { readonly scope: Scope; readonly on: Sql }>;
}

export class SqlEmitter {
  private readonly params: SqlParam[] = [];
  /** Beside `params`: how a parameter that holds a lifted literal follows from the written ones. */
  private readonly lifted: (LiftedParam | undefined)[] = [];
  private readonly variables = new Map<string, Scope>();
  private aliasCount = 0;
  private readonly root: Scope;

  constructor(
    private readonly dialect: Dialect,
    private readonly options: SqlOptions,
    private readonly entityType: EntityType,
  ) {
    this.root = { alias: 't0', table: options, joins: new Map() };
  }

  // ── statements ─────────────────────────────────────────────────────────────

  /**
   * The condition alone (the scope conditions and the filter), reading the root table through alias `t0`; `also`
   * comes after the scope (a related read's link), still after the row check, which must see every row visited.
   */
  where(bound: BoundQuery, also?: Sql): Sql {
    const parts = [
      ...this.rowChecks(this.root),
      ...this.scopeConditions(this.root),
      ...this.conditions(this.root, this.options.parent),
      ...(also === undefined ? [] : [also]),
    ];
    // $search: ANDed with the filter, inside the scope as the filter is
    if (bound.search !== undefined) {
      const search = this.search(bound.search);
      if (bound.filter === undefined) return [...parts, `(${search})`].join(' AND ');
      const filter = this.boolean(bound.filter, 'where');
      return [...parts, `(${filter})`, `(${search})`].join(' AND ');
    }
    if (bound.filter === undefined) return parts.length === 0 ? this.dialect.true : parts.join(' AND ');
    const filter = this.boolean(bound.filter, 'where');
    // the scope is ANDed with the whole filter, parenthesized, so no `or` in it can reach other scopes' rows
    return parts.length === 0 ? filter : `${parts.join(' AND ')} AND (${filter})`;
  }

  select(bound: BoundQuery): Sql {
    const d = this.dialect;
    const columns = this.columns(bound);
    const where = this.where(bound);
    const order = this.order(bound);
    // LIMIT takes a bare placeholder (MySQL allows no CAST there), bound as an integer
    const count = (n: number): Sql => this.rawParam(d.storage.integerParam(n));
    const limit = d.limit(
      bound.top === undefined ? undefined : count(bound.top),
      bound.skip === undefined || bound.skip === 0 ? undefined : count(bound.skip),
    );
    return `SELECT ${columns} FROM ${this.from(this.root)} WHERE ${where}${order === '' ? '' : ` ORDER BY ${order}`}${limit === '' ? '' : ` ${limit}`}`;
  }

  /**
   * The rows related to many entities at once (`$expand`): those whose `link` columns hold one of its value tuples.
   * `$top` and `$skip` apply to each tuple's rows, numbered by ROW_NUMBER over a partition by the link in the query's
   * order (column `odata_row`); with `$count`, COUNT over the same partition gives each tuple's count (`odata_count`),
   * and each tuple's first row is kept even outside the page so that its count arrives (the store drops it after).
   * The rows come in `odata_row` order, so each tuple's rows are in the query's order among themselves.
   */
  related(bound: BoundQuery, link: RelatedLink): Sql {
    const d = this.dialect;
    const columns = this.columns(bound);
    const linkColumns = link.properties.map((name) => this.column(this.root, name));
    // a composite link is an OR of ANDed tuples, parenthesized as a balanced tree: SQLite counts the depth of a flat
    // OR chain (a thousand tuples would pass its limit of 1,000), a balanced one is log2 of it deep
    const balancedOr = (terms: readonly Sql[]): Sql =>
      terms.length === 1
        ? terms[0]!
        : `(${balancedOr(terms.slice(0, terms.length >> 1))} OR ${balancedOr(terms.slice(terms.length >> 1))})`;
    const matches =
      linkColumns.length === 1
        ? `${linkColumns[0]!} IN (${link.tuples.map(([value]) => this.rawParam(value!)).join(', ')})`
        : balancedOr(
            link.tuples.map(
              (tuple) => `(${tuple.map((value, i) => `${linkColumns[i]!} = ${this.rawParam(value)}`).join(' AND ')})`,
            ),
          );
    const order = this.order(bound);
    const where = this.where(bound, matches);
    const from = `FROM ${this.from(this.root)} WHERE ${where}`;
    const skip = bound.skip ?? 0;
    const integer = (n: number): Sql => this.rawParam(d.storage.integerParam(n));
    const limit = link.limit === undefined ? '' : ` ${d.limit(integer(link.limit), undefined)}`;
    if (bound.top === undefined && skip === 0 && !bound.count) {
      return `SELECT ${columns} ${from}${order === '' ? '' : ` ORDER BY ${order}`}${limit}`;
    }
    const partition = `PARTITION BY ${linkColumns.join(', ')}`;
    const row = d.quoteIdentifier('odata_row');
    const windows = [
      `ROW_NUMBER() OVER (${partition}${order === '' ? '' : ` ORDER BY ${order}`}) AS ${row}`,
      ...(bound.count ? [`COUNT(*) OVER (${partition}) AS ${d.quoteIdentifier('odata_count')}`] : []),
    ];
    const page = [
      ...(skip > 0 ? [`${row} > ${integer(skip)}`] : []),
      ...(bound.top === undefined ? [] : [`${row} <= ${integer(skip + bound.top)}`]),
    ];
    const kept = page.length === 0 ? '' : ` WHERE ${bound.count ? `${row} = 1 OR ` : ''}${page.join(' AND ')}`;
    return `SELECT * FROM (SELECT ${columns}, ${windows.join(', ')} ${from}) AS ${d.quoteIdentifier('related')}${kept} ORDER BY ${row}${limit}`;
  }

  /** The selected columns, each named after its property (statementColumns). */
  private columns(bound: BoundQuery): Sql {
    return statementColumns(bound)
      .map((p) => `${this.column(this.root, p)} AS ${this.dialect.quoteIdentifier(p.name)}`)
      .join(', ');
  }

  /** The ORDER BY items of the query's order (empty when every key is constant). */
  private order(bound: BoundQuery): Sql {
    const d = this.dialect;
    this.target = '$orderby';
    const notNull = bound.filter === undefined ? new Set<string>() : provenNotNull(bound.filter);
    return (
      bound.orderBy
        // (a property's nullability is its column's, or the filter's where it keeps only non-null values: then
        // PostgreSQL can walk a plain index in either direction; for any other expression it is told explicitly)
        .flatMap((item) => {
          const { expr } = item;
          const nullable =
            expr.kind !== 'property' ||
            (expr.nullable && !(expr.source.kind === 'root' && notNull.has(expr.property.name)));
          const reads = this.columnsRead;
          const key = this.sortKey(expr);
          // A key that reads no column is the same for every row, so it cannot change the order; and a bare constant
          // there would be a column number to SQLite and MariaDB (`ORDER BY 1`) and an error to PostgreSQL. The
          // binder leaves such items out; this catches what only the translation folds to a constant (`isof`,
          // `x eq null`).
          if (this.columnsRead === reads) return [];
          return [d.orderItem(key, item.direction, nullable)];
        })
        .join(', ')
    );
  }

  /**
   * `$apply`'s grouping made by the database (see toSqlApply): the rows `bound`'s filter keeps, grouped by `keys`
   * (none: one group of every row, even of none), with one column per key (`k0`, `k1`, ...) and per aggregate
   * column (`a0`, ...), the groups in ascending order of their keys as `$orderby` sorts them (nulls first).
   * Decimals of a dialect that keeps them scaled (SQLite) are read, summed and compared as their scaled integers.
   */
  grouped(bound: BoundQuery, keys: readonly BoundExpr[], aggregates: readonly GroupedAggregate[], limit?: number): Sql {
    const d = this.dialect;
    this.target = '$apply';
    const scaled = d.storage.scaledDecimals;
    // a value as the database keeps it: a scaled decimal column stays its integer
    const raw = (expr: BoundExpr): Sql =>
      expr.kind === 'property' && expr.type === 'Edm.Decimal' && scaled !== undefined
        ? (this.scaleOf(scaled, expr.property, expr), this.column(this.scopeOf(expr.source), expr.property))
        : this.value(expr);
    const columns = keys.map((key, i) => `${raw(key)} AS ${d.quoteIdentifier(`k${i}`)}`);
    aggregates.forEach((aggregate, i) => {
      const value = aggregate.expr === undefined ? undefined : raw(aggregate.expr);
      columns.push(`${this.aggregateOf(aggregate, value)} AS ${d.quoteIdentifier(`a${i}`)}`);
    });
    const where = this.where(bound);
    const grouped = `SELECT ${columns.join(', ')} FROM ${this.from(this.root)} WHERE ${where}${
      keys.length === 0 ? '' : ` GROUP BY ${keys.map((_, i) => i + 1).join(', ')}`
    }`;
    if (keys.length === 0) return grouped;
    // ordered outside, by the group's columns: an ORDER BY inside would repeat the keys' parameters, which
    // PostgreSQL does not see as the grouped expressions
    const order = keys.map((key, i) => {
      const column = `${d.quoteIdentifier('g')}.${d.quoteIdentifier(`k${i}`)}`;
      const sortKey =
        key.type === 'Edm.Decimal' && !(scaled !== undefined && key.kind === 'property')
          ? d.decimalSortKey(column)
          : key.type === 'Edm.String'
            ? d.ordinal(column, false)
            : column;
      return d.orderItem(sortKey, 'asc', key.nullable);
    });
    const integer = (n: number): Sql => this.rawParam(d.storage.integerParam(n));
    const page = limit === undefined ? '' : ` ${d.limit(integer(limit), undefined)}`;
    return `SELECT * FROM (${grouped}) AS ${d.quoteIdentifier('g')} ORDER BY ${order.join(', ')}${page}`;
  }

  /** One aggregate's SQL over `value` (the aggregated value as grouped() reads it; none for `$count`). */
  private aggregateOf(aggregate: GroupedAggregate, value: Sql | undefined): Sql {
    switch (aggregate.method) {
      case '$count':
        return 'COUNT(*)';
      case 'count':
        return `COUNT(${value!})`;
      case 'countdistinct':
        return `COUNT(DISTINCT ${value!})`;
      case 'min':
        return `MIN(${value!})`;
      case 'max':
        return `MAX(${value!})`;
      case 'sum':
        return `SUM(${value!})`;
      case 'exactsum':
        return this.dialect.exactIntegerSum!(value!);
    }
  }

  count(bound: BoundQuery): Sql {
    const where = this.where(bound);
    return `SELECT COUNT(*) AS ${this.dialect.quoteIdentifier('count')} FROM ${this.from(this.root)} WHERE ${where}`;
  }

  /**
   * `$search` as a condition: a term is found when its words, space-separated between spaces, stand in the search text
   * of one of the properties (Dialect.searchText), never null; NOT, AND and OR as written. A scan, unless the dialect
   * has a search index and every property one (Dialect.searchIndex): then the index narrows the rows first.
   */
  private search(search: BoundSearch): Sql {
    const d = this.dialect;
    const pattern = (value: string): Sql => this.param(value, 'Edm.String');
    const texts = search.properties.map((p) => d.searchText(this.column(this.root, p), pattern));
    const walk = (e: BoundSearchExpr): Sql => {
      switch (e.kind) {
        case 'words': {
          const needle = this.param(` ${e.words.join(' ')} `, 'Edm.String');
          return `(${texts.map((text) => `COALESCE(${d.position(text, needle)} > 0, ${d.false})`).join(' OR ')})`;
        }
        case 'not':
          return `(NOT ${walk(e.operand)})`;
        case 'and':
        case 'or':
          return `(${walk(e.left)} ${e.kind === 'and' ? 'AND' : 'OR'} ${walk(e.right)})`;
      }
    };
    const exact = walk(search.expr);
    // where every searchable property has a full-text index (PostgreSQL's GIN), a condition it serves before the exact
    // match: for each term of ASCII letters and digits (the parser's lexemes are then its words), and no narrowing
    // under NOT or for any other term, so that it keeps every row the exact match keeps
    const index = d.searchIndex;
    if (
      index === undefined ||
      this.options.searchIndex === false ||
      !search.properties.every((p) => p.searchIndex === true)
    ) {
      return exact;
    }
    const columnOf = (name: string): string => this.root.table.columns?.[name] ?? name;
    // the row's key columns that the statement knows: the scope's, the parent's where read under one, the entity's
    const row = {
      table: this.root.table.table,
      alias: this.root.alias,
      key: [
        ...new Set([
          ...Object.keys(this.options.scope ?? {}),
          ...Object.keys(this.options.parent ?? {}),
          ...this.entityType.key.map((p) => columnOf(p.name)),
        ]),
      ],
      columns: search.properties.map((p) => columnOf(p.name)),
    };
    const indexed = (e: BoundSearchExpr): IndexedSearch | undefined => {
      switch (e.kind) {
        case 'words':
          return e.words.every((word) => /^[a-z0-9]+$/.test(word)) ? { kind: 'words', words: e.words } : undefined;
        case 'not':
          return undefined;
        case 'and': {
          const [left, right] = [indexed(e.left), indexed(e.right)];
          return left === undefined ? right : right === undefined ? left : { kind: 'and', left, right };
        }
        case 'or': {
          const [left, right] = [indexed(e.left), indexed(e.right)];
          return left === undefined || right === undefined ? undefined : { kind: 'or', left, right };
        }
      }
    };
    const asked = indexed(search.expr);
    const narrowed = asked === undefined ? undefined : index.prefilter(row, asked, pattern);
    return narrowed === undefined ? exact : `${narrowed} AND ${exact}`;
  }

  /** Whether the statement so far reads through single-valued navigations (then `where` alone is not enough). */
  get joins(): boolean {
    return this.root.joins.size > 0;
  }

  /** Replaces parameter markers with the dialect's placeholders, in textual order. */
  finish(sql: Sql): SqlStatement {
    if (sql.length > MAX_SQL_LENGTH) {
      throw new ODataError(
        'LimitExceeded',
        `The query is too complex: its SQL would exceed ${MAX_SQL_LENGTH} characters`,
      );
    }
    let subqueries = 0;
    for (SUBQUERY.lastIndex = 0; SUBQUERY.exec(sql) !== null;) subqueries++;
    if (subqueries > MAX_SQL_SUBQUERIES) {
      throw new ODataError(
        'LimitExceeded',
        `The query is too complex: its SQL would have ${subqueries} subqueries, more than ${MAX_SQL_SUBQUERIES} (an operand repeated by the translation repeats the subqueries in it)`,
      );
    }
    const params: SqlParam[] = [];
    const lifted: (LiftedParam | undefined)[] = [];
    const text = sql.replace(MARKER, (_, index: string) => {
      params.push(this.params[Number(index)]!);
      lifted.push(this.lifted[Number(index)]);
      return this.dialect.placeholder(params.length - 1);
    });
    // (some translations repeat an operand, and with it its parameters: the database would refuse the statement)
    if (params.length > this.dialect.maxParameters) {
      throw new ODataError(
        'LimitExceeded',
        `The query is too complex: its SQL would have ${params.length} parameters, more than the ${this.dialect.maxParameters} ${this.dialect.name} takes`,
      );
    }
    return lifted.some((param) => param !== undefined) ? { sql: text, params, lifted } : { sql: text, params };
  }

  /** The option being translated, for error targets. */
  private target = '$filter';

  private unsupported(expr: { readonly span: { start: number } }, what: string): ODataError {
    return unsupportedIn(this.dialect.name, this.target, expr, what);
  }

  // ── names ──────────────────────────────────────────────────────────────────

  private tableName(table: SqlTable): Sql {
    return quoteTable(this.dialect.quoteIdentifier, table.table);
  }

  /** How many column references have been written: a fragment that adds none reads no row. */
  private columnsRead = 0;

  private column(scope: Scope, property: Property | string): Sql {
    this.columnsRead++;
    const name = typeof property === 'string' ? property : property.name;
    return `${scope.alias}.${this.dialect.quoteIdentifier(scope.table.columns?.[name] ?? name)}`;
  }

  private scopeConditions(scope: Scope): Sql[] {
    return this.conditions(scope, this.options.scope);
  }

  private conditions(scope: Scope, values: Readonly<Record<string, SqlParam>> | undefined): Sql[] {
    return Object.entries(values ?? {}).map(([column, value]) =>
      value === null
        ? `${scope.alias}.${this.dialect.quoteIdentifier(column)} IS NULL`
        : `${scope.alias}.${this.dialect.quoteIdentifier(column)} = ${this.rawParam(value)}`,
    );
  }

  /**
   * A scope's table and the tables joined to it (`t0 LEFT JOIN part AS t1 ON ...`), written after everything that
   * reads the scope, since reading through a navigation adds its join.
   */
  private from(scope: Scope): Sql {
    let sql = `${this.tableName(scope.table)} AS ${scope.alias}`;
    const add = (of: Scope): void => {
      for (const { scope: joined, on } of of.joins.values()) {
        sql += ` LEFT JOIN ${this.tableName(joined.table)} AS ${joined.alias} ON ${on}`;
        add(joined);
      }
    };
    add(scope);
    return sql;
  }

  /** The rows a source reads: the root's, a lambda variable's, or those a single-valued navigation joins. */
  private scopeOf(source: PropertySource): Scope {
    switch (source.kind) {
      case 'root':
        return this.root;
      case 'variable': {
        const scope = this.variables.get(source.name);
        if (scope === undefined) throw new Error(`Unbound lambda variable ${source.name}`);
        return scope;
      }
      case 'navigation': {
        const from = this.scopeOf(source.from);
        const { navigation } = source;
        const known = from.joins.get(navigation.name);
        if (known !== undefined) return known.scope;
        const scope: Scope = { alias: `t${++this.aliasCount}`, table: this.tableOf(navigation), joins: new Map() };
        // the target's key = this row's foreign key, and the tenant's scope, in ON: a row without its related row is
        // kept (a LEFT JOIN), and every property read through it is null
        const on = [
          ...Object.entries(navigation.foreignKey).map(
            ([property, targetProperty]) => `${this.column(scope, targetProperty)} = ${this.column(from, property)}`,
          ),
          ...this.scopeConditions(scope),
        ];
        from.joins.set(navigation.name, { scope, on: on.join(' AND ') });
        return scope;
      }
    }
  }

  private tableOf(navigation: NavigationProperty): SqlTable {
    const tables = this.options.navigation;
    const table = typeof tables === 'function' ? tables(navigation) : tables?.[navigation.name];
    if (table === undefined) {
      throw new ODataError(
        'NotImplemented',
        `The SQL backend was given no table for the navigation ${navigation.name} (options.navigation)`,
        { target: this.target },
      );
    }
    return table;
  }

  /** The row check of `deadlineChecks`: first in a WHERE, so that it runs for every row visited, kept or not. */
  private rowChecks(scope: Scope): Sql[] {
    const check = this.options.deadlineChecks === true ? this.dialect.rowCheck : undefined;
    return check === undefined ? [] : [check(scope.alias)];
  }

  // ── parameters ─────────────────────────────────────────────────────────────

  private rawParam(value: SqlParam): Sql {
    this.params.push(value);
    return `${MARKER_OPEN}${this.params.length - 1}${MARKER_CLOSE}`;
  }

  private param(value: SqlParam, type: EdmPrimitiveType): Sql {
    return this.dialect.typedParam(this.rawParam(value), type, value);
  }

  /** A parameter whose value follows from a lifted literal: `follow` gives it for other written values. */
  private liftedParam(value: SqlParam, type: EdmPrimitiveType, follow: LiftedParam): Sql {
    const marker = this.rawParam(value);
    this.lifted[this.params.length - 1] = follow;
    return this.dialect.typedParam(marker, type, value);
  }

  private literal(value: LiteralValue, expr: BoundExpr): Sql {
    if (value.type === 'null') return 'NULL';
    const slot = liftedSlot(value);
    if (slot !== undefined) {
      const lifted = this.liftedLiteral(slot, value.type as EdmPrimitiveType);
      if (lifted !== undefined) return lifted;
    }
    const encoded = this.dialect.storage.encodeLiteral(value);
    if (typeof encoded === 'object' && encoded !== null && 'unsupported' in encoded) {
      throw this.unsupported(expr, encoded.unsupported);
    }
    if (typeof encoded === 'object' && encoded !== null && 'invalid' in encoded) {
      throw errorAt(
        'InvalidLiteral',
        `${encoded.invalid} cannot be used with the ${this.dialect.name} SQL dialect`,
        this.target,
        expr.span.start,
      );
    }
    return this.param(encoded, value.type as EdmPrimitiveType);
  }

  /**
   * A lifted literal as a parameter, when its value encodes (else undefined: the value is read, and so pinned, and
   * the error reported as for any literal). For another written value the parameter holds if that encodes too and
   * the dialect writes the same placeholder text for it (MySQL sizes a DECIMAL cast to the value).
   */
  private liftedLiteral(slot: LiteralSlot, type: EdmPrimitiveType): Sql | undefined {
    const { storage } = this.dialect;
    const current = slot.current;
    if (current.type === 'null') return undefined;
    const encoded = storage.encodeLiteral(current);
    if (refusedLiteral(encoded)) return undefined;
    const marker = `${MARKER_OPEN}${this.params.length}${MARKER_CLOSE}`;
    const typed = this.dialect.typedParam(marker, type, encoded);
    const dialect = this.dialect;
    return this.liftedParam(encoded, type, (written) => {
      const value = slot.derive(written);
      if (value === undefined || value.type === 'null' || value.type !== current.type) return undefined;
      const next = storage.encodeLiteral(value);
      if (refusedLiteral(next)) return undefined;
      return dialect.typedParam(marker, type, next) === typed ? { value: next } : undefined;
    });
  }

  // ── expressions ────────────────────────────────────────────────────────────

  /** A Boolean expression. In `where` mode a null may stand for false (the row is dropped either way). */
  private boolean(expr: BoundExpr, mode: Mode): Sql {
    switch (expr.kind) {
      case 'comparison':
        return this.comparison(expr, mode);
      case 'logical':
        return this.logical(expr, mode);
      case 'not':
        return `(NOT ${this.boolean(expr.operand, 'exact')})`;
      case 'in':
        return this.in(expr, mode);
      case 'lambda':
        return this.lambda(expr);
      case 'literal':
        if (expr.value.type === 'Edm.Boolean') return expr.value.value ? this.dialect.true : this.dialect.false;
        return 'NULL';
      default:
        // a Boolean property, function, cast or case: its value is the condition (null stays null)
        return this.value(expr);
    }
  }

  /**
   * A chain of one operator (`a or b or c ...`) as a balanced tree: SQLite refuses expressions nested deeper than
   * 1,000, and a left-deep chain of 1,200 `or`s is that deep; balanced, it is 11 deep.
   */
  private logical(expr: Extract<BoundExpr, { kind: 'logical' }>, mode: Mode): Sql {
    const operands: BoundExpr[] = [];
    const pending: BoundExpr[] = [expr];
    while (pending.length > 0) {
      const next = pending.pop()!;
      if (next.kind === 'logical' && next.operator === expr.operator) pending.push(next.right, next.left);
      else operands.push(next);
    }
    return this.balanced(
      operands.map((operand) => this.boolean(operand, mode)),
      expr.operator === 'and' ? 'AND' : 'OR',
    );
  }

  private balanced(parts: readonly Sql[], operator: 'AND' | 'OR'): Sql {
    if (parts.length === 1) return parts[0]!;
    const middle = parts.length >> 1;
    return `(${this.balanced(parts.slice(0, middle), operator)} ${operator} ${this.balanced(parts.slice(middle), operator)})`;
  }

  private value(expr: BoundExpr): Sql {
    const sql = this.valueOf(expr);
    // some translations repeat an operand (exact decimal division): stop before nesting makes them explode
    if (sql.length > MAX_SQL_LENGTH) throw tooComplex();
    return sql;
  }

  private valueOf(expr: BoundExpr): Sql {
    const d = this.dialect;
    // A function or operator of null is null (SEMANTICS.md), whatever this dialect could or could not translate of
    // the rest; typed, because PostgreSQL cannot choose an operator for an unknown-typed NULL (`-(NULL)`).
    if (expr.type !== 'null' && alwaysNull(expr)) return d.typedNull(expr.type);
    switch (expr.kind) {
      case 'literal':
        return this.literal(expr.value, expr);
      case 'property':
        return this.property(expr.property, expr.source, expr);
      case 'convert':
        return this.convert(expr.operand, expr.type, expr);
      case 'comparison':
      case 'logical':
      case 'not':
      case 'in':
      case 'lambda':
        return this.boolean(expr, 'exact');
      case 'arithmetic':
        return this.arithmetic(expr);
      case 'negate': {
        const parts = this.integerParts(expr);
        if (parts !== undefined) return d.integerChecks!.read(parts.value, parts.checks);
        return d.negate(this.value(expr.operand), expr.type);
      }
      case 'call':
        return this.call(expr);
      case 'cast':
        return this.cast(expr);
      case 'isof':
        // true when the operand is not null and its bound type is exactly the target (SEMANTICS.md)
        if (expr.operand.type !== expr.target) return d.false;
        return expr.operand.nullable ? `(${this.value(expr.operand)} IS NOT NULL)` : d.true;
      case 'case': {
        const branches = expr.branches
          .map(
            (b) =>
              `WHEN ${this.boolean(b.condition, 'where')} THEN ${b.result.type === 'null' && expr.type !== 'null' ? d.typedNull(expr.type) : this.value(b.result)}`,
          )
          .join(' ');
        return `(CASE ${branches} END)`;
      }
      case 'count':
        return this.countOf(expr);
    }
  }

  private property(property: Property, source: PropertySource, expr: BoundExpr): Sql {
    return this.readColumn(this.column(this.scopeOf(source), property), property, expr);
  }

  /** A column as a value of its EDM type (a dialect may keep decimals as scaled integers: ScaledDecimals). */
  private readColumn(column: Sql, property: Property, expr: BoundExpr): Sql {
    if (property.type === 'Edm.TimeOfDay' || property.type === 'Edm.Duration') {
      throw this.unsupported(expr, `reading ${property.type} properties`);
    }
    const scaled = this.dialect.storage.scaledDecimals;
    if (property.type === 'Edm.Decimal' && scaled !== undefined) {
      return scaled.read(column, this.scaleOf(scaled, property, expr));
    }
    return column;
  }

  /** A scaled decimal column's scale, or the 501 for a property it cannot be kept in. */
  private scaleOf(scaled: ScaledDecimals, property: Property, expr: { readonly span: { start: number } }): number {
    const scale = scaled.scale(property);
    if (typeof scale === 'number') return scale;
    throw this.unsupported(expr, scale.unsupported);
  }

  private convert(operand: BoundExpr, to: EdmPrimitiveType, expr: BoundExpr): Sql {
    const from = operand.type;
    if (from === 'null') return this.dialect.typedNull(to);
    if (from === to) return this.value(operand);
    if (from === 'Edm.Date' && to === 'Edm.DateTimeOffset') return this.dialect.dateToInstant(this.value(operand));
    if (isNumeric(from) && isNumeric(to)) return this.dialect.convertNumber(this.value(operand), from, to);
    throw this.unsupported(expr, `converting ${from} to ${to}`);
  }

  // ── comparisons ────────────────────────────────────────────────────────────

  private comparison(expr: Extract<BoundExpr, { kind: 'comparison' }>, mode: Mode): Sql {
    const d = this.dialect;
    const { operator, left, right } = expr;
    const leftNull = left.type === 'null';
    const rightNull = right.type === 'null';
    if (leftNull || rightNull) {
      // `x eq null`: null equals only null; an order comparison with null is false
      if (operator !== 'eq' && operator !== 'ne') return d.false;
      if (leftNull && rightNull) return operator === 'eq' ? d.true : d.false;
      const other = leftNull ? right : left;
      if (!other.nullable) return operator === 'eq' ? d.false : d.true;
      return `(${this.value(other)} ${operator === 'eq' ? 'IS NULL' : 'IS NOT NULL'})`;
    }
    const type = left.type as EdmPrimitiveType;
    if (type === 'Edm.Binary' && operator !== 'eq' && operator !== 'ne') {
      throw this.unsupported(expr, 'ordering binary values');
    }
    const fast = this.scaledComparison(expr);
    if (fast !== undefined) {
      // a null column makes the integer comparison null; `ne` already says true for it
      const exact = mode === 'where' || operator === 'ne' || (!left.nullable && !right.nullable);
      return exact ? fast : `COALESCE(${fast}, ${d.false})`;
    }

    const columns = this.sameScaleColumns(expr);
    if (columns !== undefined)
      return this.nullSafe(`(${columns[0]} ${sqlOperator(operator)} ${columns[1]})`, expr, mode, ...columns);
    let a = this.value(left);
    let b = this.value(right);
    if (type === 'Edm.Decimal') return this.nullSafe(d.compareDecimal(a, sqlOperator(operator), b), expr, mode, a, b);
    if (
      type === 'Edm.String' &&
      (operator !== 'eq' && operator !== 'ne' ? true : !isColumn(left) && !isColumn(right))
    ) {
      a = d.ordinal(a, isColumn(left));
    }
    if (operator === 'eq' || operator === 'ne') {
      const eq = operator === 'eq';
      if (!left.nullable && !right.nullable) return `(${a} ${eq ? '=' : '<>'} ${b})`;
      if (eq && mode === 'where' && (!left.nullable || !right.nullable)) return `(${a} = ${b})`;
      if (!eq && (!left.nullable || !right.nullable)) {
        // exactly one side may be null: it differs from the other (non-null) side then
        return `(${a} <> ${b} OR ${left.nullable ? a : b} IS NULL)`;
      }
      const same = d.nullSafeEqual(a, b);
      return eq ? same : `(NOT ${same})`;
    }
    const compared = `(${a} ${sqlOperator(operator)} ${b})`;
    if (mode === 'where' || (!left.nullable && !right.nullable)) return compared;
    return `COALESCE(${compared}, ${d.false})`;
  }

  /** A generic comparison made null-safe per SEMANTICS.md (used where the dialect compares through a function). */
  private nullSafe(compared: Sql, expr: Extract<BoundExpr, { kind: 'comparison' }>, mode: Mode, a: Sql, b: Sql): Sql {
    const d = this.dialect;
    const { operator, left, right } = expr;
    if (!left.nullable && !right.nullable) return compared;
    if (operator === 'eq') {
      if (mode === 'where' && (!left.nullable || !right.nullable)) return compared;
      return `(COALESCE(${compared}, ${d.false}) OR (${a} IS NULL AND ${b} IS NULL))`;
    }
    if (operator === 'ne') return `(COALESCE(${compared}, ${d.false}) OR ((${a} IS NULL) <> (${b} IS NULL)))`;
    return mode === 'where' ? compared : `COALESCE(${compared}, ${d.false})`;
  }

  /**
   * Two decimal columns kept as scaled integers at the same scale (SQLite's `QuantityReceived lt QuantityOrdered`):
   * their integers compare as the decimals do, without reading either as a decimal; undefined for anything else.
   */
  private sameScaleColumns(expr: Extract<BoundExpr, { kind: 'comparison' }>): [Sql, Sql] | undefined {
    const scaled = this.dialect.storage.scaledDecimals;
    const { left, right } = expr;
    if (scaled === undefined || left.kind !== 'property' || right.kind !== 'property') return undefined;
    if (left.type !== 'Edm.Decimal' || right.type !== 'Edm.Decimal') return undefined;
    if (this.scaleOf(scaled, left.property, expr) !== this.scaleOf(scaled, right.property, expr)) return undefined;
    return [
      this.column(this.scopeOf(left.source), left.property),
      this.column(this.scopeOf(right.source), right.property),
    ];
  }

  /**
   * Where a decimal column is a scaled integer (SQLite), comparing it with a literal compares integers, which is
   * exact and can use an index (`UnitPrice gt 10.005` at scale 4 is `UnitPrice > 100050`).
   */
  private scaledComparison(expr: Extract<BoundExpr, { kind: 'comparison' }>): Sql | undefined {
    const scaled = this.dialect.storage.scaledDecimals;
    if (scaled === undefined || expr.left.type !== 'Edm.Decimal') return undefined;
    let { left, right } = expr;
    let operator = expr.operator;
    if (left.kind === 'literal' && right.kind === 'property') {
      [left, right] = [right, left];
      operator = mirror(operator);
    }
    if (left.kind !== 'property' || right.kind !== 'literal' || right.value.type !== 'Edm.Decimal') return undefined;
    const column = this.column(this.scopeOf(left.source), left.property);
    const scale = this.scaleOf(scaled, left.property, expr);
    // a lifted literal: the bound is a parameter that follows from the written value, where the form stays the same
    const slot = liftedSlot(right.value);
    const decimal = slot?.current ?? right.value;
    if (decimal.type !== 'Edm.Decimal') return undefined;
    const bounds = scaled.bounds(decimal.value, scale);
    const inRange = (b: typeof bounds): boolean => b.floor <= INT64_MAX && b.ceiling >= INT64_MIN;
    const d = this.dialect;
    // the bound the operator compares with: `eq`/`ne` need the literal exactly, at the column's scale
    const pick = (b: typeof bounds): bigint | undefined =>
      operator === 'eq' || operator === 'ne' ? b.exact : operator === 'gt' || operator === 'le' ? b.floor : b.ceiling;
    const chosen = pick(bounds);
    if (slot !== undefined && (!inRange(bounds) || chosen === undefined)) {
      pinLiteral(right.value); // the form below is decided by this value
    }
    if (!inRange(bounds)) {
      // beyond every value a scaled (Int64) column holds: the comparison is decided by the sign alone
      const above = bounds.floor > INT64_MAX;
      const notNull = left.nullable ? `(${column} IS NOT NULL)` : d.true;
      if (operator === 'eq') return d.false;
      if (operator === 'ne') return d.true;
      return (operator === 'lt' || operator === 'le') === above ? notNull : d.false;
    }
    // a literal with more places than the column's scale equals no stored value
    if (chosen === undefined) return operator === 'eq' ? d.false : d.true;
    const bound =
      slot === undefined
        ? this.param(chosen, 'Edm.Int64')
        : this.liftedParam(chosen, 'Edm.Int64', (written) => {
            const value = slot.derive(written);
            if (value?.type !== 'Edm.Decimal') return undefined;
            const next = scaled.bounds(value.value, scale);
            const nextChosen = pick(next);
            return inRange(next) && nextChosen !== undefined ? { value: nextChosen } : undefined;
          });
    switch (operator) {
      case 'eq':
        return `(${column} = ${bound})`;
      case 'ne':
        return `(${column} <> ${bound}${left.nullable ? ` OR ${column} IS NULL` : ''})`;
      case 'gt':
        return `(${column} > ${bound})`;
      case 'ge':
        return `(${column} >= ${bound})`;
      case 'lt':
        return `(${column} < ${bound})`;
      case 'le':
        return `(${column} <= ${bound})`;
    }
  }

  private in(expr: Extract<BoundExpr, { kind: 'in' }>, mode: Mode): Sql {
    // `x in (a, b, null)` is `x eq a or x eq b or x eq null` (SEMANTICS.md). Items that can never be null go into
    // one IN list (an index can serve it, and a long list stays one flat expression); items that may be null are
    // compared one by one, null-safely.
    const d = this.dialect;
    const { left, items } = expr;
    if (items.length === 0) return d.false;
    if (left.type === 'null') {
      return items.some((item) => item.type === 'null' || item.nullable)
        ? this.orComparisons(expr, items, mode)
        : d.false;
    }
    const listable = (item: BoundExpr): boolean => item.type !== 'null' && !item.nullable;
    const listed = items.filter(listable);
    const others = items.filter((item) => !listable(item));
    const parts: Sql[] = [];
    const list = this.inList(left, listed);
    if (list !== undefined) {
      // a null left side makes IN null: false, except where null and false are the same (the top of WHERE)
      parts.push(left.nullable && mode === 'exact' ? `COALESCE(${list}, ${d.false})` : list);
    } else if (listed.length > 0) {
      parts.push(this.orComparisons(expr, listed, mode));
    }
    if (others.some((item) => item.type === 'null')) {
      if (left.nullable) parts.push(`(${this.value(left)} IS NULL)`);
    }
    const nullable = others.filter((item) => item.type !== 'null');
    if (nullable.length > 0) parts.push(this.orComparisons(expr, nullable, mode));
    return parts.length === 0 ? d.false : this.balanced(parts, 'OR');
  }

  /** `left IN (items)` for non-null items, or undefined where the dialect must compare them one by one. */
  private inList(left: BoundExpr, items: readonly BoundExpr[]): Sql | undefined {
    if (items.length === 0) return undefined;
    const d = this.dialect;
    const scaled = d.storage.scaledDecimals;
    if (left.type === 'Edm.Decimal' && scaled !== undefined) {
      // a scaled decimal column against decimal literals is an IN list of scaled integers; any other decimal value
      // there is compared item by item (compareDecimal)
      if (left.kind !== 'property' || !items.every((i) => i.kind === 'literal' && i.value.type === 'Edm.Decimal')) {
        return undefined;
      }
      const scope = this.scopeOf(left.source);
      const scale = this.scaleOf(scaled, left.property, left);
      const exact = items
        .map((i) =>
          i.kind === 'literal' && i.value.type === 'Edm.Decimal'
            ? scaled.bounds(i.value.value, scale).exact
            : undefined,
        )
        .filter((n): n is bigint => n !== undefined && n >= INT64_MIN && n <= INT64_MAX);
      if (exact.length === 0) return d.false;
      return `(${this.column(scope, left.property)} IN (${exact.map((n) => this.param(n, 'Edm.Int64')).join(', ')}))`;
    }
    const value = this.value(left);
    // equality needs the binary collation only where no column supplies it (as for `eq`)
    const target = left.type === 'Edm.String' && !isColumn(left) ? d.ordinal(value) : value;
    return `(${target} IN (${items.map((i) => this.value(i)).join(', ')}))`;
  }

  private orComparisons(expr: Extract<BoundExpr, { kind: 'in' }>, items: readonly BoundExpr[], mode: Mode): Sql {
    return this.balanced(
      items.map((item) =>
        this.comparison(
          {
            kind: 'comparison',
            type: 'Edm.Boolean',
            nullable: false,
            span: expr.span,
            operator: 'eq',
            left: expr.left,
            right: item,
          },
          mode,
        ),
      ),
      'OR',
    );
  }

  // ── arithmetic ─────────────────────────────────────────────────────────────

  private arithmetic(expr: Extract<BoundExpr, { kind: 'arithmetic' }>): Sql {
    const d = this.dialect;
    const { operator, type } = expr;
    const operandType = expr.left.type === 'null' ? expr.right.type : expr.left.type;
    // null in, null out (SEMANTICS.md), typed so that an operator applied to it can be chosen
    if (expr.left.type === 'null' || expr.right.type === 'null') return d.typedNull(type);
    if (!isNumeric(type) || !isNumeric(operandType as EdmPrimitiveType)) {
      throw this.unsupported(expr, `${operator} on ${operandType}`);
    }
    const parts = this.integerParts(expr);
    if (parts !== undefined) return d.integerChecks!.read(parts.value, parts.checks);
    const a = this.value(expr.left);
    const b = this.value(expr.right);
    if (operator === 'divby') {
      if (type === 'Edm.Double') {
        const sql = d.doubleArithmetic(
          'div',
          this.toType(a, operandType, 'Edm.Double'),
          this.toType(b, expr.right.type, 'Edm.Double'),
        );
        if (sql === undefined) throw this.unsupported(expr, 'divby on Edm.Double');
        return sql;
      }
      return d.decimalArithmetic(
        'divby',
        this.toType(a, operandType, 'Edm.Decimal'),
        this.toType(b, expr.right.type, 'Edm.Decimal'),
      );
    }
    if (isIntegral(type)) return d.integerArithmetic(operator, a, b);
    if (type === 'Edm.Decimal') return d.decimalArithmetic(operator, a, b);
    const sql = d.doubleArithmetic(operator, a, b);
    if (sql === undefined) throw this.unsupported(expr, `${operator} on Edm.Double`);
    return sql;
  }

  /** Deferred integer checks (Dialect.integerChecks), per node: each is made once, however often it is read. */
  private readonly integers = new Map<BoundExpr, { readonly value: Sql; readonly checks: readonly Sql[] }>();

  /**
   * An integer result as its clamped exact value and the range checks of it and of every integer result it is made
   * of, where the dialect defers them; undefined where it does not, or for a node that makes no checked integer.
   */
  private integerParts(expr: BoundExpr): { readonly value: Sql; readonly checks: readonly Sql[] } | undefined {
    const ic = this.dialect.integerChecks;
    if (ic === undefined || alwaysNull(expr)) return undefined;
    const known = this.integers.get(expr);
    if (known !== undefined) return known;
    // an operand that is itself a checked integer passes its value and checks on, anything else is read as it is
    const operand = (e: BoundExpr): { readonly value: Sql; readonly checks: readonly Sql[] } =>
      this.integerParts(e) ?? { value: this.value(e), checks: [] };
    let parts: { readonly value: Sql; readonly checks: readonly Sql[] } | undefined;
    // results are null outside Int64 (SEMANTICS.md), whether typed Int32 or Int64, as in memory
    const checked = (exact: Sql, checks: readonly Sql[], type: 'Edm.Int32' | 'Edm.Int64' = 'Edm.Int64') => {
      const value = ic.clamp(exact, type);
      return { value, checks: [...checks, ic.inRange(value, type)] };
    };
    if (expr.kind === 'arithmetic' && isIntegral(expr.type)) {
      const l = operand(expr.left);
      const r = operand(expr.right);
      const exact = ic.exact(expr.operator === 'divby' ? 'div' : expr.operator, l.value, r.value);
      // a remainder is within the range of its operands
      parts =
        expr.operator === 'mod'
          ? { value: exact, checks: [...l.checks, ...r.checks] }
          : checked(exact, [...l.checks, ...r.checks]);
    } else if (expr.kind === 'negate' && isIntegral(expr.type)) {
      const o = operand(expr.operand);
      parts = checked(ic.negate(o.value), o.checks);
    } else if (expr.kind === 'convert' && isIntegral(expr.type) && isIntegral(expr.operand.type as EdmPrimitiveType)) {
      parts = this.integerParts(expr.operand);
    } else if (
      expr.kind === 'cast' &&
      (expr.type === 'Edm.Int32' || expr.type === 'Edm.Int64') &&
      expr.operand.type !== expr.type &&
      isNumeric(expr.operand.type as EdmPrimitiveType)
    ) {
      const from = expr.operand.type as EdmPrimitiveType;
      const o = operand(expr.operand);
      // every integer result is already within Int64 (or null): to Int64 it needs no check of its own
      parts =
        isIntegral(from) && expr.type === 'Edm.Int64'
          ? o
          : checked(isIntegral(from) ? o.value : ic.round(o.value, from), o.checks, expr.type);
    }
    if (parts !== undefined) {
      // (the checks name their values again: stop before a deep expression makes them explode)
      if (parts.checks.reduce((n, c) => n + c.length, parts.value.length) > MAX_SQL_LENGTH) throw tooComplex();
      this.integers.set(expr, parts);
    }
    return parts;
  }

  private toType(sql: Sql, from: EdmPrimitiveType | 'null', to: EdmPrimitiveType): Sql {
    return from === to || from === 'null' ? sql : this.dialect.convertNumber(sql, from, to);
  }

  // ── functions ──────────────────────────────────────────────────────────────

  private call(expr: Extract<BoundExpr, { kind: 'call' }>): Sql {
    const d = this.dialect;
    const args = expr.args.map((a) => this.value(a));
    const [a0, a1, a2] = args;
    switch (expr.name) {
      case 'contains':
      case 'startswith':
      case 'endswith': {
        if (d.textMatch !== undefined) {
          const second = expr.args[1]!;
          const literal =
            second.kind === 'literal' && second.value.type === 'Edm.String' ? second.value.value : undefined;
          return d.textMatch(expr.name, a0!, a1!, literal, (value) => this.param(value, 'Edm.String'));
        }
        return d.like(a0!, this.likePattern(expr.args[1]!, expr.name, a1!), isColumn(expr.args[0]!));
      }
      case 'indexof':
        return `(${d.position(a0!, a1!)} - 1)`;
      case 'length':
        return d.length(a0!);
      case 'substring': {
        // 0-based in OData, 1-based in SQL; a negative start or length is null (SEMANTICS.md)
        const start = a1!;
        if (a2 === undefined) {
          return `(CASE WHEN ${start} < 0 THEN NULL ELSE ${d.substring(a0!, start)} END)`;
        }
        return `(CASE WHEN ${start} < 0 OR ${a2} < 0 THEN NULL ELSE ${d.substring(a0!, start, a2)} END)`;
      }
      case 'tolower':
        return d.lower(a0!);
      case 'toupper':
        return d.upper(a0!);
      case 'trim':
        return d.trim(a0!, (value) => this.param(value, 'Edm.String'));
      case 'concat':
        return d.concat(a0!, a1!); // null in, null out in every dialect's form
      case 'matchesPattern': {
        if (d.matchesPattern !== undefined) return d.matchesPattern(a0!, a1!);
        const pattern = expr.args[1]!;
        if (d.regexMatch === undefined) throw this.unsupported(expr, 'matchesPattern');
        if (pattern.kind !== 'literal' || pattern.value.type !== 'Edm.String')
          throw this.unsupported(expr, 'matchesPattern with a pattern that is not a literal');
        const parsed = parsePattern(pattern.value.value);
        // the validator refuses a literal pattern that does not parse; null, as in memory, for a tree built elsewhere
        if (!parsed.ok) return d.typedNull('Edm.Boolean');
        const match = d.regexMatch(a0!, parsed.pattern, (value) => this.param(value, 'Edm.String'));
        if (typeof match !== 'string') throw this.unsupported(expr, match.unsupported);
        return match;
      }
      case 'year':
      case 'month':
      case 'day': {
        const type = expr.args[0]!.type;
        if (type !== 'Edm.Date' && type !== 'Edm.DateTimeOffset')
          throw this.unsupported(expr, `${expr.name} of ${type}`);
        return d.datePart(expr.name, a0!, type);
      }
      case 'hour':
      case 'minute':
      case 'second':
      case 'fractionalseconds': {
        const type = expr.args[0]!.type;
        // a TimeOfDay is milliseconds since midnight (each dialect's encodeLiteral, `time` below)
        if (type === 'Edm.TimeOfDay') return d.timeOfDayPart(expr.name, a0!);
        if (type !== 'Edm.DateTimeOffset') throw this.unsupported(expr, `${expr.name} of ${type}`);
        return d.timePart(expr.name, a0!);
      }
      case 'date':
        return d.dateOf(a0!);
      case 'time':
        return d.timeOf(a0!);
      case 'totaloffsetminutes': {
        // stored values are kept in UTC; a literal keeps its own offset (SEMANTICS.md)
        const arg = expr.args[0]!;
        const offset = arg.kind === 'literal' && arg.value.type === 'Edm.DateTimeOffset' ? arg.value.offsetMinutes : 0;
        return `(CASE WHEN ${a0} IS NULL THEN NULL ELSE ${this.param(offset, 'Edm.Int32')} END)`;
      }
      case 'now':
        return d.now;
      case 'maxdatetime':
        return this.literal(instantLiteral(MAX_STORABLE_INSTANT), expr);
      case 'mindatetime':
        return this.literal(instantLiteral(MIN_STORABLE_INSTANT), expr);
      case 'round':
      case 'floor':
      case 'ceiling':
        return d.rounding(expr.name, a0!, expr.type === 'Edm.Double' ? 'Edm.Double' : 'Edm.Decimal');
      default:
        throw this.unsupported(expr, expr.name);
    }
  }

  /** The LIKE pattern for contains/startswith/endswith: a literal is escaped here, an expression in SQL. */
  private likePattern(arg: BoundExpr, name: 'contains' | 'startswith' | 'endswith', sql: Sql): Sql {
    const before = name === 'startswith' ? '' : '%';
    const after = name === 'endswith' ? '' : '%';
    if (arg.kind === 'literal' && arg.value.type === 'Edm.String') {
      return this.param(`${before}${escapeLike(arg.value.value)}${after}`, 'Edm.String');
    }
    const d = this.dialect;
    const escaped = `REPLACE(REPLACE(REPLACE(${sql}, ${this.param('\\', 'Edm.String')}, ${this.param('\\\\', 'Edm.String')}), ${this.param('%', 'Edm.String')}, ${this.param('\\%', 'Edm.String')}), ${this.param('_', 'Edm.String')}, ${this.param('\\_', 'Edm.String')})`;
    let pattern = escaped;
    if (before !== '') pattern = d.concat(this.param(before, 'Edm.String'), pattern);
    if (after !== '') pattern = d.concat(pattern, this.param(after, 'Edm.String'));
    return pattern;
  }

  private cast(expr: Extract<BoundExpr, { kind: 'cast' }>): Sql {
    const d = this.dialect;
    const from = expr.operand.type;
    const to = expr.type;
    if (from === 'null') return d.typedNull(to);
    if (from === to) return this.value(expr.operand);
    const a = this.value(expr.operand);
    if (from === 'Edm.Date' && to === 'Edm.DateTimeOffset') return d.dateToInstant(a);
    let sql: Sql | undefined;
    if (to === 'Edm.String' && (isIntegral(from) || from === 'Edm.Decimal')) sql = d.numberToText?.(a, from);
    else if (from === 'Edm.String' && isNumeric(to)) sql = this.textToNumber(a, to, expr);
    else if (from === 'Edm.Double' && to === 'Edm.Decimal') sql = d.doubleToDecimal?.(a);
    else if (isNumeric(from) && (to === 'Edm.Int32' || to === 'Edm.Int64')) {
      const parts = this.integerParts(expr);
      sql = parts === undefined ? d.toInteger(a, from, to) : d.integerChecks!.read(parts.value, parts.checks);
    } else if (isNumeric(from) && isNumeric(to)) sql = d.convertNumber(a, from, to);
    if (sql === undefined) throw this.unsupported(expr, `cast from ${from} to ${to}`);
    return sql;
  }

  /**
   * cast(String → number), SEMANTICS.md: only text in the literal's own syntax is a number, anything else is null;
   * its value is the exact decimal the text denotes, as the memory backend reads it (parseDecimal: null beyond a
   * normalized exponent of ±6144), rounded half away from zero for an integer type and to the nearest double for a
   * Double. A dialect that reads numeric text itself (SQLite's odata_text_dec, the memory backend's own code) is
   * given it; for the others the text is taken apart with regular expressions here, so that no database is ever
   * asked to parse text it would refuse, round or overflow on.
   */
  private textToNumber(s: Sql, to: EdmPrimitiveType, expr: BoundExpr): Sql | undefined {
    const d = this.dialect;
    if (d.textToDecimal !== undefined) {
      const decimal = d.textToDecimal(s);
      if (to === 'Edm.Decimal') return decimal;
      if (to === 'Edm.Double') return d.convertNumber(decimal, 'Edm.Decimal', 'Edm.Double');
      return d.toInteger(decimal, 'Edm.Decimal', to as 'Edm.Int32' | 'Edm.Int64');
    }
    const t = d.numericText;
    if (t === undefined) return undefined;
    const integer = to === 'Edm.Int32' || to === 'Edm.Int64';
    if (!integer && (to === 'Edm.Double' ? t.toDouble : t.toDecimal) === undefined) return undefined;
    const text = (value: string): Sql => this.param(value, 'Edm.String');
    const replace = (x: Sql, pattern: string, replacement: string): Sql =>
      t.replace(x, text(pattern), text(replacement));
    const share = (values: readonly Sql[], body: (refs: readonly Sql[]) => Sql): Sql =>
      t.share === undefined ? body(values) : t.share(values, `n${++this.aliasCount}`, body);
    return share([s], ([v]) => {
      const value = v!;
      // the mantissa's digits without its point, the integer digits, the exponent (without leading zeros)
      const digits = replace(value, '^[+-]?([0-9]+)[.]?([0-9]*)([eE].*)?$', '\\1\\2');
      const integerDigits = replace(value, '^[+-]?([0-9]+).*$', '\\1');
      const exponent = replace(replace(value, '^[^eE]*[eE]?', ''), '^[+-]?0*', '');
      const sign = (x: Sql): Sql => `CASE WHEN ${t.matches(value, text('[eE]-'))} THEN -${x} ELSE ${x} END`;
      // an exponent of ten or more digits is beyond every limit below, either way
      const e = `(CASE WHEN ${d.length(exponent)} = 0 THEN 0 WHEN ${d.length(exponent)} > 9 THEN ${sign('1000000000')} ELSE ${sign(t.digitsToInteger(exponent))} END)`;
      const leading = replace(digits, '^0+', '');
      const significant = replace(leading, '0+$', '');
      const zeros = `(${d.length(digits)} - ${d.length(leading)})`;
      // the power of ten of the first significant digit
      const magnitude = `(${d.length(integerDigits)} - ${zeros} - 1 + ${e})`;
      const negative = t.matches(value, text('^-'));
      return `(CASE WHEN ${t.matches(value, text(t.syntax))} THEN ${share([significant, magnitude], ([sig, m]) => {
        const count = d.length(sig!);
        // parseDecimal keeps a normalized exponent (of the last significant digit) within ±6144
        const exponentOf = `(${m} - ${count} + 1)`;
        const head = `WHEN ${count} = 0 THEN 0 WHEN ${exponentOf} > ${DECIMAL_EXPONENT_LIMIT} OR ${exponentOf} < -${DECIMAL_EXPONENT_LIMIT} THEN NULL`;
        const minus = `CASE WHEN ${negative} THEN ${text('-')} ELSE ${text('')} END`;
        if (integer) {
          // Half away from zero depends on the integer digits and the first place alone: beyond 10^19 no Int64 holds
          // it, below 0.1 it is 0. Only what is left is converted, as [-]0<integer digits>.<first place>.
          const padded = d.concat(sig!, text('0'.repeat(20)));
          const whole = d.substring(padded, '0', `(${m} + 1)`);
          const place = d.substring(padded, `(${m} + 1)`, '1');
          const decimal = t.shortDecimal(
            d.concat(d.concat(minus, d.concat(text('0'), whole)), d.concat(text('.'), place)),
          );
          const rounded = d.toInteger(decimal, 'Edm.Decimal', to);
          return `(CASE ${head} WHEN ${m} > 18 THEN NULL WHEN ${m} < -1 THEN 0 ELSE ${rounded} END)`;
        }
        if (to === 'Edm.Decimal') {
          const exact = d.concat(d.concat(minus, sig!), d.concat(text('e'), t.integerToText(exponentOf)));
          return `(CASE ${head} ELSE ${t.toDecimal!(exact)} END)`;
        }
        // Double: beyond the largest finite double (the decision at 10^308 is made on the digits, exactly) the value
        // is ±Infinity, as the memory backend's conversion gives; below half the smallest subnormal it is 0
        const infinity = `CASE WHEN ${negative} THEN ${this.literal({ type: 'Edm.Double', value: -Infinity }, expr)} ELSE ${this.literal({ type: 'Edm.Double', value: Infinity }, expr)} END`;
        const nearest = t.toDouble!(
          d.concat(d.concat(minus, d.concat(text('0.'), sig!)), d.concat(text('e'), t.integerToText(`(${m} + 1)`))),
        );
        return `(CASE ${head} WHEN ${m} > 308 OR (${m} = 308 AND ${d.ordinal(sig!)} >= ${text(DOUBLE_OVERFLOW_DIGITS)}) THEN ${infinity} WHEN ${m} < -324 OR (${m} = -324 AND ${d.ordinal(sig!)} <= ${text(DOUBLE_UNDERFLOW_DIGITS)}) THEN 0 ELSE ${nearest} END)`;
      })} END)`;
    });
  }

  // ── navigation ─────────────────────────────────────────────────────────────

  /**
   * Opens a child scope for a navigation collection; `body` writes the subquery from its `FROM child AS tN WHERE
   * child.fk = parent.key AND scope` (with the joins the body's reads add, so it is written after them).
   */
  private childScope(
    navigation: NavigationProperty,
    source: PropertySource,
    variable: string,
    body: (from: () => Sql) => Sql,
  ): Sql {
    const table = this.tableOf(navigation);
    const parent = this.scopeOf(source);
    const scope: Scope = { alias: `t${++this.aliasCount}`, table, joins: new Map() };
    const join = Object.entries(navigation.foreignKey).map(
      ([parentKey, childColumn]) => `${this.column(scope, childColumn)} = ${this.column(parent, parentKey)}`,
    );
    // the row check before the join condition too: without an index on it, every child row is visited
    join.unshift(...this.rowChecks(scope));
    join.push(...this.scopeConditions(scope));
    const previous = this.variables.get(variable);
    this.variables.set(variable, scope);
    try {
      return body(() => `FROM ${this.from(scope)} WHERE ${join.join(' AND ')}`);
    } finally {
      if (previous === undefined) this.variables.delete(variable);
      else this.variables.set(variable, previous);
    }
  }

  private lambda(expr: Extract<BoundExpr, { kind: 'lambda' }>): Sql {
    return this.childScope(expr.navigation, expr.source, expr.variable, (from) => {
      if (expr.predicate === undefined) return `EXISTS (SELECT 1 ${from()})`;
      if (expr.operator === 'any') {
        const predicate = this.boolean(expr.predicate, 'where');
        return `EXISTS (SELECT 1 ${from()} AND ${predicate})`;
      }
      // all: no child for which the predicate is not true (false and null both fail it)
      const failing = this.notTrue(this.boolean(expr.predicate, 'where'));
      return `(NOT EXISTS (SELECT 1 ${from()} AND ${failing}))`;
    });
  }

  private countOf(expr: Extract<BoundExpr, { kind: 'count' }>): Sql {
    return this.childScope(expr.navigation, expr.source, expr.variable, (from) => {
      const filter = expr.filter === undefined ? '' : ` AND ${this.boolean(expr.filter, 'where')}`;
      return `(SELECT COUNT(*) ${from()}${filter})`;
    });
  }

  private notTrue(condition: Sql): Sql {
    return `COALESCE(${condition}, ${this.dialect.false}) = ${this.dialect.false}`;
  }

  // ── ordering ───────────────────────────────────────────────────────────────

  private sortKey(expr: BoundExpr): Sql {
    const d = this.dialect;
    if (expr.type === 'Edm.Binary') throw this.unsupported(expr, 'ordering by a binary value');
    if (expr.kind === 'property' && expr.type === 'Edm.Decimal' && d.storage.scaledDecimals !== undefined) {
      // scaled integers order as their decimals do
      return this.column(this.scopeOf(expr.source), expr.property);
    }
    const value = this.value(expr);
    if (expr.type === 'Edm.Decimal') return d.decimalSortKey(value);
    if (expr.type === 'Edm.String') return d.ordinal(value, isColumn(expr));
    return value;
  }
}

// ── helpers ──────────────────────────────────────────────────────────────────

/**
 * The properties a query's statement (toSql, toSqlRelated) has columns for, in this order: the selected ones, or
 * the key where none is (a `$select` of navigations only: SQL must select something). toSqlRelated adds `odata_row`
 * and `odata_count` after them where it pages or counts.
 */
export function statementColumns(bound: BoundQuery): readonly Property[] {
  return bound.select.length === 0 ? bound.entityType.key : bound.select;
}

function tooComplex(): ODataError {
  return new ODataError('LimitExceeded', `The query is too complex: its SQL would exceed ${MAX_SQL_LENGTH} characters`);
}

/**
 * Root properties the filter keeps only non-null values of: those compared (other than `ne`) with a non-null value
 * in its top-level `and` chain, where a null would make the comparison drop the row.
 */
function provenNotNull(filter: BoundExpr): Set<string> {
  const names = new Set<string>();
  const pending = [filter];
  while (pending.length > 0) {
    const e = pending.pop()!;
    if (e.kind === 'logical' && e.operator === 'and') pending.push(e.left, e.right);
    else if (e.kind === 'comparison' && e.operator !== 'ne') {
      for (const [side, other] of [
        [e.left, e.right],
        [e.right, e.left],
      ] as const) {
        if (side.kind === 'property' && side.source.kind === 'root' && other.type !== 'null' && !other.nullable) {
          names.add(side.property.name);
        }
      }
    }
  }
  return names;
}

function isColumn(expr: BoundExpr): boolean {
  return expr.kind === 'property';
}

function sqlOperator(operator: 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'): '=' | '<>' | '<' | '<=' | '>' | '>=' {
  switch (operator) {
    case 'eq':
      return '=';
    case 'ne':
      return '<>';
    case 'gt':
      return '>';
    case 'ge':
      return '>=';
    case 'lt':
      return '<';
    case 'le':
      return '<=';
  }
}

function mirror<T extends 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le'>(
  operator: T,
): 'eq' | 'ne' | 'gt' | 'ge' | 'lt' | 'le' {
  switch (operator) {
    case 'gt':
      return 'lt';
    case 'ge':
      return 'le';
    case 'lt':
      return 'gt';
    case 'le':
      return 'ge';
    default:
      return operator;
  }
}

/** Whether the dialect's storage refused a literal (`encodeLiteral`): a value it cannot take as a parameter. */
function refusedLiteral(
  encoded: EncodedLiteral,
): encoded is { readonly unsupported: string } | { readonly invalid: string } {
  return typeof encoded === 'object' && encoded !== null && ('unsupported' in encoded || 'invalid' in encoded);
}

/** `%`, `_` and the escape character itself are literal characters in contains/startswith/endswith. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function instantLiteral(epochMilliseconds: number): LiteralValue {
  return {
    type: 'Edm.DateTimeOffset',
    value: new Date(epochMilliseconds).toISOString(),
    epochMilliseconds,
    offsetMinutes: 0,
  };
}

/** 501 at the construct: `what` is not translated for this dialect (docs/backends.md lists what is). */
function unsupportedIn(
  dialect: SqlDialectName,
  target: string,
  expr: { readonly span: { start: number } },
  what: string,
): ODataError {
  return errorAt('NotImplemented', `${what} is not supported by the ${dialect} SQL dialect`, target, expr.span.start);
}
