// Copies of the SQLite backend, each with one deliberate mistake written into the SQL it emits (issue 19): the
// mistakes users' own SQL mappings make. mutants.test.ts checks that checkAgainstOracle reports each one.
import { parseQuery, validateQuery } from '../../src/index.js';
import { decodeRow, toSql, type SqlStatement } from '../../src/backends/sql/index.js';
import type { Implementation } from '../../src/testing/index.js';
import { openSqlite } from '../backends/sql/databases.js';
import { Part, Thing } from '../backends/sql/fixtures.js';

export const db = openSqlite();
// LIKE as case-sensitive as the oracle's contains: the LIKE mutant's one mistake is then the unescaped % and _
await db.exec('PRAGMA case_sensitive_like = ON');
let tables = 0;

/**
 * The SQLite backend as an implementation under test, its statements passed through `mutate` first: things, and the
 * parts their navigations read.
 */
export function sqliteWith(mutate: (statement: SqlStatement) => SqlStatement): Implementation {
  let table = '';
  let parts = '';
  return {
    async load(rows, related) {
      table = `thing_${++tables}`;
      parts = `part_${tables}`;
      await db.load(Thing, table, rows);
      await db.load(Part, parts, related['Part'] ?? []);
    },
    async run(query) {
      const bound = validateQuery(parseQuery(query.text), Thing);
      const navigation = { Parts: { table: parts }, Twin: { table }, Owner: { table } };
      const statement = mutate(toSql(bound, { dialect: 'sqlite', table, navigation }));
      return (await db.query(statement)).map((row) => decodeRow('sqlite', bound.select, row));
    },
  };
}

/** The text of the call that opens at `open` (the index of its name), up to its closing parenthesis. */
function callEnd(sql: string, open: number): number {
  let depth = 0;
  for (let i = sql.indexOf('(', open); i < sql.length; i++) {
    if (sql[i] === '(') depth++;
    else if (sql[i] === ')' && --depth === 0) return i + 1;
  }
  return sql.length;
}

export const mutants: Record<string, (s: SqlStatement) => SqlStatement> = {
  // `ne` as SQL's `<>`, which is unknown, not true, where the column is null
  'a <> for ne': (s) => ({ ...s, sql: s.sql.replace(/\((t0\."\w+") <> \? OR \1 IS NULL\)/g, '($1 <> ?)') }),
  // contains/startswith/endswith of a literal as a LIKE pattern without escaping % and _
  'a LIKE without escaping': (s) => {
    let n = -1;
    const globs = new Set<number>();
    const sql = s.sql.replace(/GLOB \?|\?/g, (m) => {
      n++;
      if (m === '?') return m;
      globs.add(n);
      return 'LIKE ?';
    });
    // the GLOB pattern's own escapes removed, its wildcards made LIKE's: what is left of the text is unescaped
    const params = s.params.map((p, i) =>
      globs.has(i) && typeof p === 'string'
        ? p.replace(/\[(.)\]|(\*)|(\?)/gu, (_, literal: string | undefined, star) => literal ?? (star ? '%' : '_'))
        : p,
    );
    return { ...s, sql, params };
  },
  // indexof counting from 1, as SQL's instr does
  'a 1-based indexof': (s) => {
    let sql = s.sql;
    for (let at = sql.indexOf('(instr('); at !== -1; at = sql.indexOf('(instr(', at + 1)) {
      const end = callEnd(sql, at + 1);
      if (sql.startsWith(' - 1)', end)) sql = `${sql.slice(0, end)}${sql.slice(end + 4)}`;
    }
    return { ...s, sql };
  },
  // decimal sums and differences as binary floats (SQLite's own + on text that looks numeric)
  'a float decimal sum': (s) => {
    let sql = s.sql;
    for (let at = sql.indexOf("odata_dec('add', "); at !== -1; at = sql.indexOf("odata_dec('add', ", at + 1)) {
      const end = callEnd(sql, at);
      const args = sql.slice(at + "odata_dec('add', ".length, end - 1);
      sql = `${sql.slice(0, at)}odata_decimal(CAST(${splitTopLevel(args).join(' AS REAL) + CAST(')} AS REAL), 20)${sql.slice(end)}`;
    }
    return { ...s, sql };
  },
};

/** Mistakes in reading related rows (found with the kit's `navigation`). */
export const navigationMutants: Record<string, (s: SqlStatement) => SqlStatement> = {
  // a path through a single-valued navigation as an inner join: a row without a related row is dropped, where
  // `Twin/S eq null` (or `not`) keeps it
  'an inner join for a navigation path': (s) => ({ ...s, sql: s.sql.replace(/LEFT JOIN/g, 'JOIN') }),
  // all() as "no related row where the condition is false": a related row where it is null passes
  'all() passing a related row where the condition is null': (s) => {
    let sql = s.sql;
    const head = 'AND COALESCE(';
    for (let at = sql.indexOf(head); at !== -1; at = sql.indexOf(head, at + 1)) {
      const end = callEnd(sql, at + 4);
      const args = splitTopLevel(sql.slice(at + head.length, end - 1));
      if (args.length === 2 && args[1] === '0' && sql.startsWith(' = 0', end))
        sql = `${sql.slice(0, at)}AND ${args[0]!} = 0${sql.slice(end + 4)}`;
    }
    return { ...s, sql };
  },
};

/** Splits `a, f(b, c), d` at its top-level commas. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts;
}
