// ETags (Protocol §11.4.1.1, RFC 9110 §8.8.3): an entity's ETag is made of its concurrency properties (the model's
// `concurrency`, properties the service changes on every write), so that a client that sends it back in If-Match
// writes only over the version it read. Weak ETags: two entities that are equal in what a client sees may differ in
// their bytes (a decimal's trailing zeros), and the service compares them weakly (the W/ prefix aside), as OData
// clients send them back.
import type { EntityType, Property, Row } from '../model/schema.js';

/** An entity's ETag (`W/"2026-11-25T10:00:00.123Z"`) from its row; undefined when its type has none. */
export function etagOf(type: EntityType, row: Row): string | undefined {
  if (type.concurrency.length === 0) return undefined;
  let text = '';
  for (let i = 0; i < type.concurrency.length; i++) {
    const property = type.concurrency[i]!;
    text += `${i === 0 ? '' : ','}${valueText(property, row[property.name])}`;
  }
  // an entity-tag holds no quote, blank or control character (RFC 9110 etagc); anything else goes as base64url
  return /^[\x21\x23-\x7e]*$/.test(text) ? `W/"${text}"` : `W/"${Buffer.from(text, 'utf8').toString('base64url')}"`;
}

/**
 * An entity's ETag as a JSON string (`"W/\\"…\\""`), as `JSON.stringify(etagOf(type, row))` writes it, for the rows of a
 * page: an entity-tag's characters need no escape in JSON but the backslash, so most are written without
 * JSON.stringify. Undefined when the type has none.
 */
export function etagJson(type: EntityType, row: Row): string | undefined {
  const etag = etagOf(type, row);
  if (etag === undefined) return undefined;
  return etag.includes('\\') ? JSON.stringify(etag) : `"W/\\"${etag.slice(3, -1)}\\""`;
}

const CANONICAL_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A concurrency value as the same text whatever form a store gives it in (an instant in any offset: UTC ms). */
function valueText(property: Property, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (property.type === 'Edm.DateTimeOffset') {
    // (the service writes instants as UTC with milliseconds: most come in that form already, and need no parsing)
    if (typeof value === 'string' && CANONICAL_INSTANT.test(value)) return value;
    const time = value instanceof Date ? value.getTime() : Date.parse(String(value));
    return Number.isFinite(time) ? new Date(time).toISOString() : String(value);
  }
  return String(value);
}

/**
 * Whether an If-Match or If-None-Match header value (`*`, or a list of entity-tags) names `etag`: `*` names any
 * entity; the others are compared weakly (RFC 9110 §8.8.3.2: the W/ prefix aside).
 */
export function etagMatches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = etag.replace(/^W\//, '');
  for (const match of header.matchAll(/(?:W\/)?("[^"]*")/g)) if (match[1] === opaque) return true;
  return false;
}
