// Sets of code points for the regular-expression engine (regex.ts): sorted, disjoint, non-adjacent inclusive ranges
// stored flat, `[lo0, hi0, lo1, hi1, ...]`. Every class of a pattern (a literal, `.`, `[...]`, `\d`, `\p{...}`)
// becomes one such set, so the matcher and the SQL translations share one exact meaning.

/** Sorted, disjoint, non-adjacent inclusive ranges `[lo0, hi0, lo1, hi1, ...]`. */
export type CodePointSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;

export const EMPTY_SET: CodePointSet = [];
export const ALL_CODE_POINTS: CodePointSet = [0, MAX_CODE_POINT];

/** The set of one code point. */
export function single(cp: number): CodePointSet {
  return [cp, cp];
}

/** A set from ranges in any order, overlapping or not. */
export function fromRanges(ranges: readonly (readonly [number, number])[]): CodePointSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    const last = out.length - 1;
    if (last > 0 && lo <= out[last]! + 1) {
      if (hi > out[last]!) out[last] = hi;
    } else {
      out.push(lo, hi);
    }
  }
  return out;
}

export function union(a: CodePointSet, b: CodePointSet): CodePointSet {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const pairs: [number, number][] = [];
  for (let i = 0; i < a.length; i += 2) pairs.push([a[i]!, a[i + 1]!]);
  for (let i = 0; i < b.length; i += 2) pairs.push([b[i]!, b[i + 1]!]);
  return fromRanges(pairs);
}

/** Every code point (U+0000–U+10FFFF) not in `a`. */
export function complement(a: CodePointSet): CodePointSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < a.length; i += 2) {
    if (a[i]! > next) out.push(next, a[i]! - 1);
    next = a[i + 1]! + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  return out;
}

export function intersect(a: CodePointSet, b: CodePointSet): CodePointSet {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]!, b[j]!);
    const hi = Math.min(a[i + 1]!, b[j + 1]!);
    if (lo <= hi) out.push(lo, hi);
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return out;
}

export function overlaps(a: CodePointSet, b: CodePointSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (Math.max(a[i]!, b[j]!) <= Math.min(a[i + 1]!, b[j + 1]!)) return true;
    if (a[i + 1]! < b[j + 1]!) i += 2;
    else j += 2;
  }
  return false;
}

/** Binary search: is `cp` in the set? */
export function has(set: CodePointSet, cp: number): boolean {
  let lo = 0;
  let hi = set.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < set[2 * mid]!) hi = mid - 1;
    else if (cp > set[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** The number of code points in the set. */
export function cardinality(set: CodePointSet): number {
  let n = 0;
  for (let i = 0; i < set.length; i += 2) n += set[i + 1]! - set[i]! + 1;
  return n;
}

export function sameSet(a: CodePointSet, b: CodePointSet): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

// ── The fixed classes of ECMA-262 with the u flag and without i ──────────────────────────────────────────

/** `\d` (CharacterClassEscape :: d, §22.2.2.9): 0–9. */
export const DIGIT: CodePointSet = [0x30, 0x39];

/** `\w` without the i flag (WordCharacters, §22.2.2.9.3): the 63 characters of `[0-9A-Z_a-z]`. */
export const WORD: CodePointSet = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];

/**
 * `\s` (§22.2.2.9): WhiteSpace (§12.2: TAB VT FF ZWNBSP and every Zs code point) and LineTerminator (§12.3: LF CR
 * LS PS). Zs has held exactly these since Unicode 6.3 (U+180E left it); test/values/regex.test.ts compares the set
 * with the running engine's `/\s/u` over every code point.
 */
export const SPACE: CodePointSet = fromRanges([
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
]);

/** LineTerminator (§12.3), what `.` excludes without the s flag (§22.2.2.9 CharacterSetMatcher for `.`). */
export const LINE_TERMINATORS: CodePointSet = fromRanges([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
]);

export const DOT: CodePointSet = complement(LINE_TERMINATORS);

/** Is `cp` one of `\w`'s characters (IsWordChar, §22.2.2.9.2, for `\b`)? */
export function isWordCodePoint(cp: number): boolean {
  return (
    cp < 0x80 && ((cp >= 0x61 && cp <= 0x7a) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x30 && cp <= 0x39) || cp === 0x5f)
  );
}

