// A store in SQL (SQLite, PostgreSQL, MySQL/MariaDB through a driver): reads run the SQL backend's statements, with
// the store's scope (a tenant's column values) as conditions no filter can leave; writes are parameterized
// INSERT/UPDATE/DELETE that the driver's dialect writes from the model. Each collection of the model is a table named
// after it (or as `tables` says); a contained collection's table leads its key with the parent's key.
import {
  createTableSql,
  isSumOverflow,
  toSql,
  toSqlApply,
  toSqlCount,
  toSqlRelated,
  statementColumns,
  type SqlOptions,
  type SqlParam,
  type SqlStatement,
  type SqlTable,
} from '../../backends/sql/index.js';
import type { Statements, Storage, TableDefinition } from '../../backends/sql/dialect.js';
import { dialects } from '../../backends/sql/dialects.js';
import { ODataError } from '../../errors.js';
import type { EntityType, Model, NavigationProperty, Property, Row } from '../../model/schema.js';
import type { BoundApply, BoundQuery } from '../../validate/bound.js';
import { rebindStatement } from '../../backends/sql/emit.js';
import { rawEntityWriter } from '../json.js';
import {
  collectionsOf,
  duplicateKey,
  linkTupleText,
  type PreparedApply,
  type PreparedCount,
  type PreparedRead,
  type PrepareOptions,
  type ReadOptions,
  type ReadResult,
  type RelatedLink,
  type RelatedResult,
  SignalOf,
  type Store,
  type StoreCollection,
  type StoreTransaction,
} from '../store.js';
import {
  isDuplicateKey,
  unavailable,
  type RawRow,
  type ReadOptions as DriverReadOptions,
  type SqlDriver,
  type SqlSession,
} from './driver.js';

export interface ReadStatements {
  readonly rows: SqlStatement;
  /** The columns of `rows`, in order: the selected properties (the key where none is). */
  readonly columns: readonly string[];
  readonly count?: SqlStatement;
}

/** Bound parameters and rows in one multi-row INSERT. */
const MAX_BATCH_PARAMS = 30_000;
const MAX_BATCH_ROWS = 500;

/** The per-store counters (`nextSequence`): a name and its last value, under the scope columns. */
const SEQUENCES = 'odata_sequences';

function sequencesTable(scopeColumns: readonly string[]): TableDefinition {
  const name = { name: 'name', type: 'Edm.String', maxLength: 100, isKey: true, nullable: false } as const;
  return {
    name: SEQUENCES,
    columns: [
      ...scopeColumns.map((column) => ({ ...name, name: column })),
      name,
      { name: 'value', type: 'Edm.Int64', nullable: false },
    ],
    key: [...scopeColumns, 'name'],
  };
}

/** Where a model's collections are kept, and which rows of them a store sees. */
export interface SqlStoreOptions {
  readonly model: Model;
  /** Table names by collection name (entity set, or a contained collection's entity type); default: the name. */
  readonly tables?: Readonly<Record<string, string>>;
  /**
   * Columns every table leads its key with, and this store's values of them (`{ site: 'north' }`): many stores (one
   * per tenant) share the tables, each seeing and writing only its own rows.
   */
  readonly scope?: Readonly<Record<string, string>>;
  /**
   * Whether the full-text indexes schemaSql makes serve `$search` (false: it scans). openSqlStore sets it from the
   * server's settings (searchIndexFits); default true.
   */
  readonly searchIndex?: boolean;
}

/** A collection's table's whole key: the scope columns, the parent key (a contained collection), the entity key. */
function tableKey(scopeColumns: readonly string[], c: StoreCollection): string[] {
  return [...scopeColumns, ...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)];
}

