// Real databases for the SQL backend's tests: SQLite (better-sqlite3), PostgreSQL (the server on 127.0.0.1:5432,
// else PGlite in-process) and MariaDB/MySQL (127.0.0.1:3306). Each test opens its own uniquely named schema or
// table prefix and drops it afterwards. Under CI=true the PostgreSQL and MariaDB servers are required: a missing
// server fails the run instead of skipping.
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import type { EntityType } from '../../../src/model/schema.js';
import {
  createTableSql,
  decodeRow,
  encodeValue,
  mysqlSessionSql,
  registerSqliteFunctions,
  type SqlDialectName,
  type SqlOptions,
  type SqlParam,
  type SqlStatement,
  toSql,
  toSqlCount,
} from '../../../src/backends/sql/index.js';
import { parseQuery, validateQuery } from '../../../src/index.js';
import type { Implementation } from '../../../src/testing/index.js';
import { Part, Thing, type Row } from './fixtures.js';

export interface TestDatabase {
  readonly dialect: SqlDialectName;
  /** What this is, for test names and failure messages (`PostgreSQL 15 server`, `PGlite`...). */
  readonly label: string;
  /** The schema-qualified or prefixed name for a test table. */
  tableName(name: string): string | readonly [string, string];
  exec(sql: string): Promise<void>;
  query(statement: SqlStatement): Promise<Record<string, unknown>[]>;
  /** Creates the table for an entity type and inserts rows (row form, docs/backends.md). */
  load(entityType: EntityType, name: string, rows: readonly Readonly<Record<string, unknown>>[]): Promise<void>;
  /** Inserts rows into a table made by `load`. */
  insert(name: string, entityType: EntityType, rows: readonly Readonly<Record<string, unknown>>[]): Promise<void>;
  /** Deletes every row of a table made by `load`. */
  clear(name: string): Promise<void>;
  close(): Promise<void>;
}

const required = process.env.CI === 'true';
const unique = (): string => `odata_t_${process.pid}_${randomBytes(4).toString('hex')}`;

export function openSqlite(): TestDatabase {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  const self: TestDatabase = {
    dialect: 'sqlite',
    label: `SQLite ${(db.prepare('select sqlite_version() as v').get() as { v: string }).v}`,
    tableName: (name) => name,
    exec: async (sql) => void db.exec(sql),
    query: async ({ sql, params }) => db.prepare(sql).all(...(params as unknown[])) as Record<string, unknown>[],
    load: async (entityType, name, rows) => {
      db.exec(createTableSql(entityType, { dialect: 'sqlite', table: name }));
      await self.insert(name, entityType, rows);
    },
    insert: async (name, entityType, rows) =>
      db.transaction(() => {
        for (const [sql, params] of insertStatements(self, entityType, name, rows))
          db.prepare(sql).run(...(params as unknown[]));
      })(),
    clear: async (name) => void db.exec(`DELETE FROM "${name}"`),
    close: async () => void db.close(),
  };
  return self;
}

/** PostgreSQL: the real server when reachable (required under CI=true), otherwise PGlite. */
export async function openPostgres(): Promise<TestDatabase> {
  const schema = unique();
  const client = new pg.Client({
    host: '127.0.0.1',
    port: 5432,
    user: 'postgres',
    database: 'test',
    connectionTimeoutMillis: 2000,
    // dates as their text (the default parser makes a local-midnight Date)
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === 1082 ? (v: string) => v : pg.types.getTypeParser(oid, format),
    },
  });
  let query: (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;
  let close: () => Promise<void>;
  let label: string;
  try {
    await client.connect();
    query = async (sql, params) => (await client.query(sql, params)).rows as Record<string, unknown>[];
    close = async () => {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    };
    label = `PostgreSQL server ${((await query('SHOW server_version'))[0] as { server_version: string }).server_version}`;
  } catch (error) {
    if (required) throw new Error(`CI=true requires the PostgreSQL server on 127.0.0.1:5432: ${String(error)}`);
    console.warn(`PostgreSQL server unreachable (${String(error)}); using PGlite in-process`);
    const lite = await PGlite.create();
    query = async (sql, params) => (await lite.query<Record<string, unknown>>(sql, params)).rows;
    close = async () => lite.close();
    label = 'PGlite';
  }
  // The emitted SQL must not depend on the session's time zone: run in one far from UTC.
  await query(`CREATE SCHEMA "${schema}"`);
  await query(`SET TimeZone = 'America/St_Johns'`);
  const self: TestDatabase = {
    dialect: 'postgres',
    label,
    tableName: (name) => [schema, name],
    exec: async (sql) => void (await query(sql)),
    query: async ({ sql, params }) => query(sql, params),
    load: async (entityType, name, rows) => {
      await query(createTableSql(entityType, { dialect: 'postgres', table: [schema, name] }));
      await self.insert(name, entityType, rows);
    },
    insert: async (name, entityType, rows) => {
      for (const [sql, params] of insertStatements(self, entityType, [schema, name], rows)) await query(sql, params);
    },
    clear: async (name) => void (await query(`DELETE FROM "${schema}"."${name}"`)),
    close,
  };
  return self;
}

