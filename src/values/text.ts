// String semantics for the memory backend (SEMANTICS.md "strings", "length indexof substring", "tolower toupper
// trim", "matchesPattern"): strings compare ordinally by Unicode code point, positions and lengths count code
// points, case mapping is simple (one code point to one), trim removes Unicode White_Space only.
//
// JavaScript strings are UTF-16. A code point above U+FFFF is a surrogate pair (lead U+D800–U+DBFF, trail
// U+DC00–U+DFFF). A surrogate that is not part of a pair (a "lone" surrogate) counts as one code point of its own
// value, as `Array.from(s)` and `codePointAt` do. These functions run once per row: each fast path below says
// why it is exact.
import { compileMatcher, parsePattern, type Matcher } from './regex.js';

function isLead(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function isTrail(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}

/**
 * Ordinal comparison by code point. JavaScript's `<` compares UTF-16 code units, which puts U+E000–U+FFFF after
 * astral characters (their lead surrogates are U+D800–U+DBFF); this does not.
 */
export function compareCodePoints(a: string, b: string): -1 | 0 | 1 {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === n) return a.length < b.length ? -1 : 1;
  const ua = a.charCodeAt(i);
  const ub = b.charCodeAt(i);
  // Fast path: the units before i are equal, so a and b agree on every code point that ends before i. If
  // neither unit at i is a surrogate, each starts a BMP code point equal to the unit, and no code point of
  // the common prefix extends to i (a lead surrogate at i - 1 could only pair with a trail at i), so the
  // unit order is the code point order.
  if ((ua < 0xd800 || ua > 0xdfff) && (ub < 0xd800 || ub > 0xdfff)) return ua < ub ? -1 : 1;
  // Slow path: compare the code points that contain unit i. If unit i - 1 is a lead surrogate (the same in
  // both), the code point may start there: it is a pair in a string whose unit i is a trail, else the lone lead.
  if (i > 0 && isLead(a.charCodeAt(i - 1))) {
    const ca = a.codePointAt(i - 1)!;
    const cb = b.codePointAt(i - 1)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    // Both are the lone lead: the next code points start at i.
  }
  const ca = a.codePointAt(i)!;
  const cb = b.codePointAt(i)!;
  // Different first units at i give different code points (a pair's value is above U+FFFF, a single unit's not).
  return ca < cb ? -1 : 1;
}

/** The number of code points (a lone surrogate counts as one), as `Array.from(s).length` without the array. */
export function codePointLength(s: string): number {
  const n = s.length;
  let length = n;
  for (let i = 0; i < n; i++) {
    if (isLead(s.charCodeAt(i)) && i + 1 < n && isTrail(s.charCodeAt(i + 1))) {
      length--;
      i++;
    }
  }
  return length;
}

/** The number of code points in s's units [0, end). */
function codePointsBefore(s: string, end: number): number {
  let count = end;
  for (let i = 0; i < end - 1; i++) {
    if (isLead(s.charCodeAt(i)) && isTrail(s.charCodeAt(i + 1))) {
      count--;
      i++;
    }
  }
  return count;
}

/**
 * The 0-based code point position of the first occurrence of `search` in `s`, -1 when absent. A match must
 * start and end on code point boundaries: a lone trail surrogate does not match the second half of a pair.
 */
export function codePointIndexOf(s: string, search: string): number {
  const m = search.length;
  if (m === 0) return 0;
  let at = s.indexOf(search);
  while (at >= 0) {
    // A unit match splits a pair only if it starts on a trail preceded by a lead, or ends on a lead followed by
    // a trail. Matches without surrogates at their edges (the common case) pass both checks at once.
    const splitsStart = isTrail(s.charCodeAt(at)) && at > 0 && isLead(s.charCodeAt(at - 1));
    const splitsEnd = isLead(s.charCodeAt(at + m - 1)) && isTrail(s.charCodeAt(at + m));
    if (!splitsStart && !splitsEnd) return at === 0 ? 0 : codePointsBefore(s, at);
    at = s.indexOf(search, at + 1);
  }
  return -1;
}

/**
 * `substring(s, start[, length])` in code points, 0-based: a start beyond the end gives '', a length past the
 * end stops at the end, and a negative start or length gives null (SEMANTICS.md).
 */
export function codePointSubstring(s: string, start: number, length?: number): string | null {
  if (start < 0 || (length !== undefined && length < 0)) return null;
  const n = s.length;
  // Walk `start` code points from the beginning, then `length` more. A unit that is not a lead surrogate
  // followed by a trail is one code point, so surrogate-free text advances exactly one unit per code point.
  let from = 0;
  for (let k = 0; k < start && from < n; k++) {
    from += isLead(s.charCodeAt(from)) && isTrail(s.charCodeAt(from + 1)) ? 2 : 1;
  }
  if (from >= n) return '';
  if (length === undefined) return from === 0 ? s : s.slice(from);
  let to = from;
  for (let k = 0; k < length && to < n; k++) {
    to += isLead(s.charCodeAt(to)) && isTrail(s.charCodeAt(to + 1)) ? 2 : 1;
  }
  return from === 0 && to === n ? s : s.slice(from, to);
}

