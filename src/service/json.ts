// OData JSON for entities: decimals and Int64 are written as the exact digits stored (JSON numbers, or strings when
// the client asks for IEEE754Compatible=true), instants in UTC with Z, binaries as base64url.
import type { Property, Row } from '../model/schema.js';
import type { SqlDialectName } from '../backends/sql/index.js';
import type { Storage } from '../backends/sql/dialect.js';
import { dialects } from '../backends/sql/dialects.js';
import { decimalToString } from '../values/decimal.js';
import { readDate, readDecimal, readInstant, readInt64, toDecimal } from '../values/read.js';
import { isCanonicalInstant } from '../values/temporal.js';

export interface JsonOptions {
  /** IEEE754Compatible=true: Int64 and Decimal values as strings, so that JavaScript clients lose no digits. */
  readonly ieee754Compatible: boolean;
}

const NUMBER_TOKEN = /^-?\d+(\.\d+)?$/;
const PLAIN = /^[0-9A-Za-z:.+-]*$/;

/** Canonical decimal and integer text (no leading zeros, no trailing zeros after the point): written as it is. */
const CANONICAL_DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/;

/**
 * A decimal or Int64 value in its canonical text: SQL stores decode to it; a row of another store may hold `'8.50'`,
 * a number or a bigint, which must answer as the databases do (`8.5`). Undefined for a value that is neither.
 */
function canonicalNumber(type: 'Edm.Decimal' | 'Edm.Int64', value: unknown): string | undefined {
  if (typeof value === 'string' && CANONICAL_DECIMAL.test(value) && value !== '-0') return value;
  if (type === 'Edm.Int64') {
    const n = readInt64(value);
    return n === null ? undefined : String(n);
  }
  const d = readDecimal(value);
  const decimal = d === null ? null : toDecimal(d);
  return decimal === null ? undefined : decimalToString(decimal);
}

function valueJson(property: Property, value: unknown, options: JsonOptions): string {
  if (value === null || value === undefined) return 'null';
  switch (property.type) {
    case 'Edm.Decimal':
    case 'Edm.Int64': {
      const text = canonicalNumber(property.type, value) ?? String(value);
      // a value that is no number is written as a string rather than as bad JSON
      const numeric = NUMBER_TOKEN.test(text);
      if (!numeric) return JSON.stringify(text);
      return options.ieee754Compatible ? `"${text}"` : text;
    }
    case 'Edm.Double': {
      const n = Number(value);
      if (Number.isNaN(n)) return '"NaN"';
      if (!Number.isFinite(n)) return n > 0 ? '"INF"' : '"-INF"';
      return JSON.stringify(n);
    }
    case 'Edm.Int32':
      return JSON.stringify(Number(value));
    case 'Edm.Boolean':
      return value === true || value === 1 || value === '1' ? 'true' : 'false';
    case 'Edm.Binary':
      return JSON.stringify(Buffer.from(value as Uint8Array).toString('base64url'));
    case 'Edm.DateTimeOffset': {
      // the canonical instant (UTC, milliseconds) as the SQL stores give it; other forms (offsets, Dates) made so
      if (isCanonicalInstant(value)) return `"${value}"`;
      const ms = readInstant(value);
      return ms === null ? JSON.stringify(String(value)) : `"${new Date(ms).toISOString()}"`;
    }
    case 'Edm.Date': {
      const day = readDate(value);
      return day === null ? JSON.stringify(String(value)) : `"${day}"`;
    }
    case 'Edm.Guid': {
      // lower case, as the SQL stores keep it; hex digits and dashes only: nothing to escape (checked, not assumed)
      const text = String(value).toLowerCase();
      return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
    }
    default:
      return JSON.stringify(String(value));
  }
}

/** One property's value as JSON (a property read's `"value"`), in the entity format's number conventions. */
export function propertyValueJson(property: Property, value: unknown, options: JsonOptions): string {
  return valueJson(property, value, options);
}

/** A property's raw value (`/$value`, Protocol §11.2.6.1): its canonical text, or the bytes of a binary value. */
export function rawValueText(property: Property, value: unknown): string | Uint8Array {
  switch (property.type) {
    case 'Edm.Binary':
      return value instanceof Uint8Array ? value : Buffer.from(String(value), 'base64url');
    case 'Edm.Double': {
      const n = Number(value);
      return Number.isNaN(n) ? 'NaN' : Number.isFinite(n) ? String(n) : n > 0 ? 'INF' : '-INF';
    }
    case 'Edm.Boolean':
      return value === true || value === 1 || value === '1' ? 'true' : 'false';
    default:
      return String(value);
  }
}

