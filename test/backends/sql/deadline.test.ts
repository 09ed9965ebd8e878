// Statements the SQL backend can stop (SqlOptions.deadlineChecks): better-sqlite3 has no interrupt, so the SQLite
// dialect puts a row check first in every WHERE, the root's and each subquery's, and runWithDeadline makes it throw
// past the deadline, wherever SQLite is in the statement (its own loops included). Real SQLite, real statements.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { parseQuery, validateQuery } from '../../../src/index.js';
import {
  isStatementDeadline,
  registerSqliteFunctions,
  runWithDeadline,
  StatementDeadlineError,
  toSql,
  toSqlCount,
  type SqlDialectName,
} from '../../../src/backends/sql/index.js';
import { sqliteDialect } from '../../../src/backends/sql/sqlite/dialect.js';
import { Thing } from './fixtures.js';

const bind = (query: string) => validateQuery(parseQuery(query), Thing);
const options = (dialect: SqlDialectName, deadlineChecks: boolean) => ({
  dialect,
  table: 'thing',
  navigation: { Parts: { table: 'part' } },
  scope: { Site: 'north' },
  deadlineChecks,
});
const occurrences = (sql: string, text: string): number => sql.split(text).length - 1;

describe('deadline checks in the SQL', () => {
  it.each([
    ['$filter=I gt 1', 1],
    ['$orderby=S', 1],
    ['$filter=Parts/any(p:p/Q gt 0)', 2],
    ['$filter=Parts/any(p:p/Q gt 0) and Parts/all(q:q/Q lt 9)&$orderby=Parts/$count desc', 4],
    ['$filter=Parts/$count($filter=Q gt 1) gt 0', 2],
  ])('come first in every WHERE on SQLite: %s', (query, wheres) => {
    const { sql } = toSql(bind(query), options('sqlite', true));
    expect(occurrences(sql, 'WHERE')).toBe(wheres);
    // each with the alias of the table its WHERE reads
    expect(sql.match(/WHERE \(\(t\d+\.rowid & 63\) <> 0 OR odata_deadline\(\)\) AND /g)?.length).toBe(wheres);
    expect(occurrences(toSqlCount(bind(query), options('sqlite', true)).sql, 'odata_deadline()')).toBeGreaterThan(0);
  });

  it('are not written unless asked, nor by dialects that stop statements themselves', () => {
    const query = '$filter=Parts/any(p:p/Q gt 0)';
    expect(toSql(bind(query), options('sqlite', false)).sql).not.toContain('odata_deadline');
    for (const dialect of ['postgres', 'mysql'] as const)
      expect(toSql(bind(query), options(dialect, true)).sql).not.toContain('odata_deadline');
  });
});

function database(): Database.Database {
  const db = new Database(':memory:');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  return db;
}

/**
 * A statement that spends its time in SQLite's own code: a recursive CTE of `rows` rows, checked as the dialect checks
 * a table's rows (a CTE has no rowid: its counter stands in for it).
 */
const counting = (rows: number, checked: boolean): string =>
  `WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE ${checked ? `${sqliteDialect.rowCheck!('t0').replace('t0.rowid', 'n')} AND ` : ''}n < ${rows}) SELECT count(*) AS n FROM c`;

describe('runWithDeadline', () => {
  it('stops a statement inside SQLite at its deadline, with StatementDeadlineError', () => {
    const db = database();
    const started = performance.now();
    let error: unknown;
    try {
      runWithDeadline(100, () => db.prepare(counting(1_000_000_000, true)).all());
    } catch (e) {
      error = e;
    }
    const took = performance.now() - started;
    expect(error).toBeInstanceOf(StatementDeadlineError);
    expect(isStatementDeadline(error)).toBe(true);
    expect((error as StatementDeadlineError).budgetMs).toBe(100);
    expect(took).toBeGreaterThanOrEqual(100);
    expect(took).toBeLessThan(1_000); // a billion rows would take minutes
    // the connection is usable afterwards
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1n });
  });

  it('changes no answer: the checks are true for every row', () => {
    const db = database();
    const [plain] = db.prepare(counting(100_000, false)).all() as { n: bigint }[];
    const [checked] = runWithDeadline(10_000, () => db.prepare(counting(100_000, true)).all()) as { n: bigint }[];
    const [unbounded] = db.prepare(counting(100_000, true)).all() as { n: bigint }[];
    expect(plain!.n).toBe(100_000n);
    expect(checked!.n).toBe(100_000n);
    expect(unbounded!.n).toBe(100_000n); // outside runWithDeadline there is no deadline
  });

  it('does not stop statements without the checks', () => {
    const db = database();
    const [row] = runWithDeadline(1, () => db.prepare(counting(3_000_000, false)).all()) as { n: bigint }[];
    expect(row!.n).toBe(3_000_000n);
  });

  it('keeps the earlier deadline when nested, and restores none after', () => {
    const db = database();
    expect(() =>
      runWithDeadline(50, () => runWithDeadline(60_000, () => db.prepare(counting(1_000_000_000, true)).all())),
    ).toThrow(StatementDeadlineError);
    const [row] = db.prepare(counting(200_000, true)).all() as { n: bigint }[];
    expect(row!.n).toBe(200_000n);
  });
});
