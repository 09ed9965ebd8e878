// SQLite: text compares by code point with the BINARY collation and counts characters in length/instr/substr, so
// those are native. What SQLite lacks or gets wrong for OData (Unicode case mapping, exact decimals, overflow-safe
// integers, half-away rounding, regular expressions) runs as functions that `registerSqliteFunctions` (functions.ts)
// adds to the connection: the same code the memory backend runs, so the two agree by construction. How values are
// stored is storage.ts.
import type { Dialect, IndexedSearch, Sql, TableName } from '../dialect.js';
import { searchIndexName } from '../common.js';
import { besideTable, quoteTable, sharedStatements, unqualified } from '../statements.js';
import { sqliteStorage } from './storage.js';

/** GLOB's special characters `*`, `?` and `[` as one-character classes; `]` alone is literal. */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[]/g, (c) => `[${c}]`);
}

/** SQLITE_MAX_LIKE_PATTERN_LENGTH, SQLite's default (measured: a 50,001-byte pattern fails). */
const MAX_GLOB_BYTES = 50_000;

const fn = (name: string, ...args: Sql[]): Sql => `${name}(${args.join(', ')})`;
const word = (w: string): Sql => `'${w}'`; // a fixed keyword of ours, never user text

const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const placeholder = (): string => '?';
const shared = sharedStatements({
  quoteIdentifier,
  placeholder,
  columnType: sqliteStorage.columnType,
  tableOptions: '',
});

/**
 * `$search`'s index of a table (Dialect.searchIndex): an FTS5 table of the indexed columns, `unicode61` with
 * diacritics removed. Its tokens are a superset of searchText's words for a term of ASCII letters and digits: every
 * separator of searchText (White_Space and ASCII other than letters and digits) separates its tokens too, and it folds
 * what lower-cases to those letters (ASCII, `İ`, `K`). Contentless, so the text is not stored twice, and its rowids are
 * those of a table of the rows' keys, since a table's own rowids may change on VACUUM; triggers keep both current
 * (the FTS5 `delete` command is given the values that were indexed).
 */