// ---------------------------------------------------------------------------------------------------------
// Simple case mapping.
//
// Rule: each code point is mapped with JavaScript's toLowerCase/toUpperCase applied to it alone, and kept when
// that gives anything but exactly one code point (toUpperSimple('ß') = 'ß'), except where UnicodeData.txt
// has a single-code-point simple mapping that differs from the full one (toLowerSimple('İ') = 'i'; see simpleLower).
//
// Fast path, for the whole string at once: JavaScript's full mapping of a string is the concatenation of the
// per-code-point full mappings, except for Final_Sigma (Σ lowercases to ς at the end of a word), the only
// context-dependent rule of the locale-independent mapping. No code point's full mapping is shorter in UTF-16
// units than the code point itself, and an expansion to several code points is always longer (only BMP
// characters expand, into at least two units); test/backends/memory/text.test.ts checks both facts over every
// code point of the running engine's Unicode version. So when the mapped text has the same length as the
// input (and, lowercasing, holds no Σ), every code point mapped to exactly one code point, and the native
// result is the simple mapping. ASCII-only text always takes this path.
//
// Slow path (the text holds ß, İ, a ligature, Greek with ypogegrammeni, or Σ when lowercasing): the code points
// that may expand (`mayExpand`, the same in Unicode 14–17; Σ always) are mapped alone, through a
// cache, and the runs between them natively under the same length check, which falls back to one code point at
// a time if a run still expands. So a stale `mayExpand` costs speed, never correctness.

const lowerCache = new Map<number, string>();
const upperCache = new Map<number, string>();

/**
 * Code points whose full mapping expands (SpecialCasing.txt) but whose simple mapping (UnicodeData.txt
 * fields 12–14) is another single code point: İ lowercases to i; the Greek letters with
 * ypogegrammeni uppercase to their prosgegrammeni capitals (ᾳ → ᾼ). Every other expanding code
 * point has no simple mapping and stays itself (ß, ŉ, ǰ, ligatures...). Checked against UnicodeData.txt over
 * every code point (these 26 are the only differences from the per-code-point rule); stable since Unicode 2.
 */
const simpleLower: ReadonlyMap<number, number> = new Map([[0x130, 0x69]]);
const simpleUpper: ReadonlyMap<number, number> = new Map([
  ...[0x1f80, 0x1f90, 0x1fa0].flatMap((base) =>
    Array.from({ length: 8 }, (_, i) => [base + i, base + 8 + i] as [number, number]),
  ),
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
]);

/** The simple mapping of one code point, cached. */
function mapOne(cp: number, upper: boolean): string {
  const cache = upper ? upperCache : lowerCache;
  let mapped = cache.get(cp);
  if (mapped === undefined) {
    const alone = String.fromCodePoint(cp);
    const full = upper ? alone.toUpperCase() : alone.toLowerCase();
    const simple = (upper ? simpleUpper : simpleLower).get(cp);
    mapped =
      simple !== undefined
        ? String.fromCodePoint(simple)
        : full.length === (full.codePointAt(0)! > 0xffff ? 2 : 1)
          ? full
          : alone;
    cache.set(cp, mapped);
  }
  return mapped;
}

/** Code points whose full mapping has several code points (İ lowercasing; the others uppercasing), and Σ. */
function mayExpand(cp: number, upper: boolean): boolean {
  if (!upper) return cp === 0x130 || cp === 0x3a3;
  return (
    cp === 0xdf ||
    cp === 0x149 ||
    cp === 0x1f0 ||
    cp === 0x390 ||
    cp === 0x3b0 ||
    cp === 0x587 ||
    (cp >= 0x1e96 && cp <= 0x1e9a) ||
    (cp >= 0x1f50 && cp <= 0x1ffc) ||
    (cp >= 0xfb00 && cp <= 0xfb17)
  );
}

/** A run without Σ: native when nothing in it expands, else one code point at a time. */
function mapRun(run: string, upper: boolean): string {
  const full = upper ? run.toUpperCase() : run.toLowerCase();
  if (full.length === run.length) return full;
  let out = '';
  for (const c of run)
    out += c.charCodeAt(0) < 0x80 ? (upper ? c.toUpperCase() : c.toLowerCase()) : mapOne(c.codePointAt(0)!, upper);
  return out;
}

