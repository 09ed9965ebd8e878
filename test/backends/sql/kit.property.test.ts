// The SQL backend through the testing kit, its first user (issue 19): on SQLite, PostgreSQL and MariaDB, each
// database is an implementation under test of checkAgainstOracle (its `thing` table emptied and filled per run, each
// generated query translated by toSql), so every filter the kit generates from Thing's own properties with its
// default options, with $orderby, $select, $top, $skip and $count, must give the oracle's answer. A second check asks
// for the kit's casts and mixed-type `in` lists (with a bare null where a value is taken), a third compares decimal
// columns with each other, of one scale (SQLite compares their scaled integers) and of two. Everything else the kit
// generates (navigation, every function, `$orderby` expressions) is differential.property.test.ts's.
import { describe, expect, it } from 'vitest';
import { defineEntityType } from '../../../src/index.js';
import { checkAgainstOracle } from '../../../src/testing/index.js';
import { sqlImplementation, thingDatabases } from './databases.js';
import { Thing } from './fixtures.js';

const databases = thingDatabases();

/** Decimal columns at one scale and another: SQLite compares two of the same scale as their scaled integers. */
const Amounts = defineEntityType({
  name: 'Amounts',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    A: { type: 'Edm.Decimal', precision: 12, scale: 2 },
    B: { type: 'Edm.Decimal', precision: 12, scale: 2 },
    C: { type: 'Edm.Decimal', precision: 18, scale: 4 },
  },
});

describe('the SQL backend agrees with the testing kit oracle', () => {
  it('on every database, over the default run count of generated rows and queries', async () => {
    // SQLite, PostgreSQL (the server, or PGlite without it) and MariaDB (required under CI=true)
    expect(databases.map((db) => db.dialect).slice(0, 2)).toEqual(['sqlite', 'postgres']);
    if (process.env.CI === 'true') expect(databases.map((db) => db.dialect)).toEqual(['sqlite', 'postgres', 'mysql']);
    for (const db of databases) {
      const report = await checkAgainstOracle(sqlImplementation(db, Thing, 'thing'), {
        entityType: Thing,
        nulls: true,
        include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'],
      }).catch((error: unknown) => {
        throw new Error(`${db.label}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(report.queries).toBeGreaterThan(500);
    }
  }, 300_000);

  it('on casts to integers and `in` lists of mixed types, on every database', async () => {
    // promotions the backends must make exactly: an Int64 or Decimal item beside a Double one is not compared as a
    // Double (`D in (12.50000000000000000001,1e0)`), a Date beside instants is midnight UTC
    for (const db of databases) {
      const report = await checkAgainstOracle(sqlImplementation(db, Thing, 'thing'), {
        entityType: Thing,
        nulls: true,
        mixedTypes: true,
        casts: true,
        include: ['$filter', '$count'],
      }).catch((error: unknown) => {
        throw new Error(`${db.label}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(report.queries).toBeGreaterThan(500);
    }
  }, 300_000);

  it('on decimal columns compared with each other, of one scale and of two', async () => {
    for (const db of databases) {
      await db.load(Amounts, 'amounts', []);
      const report = await checkAgainstOracle(sqlImplementation(db, Amounts, 'amounts'), {
        entityType: Amounts,
        properties: ['A', 'B', 'C'],
        operators: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'not'],
        functions: [],
        include: ['$filter', '$orderby', '$count'],
        // a few values, so that columns are often equal, and nulls one time in three
        values: {
          A: ['0', '1.5', '-2.25', '100'],
          B: ['0', '1.5', '-2.25', '100'],
          C: ['0', '1.5', '1.5001', '-2.25'],
        },
        rows: { nullFrequency: 3 },
      }).catch((error: unknown) => {
        throw new Error(`${db.label}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(report.queries).toBeGreaterThan(500);
    }
  }, 300_000);
});