/** `"Name":` per property, made once (property names are schema identifiers: no escaping changes them). */
const memberPrefixes = new WeakMap<Property, string>();

function prefixOf(property: Property): string {
  let prefix = memberPrefixes.get(property);
  if (prefix === undefined) memberPrefixes.set(property, (prefix = `${JSON.stringify(property.name)}:`));
  return prefix;
}

/** The properties of `row` named in `select`, as a JSON object's members (without braces), in `select` order. */
export function entityMembers(select: readonly Property[], row: Row, options: JsonOptions): string {
  let out = '';
  for (let i = 0; i < select.length; i++) {
    const p = select[i]!;
    out += `${i === 0 ? '' : ','}${prefixOf(p)}${valueJson(p, row[p.name], options)}`;
  }
  return out;
}

/**
 * A writer of entities straight from the driver's rows, compiled once per query: the members are written by one
 * generated function with a named load per selected property (only schema identifiers, JSON-quoted, enter its source)
 * and a value writer chosen per property type, reading values through the dialect's decoders, so a page is written
 * without an intermediate row object per entity.
 */
export function rawEntityWriter(
  dialect: SqlDialectName,
  select: readonly Property[],
  options: JsonOptions,
  /** Where rows are arrays of the columns' values (SqlDriver.values): the column of each selected property. */
  positions?: readonly number[],
): (raw: Readonly<Record<string, unknown>>) => string {
  const { storage } = dialects[dialect];
  const writers = select.map((p) => valueWriter(p, storage, options));
  if (select.length === 0) return () => '';
  const terms = select.map(
    (p, i) =>
      `${JSON.stringify(`${i === 0 ? '' : ','}${prefixOf(p)}`)} + w[${i}](r[${positions === undefined ? JSON.stringify(p.name) : String(Math.trunc(positions[i]!))}])`,
  );
  return new Function('w', `return function writeEntity(r) { return ${terms.join(' + ')}; };`)(writers) as (
    raw: Readonly<Record<string, unknown>>,
  ) => string;
}

/**
 * The writer of one property's driver values. Fast paths for the values that need no general decoding: text
 * (JSON-escaped only where it must be), integers, Booleans, and dates and instants already in their canonical form;
 * decimals as number tokens straight from the dialect's decoder. Anything unexpected (and every other type) takes
 * the general path: decode, then write.
 */
function valueWriter(property: Property, storage: Storage, options: JsonOptions): (v: unknown) => string {
  const decode = storage.decoder(property);
  const general = (v: unknown): string => valueJson(property, decode(v), options);
  const quote = options.ieee754Compatible ? '"' : '';
  switch (property.type) {
    case 'Edm.String':
      return (v) =>
        typeof v === 'string'
          ? NEEDS_ESCAPE.test(v)
            ? JSON.stringify(v)
            : `"${v}"`
          : v === null || v === undefined
            ? 'null'
            : JSON.stringify(String(v));
    case 'Edm.Int32':
      return (v) =>
        typeof v === 'number' || typeof v === 'bigint'
          ? String(v)
          : v === null || v === undefined
            ? 'null'
            : JSON.stringify(Number(v));
    case 'Edm.Int64':
      return (v) => (typeof v === 'bigint' ? `${quote}${v}${quote}` : general(v));
    case 'Edm.Boolean':
      return (v) =>
        v === 1n || v === 1 || v === true ? 'true' : v === 0n || v === 0 || v === false ? 'false' : general(v);
    case 'Edm.Decimal': {
      // canonical decimal text from the dialect's decoder (SQLite's scaled integers included) is a number token
      const text = storage.decimalText(property);
      return (v) => {
        if (v === null || v === undefined) return 'null';
        const t = text(v);
        return t === undefined ? general(v) : `${quote}${t}${quote}`;
      };
    }
    case 'Edm.Date':
      return (v) => (typeof v === 'string' && v.length === 10 && CANONICAL_DATE.test(v) ? `"${v}"` : general(v));
    case 'Edm.DateTimeOffset':
      return (v) => (isCanonicalInstant(v) ? `"${v}"` : v === null || v === undefined ? 'null' : general(v));
    default:
      return general;
  }
}

/** A quote, a backslash, a control character or a lone surrogate: what `"${text}"` cannot carry as it is. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const CANONICAL_DATE = /^\d{4}-\d\d-\d\d$/;
