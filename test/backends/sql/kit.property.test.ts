// The SQL backend through the testing kit, its first user (issue 19): on SQLite, PostgreSQL and MariaDB, each
// database is an implementation under test of checkAgainstOracle (its `thing` table emptied and filled per run, each
// generated query translated by toSql), so every filter the kit generates from Thing's own properties, with
// $orderby, $select, $top, $skip and $count, must give the oracle's answer. The hand-written generator of
// differential.property.test.ts (filters.ts) still covers what the kit does not generate yet: navigation paths,
// a bare null in every position, casts and TimeOfDay values.
import { describe, expect, it } from 'vitest';
import { parseQuery, validateQuery } from '../../../src/index.js';
import { checkAgainstOracle, type Implementation } from '../../../src/testing/index.js';
import { toSql, toSqlCount } from '../../../src/backends/sql/index.js';
import { decodeRow, thingDatabases, thingOptions, type TestDatabase } from './databases.js';
import { Thing } from './fixtures.js';

const databases = thingDatabases();

function implementation(db: TestDatabase): Implementation {
  return {
    async load(rows) {
      await db.clear('thing');
      await db.insert('thing', Thing, rows);
    },
    async run(query) {
      const bound = validateQuery(parseQuery(query.text), Thing);
      const rows = (await db.query(toSql(bound, thingOptions(db)))).map((row) =>
        decodeRow(db.dialect, bound.select, row),
      );
      if (!bound.count) return rows;
      const [counted] = await db.query(toSqlCount(bound, thingOptions(db)));
      return { rows, count: Number(counted?.['count']) };
    },
  };
}

describe('the SQL backend agrees with the testing kit oracle', () => {
  it('on every database, over the default run count of generated rows and queries', async () => {
    // SQLite, PostgreSQL (the server, or PGlite without it) and MariaDB (required under CI=true)
    expect(databases.map((db) => db.dialect).slice(0, 2)).toEqual(['sqlite', 'postgres']);
    if (process.env.CI === 'true') expect(databases.map((db) => db.dialect)).toEqual(['sqlite', 'postgres', 'mysql']);
    for (const db of databases) {
      const report = await checkAgainstOracle(implementation(db), {
        entityType: Thing,
        include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'],
      }).catch((error: unknown) => {
        throw new Error(`${db.label}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(report.queries).toBeGreaterThan(500);
    }
  }, 300_000);
});
