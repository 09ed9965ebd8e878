// Each dialect's storage and statements (src/backends/sql/<dialect>/): every EDM type it stores round-trips through
// its encoder, its own INSERT and SELECT on the real database, and its decoder; the decoder made once per property
// reads as `decode` does; SQLite's one decoder of scaled decimals gives the exact decimal text; and the statements
// the server runs (CREATE TABLE, INSERT of several rows, UPDATE, DELETE, ORDER BY, EXISTS, MAX, the sequence
// increment) do what they say on every database.
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ColumnDefinition,
  SqlDialectName,
  SqlParam,
  TableDefinition,
  TableName,
} from '../../../src/backends/sql/dialect.js';
import { dialects } from '../../../src/backends/sql/dialects.js';
import { mysqlSessionSql, registerSqliteFunctions } from '../../../src/backends/sql/index.js';
import { scaledToText } from '../../../src/backends/sql/sqlite/storage.js';
import { compareDecimal, decimalToString, parseDecimal } from '../../../src/values/decimal.js';

/** A connection that runs any statement with parameters and gives its rows (none for a write without any). */
interface Connection {
  readonly dialect: SqlDialectName;
  readonly label: string;
  /** The name of a test table of this file in this database (a schema of its own, or a prefix). */
  tableName(name: string): TableName;
  all(sql: string, params?: readonly SqlParam[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const unique = `odata_s_${process.pid}_${randomBytes(4).toString('hex')}`;

function openSqlite(): Connection {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  return {
    dialect: 'sqlite',
    label: 'SQLite',
    tableName: (name) => name,
    all: async (sql, params = []) => {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
      statement.run(...params);
      return [];
    },
    close: async () => void db.close(),
  };
}

/** The PostgreSQL server (as databases.ts: PGlite when it is unreachable outside CI), in a schema of its own. */
async function openPostgres(): Promise<Connection> {
  const client = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'test' });
  let query: (sql: string, params?: readonly SqlParam[]) => Promise<Record<string, unknown>[]>;
  let end: () => Promise<void>;
  try {
    await client.connect();
    query = async (sql, params = []) => (await client.query(sql, [...params])).rows as Record<string, unknown>[];
    end = () => client.end();
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    const lite = await PGlite.create();
    query = async (sql, params = []) => (await lite.query<Record<string, unknown>>(sql, [...params])).rows;
    end = () => lite.close();
  }
  await query(`CREATE SCHEMA "${unique}"`);
  await query(`SET TimeZone = 'America/St_Johns'`);
  return {
    dialect: 'postgres',
    label: 'PostgreSQL',
    tableName: (name) => [unique, name],
    all: query,
    close: async () => {
      await query(`DROP SCHEMA "${unique}" CASCADE`);
      await end();
    },
  };
}

/** MariaDB/MySQL, or undefined when unreachable outside CI (as databases.ts); its tables dropped at the end. */
async function openMysql(): Promise<Connection | undefined> {
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
    });
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    return undefined;
  }
  for (const sql of mysqlSessionSql) await connection.query(sql);
  const tables = new Set<string>();
  return {
    dialect: 'mysql',
    label: 'MariaDB/MySQL',
    tableName: (name) => {
      tables.add(`${unique}_${name}`);
      return `${unique}_${name}`;
    },
    all: async (sql, params = []) => {
      const [result] = await connection.execute(sql, [...params]);
      return Array.isArray(result) ? (result as Record<string, unknown>[]) : [];
    },
    close: async () => {
      for (const table of tables) await connection.query(`DROP TABLE IF EXISTS \`${table}\``);
      await connection.end();
    },
  };
}

let databases: Connection[] = [];
beforeAll(async () => {
  const my = await openMysql();
  databases = [openSqlite(), await openPostgres(), ...(my === undefined ? [] : [my])];
}, 60_000);
afterAll(async () => {
  for (const db of databases) await db.close();
});

/** Creates a table from a definition with the dialect's DDL, and returns its name there. */
async function create(db: Connection, definition: TableDefinition): Promise<TableName> {
  const name = db.tableName(definition.name as string);
  await db.all(dialects[db.dialect].statements.createTable({ ...definition, name }));
  return name;
}

