// Keyset paging: a server-driven next link carries, in an opaque `$skiptoken`, the order values of the last entity
// of its page (the query's `$orderby` and the key that breaks ties). The next page is the rows after them in that
// order, found by conditions the database answers from an index: page n costs what page 1 costs, and rows inserted
// or deleted between two pages neither shift nor repeat the rows that stay. The token is signed (HMAC-SHA256 over its
// values and the query it belongs to): an altered token, or one used with another query, is a 400.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { ODataError } from '../errors.js';
import type { Property, Row } from '../model/schema.js';
import type { LiteralValue } from '../syntax/ast.js';
import type { BoundExpr, BoundQuery } from '../validate/bound.js';

/** One item of a query's total order. */
export interface OrderItem {
  readonly property: Property;
  readonly descending: boolean;
}

/**
 * The order a keyset can continue: every item of the bound order (the key included, which the binder appends) is a
 * property of the entity itself, of a type whose values a token can carry; undefined otherwise (the next links then
 * page by `$skip`).
 */
export function keysetOrder(query: BoundQuery): readonly OrderItem[] | undefined {
  const items: OrderItem[] = [];
  for (const item of query.orderBy) {
    const expr = item.expr;
    if (expr.kind !== 'property' || expr.source.kind !== 'root' || !KEYSET_TYPES.has(expr.property.type))
      return undefined;
    items.push({ property: expr.property, descending: item.direction === 'desc' });
  }
  return items.length === 0 ? undefined : items;
}

/** Types whose values a token carries and compares as literals of the same type (others page by `$skip`). */
const KEYSET_TYPES = new Set([
  'Edm.Boolean',
  'Edm.Int32',
  'Edm.Int64',
  'Edm.Decimal',
  'Edm.Double',
  'Edm.String',
  'Edm.Guid',
  'Edm.Date',
  'Edm.DateTimeOffset',
  'Edm.TimeOfDay',
]);