/** The statements that create every table of a model's collections and the sequences (idempotent). */
export function schemaSql(
  dialect: SqlDriver['dialect'],
  options: Pick<SqlStoreOptions, 'model' | 'tables'> & { readonly scopeColumns?: readonly string[] },
): string[] {
  const scopeColumns = options.scopeColumns ?? [];
  const statements: string[] = [];
  for (const c of collectionsOf(options.model).values()) {
    const table = options.tables?.[c.name] ?? c.name;
    statements.push(
      createTableSql(c.entityType, {
        dialect,
        table,
        ifNotExists: true,
        ...(scopeColumns.length === 0
          ? {}
          : { scopeColumns: Object.fromEntries(scopeColumns.map((column) => [column, 'Edm.String' as const])) }),
        ...(c.parentKey === undefined ? {} : { parentKey: c.parentKey }),
      }),
    );
    // the full-text index where the model asks for one and the dialect has one
    const { searchIndex } = dialects[dialect];
    const indexed = [...c.entityType.properties.values()].filter((p) => p.searchIndex === true).map((p) => p.name);
    if (searchIndex !== undefined && indexed.length > 0) {
      statements.push(...searchIndex.indexSql(table, tableKey(scopeColumns, c), indexed));
    }
  }
  statements.push(dialects[dialect].statements.createTable(sequencesTable(scopeColumns), { ifNotExists: true }));
  return statements;
}

/** A store over `driver` with the model's tables, created where they do not exist yet. */
export async function openSqlStore(driver: SqlDriver, options: SqlStoreOptions): Promise<SqlStore> {
  const scopeColumns = Object.keys(options.scope ?? {});
  for (const sql of schemaSql(driver.dialect, { ...options, scopeColumns })) await driver.run(sql);
  return new SqlStore(driver, { ...options, searchIndex: options.searchIndex ?? (await searchIndexFits(driver)) });
}

/**
 * Whether the database's settings let its full-text index hold every word `$search` asks it for (MySQL/MariaDB:
 * InnoDB's token sizes and stopword tables are the server's); true where the dialect's index does not depend on them.
 */
export async function searchIndexFits(driver: SqlDriver): Promise<boolean> {
  const settings = dialects[driver.dialect].searchIndex?.settings;
  if (settings === undefined) return true;
  const [row] = await driver.all(settings.sql);
  return row !== undefined && settings.fits(row);
}

/** A collection's statements that do not depend on the call: made once per store and collection. */
interface CollectionSql {
  readonly table: string;
  readonly properties: readonly Property[];
  /** The full key: the scope columns, the parent key, the entity key. */
  readonly key: readonly string[];
  /** The properties that are not part of the key (what `update` writes). */
  readonly nonKey: readonly Property[];
  readonly get: string;
  readonly insert: string;
  readonly update: string;
  readonly delete: string;
  readonly hasRows: string;
}

/** A transaction of a SQL store: the Store contract, and the multi-row INSERT of bulk loads. */
export interface SqlTransaction extends StoreTransaction {
  /** Inserts up to `batchRows(c)` rows in one statement. */
  insertMany(c: StoreCollection, rows: readonly Row[]): Promise<void>;
}

export class SqlStore implements Store {
  /** The driver's dialect's: how each value is stored, and every statement on the tables. */
  private readonly storage: Storage;
  private readonly statements: Statements;
  private readonly collectionSql = new Map<StoreCollection, CollectionSql>();
  private readonly increment: readonly { readonly sql: string; readonly keyed: boolean }[];
  private readonly scopeColumns: readonly string[];
  private readonly scopeValues: readonly SqlParam[];
  /** Every collection's table, for navigation subqueries (`any`, `all`, `/$count`) and joins. */
  private readonly tableOfType = new Map<EntityType, string>();
  private readonly navigationTables = (navigation: NavigationProperty): SqlTable | undefined => {
    const table = this.tableOfType.get(navigation.target());
    return table === undefined ? undefined : { table };
  };
  readonly collections: ReadonlyMap<string, StoreCollection>;

  constructor(
    readonly driver: SqlDriver,
    private readonly options: SqlStoreOptions,
  ) {
    ({ storage: this.storage, statements: this.statements } = dialects[driver.dialect]);
    this.scopeColumns = Object.keys(options.scope ?? {});
    this.scopeValues = Object.values(options.scope ?? {});
    this.collections = collectionsOf(options.model);
    for (const c of this.collections.values())
      if (!this.tableOfType.has(c.entityType)) this.tableOfType.set(c.entityType, this.table(c));
    this.increment = this.statements.increment(SEQUENCES, [...this.scopeColumns, 'name'], 'value');
  }

  private table(c: StoreCollection): string {
    return this.options.tables?.[c.name] ?? c.name;
  }

  private get scope(): Record<string, SqlParam> {
    return { ...this.options.scope };
  }

