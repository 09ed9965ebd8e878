// MySQL and MariaDB: binary ordering through utf8mb4_nopad_bin (no trailing-space padding), exact DECIMAL, instants
// as DATETIME(3) in UTC. Decimal division needs the session's div_precision_increment at 30 (mysqlSessionSql).
import {
  DOUBLE_MAX,
  NUMBER_SYNTAX,
  rangeOf,
  roundHalfAwayDouble,
  searchIndexName,
  WHITE_SPACE_CLASS,
} from '../common.js';
import type { EdmPrimitiveType } from '../../../values/edm.js';
import type { Dialect, IndexedSearch, NumericOperator, Sql } from '../dialect.js';
import { toMysqlRegex } from '../../../values/regex.js';
import { SEARCH_SEPARATORS_CLASS } from '../../../values/text.js';
import { quoteTable, sharedStatements, unqualified } from '../statements.js';
import { mysqlStorage } from './storage.js';

const BINARY = 'utf8mb4_nopad_bin';
const CASE_MAPPING = 'utf8mb4_uca1400_nopad_as_cs';
// A bare column already has the binary collation (createTableSql); an explicit COLLATE on it, even the same one,
// would keep MariaDB from using its index.
const ordinal = (a: Sql, column = false): Sql => (column ? a : `(${a} COLLATE ${BINARY})`);
// MariaDB evaluates NULLIF's first argument twice (measured on 10.11: every nested NULLIF doubles the time, so 40
// nested integer operations, each null outside its range by two NULLIFs, would run for centuries), and no other
// expression yields "x, or null" without naming x twice. So this dialect writes no NULLIF: MySQL's division and MOD
// by zero are already null (in a SELECT and in the WHERE of a write, with a warning, even in strict mode), and a
// range check names its value twice in the SQL text, where the emitter's length limit sees it, and defers its checks
// through integer arithmetic (`integerChecks`) so that a chain of n operations is O(n²) text, not 2^n.
/** The exact value clamped one past each end of the range: beyond it, the value only says "out of range". */
const clamp = (exact: Sql, type: 'Edm.Int32' | 'Edm.Int64'): Sql => {
  const [below, above] = rangeOf(type);
  return `LEAST(GREATEST(${exact}, ${below}), ${above})`;
};
const inRange = (clamped: Sql, type: 'Edm.Int32' | 'Edm.Int64'): Sql => {
  const [below, above] = rangeOf(type);
  return `${clamped} NOT IN (${below}, ${above})`;
};
const readChecked = (value: Sql, checks: readonly Sql[]): Sql =>
  checks.length === 0 ? value : `CAST(CASE WHEN ${checks.join(' AND ')} THEN ${value} END AS SIGNED)`;
/** An exact numeric expression as a value of an integer range, or null outside it. */
const exactInt = (exact: Sql, type: 'Edm.Int32' | 'Edm.Int64' = 'Edm.Int64'): Sql => {
  const value = clamp(exact, type);
  return readChecked(value, [inRange(value, type)]);
};
const wide = (a: Sql): Sql => `CAST(${a} AS DECIMAL(65,0))`;
const truncate = (x: Sql): Sql => `TRUNCATE(${x}, 0)`;
/** Integer arithmetic, exact in DECIMAL(65,0) and unchecked (the operands are at most one past Int64's ends). */
const exactIntegerOf = (op: NumericOperator, a: Sql, b: Sql): Sql => {
  switch (op) {
    // Truncating quotient, exactly, naming each operand once: a / b of integers below 2^64 is off an integer by at
    // least 1/|b| > 10^-20, and the server keeps div_precision_increment (30, mysqlSessionSql) places of it
    case 'div':
      return `TRUNCATE(${a} / ${b}, 0)`;
    case 'mod':
      return `MOD(${a}, ${b})`;
    default:
      return `(${wide(a)} ${op === 'add' ? '+' : op === 'sub' ? '-' : '*'} ${b})`;
  }
};
/** A decimal or double rounded half away from zero to an exact integer. */
const roundToInteger = (a: Sql, from: EdmPrimitiveType): Sql =>
  from === 'Edm.Double' ? `CAST(${roundHalfAwayDouble(a, truncate)} AS DECIMAL(65,0))` : `ROUND(${a})`;
