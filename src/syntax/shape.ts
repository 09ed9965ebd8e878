// The shape of a query string: the query with the string and number literals of its `$filter` cut out. Requests that
// differ only in those values (`PONumber eq 'PO-1'`, `PONumber eq 'PO-2'`) have one shape, and a service keeps one
// plan per shape (src/service/service.ts), taking the values as parameters (src/syntax/lifted.ts).
//
// The literals are found by a scan of the text, without the parser: that is the point, since the scan is what a
// request pays when the plan is cached. The scan takes only literals whose extent the lexer (lexer.ts) cannot read
// otherwise: a single-quoted string that starts after a space, `(` or `,` (not `duration'…'`, `binary'…'`, an
// enumeration member or a string glued to a name), and an unsigned number between such a delimiter and a space, `)`,
// `,` or the end (not a date, a time, a Guid, or a number glued to a name or sign). Two texts of one shape then lex to
// the same tokens but for the values of those literals. Where the scan and the parser still disagree about a text
// (a quote inside a double-quoted JSON string, say), `liftLiterals` finds that the literals it was given are not the
// parser's, and the query is served without a shape.
import { ODataError } from '../errors.js';
import type { Expr, LiteralValue } from './ast.js';
import { liftLiteral, type Lifting } from './lifted.js';
import { decodeNumber, decodeString } from './literals.js';
import { percentDecode, splitQueryString, systemOptionName, type QueryOptions } from './query-string.js';

/** A query string's shape, and the literals lifted out of its `$filter`. */
export interface QueryShape {
  /** Equal for two query strings exactly when they differ only in the values of their lifted literals. */
  readonly key: string;
  /** The lifted literals, in the order they are written; each with its extent in the decoded `$filter` value. */
  readonly literals: readonly ShapeLiteral[];
}

export interface ShapeLiteral {
  /** The literal as written (`'O''Neil'`, `12.50`). */
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** Its value, decoded as the parser decodes it. */
  readonly value: LiteralValue;
}

const BEFORE = new Set([' ', '(', ',']);
const AFTER = new Set([' ', ')', ',']);
const NUMBER = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const LITERAL_CONTEXT = { target: '$filter' };

/**
 * The shape of a query string, or undefined when it has none worth keeping: no `$filter`, no literal to lift in it,
 * parameter aliases (their values are options of their own), a repeated `$filter`, or text that does not decode or
 * scan (the parser reports what is wrong with it).
 */
export function queryShape(query: string): QueryShape | undefined {
  let options;
  try {
    options = splitQueryString(query);
  } catch (error) {
    if (error instanceof ODataError) return undefined;
    throw error;
  }
  const others: string[] = [];
  let filter: string | undefined;
  for (const { name, value } of options) {
    if (name.startsWith('@')) return undefined;
    if (systemOptionName(name) === '$filter') {
      if (filter !== undefined || value === undefined) return undefined;
      filter = value;
      // (the option's name as written stays in the key: `$filter` and `filter` are one option, but need not share)
      others.push(`${name}=`);
    } else others.push(value === undefined ? name : `${name}=${value}`);
  }
  if (filter === undefined) return undefined;
  const scanned = scanLiterals(filter);
  if (scanned === undefined || scanned.length === 0) return undefined;
  // the text between the literals, each literal's type, and the other options: JSON, so no text can pass for another
  const between: string[] = [];
  const literals: ShapeLiteral[] = [];
  let at = 0;
  for (const { start, end } of scanned) {
    const text = filter.slice(start, end);
    let value: LiteralValue;
    if (text.startsWith("'")) value = { type: 'Edm.String', value: decodeString(text) };
    else {
      try {
        value = decodeNumber(text, start, LITERAL_CONTEXT);
      } catch (error) {
        if (error instanceof ODataError) return undefined; // out of range: the parser says so
        throw error;
      }
    }
    between.push(filter.slice(at, start), value.type);
    literals.push({ text, start, end, value });
    at = end;
  }
  between.push(filter.slice(at));
  return { key: JSON.stringify([others, between]), literals };
}