  private sqlOf(c: StoreCollection): CollectionSql {
    let sql = this.collectionSql.get(c);
    if (sql === undefined) {
      const s = this.statements;
      const table = this.table(c);
      const properties = [...c.entityType.properties.values()];
      const names = properties.map((p) => p.name);
      const key = tableKey(this.scopeColumns, c);
      const nonKey = properties.filter((p) => !key.includes(p.name));
      sql = {
        table,
        properties,
        key,
        nonKey,
        get: s.select(table, names, key),
        insert: s.insert(table, [...this.scopeColumns, ...names]),
        update: s.update(
          table,
          nonKey.map((p) => p.name),
          key,
        ),
        delete: s.delete(table, key),
        hasRows: s.exists(table, this.scopeColumns),
      };
      this.collectionSql.set(c, sql);
    }
    return sql;
  }

  // ── reads ──────────────────────────────────────────────────────────────────

  /**
   * `parent`: the child columns and values that tie the rows to one parent (a navigation's foreign key); `'related'`:
   * rows of many parents, which the caller's link condition picks (a contained collection's parent key is not fixed).
   */
  private sqlOptions(c: StoreCollection, parent?: Row | 'related'): SqlOptions {
    const parentScope: Record<string, SqlParam> = {};
    const names = parent === 'related' ? [] : [...(c.parentKey ?? []), ...Object.keys(parent ?? {})];
    for (const name of new Set(names)) {
      const property = c.entityType.properties.get(name)!;
      parentScope[name] = this.encode(property, (parent as Row | undefined)?.[name]);
    }
    return {
      dialect: this.driver.dialect,
      table: this.table(c),
      navigation: this.navigationTables,
      scope: this.scope,
      parent: parentScope,
      // SQLite: a row check in every WHERE, so that the statement stops at its budget wherever it is (its rowCheck)
      deadlineChecks: true,
      ...(this.options.searchIndex === false ? { searchIndex: false } : {}),
    };
  }

  /**
   * The rows related to many entities (`$expand`): one statement per call (ROW_NUMBER and COUNT over a partition by
   * the link give each tuple's page and count; toSqlRelated), in chunks only where the tuples would pass the
   * dialect's parameter limit.
   */
  async readRelated(
    c: StoreCollection,
    bound: BoundQuery,
    link: RelatedLink,
    options?: ReadOptions,
  ): Promise<RelatedResult> {
    const properties = link.properties.map((name) => c.entityType.properties.get(name)!);
    const sqlOptions = this.sqlOptions(c, 'related');
    // (half of the dialect's parameters for the link, the rest for the filter's)
    const perChunk = Math.max(1, Math.floor(dialects[this.driver.dialect].maxParameters / 2 / properties.length));
    const rows: Row[] = [];
    // with `written`, rows carry only what ties them (the other properties of the select), and the driver's rows
    // are written as JSON by the raw writer
    const written = link.written;
    const needed = new Set(link.needed ?? []);
    const decoded =
      written === undefined ? bound.select : bound.select.filter((p) => !written.includes(p) || needed.has(p.name));
    const raws: unknown[][] | undefined = written === undefined ? undefined : [];
    // the statement's columns: the select, then (with $top, $skip or $count) the row number and the count
    const columns = [...statementColumns(bound).map((p) => p.name), 'odata_row', 'odata_count'];
    const position = new Map(columns.map((name, i) => [name, i]));
    const decodedAt = decoded.map((p) => position.get(p.name)!);
    const counts = new Map<string, number>();
    const skip = bound.skip ?? 0;
    const end = bound.top === undefined ? Infinity : skip + bound.top;
    let truncated = false;
    for (let from = 0; from < link.values.length && !truncated; from += perChunk) {
      const tuples = link.values
        .slice(from, from + perChunk)
        .map((tuple) => tuple.map((value, i) => this.encode(properties[i]!, value)));
      // one row past what the service allows tells it that there are too many
      // (with $count, each tuple's first row may come for its count alone)
      const limit =
        link.maxRows === undefined ? undefined : link.maxRows - rows.length + 1 + (bound.count ? tuples.length : 0);
      const { sql, params } = toSqlRelated(bound, sqlOptions, {
        properties: link.properties,
        tuples,
        ...(limit === undefined ? {} : { limit }),
      });
      const answer = await this.valuesOf(sql, params, columns, signalOnly(options));
      if (limit !== undefined && answer.length >= limit) truncated = true;
      const rowAt = columns.length - 2;
      const decode = this.valuesDecoder(decoded, decodedAt);
      for (const raw of answer) {
        const row = decode(raw);
        const number = raw[rowAt] === undefined || raw[rowAt] === null ? undefined : Number(raw[rowAt]);
        if (bound.count && number === 1) {
          counts.set(
            linkTupleText(
              properties,
              link.properties.map((name) => row[name]),
            ),
            Number(raw[rowAt + 1]),
          );
        }
        // (a tuple's first row comes along for its count even when the page is past it)
        if (number === undefined || (number > skip && number <= end)) {
          rows.push(row);
          raws?.push(raw);
        }
      }
    }
    const fast =
      raws === undefined
        ? {}
        : {
            raw: raws,
            writer: this.relatedWriter(
              written!,
              written!.map((p) => position.get(p.name)!),
            ),
          };
    const result = truncated ? { rows, truncated, ...fast } : { rows, ...fast };
    if (!bound.count) return result;
    return { ...result, counts: link.values.map((tuple) => counts.get(linkTupleText(properties, tuple)) ?? 0) };
  }

