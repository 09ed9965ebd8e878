// One site's records, in SQL: reads run the SQL backend's statements (with the site as the scope no filter can
// leave), writes are plain parameterized INSERT/UPDATE/DELETE built from the schema. The same code serves an SQLite
// file per site (no site column) and a shared PostgreSQL database (a `site` column leading every key).
import {
  createTableSql,
  decodeRow,
  encodeValue,
  toSql,
  toSqlCount,
  type SqlOptions,
  type SqlParam,
} from '../../backends/sql/index.js';
import { ODataError } from '../../errors.js';
import type { Property } from '../../model/schema.js';
import type { BoundQuery } from '../../validate/bound.js';
import { collections, navigationTables, type Collection } from './collections.js';
import type { RawRow, ReadOptions, SqlDriver, SqlSession } from './driver.js';
import type { SqlStatement } from '../../backends/sql/index.js';

export interface ReadStatements {
  readonly rows: SqlStatement;
  readonly count?: SqlStatement;
}

export type Row = Record<string, unknown>;

/** Bound parameters and rows in one multi-row INSERT. */
const MAX_BATCH_PARAMS = 30_000;
const MAX_BATCH_ROWS = 500;

/** The column that holds the site in a shared database. */
export const SITE_COLUMN = 'site';

export class SiteStore {
  constructor(
    readonly driver: SqlDriver,
    readonly site: string,
    /** True in a database shared by every site (PostgreSQL): rows carry the site column. */
    readonly shared: boolean,
  ) {}

  private get scope(): Record<string, SqlParam> {
    return this.shared ? { [SITE_COLUMN]: this.site } : {};
  }