/** The extents of the literals to lift in a decoded `$filter` value; undefined where a quote is not closed. */
function scanLiterals(text: string): { start: number; end: number }[] | undefined {
  const found: { start: number; end: number }[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const delimited = i === 0 || BEFORE.has(text[i - 1]!);
    if (c === "'") {
      const end = closingQuote(text, i);
      if (end === undefined) return undefined;
      if (delimited) found.push({ start: i, end });
      i = end;
    } else if (c === '"') {
      // a JSON string (`Name in ["a","b"]`): skipped whole, so that a quote inside it is not taken for a literal
      const end = closingDoubleQuote(text, i);
      if (end === undefined) return undefined;
      i = end;
    } else if (c >= '0' && c <= '9' && delimited) {
      NUMBER.lastIndex = i;
      const end = i + NUMBER.exec(text)![0].length;
      if (end === text.length || AFTER.has(text[end]!)) found.push({ start: i, end });
      // (a number glued to something else is left in the shape's text, and so is the rest of that token)
      i = end;
    } else i++;
  }
  return found;
}

/** The end of the single-quoted string starting at `start` (`''` is a quote inside it). */
function closingQuote(text: string, start: number): number | undefined {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf("'", at);
    if (quote === -1) return undefined;
    if (text[quote + 1] !== "'") return quote + 1;
    at = quote + 2;
  }
}

function closingDoubleQuote(text: string, start: number): number | undefined {
  for (let at = start + 1; at < text.length; at++) {
    if (text[at] === '\\') at++;
    else if (text[at] === '"') return at + 1;
  }
  return undefined;
}

/**
 * The parsed options with the shape's literals lifted (what the plan learns about them goes to `lifting`), or
 * undefined when the parser's literals are not the ones the scan found: then the query is served without its shape.
 */
export function liftLiterals(options: QueryOptions, shape: QueryShape, lifting: Lifting): QueryOptions | undefined {
  const { filter } = options;
  if (filter === undefined) return undefined;
  const nodes = new Map<number, Extract<Expr, { kind: 'literal' }>>();
  collectLiterals(filter, nodes);
  const lifted = new Map<object, Expr>();
  for (const [index, literal] of shape.literals.entries()) {
    const node = nodes.get(literal.start);
    if (node === undefined || node.span.end !== literal.end || node.literal.type !== literal.value.type)
      return undefined;
    lifted.set(node, { ...node, literal: liftLiteral(node.literal, index, lifting) });
  }
  return { ...options, filter: replaceNodes(filter, lifted) as Expr };
}

/** Every literal node of a syntax tree, by where it starts (alias values are not part of it). */
function collectLiterals(node: unknown, into: Map<number, Extract<Expr, { kind: 'literal' }>>): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) collectLiterals(item, into);
    return;
  }
  const record = node as Record<string, unknown>;
  if (record['kind'] === 'literal') {
    const literal = record as unknown as Extract<Expr, { kind: 'literal' }>;
    into.set(literal.span.start, literal);
    return;
  }
  if (record['kind'] === 'alias') return;
  for (const [member, value] of Object.entries(record)) if (member !== 'span') collectLiterals(value, into);
}

/** A copy of a syntax tree with some of its nodes replaced; the nodes on no path to them are shared. */
function replaceNodes(node: unknown, replacements: ReadonlyMap<object, Expr>): unknown {
  if (typeof node !== 'object' || node === null) return node;
  const replacement = replacements.get(node);
  if (replacement !== undefined) return replacement;
  if (Array.isArray(node)) {
    let changed = false;
    const items = node.map((item) => {
      const next = replaceNodes(item, replacements);
      if (next !== item) changed = true;
      return next;
    });
    return changed ? items : node;
  }
  const record = node as Record<string, unknown>;
  if (record['kind'] === 'alias') return node;
  let copy: Record<string, unknown> | undefined;
  for (const [member, value] of Object.entries(record)) {
    if (member === 'span') continue;
    const next = replaceNodes(value, replacements);
    if (next !== value) (copy ??= { ...record })[member] = next;
  }
  return copy ?? node;
}