  /** The raw JSON writers of a related read's written properties (plain and IEEE754Compatible). */
  private relatedWriter(
    written: readonly Property[],
    positions: readonly number[],
  ): (options: { readonly ieee754Compatible: boolean }) => (raw: unknown) => string {
    const plain = rawEntityWriter(this.driver.dialect, written, { ieee754Compatible: false }, positions) as (
      raw: unknown,
    ) => string;
    const compatible = rawEntityWriter(this.driver.dialect, written, { ieee754Compatible: true }, positions) as (
      raw: unknown,
    ) => string;
    return ({ ieee754Compatible }) => (ieee754Compatible ? compatible : plain);
  }

  /** The statements of a read: the page, and the count when `$count=true`. */
  readStatements(c: StoreCollection, bound: BoundQuery, parent?: Row): ReadStatements {
    const options = this.sqlOptions(c, parent);
    return {
      rows: toSql(bound, options),
      columns: statementColumns(bound).map((p) => p.name),
      ...(bound.count ? { count: toSqlCount(bound, options) } : {}),
    };
  }

  /**
   * The fast path of collection reads: the statements made once, the driver's rows written as JSON without being
   * decoded first.
   */
  prepareRead(c: StoreCollection, bound: BoundQuery, parent?: Row, options: PrepareOptions = {}): PreparedRead {
    // what is read beside the selection comes after its columns: the writer's positions stay those of the select
    const also = (options.also ?? []).filter((p) => !bound.select.includes(p));
    const statements = this.readStatements(
      c,
      also.length === 0 ? bound : { ...bound, select: [...bound.select, ...also] },
      parent,
    );
    const dialect = this.driver.dialect;
    // run() hands the writer the driver's rows it returned, arrays of the selected columns' values
    const positions = bound.select.map((_, i) => i);
    // made when first asked for: a read run for its rows alone (a keyset page's further levels) makes none
    let plain: ((row: unknown) => string) | undefined;
    let compatible: ((row: unknown) => string) | undefined;
    const writer = ({ ieee754Compatible }: { readonly ieee754Compatible: boolean }): ((row: unknown) => string) =>
      ieee754Compatible
        ? (compatible ??= rawEntityWriter(dialect, bound.select, { ieee754Compatible: true }, positions) as (
            row: unknown,
          ) => string)
        : (plain ??= rawEntityWriter(dialect, bound.select, { ieee754Compatible: false }, positions) as (
            row: unknown,
          ) => string);
    const wanted = options.also ?? [];
    const alsoAt = wanted.map((p) => {
      const selected = bound.select.indexOf(p);
      return selected >= 0 ? selected : bound.select.length + also.indexOf(p);
    });
    const alsoValues = wanted.length === 0 ? undefined : this.valuesDecoder(wanted, alsoAt);
    const prepared = (current: ReadStatements): PreparedRead => ({
      run: (options) => this.runRead(current, options),
      writer,
      ...(alsoValues === undefined ? {} : { also: alsoValues }),
      // the same statements with the parameters of other literal values (the text, and so the prepared statement,
      // is the same)
      rebind: (written) => {
        const rows = rebindStatement(current.rows, written);
        const count = current.count === undefined ? undefined : rebindStatement(current.count, written);
        if (rows === undefined || (current.count !== undefined && count === undefined)) return undefined;
        return prepared(
          count === undefined ? { rows, columns: current.columns } : { rows, columns: current.columns, count },
        );
      },
    });
    return prepared(statements);
  }

