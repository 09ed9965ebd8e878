// The heart of the SQL backend's tests: arbitrary well-typed queries over arbitrary rows give exactly the same rows
// in the same order from the memory backend, SQLite, PostgreSQL and MariaDB (SEMANTICS.md: "a property the tests
// check, not a hope"). A failure prints the seed, the query, the SQL and both answers.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseQuery, validateQuery } from '../../../src/index.js';
import { runQuery } from '../../../src/backends/memory/index.js';
import { decodeRow, toSql } from '../../../src/backends/sql/index.js';
import type { BoundQuery } from '../../../src/validate/bound.js';
import { thingDatabases, thingOptions } from './databases.js';
import { dataSet, Part, Thing, withParts, type Row } from './fixtures.js';
import { inAndItsOr, thingQuery } from './filters.js';

// 500 data sets of 10 queries: 5,000 cases a run (SQL_DATA_SETS=2000 runs four times as many)
const DATA_SETS = Number(process.env.SQL_DATA_SETS ?? 500);
const QUERIES_PER_SET = 10;

const databases = thingDatabases();

/** Values in one comparable form: decimals and Int64 as canonical text, instants as ISO text. */
function normalize(bound: BoundQuery, rows: readonly Row[]): unknown[] {
  return rows.map((row) =>
    bound.select.map((p) => {
      const v = row[p.name];
      if (v === null || v === undefined) return null;
      if (p.type === 'Edm.Int64' || p.type === 'Edm.Decimal') return String(v);
      if (p.type === 'Edm.DateTimeOffset') return new Date(v as string).toISOString();
      return v;
    }),
  );
}

describe('memory, SQLite, PostgreSQL and MariaDB agree', () => {
  it(`on ${DATA_SETS * QUERIES_PER_SET} random queries over random rows`, async () => {
    let cases = 0;
    await fc.assert(
      fc.asyncProperty(
        dataSet,
        fc.array(thingQuery, { minLength: QUERIES_PER_SET, maxLength: QUERIES_PER_SET }),
        async ({ things, parts }, queries) => {
          await Promise.all(
            databases.map(async (db) => {
              await db.clear('thing');
              await db.clear('part');
              await db.insert('thing', Thing, things);
              await db.insert('part', Part, parts);
            }),
          );
          const memoryRows = withParts(things, parts);
          for (const query of queries) {
            const bound = validateQuery(parseQuery(query), Thing);
            const expected = normalize(bound, runQuery(memoryRows, bound).value as Row[]);
            for (const db of databases) {
              const statement = toSql(bound, thingOptions(db));
              let actual: unknown[];
              try {
                actual = normalize(
                  bound,
                  (await db.query(statement)).map((r) => decodeRow(db.dialect, bound.select, r)),
                );
              } catch (error) {
                throw new Error(
                  `${db.label} failed on ${decodeURIComponent(query)}\nSQL: ${statement.sql}\nparams: ${String(statement.params)}\n${String(error)}`,
                );
              }
              if (JSON.stringify(actual) !== JSON.stringify(expected)) {
                throw new Error(
                  `${db.label} differs from memory on ${decodeURIComponent(query)}\nSQL: ${statement.sql}\nparams: ${JSON.stringify(statement.params, (_, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}\nmemory: ${JSON.stringify(expected)}\n${db.dialect}: ${JSON.stringify(actual)}\nrows: ${JSON.stringify(things)}\nparts: ${JSON.stringify(parts)}`,
                );
              }
            }
            cases++;
          }
        },
      ),
      { numRuns: DATA_SETS, endOnFailure: true },
    );
    expect(cases).toBe(DATA_SETS * QUERIES_PER_SET);
  }, 300_000);

  it('on `x in (a, b, ...)` selecting the rows of `x eq a or x eq b ...`, items of mixed types', async () => {
    const ids = (rows: readonly Row[]): unknown[] => rows.map((row) => String(row['Id'])).sort();
    await fc.assert(
      fc.asyncProperty(dataSet, fc.array(inAndItsOr, { minLength: 10, maxLength: 10 }), async ({ things }, laws) => {
        await Promise.all(
          databases.map(async (db) => {
            await db.clear('thing');
            await db.insert('thing', Thing, things);
          }),
        );
        const memoryRows = withParts(things, []);
        for (const { inFilter, orFilter } of laws) {
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
                `${label}: ${inFilter} selects ${JSON.stringify(viaIn)} but ${orFilter} selects ${JSON.stringify(viaOr)}\nrows: ${JSON.stringify(things)}`,
              );
          }
        }
      }),
      { numRuns: 100, endOnFailure: true },
    );
  }, 120_000);
});