const run = (db: Connection, sql: string, params: SqlParam[] = []) => db.all(sql, params);

// ── values ───────────────────────────────────────────────────────────────────

const column = (name: string, facets: Omit<ColumnDefinition, 'name' | 'nullable'>): ColumnDefinition => ({
  name,
  nullable: true,
  ...facets,
});

/** One column of every type the SQL backend stores. */
const VALUES: TableDefinition = {
  name: 'storage_values',
  columns: [
    { name: 'Id', type: 'Edm.Int32', nullable: false, isKey: true },
    column('S', { type: 'Edm.String' }),
    column('B', { type: 'Edm.Boolean' }),
    column('I', { type: 'Edm.Int32' }),
    column('L', { type: 'Edm.Int64' }),
    column('D', { type: 'Edm.Decimal', precision: 18, scale: 4 }),
    column('F', { type: 'Edm.Double' }),
    column('Day', { type: 'Edm.Date' }),
    column('At', { type: 'Edm.DateTimeOffset' }),
    column('G', { type: 'Edm.Guid' }),
    column('Bin', { type: 'Edm.Binary' }),
  ],
  key: ['Id'],
};

/** A decimal's canonical text with at most `precision` digits, `scale` of them after the point. */
function decimal(precision: number, scale: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** BigInt(precision) - 1n }))
    .map(([negative, digits]) => decimalToString(parseDecimal(`${negative ? '-' : ''}${digits}e-${scale}`)!));
}

const instant = fc
  .date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const nullable = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { nil: null, freq: 8 });

/** Row values in their canonical row form (docs/backends.md), which decoding must give back. */
const rowValues = fc.record({
  S: nullable(fc.string({ unit: 'grapheme', maxLength: 12 }).filter((s) => !s.includes('\u0000'))),
  B: nullable(fc.boolean()),
  I: nullable(fc.integer()),
  L: nullable(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String)),
  D: nullable(decimal(18, 4)),
  // finite normal doubles (MariaDB holds no NaN or infinity) and no -0 (stored as 0 by some)
  F: nullable(
    fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .filter((x) => x === 0 || Math.abs(x) >= 2.3e-308)
      .map((x) => (x === 0 ? 0 : x)),
  ),
  Day: nullable(instant.map((t) => t.slice(0, 10))),
  At: nullable(instant),
  G: nullable(fc.uuid()),
  Bin: nullable(fc.uint8Array({ maxLength: 16 })),
});

describe('each dialect stores every type and reads it back unchanged', () => {
  it('encode → its INSERT → its SELECT → decode (and decoder) gives the row value', async () => {
    const tables = new Map<Connection, TableName>();
    for (const db of databases) tables.set(db, await create(db, VALUES));
    const names = VALUES.columns.map((c) => c.name);
    let id = 0;
    await fc.assert(
      fc.asyncProperty(rowValues, async (values) => {
        const row: Record<string, unknown> = { Id: ++id, ...values };
        for (const db of databases) {
          const { storage, statements } = dialects[db.dialect];
          const table = tables.get(db)!;
          const params = VALUES.columns.map((c) => storage.encode(c, row[c.name]));
          expect(params, `${db.label}: every value is storable`).not.toContain(undefined);
          await run(db, statements.insert(table, names), params as SqlParam[]);
          const [raw] = await run(db, statements.select(table, names, ['Id']), [
            storage.integerParam(row.Id as number),
          ]);
          for (const c of VALUES.columns) {
            const decoded = storage.decode(c, raw![c.name]);
            expect(storage.decoder(c)(raw![c.name]), `${db.label} ${c.name}: decoder`).toEqual(decoded);
            if (c.type === 'Edm.Decimal' && decoded !== null) {
              expect(storage.decimalText(c)(raw![c.name]), `${db.label} ${c.name}: decimalText`).toBe(decoded);
            }
            const expected = c.name === 'Bin' && row.Bin !== null ? new Uint8Array(row.Bin as Uint8Array) : row[c.name];
            expect(decoded, `${db.label} ${c.name}`).toEqual(expected);
          }
        }
      }),
      { numRuns: 150 },
    );
  }, 120_000);

  it('refuses what the database cannot hold unchanged', () => {
    const text = { type: 'Edm.String' } as const;
    expect(dialects.sqlite.storage.encode(text, 'a\u0000b')).toBeUndefined();
    expect(dialects.postgres.storage.encode(text, 'a\u0000b')).toBeUndefined();
    expect(dialects.mysql.storage.encode(text, 'a\u0000b')).toBe('a\u0000b');
    for (const dialect of Object.values(dialects)) {
      expect(dialect.storage.encode({ type: 'Edm.DateTimeOffset' }, '0000-12-31T23:59:59.999Z')).toBeUndefined();
      expect(dialect.storage.encode({ type: 'Edm.Int32' }, 1.5)).toBeUndefined();
      expect(dialect.storage.encode({ type: 'Edm.Decimal', precision: 6, scale: 2 }, '1.005')).toBeUndefined();
    }
  });
});