/**
 * Decimal division to 20 places, half away from zero, exactly (SEMANTICS.md): long division in two steps, each an
 * exact MOD and a quotient that divides evenly. x = q·y + r gives the integer part q; r·10^20 = f·y + s gives the 20
 * places f, and 2|s| ≥ |y| rounds them away from zero. Nothing depends on the scale the server gives a quotient
 * (`ROUND(x / y, 20)` rounds twice where a server rounds it), and since |r| ≤ min(|x|, |y|), r·10^20 stays within
 * MariaDB's working precision (81 digits, the scale included) unless both operands are that wide. TRUNCATE, not
 * CAST AS DECIMAL(65,0), drops a zero fraction (a CAST clamps a wider value without an error); the places are put
 * back by dividing by 10^20 (div_precision_increment ≥ 20, mysqlSessionSql), because MariaDB 10.11 answers 0, without
 * a warning, for a product with more than 45 integer digits and a scale of 20 (measured: 10^46 × 0.00000000000000000001).
 */
const divide20 = (x: Sql, y: Sql): Sql => {
  const divisor = y; // division and MOD by zero are null
  const r = `MOD(${x}, ${divisor})`;
  const f = `(${r} * 100000000000000000000)`;
  const s = `MOD(${f}, ${divisor})`;
  const whole = truncate(`(${x} - ${r}) / ${divisor}`);
  const places = truncate(`(${f} - ${s}) / ${divisor}`);
  const away = `CASE WHEN 2 * ABS(${s}) >= ABS(${y}) THEN SIGN(${x}) * SIGN(${y}) ELSE 0 END`;
  return `TRUNCATE((${whole} * 100000000000000000000 + ${places} + ${away}) / 100000000000000000000, 20)`;
};

/** Statements each MySQL/MariaDB connection must run once before using the SQL the mysql dialect emits. */
export const mysqlSessionSql: readonly string[] = [
  `SET NAMES utf8mb4 COLLATE ${BINARY}`,
  "SET time_zone = '+00:00'",
  'SET div_precision_increment = 30',
];

const quoteIdentifier = (name: string): string => `\`${name.replace(/`/g, '``')}\``;
const placeholder = (): string => '?';
const shared = sharedStatements({
  quoteIdentifier,
  placeholder,
  columnType: mysqlStorage.columnType,
  tableOptions: ` DEFAULT CHARSET=utf8mb4 COLLATE=${BINARY}`,
});

/** searchText: lower-cased by current Unicode, each run of separators (`pattern`) one space, a space around. */
const mysqlSearchText = (s: Sql, pattern: Sql): Sql =>
  `CONCAT(' ', REGEXP_REPLACE(LOWER(${s} COLLATE ${CASE_MAPPING}) COLLATE ${BINARY}, ${pattern}, ' '), ' ')`;

/** InnoDB's default full-text settings: the word lengths its index holds, and its default stopwords (not held). */
const FULLTEXT_MIN_WORD = 3;
const FULLTEXT_MAX_WORD = 84;
const FULLTEXT_STOPWORDS = new Set(
  'a about an are as at be by com de en for from how i in is it la of on or that the this to und was what when where who will with www'.split(
    ' ',
  ),
);

