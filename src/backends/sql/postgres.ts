// PostgreSQL: exact numeric, binary ordering through COLLATE "C", Unicode simple case mapping through the C.utf8
// collation (glibc's towlower/towupper map one code point to one), instants as timestamptz read in UTC.
import type { EdmPrimitiveType } from '../../model/edm.js';
import { nullOutside, rangeOf, roundHalfAwayDouble, WHITE_SPACE_CHARACTERS } from './common.js';
import type { Dialect, Sql } from './dialect.js';

const casts: Readonly<Partial<Record<EdmPrimitiveType, string>>> = {
  'Edm.String': 'text',
  'Edm.Boolean': 'boolean',
  'Edm.Int32': 'int4',
  'Edm.Int64': 'int8',
  'Edm.Decimal': 'numeric',
  'Edm.Double': 'float8',
  'Edm.Date': 'date',
  'Edm.DateTimeOffset': 'timestamptz',
  'Edm.Guid': 'uuid',
  'Edm.Binary': 'bytea',
};

const utc = (a: Sql): Sql => `(${a} AT TIME ZONE 'UTC')`;
const exactInt = (exact: Sql, type: 'Edm.Int32' | 'Edm.Int64' = 'Edm.Int64'): Sql =>
  `${nullOutside(exact, ...rangeOf(type))}::${type === 'Edm.Int32' ? 'int4' : 'int8'}`;
/** Decimal division to 20 places, half away from zero, exactly: an integer quotient and its remainder. */
const divide20 = (x: Sql, y: Sql): Sql => {
  const scaled = `((${x}) * 100000000000000000000::numeric)`;
  const divisor = `NULLIF((${y})::numeric, 0)`;
  const q = `div(${scaled}, ${divisor})`;
  return `((${q} + CASE WHEN 2 * abs(${scaled} - ${q} * ${divisor}) >= abs(${divisor}) THEN sign(${x}) * sign(${y}) ELSE 0 END) * 0.00000000000000000001)`;
};

export const postgresDialect: Dialect = {
  name: 'postgres',
  quoteIdentifier: (name) => `"${name.replace(/"/g, '""')}"`,
  placeholder: (index) => `$${index + 1}`,
  typedParam: (param, type) => `${param}::${casts[type] ?? 'text'}`,
  true: 'TRUE',
  false: 'FALSE',
  nullSafeEqual: (a, b) => `(${a} IS NOT DISTINCT FROM ${b})`,
  ordinal: (a) => `(${a} COLLATE "C")`,
  length: (s) => `char_length(${s})`,
  position: (s, t) => `strpos(${s}, ${t})`,
  substring: (s, start, count) => (count === undefined ? `substr(${s}, ${start})` : `substr(${s}, ${start}, ${count})`),
  concat: (a, b) => `(${a} || ${b})`,
  // case mapping under C.utf8, the result back under "C" (binary order) so that it compares with other text
  lower: (s) => `(lower(${s} COLLATE "C.utf8") COLLATE "C")`,
  upper: (s) => `(upper(${s} COLLATE "C.utf8") COLLATE "C")`,
  trim: (s, param) => `btrim(${s}, ${param(WHITE_SPACE_CHARACTERS)})`,
  like: (s, pattern) => `(${s} LIKE ${pattern})`, // the default escape character is the backslash
  integerArithmetic: (op, a, b) => {
    switch (op) {
      case 'div':
        return exactInt(`div((${a})::numeric, NULLIF(${b}, 0))`);
      case 'mod':
        return `(mod((${a})::numeric, NULLIF(${b}, 0)))::int8`;
      default:
        return exactInt(`((${a})::numeric ${op === 'add' ? '+' : op === 'sub' ? '-' : '*'} (${b}))`);
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
      case 'mod':
        return `mod(${a}, NULLIF(${b}, 0))`;
      default:
        return divide20(a, b);
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
        return undefined; // PostgreSQL has no floating-point remainder
    }
  },
  negate: (a, type) => (type === 'Edm.Int32' || type === 'Edm.Int64' ? exactInt(`(-(${a})::numeric)`) : `(-${a})`),
  rounding: (name, a, type) => {
    if (name === 'floor') return `floor(${a})`;
    if (name === 'ceiling') return `ceil(${a})`;
    // round(numeric) is half away from zero; round(float8) is half even
    return type === 'Edm.Decimal' ? `round(${a})` : roundHalfAwayDouble(a, (x) => `trunc(${x})`);
  },
  convertNumber: (a, from, to) => (from === to ? a : `(${a})::${casts[to]!}`),
  compareDecimal: (a, op, b) => `(${a} ${op} ${b})`,
  decimalSortKey: (a) => a,
  numberToText: (a, from) => (from === 'Edm.Decimal' ? `(trim_scale(${a}))::text` : `(${a})::text`),
  textToDecimal: undefined,
  toInteger: (a, from, to) =>
    exactInt(from === 'Edm.Double' ? `(${roundHalfAwayDouble(a, (x) => `trunc(${x})`)})::numeric` : `round(${a})`, to),
  datePart: (part, a, type) => `(EXTRACT(${part.toUpperCase()} FROM ${type === 'Edm.Date' ? a : utc(a)}))::int4`,
  timePart: (part, a) =>
    part === 'fractionalseconds'
      ? `(((EXTRACT(MILLISECONDS FROM ${utc(a)}))::int8 % 1000)::float8 / 1000)`
      : part === 'second'
        ? `(floor(EXTRACT(SECOND FROM ${utc(a)})))::int4`
        : `(EXTRACT(${part.toUpperCase()} FROM ${utc(a)}))::int4`,
  dateOf: (a) => `(${utc(a)})::date`,
  dateToInstant: (a) => `((${a})::timestamp AT TIME ZONE 'UTC')`,
  now: `date_trunc('milliseconds', now())`,
  limit: (top, skip) =>
    [top === undefined ? '' : `LIMIT ${top}`, skip === undefined ? '' : `OFFSET ${skip}`].filter(Boolean).join(' '),
  orderItem: (expr, direction, nullable) =>
    `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}${nullable ? (direction === 'asc' ? ' NULLS FIRST' : ' NULLS LAST') : ''}`,
};
