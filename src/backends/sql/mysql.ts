// MySQL and MariaDB: binary ordering through utf8mb4_nopad_bin (no trailing-space padding), exact DECIMAL, instants
// as DATETIME(3) in UTC. Decimal division needs the session's div_precision_increment at 30 (mysqlSessionSql).
import { nullOutside, rangeOf, roundHalfAwayDouble, WHITE_SPACE_CLASS } from './common.js';
import type { Dialect, Sql } from './dialect.js';

const BINARY = 'utf8mb4_nopad_bin';
// A bare column already has the binary collation (createTableSql); an explicit COLLATE on it, even the same one,
// would keep MariaDB from using its index.
const ordinal = (a: Sql, column = false): Sql => (column ? a : `(${a} COLLATE ${BINARY})`);
const exactInt = (exact: Sql, type: 'Edm.Int32' | 'Edm.Int64' = 'Edm.Int64'): Sql =>
  `CAST(${nullOutside(exact, ...rangeOf(type))} AS SIGNED)`;
const wide = (a: Sql): Sql => `CAST(${a} AS DECIMAL(65,0))`;
const truncate = (x: Sql): Sql => `TRUNCATE(${x}, 0)`;

/** Statements each MySQL/MariaDB connection must run once before using the SQL the mysql dialect emits. */
export const mysqlSessionSql: readonly string[] = [
  `SET NAMES utf8mb4 COLLATE ${BINARY}`,
  "SET time_zone = '+00:00'",
  'SET div_precision_increment = 30',
];

export const mysqlDialect: Dialect = {
  name: 'mysql',
  quoteIdentifier: (name) => `\`${name.replace(/`/g, '``')}\``,
  placeholder: () => '?',
  typedParam: (param, type) => {
    switch (type) {
      case 'Edm.Int64':
        return `CAST(${param} AS SIGNED)`;
      case 'Edm.Decimal':
        return `CAST(${param} AS DECIMAL(65,30))`;
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
  true: 'TRUE',
  false: 'FALSE',
  nullSafeEqual: (a, b) => `(${a} <=> ${b})`,
  ordinal,
  length: (s) => `CHAR_LENGTH(${s})`,
  position: (s, t) => `LOCATE(${ordinal(t)}, ${s})`,
  substring: (s, start, count) =>
    count === undefined ? `SUBSTRING(${s}, ${start})` : `SUBSTRING(${s}, ${start}, ${count})`,
  concat: (a, b) => `CONCAT(${a}, ${b})`,
  lower: (s) => `LOWER(${ordinal(s)})`,
  upper: (s) => `UPPER(${ordinal(s)})`,
  trim: (s, param) => `REGEXP_REPLACE(${s}, ${param(`^[${WHITE_SPACE_CLASS}]+|[${WHITE_SPACE_CLASS}]+$`)}, '')`,
  like: (s, pattern, column) => `(${ordinal(s, column)} LIKE ${pattern})`, // the default escape character is the backslash
  integerArithmetic: (op, a, b) => {
    switch (op) {
      case 'div': // truncating quotient, exactly: (a − a mod b) / b divides evenly
        return exactInt(`((${wide(a)} - MOD(${a}, NULLIF(${b}, 0))) / ${b})`);
      case 'mod':
        return `MOD(${a}, NULLIF(${b}, 0))`;
      default:
        return exactInt(`(${wide(a)} ${op === 'add' ? '+' : op === 'sub' ? '-' : '*'} ${b})`);
    }
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
        return `(MOD(${a}, NULLIF(${b}, 0)) + 0)`;
      default:
        return `ROUND(${a} / NULLIF(${b}, 0), 20)`;
    }
  },
  doubleArithmetic: (op, a, b) => {
    switch (op) {
      case 'add':
        return `(${a} + ${b})`;
      case 'sub':
        return `(${a} - ${b})`;
      case 'mul':
        return `(${a} * ${b})`;
      case 'div':
        return `(${a} / NULLIF(${b}, 0))`;
      case 'mod':
        return `MOD(${a}, NULLIF(${b}, 0))`;
    }
  },
  negate: (a, type) => (type === 'Edm.Int32' || type === 'Edm.Int64' ? exactInt(`(-${wide(a)})`) : `(-${a})`),
  rounding: (name, a, type) => {
    if (name === 'floor') return `FLOOR(${a})`;
    if (name === 'ceiling') return `CEILING(${a})`;
    // ROUND(DECIMAL) is half away from zero; ROUND(DOUBLE) follows the C library (half even)
    return type === 'Edm.Decimal' ? `ROUND(${a})` : roundHalfAwayDouble(a, truncate);
  },
  convertNumber: (a, from, to) => {
    if (from === to || to === 'Edm.Int64') return a;
    if (to === 'Edm.Double') return `CAST(${a} AS DOUBLE)`;
    return wide(a);
  },
  compareDecimal: (a, op, b) => `(${a} ${op} ${b})`,
  decimalSortKey: (a) => a,
  numberToText: undefined,
  textToDecimal: undefined,
  toInteger: (a, from, to) =>
    exactInt(from === 'Edm.Double' ? `CAST(${roundHalfAwayDouble(a, truncate)} AS DECIMAL(65,0))` : `ROUND(${a})`, to),
  datePart: (part, a) => (part === 'year' ? `YEAR(${a})` : part === 'month' ? `MONTH(${a})` : `DAYOFMONTH(${a})`),
  timePart: (part, a) =>
    part === 'fractionalseconds'
      ? `(CAST(FLOOR(MICROSECOND(${a}) / 1000) AS DOUBLE) / 1000)`
      : `${part.toUpperCase()}(${a})`,
  dateOf: (a) => `CAST(${a} AS DATE)`,
  dateToInstant: (a) => `CAST(${a} AS DATETIME(3))`,
  now: 'UTC_TIMESTAMP(3)',
  limit: (top, skip) =>
    top === undefined && skip === undefined
      ? ''
      : `LIMIT ${top ?? '18446744073709551615'}${skip === undefined ? '' : ` OFFSET ${skip}`}`,
  orderItem: (expr, direction) => `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}`, // nulls first ascending, last descending: MySQL's default
};
