// Emitted SQL stays index-friendly: a plain `Account eq 'x'` is a plain equality the planner answers from the key's
// index, a literal prefix (`startswith`) is a range scan, and the default key order reads the index instead of
// sorting. Each database's own EXPLAIN says so (PostgreSQL with sequential scans disabled, so that a small table's
// cheap seq scan cannot hide an index the planner could not use).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, parseQuery, validateQuery } from '../../../src/index.js';
import { toSql } from '../../../src/backends/sql/index.js';
import { dialects } from '../../../src/backends/sql/dialects.js';
import { quoteTable } from '../../../src/backends/sql/statements.js';
import { searchIndexName } from '../../../src/backends/sql/common.js';
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

describe('the planner uses a search index', () => {
  // a searchable property with a search index: PostgreSQL's GIN index of the words, SQLite's FTS5 table, MariaDB's
  // FULLTEXT index of a generated column serves each term of ASCII letters and digits before the exact match
  // (PostgreSQL's statement has the index's expression, so the planner can match them; SQLite's reads its FTS5 table
  // by MATCH, MariaDB's the FULLTEXT index by MATCH ... AGAINST)
  const Note = defineEntityType({
    name: 'Note',
    key: ['Id'],
    properties: {
      Id: { type: 'Edm.Int32' },
      Title: { type: 'Edm.String', searchable: true, searchIndex: true },
    },
  });
  const words = ['pump', 'seal', 'valve', 'Brand-New', 'bearing', 'Straße'];
  const title = (i: number): string => `${words[i % 6]} ${words[(i * 7) % 6]} ${i}`;

  it('for $search=pump seal (the index read) and not for NOT pump, finding what the scan finds', async () => {
    const indexed = databases.filter((db) => dialects[db.dialect].searchIndex !== undefined);
    // (the PostgreSQL server, or PGlite where it is unreachable outside CI; SQLite; MariaDB under CI)
    expect(indexed.map((db) => db.dialect)).toEqual(
      expect.arrayContaining(['sqlite', 'postgres', ...(process.env['CI'] === 'true' ? ['mysql'] : [])]),
    );
    for (const db of indexed) {
      const table = db.tableName('notes');
      // the rows first, then the index: it is filled with the rows the table has when it is made
      await db.load(
        Note,
        'notes',
        Array.from({ length: 2000 }, (_, i) => ({ Id: i, Title: title(i) })),
      );
      for (const sql of dialects[db.dialect].searchIndex!.indexSql(table, ['Id'], ['Title'])) await db.exec(sql);
      const q = dialects[db.dialect].quoteIdentifier;
      const name = quoteTable(q, table);
      await db.exec(db.dialect === 'sqlite' ? 'ANALYZE' : `ANALYZE${db.dialect === 'mysql' ? ' TABLE' : ''} ${name}`);
      const explain = async (query: string): Promise<string> => {
        const statement = toSql(validateQuery(parseQuery(query), Note), { dialect: db.dialect, table });
        if (db.dialect === 'sqlite') {
          return json(await db.query({ sql: `EXPLAIN QUERY PLAN ${statement.sql}`, params: statement.params }));
        }
        if (db.dialect === 'mysql') {
          return json(await db.query({ sql: `EXPLAIN ${statement.sql}`, params: statement.params }));
        }
        await db.exec('SET enable_seqscan = off');
        try {
          return json(await db.query({ sql: `EXPLAIN (FORMAT JSON) ${statement.sql}`, params: statement.params }));
        } finally {
          await db.exec('SET enable_seqscan = on');
        }
      };
      const index = {
        sqlite: 'VIRTUAL TABLE INDEX',
        postgres: '"Index Name":"notes_Title_search"',
        mysql: '"type":"fulltext"',
      }[db.dialect];
      expect(await explain('$search=pump%20seal'), db.label).toContain(index);
      expect(await explain('$search=NOT%20pump'), db.label).not.toContain(index);
      // and the index finds what the scan finds, also after writes that the database keeps it current through
      const count = async (query: string): Promise<number> => {
        const statement = toSql(validateQuery(parseQuery(query), Note), { dialect: db.dialect, table });
        return (await db.query(statement)).length;
      };
      const expected = (titles: readonly string[], phrase: string): number =>
        titles.filter((t) => ` ${t.toLowerCase().replace(/-/g, ' ')} `.includes(` ${phrase} `)).length;
      const titles = Array.from({ length: 2000 }, (_, i) => title(i));
      expect(await count('$search=brand%20new%20pump')).toBe(expected(titles, 'brand new pump'));
      await db.exec(`UPDATE ${name} SET ${q('Title')} = 'gasket pump' WHERE ${q('Id')} < 100`);
      await db.exec(`DELETE FROM ${name} WHERE ${q('Id')} >= 1900`);
      await db.exec(`INSERT INTO ${name} (${q('Id')}, ${q('Title')}) VALUES (5000, 'Gasket-pump 9'), (5001, NULL)`);
      const now = [...Array.from({ length: 100 }, () => 'gasket pump'), ...titles.slice(100, 1900), 'Gasket-pump 9'];
      for (const phrase of ['gasket pump', 'brand new pump', 'pump', 'seal', '9']) {
        expect(await count(`$search=${encodeURIComponent(`"${phrase}"`)}`), `${db.label}: ${phrase}`).toBe(
          expected(now, phrase),
        );
      }
    }
  });
});

describe("MariaDB's search index is used only under the settings it was asked for", () => {
  const settings = dialects.mysql.searchIndex!.settings!;
  const defaults = { min: 3, max: 84, server: null, user: null };
  it('fits InnoDB’s defaults, and not a larger minimum, a smaller maximum or a stopword table of the server', () => {
    expect(settings.fits(defaults)).toBe(true);
    expect(settings.fits({ ...defaults, min: 4 })).toBe(false);
    expect(settings.fits({ ...defaults, max: 20 })).toBe(false);
    expect(settings.fits({ ...defaults, server: 'db/stopwords' })).toBe(false);
    expect(settings.fits({ ...defaults, user: 'db/stopwords' })).toBe(false);
  });

  it('and a store told its index does not fit scans', () => {
    const Note = defineEntityType({
      name: 'Note',
      key: ['Id'],
      properties: { Id: { type: 'Edm.Int32' }, Title: { type: 'Edm.String', searchable: true, searchIndex: true } },
    });
    const bound = validateQuery(parseQuery('$search=pump'), Note);
    expect(toSql(bound, { dialect: 'mysql', table: 'notes' }).sql).toContain('MATCH(');
    expect(toSql(bound, { dialect: 'mysql', table: 'notes', searchIndex: false }).sql).not.toContain('MATCH(');
  });
});

describe('a search index is named after its columns', () => {
  it('so that indexing other columns makes (and fills) a new index rather than reading one that lacks them', () => {
    expect(searchIndexName('notes', ['Title', 'Body'])).toBe(searchIndexName('notes', ['Body', 'Title']));
    expect(searchIndexName('notes', ['Title'])).not.toBe(searchIndexName('notes', ['Title', 'Body']));
    expect(searchIndexName('x'.repeat(80), ['Title'], 64)).toHaveLength(64);
    for (const dialect of ['sqlite', 'mysql'] as const) {
      const ddl = (columns: string[]) => dialects[dialect].searchIndex!.indexSql('notes', ['Id'], columns).join('\n');
      expect(ddl(['Title']), dialect).toContain(
        searchIndexName('notes', ['Title'], dialect === 'mysql' ? 64 : Infinity),
      );
      expect(ddl(['Title', 'Body']), dialect).not.toContain(searchIndexName('notes', ['Title']));
    }
  });
});
