// One site's records, in SQL: reads run the SQL backend's statements (with the site as the scope no filter can
// leave), writes are parameterized INSERT/UPDATE/DELETE that the driver's dialect writes from the schema. The same
// code serves an SQLite file per site (no site column) and a shared PostgreSQL database (a `site` column leading
// every key).
import {
  createTableSql,
  toSql,
  toSqlCount,
  type SqlOptions,
  type SqlParam,
  type SqlStatement,
} from '../../backends/sql/index.js';
import type { Statements, Storage, TableDefinition } from '../../backends/sql/dialect.js';
import { dialects } from '../../backends/sql/dialects.js';
import { ODataError } from '../../errors.js';
import type { Property, Row } from '../../model/schema.js';
import type { BoundQuery } from '../../validate/bound.js';
import { collections, navigationTables, type Collection } from './collections.js';
import type { RawRow, ReadOptions, SqlDriver, SqlSession } from './driver.js';

export interface ReadStatements {
  readonly rows: SqlStatement;
  readonly count?: SqlStatement;
}


/** Bound parameters and rows in one multi-row INSERT. */
const MAX_BATCH_PARAMS = 30_000;
const MAX_BATCH_ROWS = 500;

/** The column that holds the site in a shared database. */
export const SITE_COLUMN = 'site';

/** The per-site counters (`nextSequence`): a name and its last value, under the site in a shared database. */
const SEQUENCES = 'odata_sequences';

function sequencesTable(shared: boolean): TableDefinition {
  const name = { name: 'name', type: 'Edm.String', maxLength: 100, isKey: true, nullable: false } as const;
  return {
    name: SEQUENCES,
    columns: [
      ...(shared ? [{ ...name, name: SITE_COLUMN }] : []),
      name,
      { name: 'value', type: 'Edm.Int64', nullable: false },
    ],
    key: shared ? [SITE_COLUMN, 'name'] : ['name'],
  };
}

/** A collection's statements that do not depend on the call: made once per store and collection. */
interface CollectionSql {
  readonly properties: readonly Property[];
  /** The full key: the scope column, the parent key, the entity key. */
  readonly key: readonly string[];
  /** The properties that are not part of the key (what `update` writes). */
  readonly nonKey: readonly Property[];
  readonly get: string;
  readonly insert: string;
  readonly update: string;
  readonly delete: string;
  readonly hasRows: string;
}

export class SiteStore {
  /** The driver's dialect's: how each value is stored, and every statement on the tables. */
  private readonly storage: Storage;
  private readonly statements: Statements;
  private readonly collectionSql = new Map<Collection, CollectionSql>();
  private readonly increment: readonly { readonly sql: string; readonly keyed: boolean }[];

  constructor(
    readonly driver: SqlDriver,
    readonly site: string,
    /** True in a database shared by every site (PostgreSQL): rows carry the site column. */
    readonly shared: boolean,
  ) {
    ({ storage: this.storage, statements: this.statements } = dialects[driver.dialect]);
    this.increment = this.statements.increment(SEQUENCES, [...this.scopeConditions(), 'name'], 'value');
  }

  private get scope(): Record<string, SqlParam> {
    return this.shared ? { [SITE_COLUMN]: this.site } : {};
  }

  /** The statements that create every table of the service (idempotent). */
  static schemaSql(dialect: SqlDriver['dialect'], shared: boolean): string[] {
    const statements: string[] = [];
    for (const c of collections.values()) {
      statements.push(
        createTableSql(c.entityType, {
          dialect,
          table: c.table,
          ifNotExists: true,
          ...(shared ? { scopeColumns: { [SITE_COLUMN]: 'Edm.String' as const } } : {}),
          ...(c.parentKey === undefined ? {} : { parentKey: c.parentKey }),
        }),
      );
    }
    statements.push(dialects[dialect].statements.createTable(sequencesTable(shared), { ifNotExists: true }));
    return statements;
  }