/** A row's order values as JSON a token carries; undefined when one of them has no plain form (then: `$skip`). */
export function orderValues(order: readonly OrderItem[], row: Row): unknown[] | undefined {
  const values: unknown[] = [];
  for (const { property } of order) {
    const value = tokenValue(property, row[property.name]);
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}

function tokenValue(property: Property, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (property.type) {
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? value : value === 1 || value === '1' || value === 'true';
    case 'Edm.Int64':
    case 'Edm.Decimal': {
      const text = String(value);
      if (!/^-?\d+(\.\d+)?$/.test(text)) return undefined;
      // one text per value, whatever the store gives (`8.50` or `8.5`): a next link is the same from every store
      const canonical = text.includes('.') ? text.replace(/\.?0+$/, '') : text;
      return canonical === '-0' ? '0' : canonical;
    }
    case 'Edm.Date':
      return value instanceof Date ? value.toISOString().slice(0, 10) : String(value);
    case 'Edm.DateTimeOffset': {
      const time = value instanceof Date ? value.getTime() : Date.parse(String(value));
      return Number.isFinite(time) ? new Date(time).toISOString() : undefined;
    }
    case 'Edm.Double':
    case 'Edm.Int32': {
      const number = typeof value === 'number' ? value : Number(value);
      return Number.isFinite(number) ? number : undefined;
    }
    default:
      return String(value);
  }
}

/** A token value back as the literal of its property's type; undefined when it is not one. */
function literalOf(property: Property, value: unknown): LiteralValue | undefined {
  if (value === null) return { type: 'null' };
  switch (property.type) {
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? { type: 'Edm.Boolean', value } : undefined;
    case 'Edm.Int64':
      return typeof value === 'string' && /^-?\d{1,19}$/.test(value)
        ? { type: 'Edm.Int64', value: BigInt(value) }
        : undefined;
    case 'Edm.Decimal':
      return typeof value === 'string' && /^-?\d{1,40}(\.\d{1,40})?$/.test(value)
        ? { type: 'Edm.Decimal', value }
        : undefined;
    case 'Edm.Double':
      return typeof value === 'number' ? { type: 'Edm.Double', value } : undefined;
    case 'Edm.Int32':
      return typeof value === 'number' && Number.isInteger(value) ? { type: 'Edm.Int32', value } : undefined;
    case 'Edm.String':
      return typeof value === 'string' ? { type: 'Edm.String', value } : undefined;
    case 'Edm.Guid':
      return typeof value === 'string' ? { type: 'Edm.Guid', value: value.toLowerCase() } : undefined;
    case 'Edm.Date':
      return typeof value === 'string' && /^\d{4}-\d\d-\d\d$/.test(value) ? { type: 'Edm.Date', value } : undefined;
    case 'Edm.TimeOfDay':
      return typeof value === 'string' && /^\d\d:\d\d(:\d\d(\.\d{1,12})?)?$/.test(value)
        ? { type: 'Edm.TimeOfDay', value }
        : undefined;
    case 'Edm.DateTimeOffset': {
      const time = typeof value === 'string' ? Date.parse(value) : NaN;
      return Number.isFinite(time)
        ? { type: 'Edm.DateTimeOffset', value: new Date(time).toISOString(), epochMilliseconds: time, offsetMinutes: 0 }
        : undefined;
    }
    default:
      return undefined;
  }
}

const SPAN = { start: 0, end: 0 } as const;

function comparison(
  operator: 'eq' | 'ne' | 'gt' | 'lt' | 'ge' | 'le',
  property: Property,
  literal: LiteralValue,
): BoundExpr {
  const left: BoundExpr = {
    kind: 'property',
    type: property.type,
    nullable: property.nullable,
    property,
    source: { kind: 'root' },
    span: SPAN,
  };
  const right: BoundExpr = {
    kind: 'literal',
    type: literal.type === 'null' ? 'null' : property.type,
    nullable: literal.type === 'null',
    value: literal,
    span: SPAN,
  };
  return { kind: 'comparison', type: 'Edm.Boolean', nullable: false, operator, left, right, span: SPAN };
}

function logical(operator: 'and' | 'or', left: BoundExpr, right: BoundExpr): BoundExpr {
  return { kind: 'logical', type: 'Edm.Boolean', nullable: false, operator, left, right, span: SPAN };
}

/**
 * The rows after `values` in the order (SEMANTICS.md: nulls first ascending, last descending), as one condition per
 * level of the order, in the order of the rows they find: the rows that share every item but the last and come after
 * it in the last, then those that share every item but the last two and come after in the one before, and so on up to
 * those after the first item. Each level is an equality prefix and one range, which a database answers by seeking in
 * an index on the order (a single disjunction of them read the rows of a run of equal leading values from the start
 * of the run); the page is their rows, level after level, until it is full.
 */
export function afterLevels(order: readonly OrderItem[], values: readonly unknown[]): BoundExpr[] {
  if (values.length !== order.length) throw invalidToken();
  const literals = order.map((item, i) => {
    const literal = literalOf(item.property, values[i]);
    if (literal === undefined) throw invalidToken();
    return literal;
  });
  const levels: BoundExpr[] = [];
  for (let j = order.length - 1; j >= 0; j--) {
    const { property, descending } = order[j]!;
    const literal = literals[j]!;
    const isNull = literal.type === 'null';
    // after the value in this item's direction; descending, nothing comes after a null
    let after: BoundExpr | undefined;
    if (!descending) after = isNull ? comparison('ne', property, literal) : comparison('gt', property, literal);
    else if (!isNull)
      after = property.nullable
        ? logical('or', comparison('lt', property, literal), comparison('eq', property, { type: 'null' }))
        : comparison('lt', property, literal);
    if (after === undefined) continue;
    let level = after;
    for (let i = j - 1; i >= 0; i--) level = logical('and', comparison('eq', order[i]!.property, literals[i]!), level);
    levels.push(level);
  }
  return levels;
}

function invalidToken(): ODataError {
  return new ODataError(
    'InvalidSkipToken',
    '$skiptoken is not one this service issued for this query; follow the @odata.nextLink as given',
    { target: '$skiptoken' },
  );
}

/** Signs and checks skip tokens with the service's secret. */
export class SkipTokens {
  private readonly secret: Uint8Array;

  /** `secret`: the same on every instance of a service (and across restarts) for their tokens to hold; else random. */
  constructor(secret?: string | Uint8Array) {
    this.secret = secret === undefined ? randomBytes(32) : typeof secret === 'string' ? Buffer.from(secret) : secret;
  }

  /** The token of `values` for the query `scope` names (its resource and options but the paging ones). */
  sign(scope: string, values: readonly unknown[]): string {
    const payload = Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
    return `${payload}.${this.mac(scope, payload)}`;
  }

  /** The values of a token signed for `scope`; a 400 InvalidSkipToken for any other. */
  verify(scope: string, token: string): unknown[] {
    const dot = token.lastIndexOf('.');
    if (dot < 0 || token.length > 8192) throw invalidToken();
    const payload = token.slice(0, dot);
    const given = Buffer.from(token.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.mac(scope, payload), 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidToken();
    let values: unknown;
    try {
      values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidToken();
    }
    if (!Array.isArray(values)) throw invalidToken();
    return values;
  }

  private mac(scope: string, payload: string): string {
    return createHmac('sha256', this.secret)
      .update(scope)
      .update('\n')
      .update(payload)
      .digest('base64url')
      .slice(0, 22);
  }
}
