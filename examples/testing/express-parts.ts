// A hand-written OData endpoint in Express: `GET /odata/Parts` over an array, its filter evaluated by a small
// interpreter of the engine's bound query (comparisons, `in`, `and`, `or`, `not`, `contains`, `startswith`,
// `endswith`, `tolower`, `toupper`, `length` over String, Int32 and Boolean properties), with `$orderby`, `$select`,
// `$top`, `$skip` and `$count`; a mistake in the query is the engine's 400. checkAgainstOracle tests it over HTTP
// (test/testing/examples.test.ts, docs/testing.md).
import express, { type Express } from 'express';
import {
  isODataError,
  parseQuery,
  toODataErrorBody,
  validateQuery,
  type BoundExpr,
  type BoundQuery,
} from '../../src/index.js';
import { Part, type PartRow } from './parts.js';

type Value = string | number | boolean | null;

/**
 * Strings in OData order, code point by code point. JavaScript's `<` compares UTF-16 code units, which puts an
 * astral character (a surrogate pair, 0xD800…) before '豈' (U+F900): the kit reported that in this example's first
 * version, as `$orderby=Description` over '豈' and '𐀀' (U+10000).
 */
function compareStrings(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/**
 * The characters whose simple mapping (UnicodeData.txt) is another single character although the full one expands:
 * 'İ' lowercases to 'i', and the Greek letters with ypogegrammeni uppercase to their prosgegrammeni capitals.
 */
const simpleLower = new Map([[0x130, 0x69]]);
const simpleUpper = new Map([
  ...[0x1f80, 0x1f90, 0x1fa0].flatMap((base) => Array.from({ length: 8 }, (_, i) => [base + i, base + 8 + i])),
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
] as [number, number][]);

/**
 * OData's simple case mapping: each character mapped alone, kept when its mapping is more than one character.
 * JavaScript's own is the full mapping (`'ß'.toUpperCase()` is 'SS'), and `'İ'.toLowerCase()` is 'i' with a
 * combining dot: the kit reported both, as `toupper(PartID) eq PartID` over 'ß' and `endswith(PartID,tolower(PartID))`
 * over 'İ'.
 */
function simpleCase(text: string, to: 'lower' | 'upper'): string {
  let out = '';
  for (const c of text) {
    const simple = (to === 'lower' ? simpleLower : simpleUpper).get(c.codePointAt(0)!);
    const mapped = to === 'lower' ? c.toLowerCase() : c.toUpperCase();
    out += simple !== undefined ? String.fromCodePoint(simple) : [...mapped].length === 1 ? mapped : c;
  }
  return out;
}

function compare(a: Value, b: Value): number {
  if (typeof a === 'string' && typeof b === 'string') return compareStrings(a, b);
  return Number(a) - Number(b);
}

/** The value of an expression for a row; null is unknown (and a filter keeps only rows where it is true). */
function evaluate(e: BoundExpr, row: PartRow): Value {
  switch (e.kind) {
    case 'property':
      return row[e.property.name as keyof PartRow];
    case 'literal':
      return e.value.type === 'null' ? null : (e.value.value as Value);
    case 'comparison': {
      const [l, r] = [evaluate(e.left, row), evaluate(e.right, row)];
      if (e.operator === 'eq') return l === null || r === null ? l === r : compare(l, r) === 0;
      if (e.operator === 'ne') return l === null || r === null ? l !== r : compare(l, r) !== 0;
      // an ordering comparison with null is false in OData (never unknown)
      if (l === null || r === null) return false;
      const d = compare(l, r);
      return { gt: d > 0, ge: d >= 0, lt: d < 0, le: d <= 0 }[e.operator];
    }
    case 'logical': {
      const [l, r] = [evaluate(e.left, row), evaluate(e.right, row)];
      if (e.operator === 'and') return l === false || r === false ? false : l === null || r === null ? null : true;
      return l === true || r === true ? true : l === null || r === null ? null : false;
    }
    case 'not': {
      const v = evaluate(e.operand, row);
      return v === null ? null : !v;
    }
    case 'in': {
      const l = evaluate(e.left, row);
      return l !== null && e.items.some((item) => compare(l, evaluate(item, row)) === 0);
    }
    case 'call': {
      const args = e.args.map((arg) => evaluate(arg, row));
      if (args.some((a) => a === null)) return null;
      const [a, b] = args as string[];
      switch (e.name) {
        case 'contains':
          return a!.includes(b!);
        case 'startswith':
          return a!.startsWith(b!);
        case 'endswith':
          return a!.endsWith(b!);
        case 'tolower':
          return simpleCase(a!, 'lower');
        case 'toupper':
          return simpleCase(a!, 'upper');
        case 'length':
          return [...a!].length;
        default:
          break;
      }
      break;
    }
    default:
      break;
  }
  throw new Error(`not supported by this endpoint: ${e.kind}`);
}

function answer(query: BoundQuery, parts: readonly PartRow[]): Record<string, unknown> {
  const kept = query.filter === undefined ? [...parts] : parts.filter((row) => evaluate(query.filter!, row) === true);
  kept.sort((a, b) => {
    for (const item of query.orderBy) {
      const [x, y] = [evaluate(item.expr, a), evaluate(item.expr, b)];
      // nulls first when ascending
      const d = x === null || y === null ? (x === null ? (y === null ? 0 : -1) : 1) : compare(x, y);
      if (d !== 0) return item.direction === 'asc' ? d : -d;
    }
    return 0;
  });
  const skip = query.skip ?? 0;
  const page = kept.slice(skip, query.top === undefined ? undefined : skip + query.top);
  return {
    ...(query.count ? { '@odata.count': kept.length } : {}),
    value: page.map((row) => Object.fromEntries(query.select.map((p) => [p.name, row[p.name as keyof PartRow]]))),
  };
}

/** The app: `parts` is the array it serves (replace its contents to change what it holds). */
export function partsApp(parts: PartRow[]): Express {
  const app = express();
  app.get('/odata/Parts', (request, response) => {
    const queryText = request.originalUrl.split('?')[1] ?? '';
    try {
      response.json(answer(validateQuery(parseQuery(queryText), Part), parts));
    } catch (error) {
      if (!isODataError(error)) throw error;
      response.status(error.status).json(toODataErrorBody(error));
    }
  });
  return app;
}