function mapSlow(s: string, upper: boolean): string {
  let out = '';
  let runStart = 0;
  for (let i = 0; i < s.length; i++) {
    const unit = s.charCodeAt(i);
    // Every code point in mayExpand is in the BMP, so a unit comparison suffices (surrogates never match).
    if (unit < 0xdf || !mayExpand(unit, upper)) continue;
    out += mapRun(s.slice(runStart, i), upper) + mapOne(unit, upper);
    runStart = i + 1;
  }
  return out + mapRun(s.slice(runStart), upper);
}

/** Unicode simple lowercase mapping, one code point to one: 'ÀΣ' → 'àσ' (never a final ς), 'İ' → 'i'. */
export function toLowerSimple(s: string): string {
  const full = s.toLowerCase();
  if (full.length === s.length && !s.includes('Σ')) return full;
  return mapSlow(s, false);
}

/** Unicode simple uppercase mapping, one code point to one: 'é' → 'É', 'ß' stays 'ß', 'ᾳ' → 'ᾼ'. */
export function toUpperSimple(s: string): string {
  const full = s.toUpperCase();
  if (full.length === s.length) return full;
  return mapSlow(s, true);
}

// ---------------------------------------------------------------------------------------------------------

/** Unicode White_Space (PropList.txt). Not U+FEFF, which JavaScript's trim also removes; U+0085 is included. */
function isWhiteSpace(unit: number): boolean {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  if (unit < 0x85) return false;
  return (
    unit === 0x85 ||
    unit === 0xa0 ||
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000
  );
}

/** Removes leading and trailing Unicode White_Space characters and nothing else; returns s itself when unchanged. */
export function trimWhiteSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isWhiteSpace(s.charCodeAt(start))) start++;
  while (end > start && isWhiteSpace(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

// ---------------------------------------------------------------------------------------------------------
// matchesPattern

const matchers = new Map<string, Matcher | undefined>();
/**
 * Compiled patterns kept across queries (a literal pattern is compiled once per process, not per request). Each
 * matcher's DFA cache is at most 512 KiB (src/values/regex/match.ts), so this bounds them at 32 MiB.
 */
const MAX_MATCHERS = 64;

/**
 * The `matchesPattern` matcher for a pattern text: `test(s)` answers as `new RegExp(pattern, 'u').test(s)` (so it
 * works on code points: `.` matches 🚀 whole), in time linear in s's length whatever the pattern (no catastrophic
 * backtracking). Undefined when the pattern is not valid, or uses what a linear-time engine cannot run
 * (backreferences, lookaround; see parsePattern): matchesPattern is then null. One matcher serves every row.
 */
export function patternMatcher(pattern: string): Matcher | undefined {
  let matcher = matchers.get(pattern);
  if (matcher === undefined && !matchers.has(pattern)) {
    const parsed = parsePattern(pattern);
    matcher = parsed.ok ? compileMatcher(parsed.pattern) : undefined;
    if (matchers.size >= MAX_MATCHERS) matchers.clear();
    matchers.set(pattern, matcher);
  }
  return matcher;
}

// ---------------------------------------------------------------------------------------------------------
// $search: words, compared case-insensitively (docs/query-language.md "$search"). A word is a run of characters other
// than White_Space and the ASCII characters that are not letters or digits, so that `brand-new` is the words `brand`
// `new`, `O'Neil` is `o` `neil`, and every non-ASCII letter, digit or sign outside White_Space belongs to a word. The
// SQL dialects write the same separators as a regular-expression class (searchSeparators).

/** The characters between words, as a regular-expression character class body (`\x{..}` escapes, PCRE form). */
export const SEARCH_SEPARATORS_CLASS =
  '\\x{0}-\\x{2f}\\x{3a}-\\x{40}\\x{5b}-\\x{60}\\x{7b}-\\x{7f}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}';
const searchSeparators = new RegExp(
  `[${SEARCH_SEPARATORS_CLASS.replace(/\\x\{([0-9a-f]+)\}/g, (_, hex: string) => `\\u{${hex}}`)}]+`,
  'gu',
);

/**
 * A text as `$search` reads it: lower-cased (simple case mapping, as `tolower`), each run of separators one space, a
 * space before and after (`' brand new pump '`; two where the text starts or ends with separators), so that a term's
 * words are found in it as `' brand new '`. The SQL dialects compute the same text.
 */
export function searchText(s: string): string {
  return ` ${toLowerSimple(s).replace(searchSeparators, ' ')} `;
}

/** The words of a search term, lower-cased as searchText makes them (none for a term without letters or digits). */
export function searchWords(term: string): string[] {
  return searchText(term)
    .split(' ')
    .filter((word) => word.length > 0);
}
