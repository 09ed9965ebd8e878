// Emitted SQL stays index-friendly: a plain `Account eq 'x'` is a plain equality the planner answers from the key's
// index, a literal prefix (`startswith`) is a range scan, and the default key order reads the index instead of
// sorting. Each database's own EXPLAIN says so (PostgreSQL with sequential scans disabled, so that a small table's
// cheap seq scan cannot hide an index the planner could not use).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, parseQuery, validateQuery } from '../../../src/index.js';
import { toSql } from '../../../src/backends/sql/index.js';
import { dialects } from '../../../src/backends/sql/dialects.js';
import { quoteTable } from '../../../src/backends/sql/statements.js';
import { Account } from '../../../src/server/model.js';
import { openAll, type TestDatabase } from './databases.js';

let databases: TestDatabase[] = [];
beforeAll(async () => {
  databases = await openAll();
  const rows = Array.from({ length: 3000 }, (_, i) => ({
    Account: `${1000 + (i % 100)}-${String(i).padStart(4, '0')}`,
    Description: i % 7 === 0 ? null : `Account ${i}`,
    IsActive: i % 3 !== 0,
  }));
  for (const db of databases) {
    await db.load(Account, 'accounts', rows);
    if (db.dialect === 'sqlite') await db.exec('ANALYZE');
    if (db.dialect === 'mysql') await db.exec(`ANALYZE TABLE \`${String(db.tableName('accounts'))}\``);
  }
}, 60_000);
afterAll(async () => {
  for (const db of databases) await db.close();
});

const json = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));

/** The plan as text the test can search: SQLite's details, PostgreSQL's JSON, MySQL's rows. */
async function plan(db: TestDatabase, query: string): Promise<string> {
  const statement = toSql(validateQuery(parseQuery(query), Account), {
    dialect: db.dialect,
    table: db.tableName('accounts'),
  });
  switch (db.dialect) {
    case 'sqlite':
      return json(await db.query({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, params: statement.params }));
    case 'postgres': {
      await db.exec('SET enable_seqscan = off');
      try {
        return json(await db.query({ sql: `EXPLAIN (FORMAT JSON) ${statement.sql}`, params: statement.params }));
      } finally {
        await db.exec('SET enable_seqscan = on');
      }
    }
    case 'mysql':
      return json(await db.query({ sql: `EXPLAIN ${statement.sql}`, params: statement.params }));
  }
}

describe('the planner uses the key index', () => {
  it("for Account eq 'x' (a plain equality on the column)", async () => {
    for (const db of databases) {
      const text = await plan(db, "$filter=Account eq '1005-0005'");
      if (db.dialect === 'sqlite')
        expect(text, db.label).toMatch(/USING (INDEX|PRIMARY KEY|COVERING INDEX) .*\(Account=\?\)/);
      if (db.dialect === 'postgres')
        expect(text, db.label).toMatch(/"Node Type":"Index (Only )?Scan"|Bitmap Index Scan/);
      if (db.dialect === 'postgres') expect(text, db.label).not.toContain('Seq Scan');
      if (db.dialect === 'mysql') expect(text, db.label).toMatch(/"type":"(const|eq_ref|ref)"/);
    }
  });

  it("for startswith(Account,'1005') (a prefix range)", async () => {
    for (const db of databases) {
      const text = await plan(db, "$filter=startswith(Account,'1005')");
      if (db.dialect === 'sqlite')
        expect(text, db.label).toMatch(/USING (INDEX|PRIMARY KEY|COVERING INDEX) .*Account>\? AND Account<\?/);
      if (db.dialect === 'postgres') expect(text, db.label).not.toContain('Seq Scan');
      if (db.dialect === 'mysql') expect(text, db.label).toMatch(/"type":"range"/);
    }
  });

  it('for the default key order with $top (no sort step)', async () => {
    for (const db of databases) {
      const text = await plan(db, '$filter=IsActive&$top=10');
      if (db.dialect === 'sqlite') expect(text, db.label).not.toContain('TEMP B-TREE');
      if (db.dialect === 'postgres') expect(text, db.label).not.toContain('"Node Type":"Sort"');
      if (db.dialect === 'mysql') expect(text, db.label).not.toContain('filesort');
    }
  });
});

describe('the planner uses a search index (PostgreSQL)', () => {
  // a searchable property with a search index: its GIN index of the words serves each term of ASCII letters and
  // digits, before the exact match (the statement's expression is the index's, so PostgreSQL can match them)
  const Note = defineEntityType({
    name: 'Note',
    key: ['Id'],
    properties: {
      Id: { type: 'Edm.Int32' },
      Title: { type: 'Edm.String', searchable: true, searchIndex: true },
    },
  });

  it('for $search=pump seal (the index scanned) and not for NOT pump, finding what the scan finds', async () => {
    const postgres = databases.filter((db) => db.dialect === 'postgres');
    // (the PostgreSQL server, or PGlite where it is unreachable outside CI)
    expect(postgres.length).toBeGreaterThan(0);
    for (const db of postgres) {
      const table = db.tableName('notes');
      const words = ['pump', 'seal', 'valve', 'Brand-New', 'bearing', 'Straße'];
      await db.load(
        Note,
        'notes',
        Array.from({ length: 2000 }, (_, i) => ({ Id: i, Title: `${words[i % 6]} ${words[(i * 7) % 6]} ${i}` })),
      );
      const { quoteIdentifier, searchIndex } = dialects.postgres;
      await db.exec(
        searchIndex!.indexSql(quoteTable(quoteIdentifier, table), quoteIdentifier('Title'), '"notes_title_search"'),
      );
      await db.exec(`ANALYZE ${quoteTable(quoteIdentifier, table)}`);
      const explain = async (query: string): Promise<string> => {
        const statement = toSql(validateQuery(parseQuery(query), Note), { dialect: 'postgres', table });
        await db.exec('SET enable_seqscan = off');
        try {
          return json(await db.query({ sql: `EXPLAIN (FORMAT JSON) ${statement.sql}`, params: statement.params }));
        } finally {
          await db.exec('SET enable_seqscan = on');
        }
      };
      expect(await explain('$search=pump%20seal'), db.label).toContain('"Index Name":"notes_title_search"');
      expect(await explain('$search=NOT%20pump'), db.label).not.toContain('notes_title_search');
      // and the index finds what the scan finds
      const count = async (query: string, table2: typeof table): Promise<number> => {
        const statement = toSql(validateQuery(parseQuery(query), Note), { dialect: 'postgres', table: table2 });
        return (await db.query(statement)).length;
      };
      expect(await count('$search=brand%20new%20pump', table)).toBe(
        Array.from({ length: 2000 }, (_, i) => `${words[i % 6]} ${words[(i * 7) % 6]} ${i}`).filter((t) =>
          / brand new pump /.test(` ${t.toLowerCase().replace(/-/g, ' ')} `),
        ).length,
      );
    }
  });
});