  /**
   * Runs a read's statements: the driver's rows (not decoded: arrays of the values of `statements.columns`) and the
   * count. Each statement has the driver's budget (`QueryTimeout` 504 past it); `options.signal` stops it earlier.
   */
  async runRead(
    statements: ReadStatements,
    options?: DriverReadOptions,
  ): Promise<{ rows: unknown[][]; count?: number }> {
    const rows = await this.valuesOf(statements.rows.sql, statements.rows.params, statements.columns, options);
    if (statements.count === undefined) return { rows };
    const [first] = await this.driver.all(statements.count.sql, statements.count.params, options);
    return { rows, count: Number(first?.['count'] ?? 0) };
  }

  /** The count's statement made once; `rebind` gives it for other values of the query's lifted literals. */
  prepareCount(c: StoreCollection, bound: BoundQuery, parent?: Row): PreparedCount {
    const prepared = (statement: SqlStatement): PreparedCount => ({
      run: async (options) => {
        const [first] = await this.driver.all(statement.sql, statement.params, signalOnly(options));
        return Number(first?.['count'] ?? 0);
      },
      rebind: (written) => {
        const next = rebindStatement(statement, written);
        return next === undefined ? undefined : prepared(next);
      },
    });
    return prepared(toSqlCount(bound, this.sqlOptions(c, parent)));
  }

  /**
   * `$apply`'s leading filters and first grouping as one GROUP BY statement (toSqlApply), at most `maxRows` + 1
   * instances; undefined where the database cannot make them exactly (the service then runs them in memory).
   */
  prepareApply(
    c: StoreCollection,
    apply: BoundApply,
    parent: Row | undefined,
    maxRows: number,
  ): PreparedApply | undefined {
    const made = toSqlApply(apply, this.sqlOptions(c, parent), maxRows + 1);
    if (made === undefined) return undefined;
    const { statement, exactSums, columns } = made;
    return {
      rest: made.rest,
      run: async (options) => {
        let raw: unknown[][];
        try {
          raw = await this.valuesOf(statement.sql, statement.params, columns, signalOnly(options));
        } catch (error) {
          // SQLite's SUM fails on a sum past 64 bits: the same statement again with exact sums
          if (exactSums === undefined || !isSumOverflow(error)) throw error;
          raw = await this.valuesOf(exactSums.sql, exactSums.params, columns, signalOnly(options));
        }
        return raw.map((r) => made.decode(r));
      },
    };
  }

  /** How many rows the bound query's filter keeps ($top and $skip aside): one COUNT, no rows read. */
  async count(
    c: StoreCollection,
    bound: BoundQuery,
    options: ReadOptions & { readonly parent?: Row } = {},
  ): Promise<number> {
    const { sql, params } = toSqlCount(bound, this.sqlOptions(c, options.parent));
    const [first] = await this.driver.all(sql, params, signalOnly(options));
    return Number(first?.['count'] ?? 0);
  }

  /** The rows of a bound query (projected, ordered and decoded), and their total count when `$count=true`. */
  async read(
    c: StoreCollection,
    bound: BoundQuery,
    options: ReadOptions & { readonly parent?: Row } = {},
  ): Promise<ReadResult> {
    const { rows: raw, count } = await this.runRead(this.readStatements(c, bound, options.parent), signalOnly(options));
    const rows = raw.map(
      this.valuesDecoder(
        bound.select,
        bound.select.map((_, i) => i),
      ),
    );
    return count === undefined ? { rows } : { rows, count };
  }

  /**
   * One row by its full key (and parent key for a contained collection), every property; undefined when absent. A
   * key lookup: SQLite runs it on the calling thread (`keyLookup`); `options.signal` applies on PostgreSQL.
   */
  get(c: StoreCollection, key: Row, options?: ReadOptions): Promise<Row | undefined> {
    return this.getIn(this.driver, c, key, options);
  }

