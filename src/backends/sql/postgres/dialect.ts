// PostgreSQL: exact numeric, binary ordering through COLLATE "C", Unicode simple case mapping through the C.utf8
// collation (glibc's towlower/towupper map one code point to one), instants as timestamptz read in UTC.
import type { EdmPrimitiveType } from '../../../values/edm.js';
import {
  DOUBLE_MAX,
  DOUBLE_ZERO_BELOW,
  nullOutside,
  NUMBER_SYNTAX,
  rangeOf,
  roundHalfAwayDouble,
  WHITE_SPACE_CHARACTERS,
} from '../common.js';
import type { Dialect, IndexedSearch, Sql } from '../dialect.js';
import { toPostgresRegex } from '../../../values/regex.js';
import { SEARCH_SEPARATORS_CLASS } from '../../../values/text.js';
import { quoteTable, sharedStatements, unqualified } from '../statements.js';
import { postgresStorage } from './storage.js';

/**
 * searchText's separators as \\uXXXX escapes, which PostgreSQL's regular expressions read inside brackets (from U+0001:
 * its text holds no U+0000).
 */
const POSTGRES_SEARCH_SEPARATORS = SEARCH_SEPARATORS_CLASS.replace('\\x{0}-', '\\x{1}-').replace(
  /\\x\{([0-9a-f]+)\}/g,
  (_, hex: string) => `\\u${hex.padStart(4, '0')}`,
);

/** searchText in PostgreSQL, the separators' class written as a string constant (it holds no quote). */
function postgresSearchText(s: Sql): Sql {
  return `(' ' || regexp_replace((lower(${s} COLLATE "C.utf8") COLLATE "C"), '[${POSTGRES_SEARCH_SEPARATORS}]+', ' ', 'g') || ' ')`;
}

const casts: Readonly<Partial<Record<EdmPrimitiveType, string>>> = {
  'Edm.String': 'text',
  'Edm.Boolean': 'boolean',
  'Edm.Int32': 'int4',
  'Edm.Int64': 'int8',
  'Edm.Decimal': 'numeric',
  'Edm.Double': 'float8',
  'Edm.Date': 'date',
  'Edm.DateTimeOffset': 'timestamptz',
  'Edm.TimeOfDay': 'int8', // milliseconds since midnight (emit.ts)
  'Edm.Guid': 'uuid',
  'Edm.Binary': 'bytea',
};

/** Neither operand is ±Infinity nor NaN (NaN compares above every float8 in PostgreSQL). */
const finiteBoth = (a: Sql, b: Sql): Sql => `abs(${a}) < 'Infinity'::float8 AND abs(${b}) < 'Infinity'::float8`;
const atMost = (a: Sql, limit: string): Sql => `(CASE WHEN ${a} > ${limit} THEN ${limit} ELSE ${a} END)`;
const utc = (a: Sql): Sql => `(${a} AT TIME ZONE 'UTC')`;
const exactInt = (exact: Sql, type: 'Edm.Int32' | 'Edm.Int64' = 'Edm.Int64'): Sql =>
  `${nullOutside(exact, ...rangeOf(type))}::${type === 'Edm.Int32' ? 'int4' : 'int8'}`;
/**
 * Decimal division to 20 places, half away from zero, exactly: an integer quotient and its remainder. The formula
 * reads each operand several times, so the operands are computed once in a subquery (fenced with OFFSET 0, which
 * keeps the planner from copying them back in): written inline, nested quotients grew the SQL fourfold per level,
 * and a subquery inside them with it.
 */
const divide20 = (x: Sql, y: Sql): Sql => {
  const scaled = `(v.x * 100000000000000000000::numeric)`;
  const divisor = `NULLIF(v.y, 0)`;
  const q = `div(${scaled}, ${divisor})`;
  return `(SELECT (${q} + CASE WHEN 2 * abs(${scaled} - ${q} * ${divisor}) >= abs(${divisor}) THEN sign(v.x) * sign(v.y) ELSE 0 END) * 0.00000000000000000001 FROM (SELECT (${x})::numeric AS x, (${y})::numeric AS y OFFSET 0) AS v)`;
};

const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const placeholder = (index: number): string => `$${index + 1}`;
const shared = sharedStatements({
  quoteIdentifier,
  placeholder,
  columnType: postgresStorage.columnType,
  tableOptions: '',
});

