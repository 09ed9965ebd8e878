// OData JSON for entities: decimals and Int64 are written as the exact digits stored (JSON numbers, or strings when
// the client asks for IEEE754Compatible=true), instants in UTC with Z, binaries as base64url.
import type { EntityType, Property } from '../model/schema.js';
import { decodeValue, type SqlDialectName } from '../backends/sql/index.js';

export type Row = Record<string, unknown>;

export interface JsonOptions {
  /** IEEE754Compatible=true: Int64 and Decimal values as strings, so that JavaScript clients lose no digits. */
  readonly ieee754Compatible: boolean;
}

const NUMBER_TOKEN = /^-?\d+(\.\d+)?$/;
const PLAIN = /^[0-9A-Za-z:.+-]*$/;

function valueJson(property: Property, value: unknown, options: JsonOptions): string {
  if (value === null || value === undefined) return 'null';
  switch (property.type) {
    case 'Edm.Decimal':
    case 'Edm.Int64': {
      const text = String(value);
      // stored values are canonical decimal text; anything else is written as a string rather than as bad JSON
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
    case 'Edm.Date':
    case 'Edm.DateTimeOffset':
    case 'Edm.Guid': {
      // digits, dashes, colons, a dot and letters only: nothing to escape (checked, not assumed)
      const text = String(value);
      return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
    }
    default:
      return JSON.stringify(String(value));
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
 * A writer of entities straight from the driver's rows: one decoder and one JSON form per selected property, chosen
 * once per query, so a page is written without building an intermediate row object per entity.
 */
export function rawEntityWriter(
  dialect: SqlDialectName,
  select: readonly Property[],
  options: JsonOptions,
): (raw: Readonly<Record<string, unknown>>) => string {
  const parts = select.map((p, i) => ({
    name: p.name,
    prefix: `${i === 0 ? '' : ','}${prefixOf(p)}`,
    write: fastWriter(p) ?? ((v: unknown) => valueJson(p, decodeValue(dialect, p, v), options)),
  }));
  return (raw) => {
    let out = '';
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      out += part.prefix + part.write(raw[part.name]);
    }
    return out;
  };
}

/**
 * Writers for the driver values that need no decoding: text (JSON-escaped only where it must be), 32-bit integers,
 * and instants, dates and GUIDs already in their canonical form. Anything else takes the general path.
 */
function fastWriter(property: Property): ((v: unknown) => string) | undefined {
  // the general path for anything else: the options only matter for Int64 and Decimal, which never come here
  const options: JsonOptions = { ieee754Compatible: false };
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
    case 'Edm.DateTimeOffset':
      return (v) =>
        typeof v === 'string' && v.length === 24 && CANONICAL_INSTANT.test(v)
          ? `"${v}"`
          : v === null || v === undefined
            ? 'null'
            : valueJson(property, decodeValue('postgres', property, v), options);
    default:
      return undefined;
  }
}

/** A quote, a backslash, a control character or a lone surrogate: what `"${text}"` cannot carry as it is. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const CANONICAL_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The readable properties of an entity type (write-only ones, such as uploaded content, are never returned). */
export function readable(entityType: EntityType): Property[] {
  return [...entityType.properties.values()].filter((p) => p.writeOnly !== true);
}