export const mysqlDialect: Dialect = {
  name: 'mysql',
  quoteIdentifier,
  placeholder,
  storage: mysqlStorage,
  statements: {
    ...shared,
    // GET_LOCK is a session's lock: the MySQL driver releases a transaction's locks when it ends (names hashed to
    // fit its 64 characters; 0 after 30 s of waiting, which the store answers with a 503)
    transactionLock: `SELECT GET_LOCK(SHA1(?), 30) AS ${quoteIdentifier('locked')}`,
    // no RETURNING in MySQL: LAST_INSERT_ID(x) keeps x for the connection's next LAST_INSERT_ID()
    increment: (table, key, value) => {
      const v = quoteIdentifier(value);
      return [
        {
          sql: `INSERT INTO ${quoteTable(quoteIdentifier, table)} (${[...key, value].map(quoteIdentifier).join(', ')}) VALUES (${key.map(placeholder).join(', ')}, LAST_INSERT_ID(1)) ON DUPLICATE KEY UPDATE ${v} = LAST_INSERT_ID(${v} + 1)`,
          keyed: true,
        },
        { sql: `SELECT LAST_INSERT_ID() AS ${quoteIdentifier('value')}`, keyed: false },
      ];
    },
  },
  maxParameters: 65_535, // "Prepared statement contains too many placeholders" beyond
  typedParam: (param, type, value) => {
    switch (type) {
      // Int32 too: mysql2 sends a JavaScript number as a DOUBLE, which would turn exact integer arithmetic with it
      // (`L sub (4 mod I)`: DECIMAL minus a DOUBLE MOD) into doubles that cannot tell Int64's ends apart
      case 'Edm.Int32':
      case 'Edm.Int64':
      case 'Edm.TimeOfDay': // milliseconds since midnight (emit.ts)
        return `CAST(${param} AS SIGNED)`;
      case 'Edm.Decimal': {
        // sized to the literal (digits counted by us, never text of the query): a DECIMAL(65,30) operand would make
        // every product's scale and precision needlessly large, and MariaDB's overflow is an error
        const [whole = '', fraction = ''] = String(value ?? '0')
          .replace('-', '')
          .split('.');
        const scale = Math.min(fraction.length, 30);
        const precision = Math.min(Math.max(whole.replace(/^0+/, '').length + scale, 1), 65);
        return `CAST(${param} AS DECIMAL(${precision},${scale}))`;
      }
      case 'Edm.Double':
        return `CAST(${param} AS DOUBLE)`;
      case 'Edm.Date':
        return `CAST(${param} AS DATE)`;
      case 'Edm.DateTimeOffset':
        return `CAST(${param} AS DATETIME(3))`;
      default:
        return param;
    }
  },
  typedNull: () => 'NULL', // MySQL resolves NULL in any operator or function
  true: 'TRUE',
  false: 'FALSE',
  nullSafeEqual: (a, b) => `(${a} <=> ${b})`,
  ordinal,
  length: (s) => `CHAR_LENGTH(${s})`,
  position: (s, t) => `LOCATE(${ordinal(t)}, ${s})`,
  searchText: (s, param) => mysqlSearchText(s, param(`[${SEARCH_SEPARATORS_CLASS}]+`)),
  // a STORED generated column per property of searchText (`<column>$search`, a name no property can have) and one
  // FULLTEXT index of them; InnoDB's parser splits at least where searchText does (spaces), so every word of ASCII
  // letters and digits of the text is a token, if it is long enough and not a stopword: those are the words asked
  searchIndex: {
    indexSql: (table, _key, columns) => {
      const name = quoteTable(quoteIdentifier, table);
      // the separators' pattern as hex, which reads the same under any sql_mode (a literal's backslashes do not)
      const separators = `CONVERT(X'${Buffer.from(`[${SEARCH_SEPARATORS_CLASS}]+`, 'utf8').toString('hex')}' USING utf8mb4)`;
      return [
        ...columns.map(
          (column) =>
            `ALTER TABLE ${name} ADD COLUMN IF NOT EXISTS ${quoteIdentifier(`${column}$search`)} LONGTEXT CHARACTER SET utf8mb4 COLLATE ${BINARY} GENERATED ALWAYS AS (${mysqlSearchText(quoteIdentifier(column), separators)}) STORED`,
        ),
        `CREATE FULLTEXT INDEX IF NOT EXISTS ${quoteIdentifier(searchIndexName(unqualified(table), columns, 64))} ON ${name} (${[
          ...columns,
        ]
          .sort()
          .map((column) => quoteIdentifier(`${column}$search`))
          .join(', ')})`,
      ];
    },
    // one MATCH in boolean mode: a term's indexed words all required (`+w1 +w2`: a superset of the phrase), AND as
    // two required groups, OR as two optional ones in a required group; a term with no indexed word narrows nothing
    prefilter: ({ alias, columns }, search, param) => {
      const walk = (e: IndexedSearch): string | undefined => {
        if (e.kind === 'words') {
          const indexed = e.words.filter(
            (w) => w.length >= FULLTEXT_MIN_WORD && w.length <= FULLTEXT_MAX_WORD && !FULLTEXT_STOPWORDS.has(w),
          );
          return indexed.length === 0 ? undefined : indexed.map((w) => `+${w}`).join(' ');
        }
        const [left, right] = [walk(e.left), walk(e.right)];
        if (e.kind === 'and') return left === undefined ? right : right === undefined ? left : `+(${left}) +(${right})`;
        return left === undefined || right === undefined ? undefined : `(${left}) (${right})`;
      };
      const against = walk(search);
      return against === undefined
        ? undefined
        : `MATCH(${[...columns]
            .sort()
            .map((column) => `${alias}.${quoteIdentifier(`${column}$search`)}`)
            .join(', ')}) AGAINST(${param(`+(${against})`)} IN BOOLEAN MODE)`;
    },
    // the index holds the words above under InnoDB's default token sizes and its default stopwords (or none)
    settings: {
      sql: 'SELECT @@innodb_ft_min_token_size AS min, @@innodb_ft_max_token_size AS max, @@innodb_ft_server_stopword_table AS server, @@innodb_ft_user_stopword_table AS user',
      fits: (row) =>
        Number(row['min']) <= FULLTEXT_MIN_WORD &&
        Number(row['max']) >= FULLTEXT_MAX_WORD &&
        (row['server'] ?? '') === '' &&
        (row['user'] ?? '') === '',
    },
  },
  substring: (s, start, count) =>
    count === undefined ? `SUBSTRING(${s}, ${start} + 1)` : `SUBSTRING(${s}, ${start} + 1, ${count})`,
  concat: (a, b) => `CONCAT(${a}, ${b})`,
  // utf8mb4_nopad_bin's case tables are old (1,592 code points map differently from Unicode's simple mapping);
  // MariaDB's UCA 14.0.0 collation maps by current Unicode, and the result goes back to binary for comparing
  lower: (s) => `(LOWER(${s} COLLATE ${CASE_MAPPING}) COLLATE ${BINARY})`,
  upper: (s) => `(UPPER(${s} COLLATE ${CASE_MAPPING}) COLLATE ${BINARY})`,
  trim: (s, param) => `REGEXP_REPLACE(${s}, ${param(`^[${WHITE_SPACE_CLASS}]+|[${WHITE_SPACE_CLASS}]+$`)}, '')`,
  like: (s, pattern, column) => `(${ordinal(s, column)} LIKE ${pattern})`, // the default escape character is the backslash
  // PCRE2 backtracks: only patterns whose backtracking stays bounded translate (toMysqlRegex); `(?-i)` in the pattern
  // makes the match case-sensitive whatever the collation
  regexMatch: (s, pattern, param) => {
    const regex = toMysqlRegex(pattern);
    return typeof regex === 'string' ? `(${s} REGEXP ${param(regex)})` : regex;
  },
  integerArithmetic: (op, a, b) => (op === 'mod' ? exactIntegerOf(op, a, b) : exactInt(exactIntegerOf(op, a, b))),
  integerChecks: {
    exact: exactIntegerOf,
    negate: (a) => `(-${wide(a)})`,
    round: (a, from) => roundToInteger(a, from),
    clamp,
    inRange,
    read: readChecked,
  },
  decimalArithmetic: (op, a, b) => {
    switch (op) {
      case 'add':
        return `(${a} + ${b})`;
      case 'sub':
        return `(${a} - ${b})`;
      case 'mul':
        return `(${a} * ${b})`;
      case 'mod': // + 0 turns MariaDB's DECIMAL -0.0000, which compares unequal to 0, into 0
        return `(MOD(${a}, ${b}) + 0)`;
      default:
        return divide20(a, b);
    }
  },
  // DOUBLE arithmetic raises on overflow and MySQL has no infinity: a result beyond the Double range is null, as in
  // memory, decided before computing it (the operands are finite: MySQL cannot hold anything else)
  doubleArithmetic: (op, a, b) => {
    switch (op) {
      case 'add':
      case 'sub': {
        const b2 = op === 'add' ? b : `(-${b})`;
        return `(CASE WHEN SIGN(${a}) = SIGN(${b2}) AND ABS(${a}) > ${DOUBLE_MAX} - ABS(${b2}) THEN NULL ELSE ${a} ${op === 'add' ? '+' : '-'} ${b} END)`;
      }
      case 'mul':
        return `(CASE WHEN ABS(${a}) > 1 AND ABS(${b}) > ${DOUBLE_MAX} / ABS(${a}) THEN NULL ELSE ${a} * ${b} END)`;
      case 'div':
        return `(CASE WHEN ${b} = 0 THEN NULL WHEN ABS(${b}) < 1 AND ABS(${a}) > ${DOUBLE_MAX} * ABS(${b}) THEN NULL ELSE ${a} / ${b} END)`;
      case 'mod':
        return `MOD(${a}, ${b})`;
    }
  },
  negate: (a, type) => (type === 'Edm.Int32' || type === 'Edm.Int64' ? exactInt(`(-${wide(a)})`) : `(-${a})`),
  rounding: (name, a, type) => {
    // FLOOR, CEILING and ROUND of a narrow DECIMAL give a BIGINT, whose arithmetic fails past 64 bits ("BIGINT value is
    // out of range" for floor(D) mul floor(D) at 14 integer digits): a Decimal result stays a wide DECIMAL
    if (type === 'Edm.Decimal')
      return wide(`${name === 'floor' ? 'FLOOR' : name === 'ceiling' ? 'CEILING' : 'ROUND'}(${a})`);
    if (name === 'floor') return `FLOOR(${a})`;
    if (name === 'ceiling') return `CEILING(${a})`;
    // ROUND(DOUBLE) follows the C library (half even); ROUND(DECIMAL) above is half away from zero
    return roundHalfAwayDouble(a, truncate);
  },
  convertNumber: (a, from, to) => {
    if (from === to || to === 'Edm.Int64') return a;
    if (to === 'Edm.Double') return `CAST(${a} AS DOUBLE)`;
    return wide(a);
  },
  doubleToDecimal: undefined, // DECIMAL(65,30) cannot hold every double's digits
  compareDecimal: (a, op, b) => `(${a} ${op} ${b})`,
  decimalSortKey: (a) => a,
  numberToText: undefined,
  textToDecimal: undefined,
  numericText: {
    // PCRE's `$` also matches before a final newline; `\z` is the very end
    syntax: NUMBER_SYNTAX.replace(/\$$/, '\\z'),
    matches: (s, pattern) => `(${s} REGEXP ${pattern})`,
    replace: (s, pattern, replacement) => `REGEXP_REPLACE(${s}, ${pattern}, ${replacement})`,
    digitsToInteger: (t) => `CAST(${t} AS SIGNED)`,
    integerToText: (n) => `CAST(${n} AS CHAR)`,
    shortDecimal: (t) => `CAST(${t} AS DECIMAL(23,1))`,
    // DECIMAL(65,30) holds too few digits for every decimal text, and CAST(text AS DOUBLE) is not correctly rounded
    // (MariaDB 10.11 reads '1.0000000000000001110223024625157' as 1, the nearest double is 1.0000000000000002)
  },
  toInteger: (a, from, to) => exactInt(roundToInteger(a, from), to),
  datePart: (part, a) => (part === 'year' ? `YEAR(${a})` : part === 'month' ? `MONTH(${a})` : `DAYOFMONTH(${a})`),
  timePart: (part, a) =>
    part === 'fractionalseconds'
      ? `(CAST(FLOOR(MICROSECOND(${a}) / 1000) AS DECIMAL(3,0)) / 1000)`
      : `${part.toUpperCase()}(${a})`,
  dateOf: (a) => `CAST(${a} AS DATE)`,
  // (TIME_TO_SEC keeps the fraction of a DATETIME(3) on MariaDB; the parts are integers everywhere)
  timeOf: (a) =>
    `(HOUR(${a}) * 3600000 + MINUTE(${a}) * 60000 + SECOND(${a}) * 1000 + FLOOR(MICROSECOND(${a}) / 1000))`,
  timeOfDayPart: (part, tod) =>
    part === 'hour'
      ? `(${tod} DIV 3600000)`
      : part === 'minute'
        ? `(${tod} DIV 60000 MOD 60)`
        : part === 'second'
          ? `(${tod} DIV 1000 MOD 60)`
          : `(CAST(${tod} MOD 1000 AS DECIMAL(3,0)) / 1000)`,
  dateToInstant: (a) => `CAST(${a} AS DATETIME(3))`,
  now: 'UTC_TIMESTAMP(3)',
  limit: (top, skip) =>
    top === undefined && skip === undefined
      ? ''
      : `LIMIT ${top ?? '18446744073709551615'}${skip === undefined ? '' : ` OFFSET ${skip}`}`,
  orderItem: (expr, direction) => `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}`, // nulls first ascending, last descending: MySQL's default
};