export const postgresDialect: Dialect = {
  name: 'postgres',
  quoteIdentifier,
  placeholder,
  storage: postgresStorage,
  statements: {
    ...shared,
    increment: (table, key, value) => {
      const keys = key.map(quoteIdentifier).join(', ');
      const v = quoteIdentifier(value);
      // (the target is aliased: in DO UPDATE a bare column is ambiguous between it and EXCLUDED)
      return [
        {
          sql: `INSERT INTO ${quoteTable(quoteIdentifier, table)} AS s (${keys}, ${v}) VALUES (${key.map((_, i) => placeholder(i)).join(', ')}, 1) ON CONFLICT (${keys}) DO UPDATE SET ${v} = s.${v} + 1 RETURNING s.${v} AS ${quoteIdentifier('value')}`,
          keyed: true,
        },
      ];
    },
    // transactions run concurrently (READ COMMITTED): a transaction-scoped advisory lock serializes those that take
    // the same name
    transactionLock: `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`,
    // until autovacuum's next round the planner takes a freshly loaded table for empty (a page of a million rows
    // becomes a scan and a sort of all of them)
    analyze: (table) => `ANALYZE ${quoteTable(quoteIdentifier, table)}`,
  },
  maxParameters: 65_535, // the protocol's 16-bit parameter count
  typedParam: (param, type) => `${param}::${casts[type] ?? 'text'}`,
  // `-(NULL)`, `EXTRACT(DAY FROM NULL)`: an unknown-typed NULL matches several operators and functions
  typedNull: (type) => `NULL::${casts[type] ?? 'text'}`,
  true: 'TRUE',
  false: 'FALSE',
  nullSafeEqual: (a, b) => `(${a} IS NOT DISTINCT FROM ${b})`,
  ordinal: (a) => `(${a} COLLATE "C")`,
  length: (s) => `char_length(${s})`,
  position: (s, t) => `strpos(${s}, ${t})`,
  // the separators inline, a constant of this code (no parameter), so that the text is the very expression of the
  // search index below, which PostgreSQL then uses
  searchText: (s) => postgresSearchText(s),
  // one GIN index per column, of the very expression searchText writes
  searchIndex: {
    indexSql: (table, _key, columns) =>
      columns.map(
        (column) =>
          `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(`${unqualified(table)}_${column}_search`.slice(0, 63))} ON ${quoteTable(quoteIdentifier, table)} USING gin (to_tsvector('simple'::regconfig, ${postgresSearchText(quoteIdentifier(column))}))`,
      ),
    // the words in a row, lexemes of the parser's `simple` configuration: for ASCII letters and digits the words
    // themselves, and wherever searchText holds them in a row, so does the index
    prefilter: ({ alias, columns }, search, param) => {
      const walk = (e: IndexedSearch): Sql =>
        e.kind === 'words'
          ? `(${columns
              .map(
                (column) =>
                  `to_tsvector('simple'::regconfig, ${postgresSearchText(`${alias}.${quoteIdentifier(column)}`)}) @@ phraseto_tsquery('simple'::regconfig, ${param(e.words.join(' '))})`,
              )
              .join(' OR ')})`
          : `(${walk(e.left)} ${e.kind === 'and' ? 'AND' : 'OR'} ${walk(e.right)})`;
      return walk(search);
    },
  },
  // substr takes int4: clamp (a start beyond any text gives '' either way) so that `+ 1` cannot overflow. CASE,
  // not LEAST: PostgreSQL's LEAST skips a null argument, and a null start must stay null.
  substring: (s, start, count) => {
    const from = `${atMost(start, '2147483646')}::int4 + 1`;
    return count === undefined
      ? `substr(${s}, ${from})`
      : `substr(${s}, ${from}, ${atMost(count, '2147483647')}::int4)`;
  },
  concat: (a, b) => `(${a} || ${b})`,
  // case mapping under C.utf8, the result back under "C" (binary order) so that it compares with other text
  lower: (s) => `(lower(${s} COLLATE "C.utf8") COLLATE "C")`,
  upper: (s) => `(upper(${s} COLLATE "C.utf8") COLLATE "C")`,
  trim: (s, param) => `btrim(${s}, ${param(WHITE_SPACE_CHARACTERS)})`,
  like: (s, pattern) => `(${s} LIKE ${pattern})`, // the default escape character is the backslash
  // Spencer's engine (no exponential time on any pattern), under "C" so that classes are the code points written
  regexMatch: (s, pattern, param) => {
    const regex = toPostgresRegex(pattern);
    return typeof regex === 'string' ? `((${s} COLLATE "C") ~ ${param(regex)})` : regex;
  },
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
  // float8 raises where IEEE arithmetic overflows (and where a product or quotient underflows to zero). The result
  // is computed natively (so it is the IEEE result memory computes), after the operands' shortest decimals, which
  // numeric multiplies and adds exactly, have shown whether it stays in range: beyond the Double range from finite
  // operands is null, as in memory; an underflow is 0.
  doubleArithmetic: (op, a, b) => {
    if (op === 'mod') return undefined; // PostgreSQL has no floating-point remainder
    const x = `((${a})::text)::numeric`;
    const y = `((${b})::text)::numeric`;
    const exact =
      op === 'div' ? `(${x} / NULLIF(${y}, 0))` : `(${x} ${op === 'add' ? '+' : op === 'sub' ? '-' : '*'} ${y})`;
    const native = `${a} ${op === 'add' ? '+' : op === 'sub' ? '-' : op === 'mul' ? '*' : '/'} ${b}`;
    const underflow =
      op === 'mul' || op === 'div'
        ? ` WHEN ${finiteBoth(a, b)} AND ${a} <> 0 AND abs(${exact}) < ${DOUBLE_ZERO_BELOW} THEN 0::float8`
        : '';
    return `(CASE${op === 'div' ? ` WHEN ${b} = 0 THEN NULL` : ''} WHEN ${finiteBoth(a, b)} AND abs(${exact}) > ${DOUBLE_MAX} THEN NULL${underflow} ELSE ${native} END)`;
  },
  negate: (a, type) => (type === 'Edm.Int32' || type === 'Edm.Int64' ? exactInt(`(-(${a})::numeric)`) : `(-${a})`),
  rounding: (name, a, type) => {
    if (name === 'floor') return `floor(${a})`;
    if (name === 'ceiling') return `ceil(${a})`;
    // round(numeric) is half away from zero; round(float8) is half even
    return type === 'Edm.Decimal' ? `round(${a})` : roundHalfAwayDouble(a, (x) => `trunc(${x})`);
  },
  // Int32 → Int64 needs no cast: int4 and int8 mix freely, and a cast on a column would hide its index
  convertNumber: (a, from, to) => (from === to || to === 'Edm.Int64' ? a : `(${a})::${casts[to]!}`),
  // float8's text is its shortest round-trip decimal, as memory reads a double
  doubleToDecimal: (a) => `(CASE WHEN abs(${a}) < 'Infinity'::float8 THEN ((${a})::text)::numeric END)`,
  compareDecimal: (a, op, b) => `(${a} ${op} ${b})`,
  decimalSortKey: (a) => a,
  numberToText: (a, from) => (from === 'Edm.Decimal' ? `(trim_scale(${a}))::text` : `(${a})::text`),
  textToDecimal: undefined,
  numericText: {
    syntax: NUMBER_SYNTAX, // ARE: `$` is the end of the text
    matches: (s, pattern) => `(${s} ~ ${pattern})`,
    replace: (s, pattern, replacement) => `regexp_replace(${s}, ${pattern}, ${replacement})`,
    digitsToInteger: (t) => `(${t})::int8`,
    integerToText: (n) => `(${n})::text`,
    shortDecimal: (t) => `(${t})::numeric`,
    toDecimal: (t) => `(${t})::numeric`,
    // float8in is strtod: correctly rounded for any number of digits
    toDouble: (t) => `(${t})::float8`,
    // OFFSET 0 keeps the planner from pulling the subquery up, which would copy each value into every reference
    share: (values, alias, body) =>
      `(SELECT ${body(values.map((_, i) => `${alias}.v${i}`))} FROM (SELECT ${values.map((v, i) => `${v} AS v${i}`).join(', ')} OFFSET 0) AS ${alias})`,
  },
  toInteger: (a, from, to) =>
    exactInt(
      from === 'Edm.Double'
        ? `round(CASE WHEN abs(${a}) < 'Infinity'::float8 THEN ((${a})::text)::numeric END)`
        : `round(${a})`,
      to,
    ),
  datePart: (part, a, type) => `(EXTRACT(${part.toUpperCase()} FROM ${type === 'Edm.Date' ? a : utc(a)}))::int4`,
  timePart: (part, a) =>
    part === 'fractionalseconds'
      ? `(((EXTRACT(MILLISECONDS FROM ${utc(a)}))::int8 % 1000)::numeric / 1000)`
      : part === 'second'
        ? `(floor(EXTRACT(SECOND FROM ${utc(a)})))::int4`
        : `(EXTRACT(${part.toUpperCase()} FROM ${utc(a)}))::int4`,
  dateOf: (a) => `(${utc(a)})::date`,
  // EXTRACT(EPOCH FROM time) is an exact numeric (PostgreSQL 14+), and timestamptz(3) keeps milliseconds
  timeOf: (a) => `((EXTRACT(EPOCH FROM (${utc(a)})::time) * 1000)::int8)`,
  timeOfDayPart: (part, tod) =>
    part === 'hour'
      ? `((${tod}) / 3600000)::int4`
      : part === 'minute'
        ? `((${tod}) / 60000 % 60)::int4`
        : part === 'second'
          ? `((${tod}) / 1000 % 60)::int4`
          : `(((${tod}) % 1000)::numeric / 1000)`,
  dateToInstant: (a) => `((${a})::timestamp AT TIME ZONE 'UTC')`,
  now: `date_trunc('milliseconds', now())`,
  limit: (top, skip) =>
    [top === undefined ? '' : `LIMIT ${top}`, skip === undefined ? '' : `OFFSET ${skip}`].filter(Boolean).join(' '),
  orderItem: (expr, direction, nullable) =>
    `${expr} ${direction === 'asc' ? 'ASC' : 'DESC'}${nullable ? (direction === 'asc' ? ' NULLS FIRST' : ' NULLS LAST') : ''}`,
};
