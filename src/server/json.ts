// OData JSON for entities: decimals and Int64 are written as the exact digits stored (JSON numbers, or strings when
// the client asks for IEEE754Compatible=true), instants in UTC with Z, binaries as base64url.
import type { EntityType, Property } from '../model/schema.js';

export type Row = Record<string, unknown>;

export interface JsonOptions {
  /** IEEE754Compatible=true: Int64 and Decimal values as strings, so that JavaScript clients lose no digits. */
  readonly ieee754Compatible: boolean;
}

function valueJson(property: Property, value: unknown, options: JsonOptions): string {
  if (value === null || value === undefined) return 'null';
  switch (property.type) {
    case 'Edm.Decimal':
    case 'Edm.Int64': {
      const text = String(value);
      // stored values are canonical decimal text; anything else is written as a string rather than as bad JSON
      const numeric = /^-?\d+(\.\d+)?$/.test(text);
      return options.ieee754Compatible || !numeric ? JSON.stringify(text) : text;
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
    default:
      return JSON.stringify(String(value));
  }
}

/** The properties of `row` named in `select`, as a JSON object's members (without braces), in `select` order. */
export function entityMembers(select: readonly Property[], row: Row, options: JsonOptions): string {
  return select.map((p) => `${JSON.stringify(p.name)}:${valueJson(p, row[p.name], options)}`).join(',');
}

/** The readable properties of an entity type (write-only ones, such as uploaded content, are never returned). */
export function readable(entityType: EntityType): Property[] {
  return [...entityType.properties.values()].filter((p) => p.writeOnly !== true);
}