  private async getIn(
    session: SqlSession,
    c: StoreCollection,
    key: Row,
    options?: ReadOptions,
  ): Promise<Row | undefined> {
    const sql = this.sqlOf(c);
    const [raw] = await session.all(sql.get, this.keyParams(c, key), signalOnly(options, true));
    return raw === undefined ? undefined : this.decodeRow(sql.properties, raw);
  }

  /** Whether the collection holds any row of this store's scope. */
  async hasRows(c: StoreCollection): Promise<boolean> {
    const rows = await this.driver.all(this.sqlOf(c).hasRows, this.scopeValues);
    return rows.length > 0;
  }

  /**
   * After a bulk load: brings the database's planner statistics of the collection's table up to date, where the
   * database needs telling (PostgreSQL takes a freshly loaded table for empty until autovacuum's next round).
   */
  async analyze(c: StoreCollection): Promise<void> {
    const sql = this.statements.analyze?.(this.table(c));
    if (sql !== undefined) await this.driver.run(sql);
  }

  /** Rows `insertMany` writes in one statement for `c`: under SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
  batchRows(c: StoreCollection): number {
    const columns = this.scopeColumns.length + c.entityType.properties.size;
    return Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(MAX_BATCH_PARAMS / columns)));
  }

  /** Closes the driver (its connections, or the SQLite file). */
  close(): Promise<void> {
    return this.driver.close();
  }

  // ── writes ─────────────────────────────────────────────────────────────────

  transaction<T>(work: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.driver.transaction((session) => work(this.transactionOf(session)));
  }

  private transactionOf(session: SqlSession): SqlTransaction {
    return {
      get: (c, key) => this.getIn(session, c, key),
      children: (c, where) => this.children(session, c, where),
      insert: (c, row) => this.insert(session, c, row),
      insertMany: (c, rows) => this.insertMany(session, c, rows),
      update: (c, row) => this.update(session, c, row),
      delete: async (c, key) => (await session.run(this.sqlOf(c).delete, this.keyParams(c, key))) > 0,
      lock: (name) => this.lock(session, name),
      nextSequence: (name) => this.nextSequence(session, name),
      maxOf: (c, property, where) => this.maxOf(session, c, property, where),
    };
  }

  /** Rows of a contained collection under one parent (or of a child set under its header), every property. */
  private async children(session: SqlSession, c: StoreCollection, parent: Row): Promise<Row[]> {
    const { properties, key, table } = this.sqlOf(c);
    const names = Object.keys(parent);
    const params: SqlParam[] = [...this.scopeValues];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const sql = this.statements.select(
      table,
      properties.map((p) => p.name),
      [...this.scopeColumns, ...names],
      key.slice(this.scopeColumns.length),
    );
    return (await session.all(sql, params)).map((raw) => this.decodeRow(properties, raw));
  }

  private async insert(session: SqlSession, c: StoreCollection, row: Row): Promise<void> {
    const sql = this.sqlOf(c);
    const params: SqlParam[] = [...this.scopeValues, ...sql.properties.map((p) => this.encode(p, row[p.name]))];
    try {
      await session.run(sql.insert, params);
    } catch (error) {
      throw isDuplicateKey(error) ? duplicateKey(c, row) : error;
    }
  }