describe("SQLite's scaled decimals", () => {
  const { scaledDecimals } = dialects.sqlite.storage;

  it('are read by one decoder, which gives the exact decimal text', () => {
    const scaled = fc.oneof(
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }), // the decoder's double fast path, and its edges
      fc.integer({ min: -100_000, max: 100_000 }).map(BigInt),
    );
    fc.assert(
      fc.property(scaled, fc.integer({ min: 0, max: 18 }), (n, scale) => {
        const exact = decimalToString(parseDecimal(`${n}e-${scale}`)!);
        expect(scaledToText(n, scale)).toBe(exact);
        const property = { type: 'Edm.Decimal', precision: 18, scale } as const;
        expect(dialects.sqlite.storage.decoder(property)(n)).toBe(exact);
        expect(dialects.sqlite.storage.decode(property, n)).toBe(exact);
        expect(dialects.sqlite.storage.decimalText(property)(n)).toBe(exact);
      }),
      { numRuns: 5000 },
    );
  });

  it('encode a decimal as its scaled integer, which the decoder reads back', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 18 }).chain((scale) => fc.tuple(fc.constant(scale), decimal(18, scale))),
        ([scale, text]) => {
          const property = { type: 'Edm.Decimal', precision: 18, scale } as const;
          const stored = dialects.sqlite.storage.encode(property, text);
          expect(typeof stored).toBe('bigint');
          expect(dialects.sqlite.storage.decode(property, stored)).toBe(text);
        },
      ),
    );
  });

  it('bound a literal by the scaled integers around it', () => {
    const literal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,22}$/), fc.option(fc.stringMatching(/^[0-9]{1,22}$/)))
      .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}`);
    fc.assert(
      fc.property(literal, fc.integer({ min: 0, max: 18 }), (text, scale) => {
        const value = parseDecimal(text)!;
        const at = (n: bigint) => parseDecimal(`${n}e-${scale}`)!;
        const { exact, floor, ceiling } = scaledDecimals!.bounds(text, scale);
        expect(compareDecimal(at(floor), value)).toBeLessThanOrEqual(0);
        expect(compareDecimal(at(ceiling), value)).toBeGreaterThanOrEqual(0);
        expect(ceiling - floor).toBe(exact === undefined ? 1n : 0n);
        if (exact !== undefined) expect(compareDecimal(at(exact), value)).toBe(0);
      }),
      { numRuns: 2000 },
    );
  });
});

// ── statements ───────────────────────────────────────────────────────────────

describe("each dialect's statements", () => {
  const ITEMS: TableDefinition = {
    name: 'storage_items',
    columns: [
      { name: 'Scope', type: 'Edm.String', maxLength: 20, isKey: true, nullable: false },
      { name: 'N', type: 'Edm.Int32', isKey: true, nullable: false },
      { name: 'Label', type: 'Edm.String', nullable: true },
      { name: 'On', type: 'Edm.Boolean', nullable: false },
    ],
    key: ['Scope', 'N'],
  };
  const SEQUENCES: TableDefinition = {
    name: 'storage_sequences',
    columns: [
      { name: 'site', type: 'Edm.String', maxLength: 100, isKey: true, nullable: false },
      { name: 'name', type: 'Edm.String', maxLength: 100, isKey: true, nullable: false },
      { name: 'value', type: 'Edm.Int64', nullable: false },
    ],
    key: ['site', 'name'],
  };

  it('write, read, count and number rows as the server needs', async () => {
    for (const db of databases) {
      const { storage, statements: s } = dialects[db.dialect];
      const items = await create(db, ITEMS);
      const int = (n: number) => storage.encode({ type: 'Edm.Int32' }, n)!;
      const bool = (b: boolean) => storage.encode({ type: 'Edm.Boolean' }, b)!;
      const columns = ['Scope', 'N', 'Label', 'On'];
      // several rows in one INSERT, then one
      await run(db, s.insert(items, columns, 3), [
        ...['a', int(2), 'two', bool(true)],
        ...['a', int(1), "o'ne", bool(false)],
        ...['b', int(1), null, bool(true)],
      ]);
      await run(db, s.insert(items, columns), ['a', int(3), 'three', bool(true)]);
      const labels = async (scope: string) =>
        (await run(db, s.select(items, ['N', 'Label'], ['Scope'], ['N']), [scope])).map((r) => [
          Number(r['N']),
          r['Label'],
        ]);
      expect(await labels('a'), db.label).toEqual([
        [1, "o'ne"],
        [2, 'two'],
        [3, 'three'],
      ]);
      await run(db, s.update(items, ['Label', 'On'], ['Scope', 'N']), ['uno', bool(true), 'a', int(1)]);
      expect(await run(db, s.select(items, ['On'], ['Scope', 'N']), ['a', int(1)]), db.label).toHaveLength(1);
      expect(
        storage.decode(
          { type: 'Edm.Boolean' },
          (await run(db, s.select(items, ['On'], ['Scope', 'N']), ['a', int(1)]))[0]!['On'],
        ),
      ).toBe(true);
      await run(db, s.delete(items, ['Scope', 'N']), ['a', int(2)]);
      expect(await labels('a'), db.label).toEqual([
        [1, 'uno'],
        [3, 'three'],
      ]);
      expect(await run(db, s.exists(items, ['Scope']), ['a']), db.label).toHaveLength(1);
      expect(await run(db, s.exists(items, ['Scope']), ['c']), db.label).toHaveLength(0);
      const max = async (scope: string) => (await run(db, s.max(items, 'N', ['Scope']), [scope]))[0]!['max'];
      expect(Number(await max('a')), db.label).toBe(3);
      expect(await max('c'), db.label).toBeNull();
      expect((await run(db, s.select(items, ['Scope', 'N'], [], ['Scope', 'N']))).length, db.label).toBe(3);
      const analyze = s.analyze?.(items);
      if (analyze !== undefined) await run(db, analyze);
    }
  }, 60_000);

  it('increment a sequence: 1 for a new name, then one more each time, per key', async () => {
    for (const db of databases) {
      const { statements: s } = dialects[db.dialect];
      const sequences = await create(db, SEQUENCES);
      const steps = s.increment(sequences, ['site', 'name'], 'value');
      const next = async (site: string, name: string): Promise<number> => {
        let row: Record<string, unknown> | undefined;
        if (s.transactionLock !== undefined) await run(db, s.transactionLock, [`${site}/${name}`]);
        for (const { sql, keyed } of steps) [row] = await run(db, sql, keyed ? [site, name] : []);
        return Number(row?.['value']);
      };
      const taken = [];
      for (const [site, name] of [
        ['n', 'x'],
        ['n', 'x'],
        ['n', 'y'],
        ['s', 'x'],
        ['n', 'x'],
      ] as const)
        taken.push(await next(site, name));
      expect(taken, db.label).toEqual([1, 2, 1, 1, 3]);
    }
  });
});