  private quote(name: string): string {
    return this.driver.dialect === 'mysql' ? `\`${name.replace(/`/g, '``')}\`` : `"${name.replace(/"/g, '""')}"`;
  }

  private placeholders(count: number, from = 0): string[] {
    return Array.from({ length: count }, (_, i) => (this.driver.dialect === 'postgres' ? `$${from + i + 1}` : '?'));
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
    const sequences = shared
      ? `CREATE TABLE IF NOT EXISTS "odata_sequences" ("${SITE_COLUMN}" varchar(100) NOT NULL, "name" varchar(100) NOT NULL, "value" bigint NOT NULL, PRIMARY KEY ("${SITE_COLUMN}", "name"))`
      : `CREATE TABLE IF NOT EXISTS "odata_sequences" ("name" TEXT NOT NULL PRIMARY KEY, "value" INTEGER NOT NULL)`;
    statements.push(sequences);
    return statements;
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
      // SQLite: a row check in every WHERE, so that the statement stops at its budget wherever it is (sqlite.ts)
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
    const rows = raw.map((r) => decodeRow(this.driver.dialect, bound.select, r));
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
    const properties = [...c.entityType.properties.values()];
    const { where, params } = this.keyCondition(c, key);
    const sql = `SELECT ${properties.map((p) => this.quote(p.name)).join(', ')} FROM ${this.quote(c.table)} WHERE ${where}`;
    const [raw] = await session.all(sql, params, { ...options, keyLookup: true });
    return raw === undefined ? undefined : decodeRow(this.driver.dialect, properties, raw);
  }

  /** Rows of a contained collection under one parent (or of a child set under its header), every property. */
  async children(c: Collection, parent: Row, session: SqlSession = this.driver): Promise<Row[]> {
    const properties = [...c.entityType.properties.values()];
    const names = Object.keys(parent);
    const conditions = [...this.scopeConditions(), ...names];
    const params: SqlParam[] = [...this.scopeParams()];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const marks = this.placeholders(conditions.length);
    const where = conditions.map((name, i) => `${this.quote(name)} = ${marks[i]}`).join(' AND ');
    const order = [...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)].map((n) => this.quote(n)).join(', ');
    const sql = `SELECT ${properties.map((p) => this.quote(p.name)).join(', ')} FROM ${this.quote(c.table)} WHERE ${where} ORDER BY ${order}`;
    return (await session.all(sql, params)).map((raw) => decodeRow(this.driver.dialect, properties, raw));
  }

  /** Whether the collection holds any row of this site. */
  async hasRows(c: Collection): Promise<boolean> {
    const where = this.shared ? ` WHERE ${this.quote(SITE_COLUMN)} = ${this.placeholders(1)[0]}` : '';
    const rows = await this.driver.all(
      `SELECT 1 AS ${this.quote('x')} FROM ${this.quote(c.table)}${where} LIMIT 1`,
      this.scopeParams(),
    );
    return rows.length > 0;
  }

  // ── writes (inside a transaction's session) ─────────────────────────────────

  async insert(session: SqlSession, c: Collection, row: Row): Promise<void> {
    const properties = [...c.entityType.properties.values()];
    const columns = [...this.scopeConditions(), ...properties.map((p) => p.name)];
    const params: SqlParam[] = [...this.scopeParams(), ...properties.map((p) => this.encode(p, row[p.name]))];
    const sql = `INSERT INTO ${this.quote(c.table)} (${columns.map((n) => this.quote(n)).join(', ')}) VALUES (${this.placeholders(columns.length).join(', ')})`;
    await session.run(sql, params);
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
    const properties = [...c.entityType.properties.values()];
    const columns = [...this.scopeConditions(), ...properties.map((p) => p.name)];
    const params: SqlParam[] = [];
    const tuples: string[] = [];
    for (const row of rows) {
      tuples.push(`(${this.placeholders(columns.length, params.length).join(', ')})`);
      params.push(...this.scopeParams(), ...properties.map((p) => this.encode(p, row[p.name])));
    }
    const sql = `INSERT INTO ${this.quote(c.table)} (${columns.map((n) => this.quote(n)).join(', ')}) VALUES ${tuples.join(', ')}`;
    await session.run(sql, params);
  }

  /** Writes every non-key property of `row` to the row with its key. */
  async update(session: SqlSession, c: Collection, row: Row): Promise<void> {
    const keyNames = new Set([...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)]);
    const properties = [...c.entityType.properties.values()].filter((p) => !keyNames.has(p.name));
    const marks = this.placeholders(properties.length);
    const params: SqlParam[] = properties.map((p) => this.encode(p, row[p.name]));
    const { where, params: keyParams } = this.keyCondition(c, row, properties.length);
    const sql = `UPDATE ${this.quote(c.table)} SET ${properties.map((p, i) => `${this.quote(p.name)} = ${marks[i]}`).join(', ')} WHERE ${where}`;
    await session.run(sql, [...params, ...keyParams]);
  }

  async delete(session: SqlSession, c: Collection, key: Row): Promise<number> {
    const { where, params } = this.keyCondition(c, key);
    return session.run(`DELETE FROM ${this.quote(c.table)} WHERE ${where}`, params);
  }

  /**
   * Serializes the transactions that take the same name until they end: the next line number of an order, the next
   * comment of a work order, the next value of a sequence. (PostgreSQL: a transaction-scoped advisory lock; SQLite's
   * writes are serialized already.)
   */
  async lock(session: SqlSession, name: string): Promise<void> {
    if (this.driver.dialect !== 'postgres') return;
    await session.all(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`${this.site}/${name}`]);
  }

  /** The next value of a per-site sequence (1, 2, ...), taken inside the caller's transaction. */
  async nextSequence(session: SqlSession, name: string): Promise<number> {
    await this.lock(session, `sequence:${name}`);
    const seq = this.quote('odata_sequences');
    const scope = this.shared ? [SITE_COLUMN] : [];
    const where = [...scope, 'name'].map((n, i) => `${this.quote(n)} = ${this.placeholders(1, i)[0]}`).join(' AND ');
    const keyParams: SqlParam[] = [...(this.shared ? [this.site] : []), name];
    const updated = await session.run(`UPDATE ${seq} SET "value" = "value" + 1 WHERE ${where}`, keyParams);
    if (updated === 0) {
      const columns = [...scope, 'name', 'value'];
      await session.run(
        `INSERT INTO ${seq} (${columns.map((n) => this.quote(n)).join(', ')}) VALUES (${this.placeholders(columns.length).join(', ')})`,
        [...keyParams, this.driver.dialect === 'sqlite' ? 1n : 1],
      );
      return 1;
    }
    const [row] = await session.all(`SELECT "value" FROM ${seq} WHERE ${where}`, keyParams);
    return Number(row?.['value']);
  }

  /** The largest value of an Int32 column among the rows with the given parent values (0 when none). */
  async maxOf(session: SqlSession, c: Collection, column: string, parent: Row): Promise<number> {
    const names = Object.keys(parent);
    const conditions = [...this.scopeConditions(), ...names];
    const params: SqlParam[] = [...this.scopeParams()];
    for (const name of names) params.push(this.encode(c.entityType.properties.get(name)!, parent[name]));
    const marks = this.placeholders(conditions.length);
    const where = conditions.map((n, i) => `${this.quote(n)} = ${marks[i]}`).join(' AND ');
    const [row] = await session.all(
      `SELECT MAX(${this.quote(column)}) AS ${this.quote('max')} FROM ${this.quote(c.table)} WHERE ${where}`,
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

  private keyCondition(c: Collection, key: Row, offset = 0): { where: string; params: SqlParam[] } {
    const names = [...this.scopeConditions(), ...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)];
    const params: SqlParam[] = [...this.scopeParams()];
    for (const name of names.slice(this.scopeConditions().length)) {
      params.push(this.encode(c.entityType.properties.get(name)!, key[name]));
    }
    const marks = this.placeholders(names.length, offset);
    return { where: names.map((n, i) => `${this.quote(n)} = ${marks[i]}`).join(' AND '), params };
  }

  private encode(property: Property, value: unknown): SqlParam {
    const encoded = encodeValue(this.driver.dialect, property, value);
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