  /**
   * Inserts up to `batchRows(c)` rows in one multi-row INSERT: the same columns and encoded values as `insert` (row by
   * row, bulk loads spend their time in statements and round trips).
   */
  private async insertMany(session: SqlSession, c: StoreCollection, rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length > this.batchRows(c)) throw new RangeError(`insertMany takes at most ${this.batchRows(c)} rows`);
    const { properties, table } = this.sqlOf(c);
    const params: SqlParam[] = [];
    for (const row of rows) params.push(...this.scopeValues, ...properties.map((p) => this.encode(p, row[p.name])));
    const columns = [...this.scopeColumns, ...properties.map((p) => p.name)];
    await session.run(this.statements.insert(table, columns, rows.length), params);
  }

  /** Writes every non-key property of `row` to the row with its key. */
  private async update(session: SqlSession, c: StoreCollection, row: Row): Promise<void> {
    const sql = this.sqlOf(c);
    const params: SqlParam[] = sql.nonKey.map((p) => this.encode(p, row[p.name]));
    await session.run(sql.update, [...params, ...this.keyParams(c, row)]);
  }

  /**
   * Serializes the transactions that take the same name until they end (PostgreSQL and MySQL: a transaction-scoped
   * lock of the database; SQLite's writes are serialized already). Names are taken under the store's scope.
   */
  private async lock(session: SqlSession, name: string): Promise<void> {
    const lock = this.statements.transactionLock;
    if (lock === undefined) return;
    const [row] = await session.all(lock, [[...this.scopeValues, name].join('/')]);
    // a lock the database gave up waiting for (MySQL's GET_LOCK answers 0)
    if (row !== undefined && Number(row['locked'] ?? 1) === 0)
      throw unavailable('Another write of the same record held it too long; retry', 1);
  }

  /** The next value of a sequence of this store (1, 2, ...), taken inside the caller's transaction. */
  private async nextSequence(session: SqlSession, name: string): Promise<number> {
    await this.lock(session, `sequence:${name}`);
    const keyParams: SqlParam[] = [...this.scopeValues, name];
    let row: RawRow | undefined;
    for (const { sql, keyed } of this.increment) [row] = await session.all(sql, keyed ? keyParams : []);
    return Number(row?.['value']);
  }

  /** The largest value of an Int32 column among the rows with the given parent values (0 when none). */
  private async maxOf(session: SqlSession, c: StoreCollection, column: string, parent: Row): Promise<number> {
    const names = Object.keys(parent);
    const params: SqlParam[] = [...this.scopeValues];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const [row] = await session.all(
      this.statements.max(this.table(c), column, [...this.scopeColumns, ...names]),
      params,
    );
    const max = row?.['max'];
    return max === null || max === undefined ? 0 : Number(max);
  }

  // ── helpers ────────────────────────────────────────────────────────────────

  /** The parameters of the full key (`CollectionSql.key`) for a row or key. */
  private keyParams(c: StoreCollection, key: Row): SqlParam[] {
    const names = this.sqlOf(c).key;
    const params: SqlParam[] = [...this.scopeValues];
    for (let i = params.length; i < names.length; i++) {
      const name = names[i]!;
      params.push(this.encode(c.entityType.properties.get(name)!, key[name]));
    }
    return params;
  }

  /**
   * A statement's rows as arrays of the values of `columns`: the driver's own (`values`), or read from its objects.
   */
  private async valuesOf(
    sql: string,
    params: readonly SqlParam[],
    columns: readonly string[],
    options?: DriverReadOptions,
  ): Promise<unknown[][]> {
    if (this.driver.values !== undefined) return this.driver.values(sql, params, options);
    return (await this.driver.all(sql, params, options)).map((row) => columns.map((name) => row[name]));
  }

  /** A row of `properties` decoded from an array of values, each at its position. */
  /** Decodes the values of `properties` at `positions` of a driver's row array (the decoders made once). */
  private valuesDecoder(properties: readonly Property[], positions: readonly number[]): (raw: unknown) => Row {
    const names = properties.map((p) => p.name);
    const decoders = properties.map((p) => this.storage.decoder(p));
    return (raw) => {
      const row: Row = {};
      for (let i = 0; i < names.length; i++) row[names[i]!] = decoders[i]!((raw as readonly unknown[])[positions[i]!]);
      return row;
    };
  }

  private decodeRow(properties: readonly Property[], raw: RawRow): Row {
    const row: Row = {};
    for (const property of properties) row[property.name] = this.storage.decode(property, raw[property.name]);
    return row;
  }

  private encode(property: Property, value: unknown): SqlParam {
    const encoded = this.storage.encode(property, value);
    if (encoded === undefined) {
      throw new ODataError(
        'InvalidLiteral',
        `${property.name}: the value ${String(value).slice(0, 40)} cannot be stored`,
        {
          target: property.name,
        },
      );
    }
    return encoded;
  }
}

/** The caller's signal for the driver, read only when the driver looks at it (see SignalOf). */
class DriverRead extends SignalOf implements DriverReadOptions {
  constructor(
    options: ReadOptions | undefined,
    readonly keyLookup: boolean,
  ) {
    super(options);
  }
}

function signalOnly(options: ReadOptions | undefined, keyLookup = false): DriverReadOptions {
  return new DriverRead(options, keyLookup);
}