// ── Unicode property escapes, taken from the running engine ─────────────────────────────────────────────
//
// `\p{...}` means whatever the JavaScript engine's Unicode tables say (its Unicode version), and matchesPattern is
// defined as that engine's RegExp. So the set is read from RegExps that hold only the property escape, run over
// every code point once: exact by construction. The text between the braces is restricted to [A-Za-z0-9_=] before
// it reaches a RegExp, so it can only ever be a property name. Code points are taken in blocks of 1,024, kept as
// strings once made (4.3 MB, made on the first use of any property, in about 70 ms): a block wholly in or out of
// the property is one scan, a mixed one is read run by run. A property then costs 2–20 ms, once per process (the
// sets are kept: there are finitely many valid property names).

const PROPERTY_TEXT = /^[A-Za-z0-9_]+(=[A-Za-z0-9_]+)?$/;
const propertySets = new Map<string, CodePointSet>();
const BLOCK = 1024;
const blocks: string[] = [];

/** Whether `\p{text}` is a valid property escape with the u flag (in this engine). */
export function isPropertyName(text: string): boolean {
  if (!PROPERTY_TEXT.test(text)) return false;
  try {
    new RegExp(`\\p{${text}}`, 'u');
    return true;
  } catch {
    return false;
  }
}

/** The consecutive code points of a block as a string (no block mixes surrogates with others, none is made of them). */
function blockText(block: number): string {
  let text = blocks[block];
  if (text === undefined) {
    const from = block * BLOCK;
    const width = from > 0xffff ? 2 : 1;
    const units = new Uint16Array(BLOCK * width);
    for (let cp = from, k = 0; cp < from + BLOCK; cp++) {
      if (width === 1) units[k++] = cp;
      else {
        units[k++] = 0xd800 + ((cp - 0x10000) >> 10);
        units[k++] = 0xdc00 + ((cp - 0x10000) & 0x3ff);
      }
    }
    text = String.fromCharCode(...units);
    blocks[block] = text;
  }
  return text;
}

/** The code points of `\p{text}` (text must pass isPropertyName). Computed once per process. */
export function propertySet(text: string): CodePointSet {
  const known = propertySets.get(text);
  if (known !== undefined) return known;
  const all = new RegExp(`^\\p{${text}}*$`, 'u');
  const none = new RegExp(`^\\P{${text}}*$`, 'u');
  const run = new RegExp(`\\p{${text}}+`, 'gu');
  const one = new RegExp(`^\\p{${text}}$`, 'u');
  const out: number[] = [];
  const add = (lo: number, hi: number): void => {
    if (out.length > 0 && out[out.length - 1]! + 1 === lo) out[out.length - 1] = hi;
    else out.push(lo, hi);
  };
  for (let block = 0; block < 0x110000 / BLOCK; block++) {
    const from = block * BLOCK;
    if (from >= 0xd800 && from < 0xe000) {
      // lone surrogates, one at a time: in a string a lead and a trail would pair up
      for (let cp = from; cp < from + BLOCK; cp++) if (one.test(String.fromCharCode(cp))) add(cp, cp);
      continue;
    }
    const text = blockText(block);
    if (none.test(text)) continue;
    if (all.test(text)) {
      add(from, from + BLOCK - 1);
      continue;
    }
    const width = from > 0xffff ? 2 : 1;
    run.lastIndex = 0;
    for (let m = run.exec(text); m !== null; m = run.exec(text)) {
      add(from + m.index / width, from + (m.index + m[0].length) / width - 1);
    }
  }
  propertySets.set(text, out);
  return out;
}
