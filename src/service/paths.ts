// Resource paths after a service root, where a resource is the service document, $metadata,
// an entity set, an entity by key (`WorkOrders('WO-1')`, `POLineItems(PONumber='PO-1',LineNumber=2)`), a property of
// one (`Parts('P-1')/Description`, `/$value`), a navigation under one (`WorkOrders('WO-1')/Comments`, `.../Comments(3)`,
// `.../$count`), or a bound action (`WorkOrders('WO-1')/AddComment`).
import { ODataError } from '../errors.js';
import { parseFilter } from '../syntax/parser.js';
import type { LiteralValue } from '../syntax/ast.js';
import { decodeString } from '../syntax/literals.js';

export type ResourcePath =
  | { readonly kind: 'service' }
  | { readonly kind: 'metadata' }
  | { readonly kind: 'batch' }
  /** A service-level resource OData defines that this service does not offer yet (`$all`, `$crossjoin`, `$entity`): 501. */
  | { readonly kind: 'unsupported'; readonly what: string }
  /**
   * An entity set and what follows it: `Set`, `Set/$count`, `Set(key)`, `Set(key)/Property[/$value]`,
   * `Set(key)/Navigation[(key)][/$count]`, `Set(key)/Action`. Which names are properties, navigations or actions is
   * the service's business (it knows the model); here they are only names, keys and the `$` segments.
   */
  | { readonly kind: 'path'; readonly segments: readonly PathSegment[] };

export type PathSegment =
  | { readonly kind: 'name'; readonly name: string; readonly key?: KeyPredicate }
  | { readonly kind: '$count' | '$value' | '$ref' };

/** A key predicate as written: one literal, or name=literal pairs. */
export type KeyPredicate =
  | { readonly kind: 'single'; readonly value: LiteralValue }
  | { readonly kind: 'named'; readonly values: ReadonlyMap<string, LiteralValue> };

/** Service-level resources of OData 4.01 (Part 2 §4) this service recognises but does not serve yet. */
const UNSUPPORTED_ROOTS = new Set(['$all', '$entity']);

function notFound(message: string): ODataError {
  return new ODataError('NotFound', message);
}

/** Percent-decodes each `/`-separated segment of a path (`/a/b%20c` → `['', 'a', 'b c']`); a bad escape is a 400. */
export function decodeSegments(path: string): string[] {
  return path.split('/').map(decodeSegment);
}

/** One percent-decoded path segment; a bad escape is a 400. */
function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ODataError(
      'InvalidEncoding',
      `The path segment ${JSON.stringify(segment.slice(0, 60))} is not valid percent-encoding`,
    );
  }
}

/** The decoded segments of a resource path after the service root (`/WorkOrders('WO-1')/Comments`). */
export function resourceSegments(resource: string): string[] {
  const segments = decodeSegments(resource.startsWith('/') ? resource.slice(1) : resource);
  // a trailing slash names the same resource
  if (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  return segments;
}

/** Reads the segments after the API root. A malformed key predicate is a 400; what the names mean is decided later. */
export function parseResource(segments: readonly string[]): ResourcePath {
  if (segments.length === 0) return { kind: 'service' };
  const [first, ...rest] = segments as [string, ...string[]];
  if (first === '$metadata') {
    if (rest.length > 0) throw notFound(`No resource at ${segments.join('/')}`);
    return { kind: 'metadata' };
  }
  if (first === '$batch') {
    if (rest.length > 0) throw notFound(`No resource at ${segments.join('/')}`);
    return { kind: 'batch' };
  }
  if (UNSUPPORTED_ROOTS.has(first) || first.startsWith('$crossjoin(')) {
    return { kind: 'unsupported', what: first.startsWith('$crossjoin(') ? '$crossjoin' : first };
  }
  const parsed: PathSegment[] = [];
  for (const segment of segments) {
    if (segment === '$count' || segment === '$value' || segment === '$ref') {
      if (parsed.length === 0) throw notFound(`No resource at ${segments.join('/')}`);
      parsed.push({ kind: segment });
      continue;
    }
    parsed.push(nameSegment(segment));
  }
  return { kind: 'path', segments: parsed };
}

/** `Name` or `Name(key)`. */
function nameSegment(segment: string): PathSegment {
  const open = segment.indexOf('(');
  if (open < 0) return { kind: 'name', name: segment };
  if (!segment.endsWith(')'))
    throw new ODataError('InvalidSyntax', `The key predicate of ${segment.slice(0, 60)} is not closed with ')'`);
  const name = segment.slice(0, open);
  const inside = segment.slice(open + 1, -1);
  // `F()`: a function called without parameters
  if (inside.trim() === '') return { kind: 'name', name, key: { kind: 'named', values: new Map() } };
  return { kind: 'name', name, key: parseKeyPredicate(inside, name) };
}

/** `'WO-1'` or `PONumber='PO-1',LineNumber=2`: literals parsed by the query grammar (so `''` escapes a quote). */
export function parseKeyPredicate(text: string, set: string): KeyPredicate {
  const where = `the key of ${set}`;
  const parts = splitTopLevel(text);
  const literal = (source: string): LiteralValue => {
    const plain = plainKeyLiteral(source);
    if (plain !== undefined) return plain;
    let expr;
    try {
      expr = parseFilter(source.trim());
    } catch {
      throw new ODataError(
        'InvalidSyntax',
        `${where}: ${source.slice(0, 60)} is not an OData literal (strings in single quotes, a quote inside doubled)`,
      );
    }
    if (expr.kind !== 'literal')
      throw new ODataError('InvalidSyntax', `${where}: ${source.slice(0, 60)} is not a literal`);
    // no stored key holds U+0000 (writes refuse it), and PostgreSQL refuses it in any text parameter: a key with one
    // is the client's mistake before it reaches a lock or a query
    if (expr.literal.type === 'Edm.String' && expr.literal.value.includes('\u0000'))
      throw new ODataError('InvalidLiteral', `${where}: a key cannot contain the character U+0000`);
    return expr.literal;
  };
  if (parts.length === 1 && !/^\s*[A-Za-z_][A-Za-z0-9_]*\s*=/.test(parts[0]!))
    return { kind: 'single', value: literal(parts[0]!) };
  const values = new Map<string, LiteralValue>();
  for (const part of parts) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? '' : part.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new ODataError('InvalidSyntax', `${where}: expected Name=value, found ${part.slice(0, 60)}`);
    if (values.has(name)) throw new ODataError('InvalidSyntax', `${where}: ${name} is given twice`);
    values.set(name, literal(part.slice(eq + 1)));
  }
  return { kind: 'named', values };
}

/**
 * The two forms nearly every key takes, read without the parser (a key lookup would otherwise run it once per key
 * part): a whole single-quoted string without U+0000, and up to nine digits. They decode exactly as the parser
 * decodes them (a StringLiteral, an Int32 NumberLiteral); anything else, blanks around them included, goes to it.
 */
function plainKeyLiteral(source: string): LiteralValue | undefined {
  if (PLAIN_STRING.test(source) && !source.includes('\u0000'))
    return { type: 'Edm.String', value: decodeString(source) };
  if (PLAIN_INT32.test(source)) return { type: 'Edm.Int32', value: Number(source) };
  return undefined;
}

const PLAIN_STRING = /^'(?:[^']|'')*'$/;
const PLAIN_INT32 = /^\d{1,9}$/;

/** Splits on commas outside single-quoted strings. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'") quoted = !quoted;
    else if (c === ',' && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}