  private sqlOf(c: Collection): CollectionSql {
    let sql = this.collectionSql.get(c);
    if (sql === undefined) {
      const s = this.statements;
      const properties = [...c.entityType.properties.values()];
      const names = properties.map((p) => p.name);
      const key = [...this.scopeConditions(), ...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)];
      const nonKey = properties.filter((p) => !key.includes(p.name));
      sql = {
        properties,
        key,
        nonKey,
        get: s.select(c.table, names, key),
        insert: s.insert(c.table, [...this.scopeConditions(), ...names]),
        update: s.update(
          c.table,
          nonKey.map((p) => p.name),
          key,
        ),
        delete: s.delete(c.table, key),
        hasRows: s.exists(c.table, this.scopeConditions()),
      };
      this.collectionSql.set(c, sql);
    }
    return sql;
  }

  // ── reads ──────────────────────────────────────────────────────────────────

  /** `parent`: the child columns and values that tie the rows to one parent (a navigation's foreign key). */
  private sqlOptions(c: Collection, parent?: Row): SqlOptions {
    const parentScope: Record<string, SqlParam> = {};
    for (const name of new Set([...(c.parentKey ?? []), ...Object.keys(parent ?? {})])) {
      const property = c.entityType.properties.get(name)!;
      parentScope[name] = this.encode(property, parent?.[name]);
    }
    return {
      dialect: this.driver.dialect,
      table: c.table,
      navigation: navigationTables(c.entityType),
      scope: { ...this.scope, ...parentScope },
      // SQLite: a row check in every WHERE, so that the statement stops at its budget wherever it is (its rowCheck)
      deadlineChecks: true,
    };
  }

  /** The statements of a read: the page, and the count when `$count=true` (the service caches them per query). */
  readStatements(c: Collection, bound: BoundQuery, parent?: Row): ReadStatements {
    const options = this.sqlOptions(c, parent);
    return { rows: toSql(bound, options), ...(bound.count ? { count: toSqlCount(bound, options) } : {}) };
  }

  /**
   * Runs a read's statements: the driver's rows (not decoded) and the count. Each statement has the backend's
   * budget (`QueryTimeout` 504 past it); `options.signal` stops it earlier.
   */
  async runRead(statements: ReadStatements, options?: ReadOptions): Promise<{ raw: RawRow[]; count?: number }> {
    const raw = await this.driver.all(statements.rows.sql, statements.rows.params, options);
    if (statements.count === undefined) return { raw };
    const [first] = await this.driver.all(statements.count.sql, statements.count.params, options);
    return { raw, count: Number(first?.['count'] ?? 0) };
  }

  /** How many rows the bound query's filter keeps ($top and $skip aside): one COUNT, no rows read. */
  async count(c: Collection, bound: BoundQuery, parent?: Row, options?: ReadOptions): Promise<number> {
    const { sql, params } = toSqlCount(bound, this.sqlOptions(c, parent));
    const [first] = await this.driver.all(sql, params, options);
    return Number(first?.['count'] ?? 0);
  }

  /** The rows of a bound query (projected, ordered and decoded), and their total count when `$count=true`. */
  async query(
    c: Collection,
    bound: BoundQuery,
    parent?: Row,
    options?: ReadOptions,
  ): Promise<{ rows: Row[]; count?: number }> {
    const { raw, count } = await this.runRead(this.readStatements(c, bound, parent), options);
    const rows = raw.map((r) => this.decodeRow(bound.select, r));
    return count === undefined ? { rows } : { rows, count };
  }

  /**
   * One row by its full key (and parent key for a contained collection), every property; undefined when absent. A
   * key lookup: SQLite runs it on the calling thread (`keyLookup`); `options.signal` applies on PostgreSQL.
   */
  async get(
    c: Collection,
    key: Row,
    session: SqlSession = this.driver,
    options?: Pick<ReadOptions, 'signal'>,
  ): Promise<Row | undefined> {
    const sql = this.sqlOf(c);
    const [raw] = await session.all(sql.get, this.keyParams(c, key), { ...options, keyLookup: true });
    return raw === undefined ? undefined : this.decodeRow(sql.properties, raw);
  }

  /** Rows of a contained collection under one parent (or of a child set under its header), every property. */
  async children(c: Collection, parent: Row, session: SqlSession = this.driver): Promise<Row[]> {
    const { properties, key } = this.sqlOf(c);
    const names = Object.keys(parent);
    const params: SqlParam[] = [...this.scopeParams()];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const sql = this.statements.select(
      c.table,
      properties.map((p) => p.name),
      [...this.scopeConditions(), ...names],
      key.slice(this.scopeConditions().length),
    );
    return (await session.all(sql, params)).map((raw) => this.decodeRow(properties, raw));
  }

  /** Whether the collection holds any row of this site. */
  async hasRows(c: Collection): Promise<boolean> {
    const rows = await this.driver.all(this.sqlOf(c).hasRows, this.scopeParams());
    return rows.length > 0;
  }

  /**
   * After a bulk load: brings the database's planner statistics of the collection's table up to date, where the
   * database needs telling (PostgreSQL takes a freshly loaded table for empty until autovacuum's next round).
   */
  async analyze(c: Collection): Promise<void> {
    const sql = this.statements.analyze?.(c.table);
    if (sql !== undefined) await this.driver.run(sql);
  }

  // ── writes (inside a transaction's session) ─────────────────────────────────

  async insert(session: SqlSession, c: Collection, row: Row): Promise<void> {
    const sql = this.sqlOf(c);
    const params: SqlParam[] = [...this.scopeParams(), ...sql.properties.map((p) => this.encode(p, row[p.name]))];
    await session.run(sql.insert, params);
  }

  /** Rows `insertMany` writes in one statement for `c`: under SQLite's 32,766 and PostgreSQL's 65,535 parameters. */
  batchRows(c: Collection): number {
    const columns = this.scopeConditions().length + c.entityType.properties.size;
    return Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(MAX_BATCH_PARAMS / columns)));
  }

  /**
   * Inserts up to `batchRows(c)` rows in one multi-row INSERT: the same columns and encoded values as `insert` (row by
   * row, bulk loads spend their time in statements and round trips).
   */
  async insertMany(session: SqlSession, c: Collection, rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length > this.batchRows(c)) throw new RangeError(`insertMany takes at most ${this.batchRows(c)} rows`);
    const { properties } = this.sqlOf(c);
    const params: SqlParam[] = [];
    for (const row of rows) params.push(...this.scopeParams(), ...properties.map((p) => this.encode(p, row[p.name])));
    const columns = [...this.scopeConditions(), ...properties.map((p) => p.name)];
    await session.run(this.statements.insert(c.table, columns, rows.length), params);
  }

  /** Writes every non-key property of `row` to the row with its key. */
  async update(session: SqlSession, c: Collection, row: Row): Promise<void> {
    const sql = this.sqlOf(c);
    const params: SqlParam[] = sql.nonKey.map((p) => this.encode(p, row[p.name]));
    await session.run(sql.update, [...params, ...this.keyParams(c, row)]);
  }

  async delete(session: SqlSession, c: Collection, key: Row): Promise<number> {
    return session.run(this.sqlOf(c).delete, this.keyParams(c, key));
  }

  /**
   * Serializes the transactions that take the same name until they end: the next line number of an order, the next
   * comment of a work order, the next value of a sequence. (PostgreSQL: a transaction-scoped advisory lock; SQLite's
   * writes are serialized already.)
   */
  async lock(session: SqlSession, name: string): Promise<void> {
    const lock = this.statements.transactionLock;
    if (lock !== undefined) await session.all(lock, [`${this.site}/${name}`]);
  }

  /** The next value of a per-site sequence (1, 2, ...), taken inside the caller's transaction. */
  async nextSequence(session: SqlSession, name: string): Promise<number> {
    await this.lock(session, `sequence:${name}`);
    const keyParams: SqlParam[] = [...this.scopeParams(), name];
    let row: RawRow | undefined;
    for (const { sql, keyed } of this.increment) [row] = await session.all(sql, keyed ? keyParams : []);
    return Number(row?.['value']);
  }

  /** The largest value of an Int32 column among the rows with the given parent values (0 when none). */
  async maxOf(session: SqlSession, c: Collection, column: string, parent: Row): Promise<number> {
    const names = Object.keys(parent);
    const params: SqlParam[] = [...this.scopeParams()];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const [row] = await session.all(
      this.statements.max(c.table, column, [...this.scopeConditions(), ...names]),
      params,
    );
    const max = row?.['max'];
    return max === null || max === undefined ? 0 : Number(max);
  }

  // ── helpers ────────────────────────────────────────────────────────────────

  private scopeConditions(): string[] {
    return this.shared ? [SITE_COLUMN] : [];
  }

  private scopeParams(): SqlParam[] {
    return this.shared ? [this.site] : [];
  }

  /** The parameters of the full key (`CollectionSql.key`) for a row or key. */
  private keyParams(c: Collection, key: Row): SqlParam[] {
    const names = this.sqlOf(c).key;
    const params: SqlParam[] = [...this.scopeParams()];
    for (let i = params.length; i < names.length; i++) {
      const name = names[i]!;
      params.push(this.encode(c.entityType.properties.get(name)!, key[name]));
    }
    return params;
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
