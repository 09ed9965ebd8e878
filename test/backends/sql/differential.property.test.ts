// The heart of the SQL backend's tests: arbitrary well-typed queries over arbitrary rows give exactly the same rows
// in the same order from the memory backend, SQLite, PostgreSQL and MariaDB (SEMANTICS.md: "a property the tests
// check, not a hope"). The queries and rows are the testing kit's, with everything it generates (thingKit in
// fixtures.ts): paths, lambdas and counts through two navigations, every function, a bare null where a value is
// taken, `in` lists of mixed types, casts and `$orderby` expressions, among them the classes an outside fuzzer found
// (issue 12). Each database is checked against the kit's oracle, the memory backend; a failure prints the seed, the
// shrunk query, the rows and both answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseFilter, parseQuery, validateQuery } from '../../../src/index.js';
import { runQuery } from '../../../src/backends/memory/index.js';
import { decodeRow, toSql } from '../../../src/backends/sql/index.js';
import { checkAgainstOracle, filterOf } from '../../../src/testing/index.js';
import type { BoundQuery } from '../../../src/validate/bound.js';
import { sqlImplementation, thingDatabases, thingOptions } from './databases.js';
import { dataSet, Thing, thingKit, withParts, type Row } from './fixtures.js';

// 500 data sets of 10 queries: 5,000 cases a run on each database (SQL_DATA_SETS=2000 runs four times as many)
const DATA_SETS = Number(process.env.SQL_DATA_SETS ?? 500);
const QUERIES_PER_SET = 10;

const databases = thingDatabases();

describe('memory, SQLite, PostgreSQL and MariaDB agree', () => {
  it(`on ${DATA_SETS * QUERIES_PER_SET} random queries over random rows, on each database`, async () => {
    expect(databases.map((db) => db.dialect).slice(0, 2)).toEqual(['sqlite', 'postgres']);
    if (process.env.CI === 'true') expect(databases.map((db) => db.dialect)).toEqual(['sqlite', 'postgres', 'mysql']);
    for (const db of databases) {
      const report = await checkAgainstOracle(sqlImplementation(db, Thing, 'thing'), {
        entityType: Thing,
        ...thingKit,
        include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'],
        numRuns: DATA_SETS,
        queriesPerRun: QUERIES_PER_SET,
      }).catch((error: unknown) => {
        throw new Error(`${db.label}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(report.runs).toBe(DATA_SETS);
    }
  }, 600_000);

  it('on `x in (a, b, ...)` selecting the rows of `x eq a or x eq b ...`, items of mixed types', async () => {
    // The law behind `in` (SEMANTICS.md): the differential cannot see a binder that gets it wrong (every backend runs
    // the same bound tree), so the two filters are checked against each other. The kit's `in` lists, over the
    // properties, sums and casts of them, with items of other types and exact values a Double cannot tell apart.
    const inFilters = filterOf(Thing, {
      ...thingKit,
      navigation: 0,
      operators: ['in', 'add'],
      functions: ['date'],
      depth: 2,
    }).filter((text) => parseFilter(text).kind === 'in');
    const laws = inFilters.map((text) => {
      const tree = parseFilter(text);
      if (tree.kind !== 'in' || tree.right.kind !== 'list') throw new Error(`not an in list: ${text}`);
      const left = text.slice(tree.left.span.start, tree.left.span.end);
      const items = tree.right.items.map((item) => text.slice(item.span.start, item.span.end));
      return {
        inFilter: `$filter=${encodeURIComponent(text)}`,
        orFilter: `$filter=${encodeURIComponent(items.map((item) => `(${left}) eq ${item}`).join(' or '))}`,
      };
    });
    const ids = (rows: readonly Row[]): unknown[] => rows.map((row) => String(row['Id'])).sort();
    await fc.assert(
      fc.asyncProperty(dataSet, fc.array(laws, { minLength: 10, maxLength: 10 }), async ({ things }, pairs) => {
        await Promise.all(
          databases.map(async (db) => {
            await db.clear('thing');
            await db.insert('thing', Thing, things);
          }),
        );
        const memoryRows = withParts(things, []);
        for (const { inFilter, orFilter } of pairs) {
          const [inBound, orBound] = [inFilter, orFilter].map((q) => validateQuery(parseQuery(q), Thing));
          const answers: [string, unknown[], unknown[]][] = [
            [
              'memory',
              ids(runQuery(memoryRows, inBound!).value as Row[]),
              ids(runQuery(memoryRows, orBound!).value as Row[]),
            ],
          ];
          for (const db of databases) {
            const run = async (bound: BoundQuery) =>
              ids((await db.query(toSql(bound, thingOptions(db)))).map((r) => decodeRow(db.dialect, bound.select, r)));
            answers.push([db.label, await run(inBound!), await run(orBound!)]);
          }
          for (const [label, viaIn, viaOr] of answers) {
            if (JSON.stringify(viaIn) !== JSON.stringify(viaOr))
              throw new Error(
                `${label}: ${decodeURIComponent(inFilter)} selects ${JSON.stringify(viaIn)} but ${decodeURIComponent(orFilter)} selects ${JSON.stringify(viaOr)}\nrows: ${JSON.stringify(things)}`,
              );
          }
        }
      }),
      { numRuns: 100, endOnFailure: true },
    );
  }, 120_000);
});