/** MariaDB/MySQL on 127.0.0.1:3306; undefined (with a warning) when unreachable outside CI. */
export async function openMysql(): Promise<TestDatabase | undefined> {
  const prefix = unique();
  let connection: mysql.Connection;
  try {
    connection = await mysql.createConnection({
      host: '127.0.0.1',
      port: 3306,
      user: 'root',
      database: 'test',
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
      connectTimeout: 2000,
    });
  } catch (error) {
    if (required) throw new Error(`CI=true requires the MariaDB/MySQL server on 127.0.0.1:3306: ${String(error)}`);
    console.warn(`MariaDB/MySQL server unreachable (${String(error)}); its tests are skipped`);
    return undefined;
  }
  for (const sql of mysqlSessionSql) await connection.query(sql);
  const version = ((await connection.query('SELECT VERSION() AS v'))[0] as { v: string }[])[0]!.v;
  const tables: string[] = [];
  const run = async (sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> =>
    (await connection.execute(sql, params as SqlParam[]))[0] as Record<string, unknown>[];
  const self: TestDatabase = {
    dialect: 'mysql',
    label: `MariaDB/MySQL ${version}`,
    tableName: (name) => `${prefix}_${name}`,
    exec: async (sql) => void (await connection.query(sql)),
    query: async ({ sql, params }) => run(sql, params),
    load: async (entityType, name, rows) => {
      const table = `${prefix}_${name}`;
      tables.push(table);
      await connection.query(createTableSql(entityType, { dialect: 'mysql', table }));
      await self.insert(name, entityType, rows);
    },
    insert: async (name, entityType, rows) => {
      for (const [sql, params] of insertStatements(self, entityType, `${prefix}_${name}`, rows)) await run(sql, params);
    },
    clear: async (name) => void (await connection.query(`DELETE FROM \`${prefix}_${name}\``)),
    close: async () => {
      for (const table of tables) await connection.query(`DROP TABLE IF EXISTS \`${table}\``);
      await connection.end();
    },
  };
  return self;
}

/** INSERT statements for rows (one per row), in the storage forms of storage.ts. */
export function insertStatements(
  db: Pick<TestDatabase, 'dialect'>,
  entityType: EntityType,
  table: string | readonly [string, string],
  rows: readonly Readonly<Record<string, unknown>>[],
): [string, SqlParam[]][] {
  const q = (name: string): string => (db.dialect === 'mysql' ? `\`${name}\`` : `"${name}"`);
  const properties = [...entityType.properties.values()];
  const name = typeof table === 'string' ? q(table) : table.map(q).join('.');
  const placeholders = properties.map((_, i) => (db.dialect === 'postgres' ? `$${i + 1}` : '?')).join(', ');
  const sql = `INSERT INTO ${name} (${properties.map((p) => q(p.name)).join(', ')}) VALUES (${placeholders})`;
  return rows.map((row) => [
    sql,
    properties.map((p) => {
      const value = encodeValue(db.dialect, p, row[p.name]);
      if (value === undefined) throw new Error(`${entityType.name}.${p.name}: ${String(row[p.name])} cannot be stored`);
      return value;
    }),
  ]);
}

/** Every database this machine offers, in a fixed order: SQLite, PostgreSQL, then MariaDB when reachable. */
export async function openAll(): Promise<TestDatabase[]> {
  const all = [openSqlite(), await openPostgres()];
  const my = await openMysql();
  if (my !== undefined) all.push(my);
  return all;
}

/**
 * Every database, with the tables `thing` (Thing) and `part` (Part) loaded with these rows before the file's tests
 * and closed after them: the returned array fills in `beforeAll`.
 */
export function thingDatabases(things: readonly Row[] = [], parts: readonly Row[] = []): readonly TestDatabase[] {
  const databases: TestDatabase[] = [];
  beforeAll(async () => {
    databases.push(...(await openAll()));
    for (const db of databases) {
      await db.load(Thing, 'thing', things);
      await db.load(Part, 'part', parts);
    }
  }, 60_000);
  afterAll(async () => {
    for (const db of databases) await db.close();
  });
  return databases;
}

/** toSql's options for `thing` in `db`, its Parts in `part`. */
export const thingOptions = (db: TestDatabase): SqlOptions => ({
  dialect: db.dialect,
  table: db.tableName('thing'),
  navigation: {
    Parts: { table: db.tableName('part') },
    Twin: { table: db.tableName('thing') },
    Owner: { table: db.tableName('thing') },
  },
});

export { decodeRow };

/**
 * A table of `entityType` in `db` as an implementation under test of the testing kit: its rows replaced per run
 * (Thing's parts too, which its navigations read), each query translated by toSql, its count by toSqlCount.
 */
export function sqlImplementation(db: TestDatabase, entityType: EntityType, table: string): Implementation {
  const options = () => ({ ...thingOptions(db), table: db.tableName(table) });
  return {
    async load(rows, related) {
      await db.clear(table);
      await db.insert(table, entityType, rows);
      if (entityType === Thing) {
        await db.clear('part');
        await db.insert('part', Part, related['Part'] ?? []);
      }
    },
    async run(query) {
      const bound = validateQuery(parseQuery(query.text), entityType);
      const statement = toSql(bound, options());
      let rows: Row[];
      try {
        rows = (await db.query(statement)).map((row) => decodeRow(db.dialect, bound.select, row));
      } catch (error) {
        throw new Error(`${db.label}: ${String(error)}\nSQL: ${statement.sql}`, { cause: error });
      }
      if (!bound.count) return rows;
      const [counted] = await db.query(toSqlCount(bound, options()));
      return { rows, count: Number(counted?.['count']) };
    },
  };
}