function fts5Index(table: TableName, key: readonly string[], columns: readonly string[]): Sql[] {
  const qualified = fts5Names(table, columns);
  // inside a trigger, tables are named without their schema (SQLite's rule): the trigger's own
  const { base, index, rows } = fts5Names(unqualified(table), columns);
  const trigger = (suffix: string): Sql =>
    quoteTable(quoteIdentifier, besideTable(table, `${searchIndexName(unqualified(table), columns)}_${suffix}`));
  const k = key.map(quoteIdentifier);
  const c = columns.map(quoteIdentifier);
  const slots = columns.map((_, i) => `c${i}`);
  const same = (of: string, row: string): Sql => k.map((column) => `${row}.${column} = ${of}.${column}`).join(' AND ');
  const values = (of: string): Sql => c.map((column) => `${of}.${column}`).join(', ');
  const remove = (of: string): Sql =>
    `INSERT INTO ${index} (${index}, rowid, ${slots.join(', ')}) SELECT 'delete', r."$id", ${values(of)} FROM ${rows} AS r WHERE ${same(of, 'r')};`;
  const add = (of: string): Sql =>
    `INSERT INTO ${index} (rowid, ${slots.join(', ')}) SELECT r."$id", ${values(of)} FROM ${rows} AS r WHERE ${same(of, 'r')};`;
  return [
    `CREATE TABLE IF NOT EXISTS ${qualified.rows} ("$id" INTEGER PRIMARY KEY, ${k.join(', ')}, UNIQUE (${k.join(', ')}))`,
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${qualified.index} USING fts5(${slots.join(', ')}, content='', tokenize='unicode61 remove_diacritics 2')`,
    // a new row: its key gets an id, and the id's row its words
    `CREATE TRIGGER IF NOT EXISTS ${trigger('insert')} AFTER INSERT ON ${base} BEGIN INSERT INTO ${rows} (${k.join(', ')}) VALUES (${k.map((column) => `new.${column}`).join(', ')}); END`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('rows_insert')} AFTER INSERT ON ${rows} BEGIN INSERT INTO ${index} (rowid, ${slots.join(', ')}) SELECT new."$id", ${values('t')} FROM ${base} AS t WHERE ${same('new', 't')}; END`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('delete')} AFTER DELETE ON ${base} BEGIN ${remove('old')} DELETE FROM ${rows} WHERE ${same('old', rows)}; END`,
    `CREATE TRIGGER IF NOT EXISTS ${trigger('update')} AFTER UPDATE OF ${[...new Set([...k, ...c])].join(', ')} ON ${base} BEGIN ${remove('old')} UPDATE ${rows} SET ${k.map((column) => `${column} = new.${column}`).join(', ')} WHERE ${same('old', rows)}; ${add('new')} END`,
    // the rows the table has when the index is made (later ones come through the triggers)
    `INSERT INTO ${qualified.rows} (${k.join(', ')}) SELECT ${k.join(', ')} FROM ${qualified.base} WHERE NOT EXISTS (SELECT 1 FROM ${qualified.rows})`,
  ];
}

/** The quoted names of a table, of its FTS5 index of `columns` and of the index's table of keys. */
function fts5Names(
  table: TableName,
  columns: readonly string[],
): { readonly base: Sql; readonly index: Sql; readonly rows: Sql } {
  const name = searchIndexName(unqualified(table), columns);
  return {
    base: quoteTable(quoteIdentifier, table),
    index: quoteTable(quoteIdentifier, besideTable(table, name)),
    rows: quoteTable(quoteIdentifier, besideTable(table, `${name}_rows`)),
  };
}

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  quoteIdentifier,
  placeholder,
  storage: sqliteStorage,
  statements: {
    ...shared,
    // SQLite runs one writing transaction at a time (BEGIN IMMEDIATE): no lock needed; and without statistics its
    // planner takes a table for large, never for empty, so a bulk load needs no ANALYZE
    increment: (table, key, value) => {
      const columns = [...key, value].map(quoteIdentifier).join(', ');
      const v = quoteIdentifier(value);
      return [
        {
          sql: `INSERT INTO ${quoteTable(quoteIdentifier, table)} (${columns}) VALUES (${key.map(placeholder).join(', ')}, 1) ON CONFLICT (${key.map(quoteIdentifier).join(', ')}) DO UPDATE SET ${v} = ${v} + 1 RETURNING ${v} AS ${quoteIdentifier('value')}`,
          keyed: true,
        },
      ];
    },
  },
  maxParameters: 32_766, // SQLITE_MAX_VARIABLE_NUMBER's default (measured: 32,767 is "too many SQL variables")
  typedParam: (param) => param,
  typedNull: () => 'NULL', // SQLite's values carry their types
  // functions.ts, runWithDeadline. A call from SQLite into JavaScript costs a few hundred ns, so it is made for one
  // row in 64, chosen by rowid: at most 63 rows go unchecked in a scan in rowid order, about one in 64 is checked in
  // any other. (SQLite's random() picked the rows before: it costs about 45 ns a row itself, which more than doubled
  // the time of a full scan of 100,000 rows.) Every table of a store has a rowid (none is WITHOUT ROWID).
  exactIntegerSum: (value) => `odata_sum(${value})`,
  rowCheck: (alias) => `((${alias}.rowid & 63) <> 0 OR odata_deadline())`,

  true: '1',
  false: '0',
  nullSafeEqual: (a, b) => `(${a} IS ${b})`,
  ordinal: (a) => `(${a} COLLATE BINARY)`,
  length: (s) => fn('length', s),
  position: (s, t) => fn('instr', s, t),
  searchText: (s) => fn('odata_search_text', s),
  searchIndex: {
    indexSql: (table, key, columns) => fts5Index(table, key, columns),
    // the rows whose words the FTS5 index holds in a row (a phrase stays within one column; AND and OR are of the
    // whole row, as the exact match's), by their key; one MATCH for the whole search
    prefilter: ({ table, alias, key, columns }, search, param) => {
      const { rows, index } = fts5Names(table, columns);
      const keys = key.map(quoteIdentifier);
      const walk = (e: IndexedSearch): string =>
        e.kind === 'words'
          ? `"${e.words.join(' ')}"`
          : `(${walk(e.left)} ${e.kind === 'and' ? 'AND' : 'OR'} ${walk(e.right)})`;
      // (the MATCH's left side is the FTS5 table's hidden column of its own name)
      return `((${keys.map((k) => `${alias}.${k}`).join(', ')}) IN (SELECT ${keys.map((k) => `r.${k}`).join(', ')} FROM ${rows} AS r WHERE r."$id" IN (SELECT s.rowid FROM ${index} AS s WHERE s.${fts5Names(unqualified(table), columns).index} MATCH ${param(walk(search))})))`;
    },
  },
  substring: (s, start, count) =>
    count === undefined ? fn('substr', s, `(${start} + 1)`) : fn('substr', s, `(${start} + 1)`, count),
  concat: (a, b) => `(${a} || ${b})`,
  lower: (s) => fn('odata_lower', s),
  upper: (s) => fn('odata_upper', s),
  trim: (s) => fn('odata_trim', s),
  // SQLite's LIKE ignores ASCII case. A literal becomes a GLOB pattern (case-sensitive, and a prefix can use an
  // index); an expression is compared by substrings. Both are null in, null out.
  textMatch: (kind, s, t, literal, param) => {
    const glob = literal === undefined ? undefined : escapeGlob(literal);
    const pattern =
      glob === undefined
        ? undefined
        : kind === 'startswith'
          ? `${glob}*`
          : kind === 'endswith'
            ? `*${glob}`
            : `*${glob}*`;
    // (SQLite reads a GLOB pattern only up to a NUL, and refuses one longer than 50,000 bytes, "LIKE or GLOB pattern
    // too complex": such a literal takes the substring path)
    if (pattern !== undefined && !pattern.includes('\u0000') && Buffer.byteLength(pattern) <= MAX_GLOB_BYTES) {
      return `(${s} GLOB ${param(pattern)})`;
    }
    return kind === 'contains'
      ? `(instr(${s}, ${t}) > 0)`
      : kind === 'startswith'
        ? `(substr(${s}, 1, length(${t})) = ${t})`
        : `(substr(${s}, length(${s}) - length(${t}) + 1) = ${t})`; // a start ≤ 0 gives a suffix shorter than t
  },
  like: (s, pattern) => `(${s} LIKE ${pattern} ESCAPE '\\')`,
  matchesPattern: (s, pattern) => fn('odata_matches', s, pattern),
  integerArithmetic: (op, a, b) => fn('odata_int', word(op), a, b),
  decimalArithmetic: (op, a, b) => fn('odata_dec', word(op), a, b),
  // a result beyond the Double range from finite operands is null (odata_finite), as in memory
  doubleArithmetic: (op, a, b) => {
    switch (op) {
      case 'add':
        return fn('odata_finite', `(${a} + ${b})`, a, b);
      case 'sub':
        return fn('odata_finite', `(${a} - ${b})`, a, b);
      case 'mul':
        return fn('odata_finite', `(${a} * ${b})`, a, b);
      case 'div':
        return fn('odata_finite', `(${a} / NULLIF(${b}, 0.0))`, a, b);
      case 'mod':
        return fn('odata_fmod', a, b);
    }
  },
  negate: (a, type) =>
    type === 'Edm.Decimal'
      ? fn('odata_dec', word('sub'), word('0'), a)
      : type === 'Edm.Double'
        ? `(-${a})`
        : fn('odata_int', word('sub'), '0', a),
  rounding: (name, a, type) => fn('odata_round', word(name), a, word(type === 'Edm.Double' ? 'double' : 'decimal')),
  convertNumber: (a, from, to) => {
    if (to === 'Edm.Int64' || from === to) return a;
    if (to === 'Edm.Double') return from === 'Edm.Decimal' ? fn('odata_dec_double', a) : `CAST(${a} AS REAL)`;
    return `CAST(${a} AS TEXT)`; // an integer's text is its decimal
  },
  doubleToDecimal: (a) => fn('odata_dbl_dec', a),
  compareDecimal: (a, op, b) => `(odata_dec_cmp(${a}, ${b}) ${op} 0)`,
  decimalSortKey: (a) => fn('odata_dec_key', a),
  numberToText: (a, from) => (from === 'Edm.Decimal' ? a : `CAST(${a} AS TEXT)`),
  textToDecimal: (a) => fn('odata_text_dec', a),
  toInteger: (a, from, to) =>
    fn(
      'odata_to_int',
      a,
      word(from === 'Edm.Double' ? 'double' : 'decimal'),
      word(to === 'Edm.Int32' ? 'int32' : 'int64'),
    ),
  datePart: (part, a) =>
    part === 'year'
      ? `CAST(substr(${a}, 1, 4) AS INTEGER)`
      : part === 'month'
        ? `CAST(substr(${a}, 6, 2) AS INTEGER)`
        : `CAST(substr(${a}, 9, 2) AS INTEGER)`,
  timePart: (part, a) =>
    part === 'hour'
      ? `CAST(substr(${a}, 12, 2) AS INTEGER)`
      : part === 'minute'
        ? `CAST(substr(${a}, 15, 2) AS INTEGER)`
        : part === 'second'
          ? `CAST(substr(${a}, 18, 2) AS INTEGER)`
          : fn('odata_dec', word('div'), `CAST(substr(${a}, 21, 3) AS INTEGER)`, word('1000')),
  dateOf: (a) => fn('substr', a, '1', '10'),
  // the stored text is YYYY-MM-DDTHH:MM:SS.sssZ
  timeOf: (a) =>
    `(CAST(substr(${a}, 12, 2) AS INTEGER) * 3600000 + CAST(substr(${a}, 15, 2) AS INTEGER) * 60000 + CAST(substr(${a}, 18, 2) AS INTEGER) * 1000 + CAST(substr(${a}, 21, 3) AS INTEGER))`,
  timeOfDayPart: (part, tod) =>
    part === 'hour'
      ? `(${tod} / 3600000)`
      : part === 'minute'
        ? `(${tod} / 60000 % 60)`
        : part === 'second'
          ? `(${tod} / 1000 % 60)`
          : fn('odata_dec', word('div'), `(${tod} % 1000)`, word('1000')),
  dateToInstant: (a) => `(${a} || 'T00:00:00.000Z')`,
  now: `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  limit: (top, skip) =>
    top === undefined && skip === undefined ? '' : `LIMIT ${top ?? '-1'}${skip === undefined ? '' : ` OFFSET ${skip}`}`,
  orderItem: (expr, direction) => `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}`, // nulls first ascending, last descending: SQLite's default
};
