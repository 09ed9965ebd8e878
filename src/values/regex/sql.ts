// Parsed patterns (parse.ts) as the regular expressions of PostgreSQL (`~`, Advanced Regular Expressions) and
// MariaDB/MySQL (`REGEXP`, PCRE2 in MariaDB), with the same answers as the matcher (match.ts) on every value the
// database can store. Nothing is left to the database's own meaning of a construct: every class is written out as
// code point ranges (`\d` is [0-9] whatever the locale), `.` as the ranges without the line terminators, `\b` as
// lookaround on [0-9A-Z_a-z], and every character other than an ASCII letter or digit as an escape.
import { fromRanges, has, intersect, union, WORD, type CodePointSet } from './charset.js';
import { matchesEmptyInsidePair, type Pattern, type RegexNode } from './parse.js';

export type Translation = string | { readonly unsupported: string };

// ── A simplified tree: groups dissolved, sets cut to what the database can store ──

type Node =
  | { readonly kind: 'never' }
  | { readonly kind: 'empty' }
  | { readonly kind: 'set'; readonly set: CodePointSet; readonly at: number }
  | { readonly kind: 'sequence'; readonly items: readonly Node[] }
  | { readonly kind: 'alternation'; readonly options: readonly Node[] }
  | { readonly kind: 'repeat'; readonly body: Node; readonly min: number; readonly max: number }
  | { readonly kind: 'assertion'; readonly assertion: 'start' | 'end' | 'wordBoundary' | 'notWordBoundary' };

const NEVER: Node = { kind: 'never' };
const EMPTY: Node = { kind: 'empty' };

/**
 * Text the database can store: PostgreSQL text holds no U+0000, and neither database holds a surrogate code point
 * (UTF-8 cannot encode one). A code point outside the domain can never be read, so a class loses it, and a literal
 * of one never matches.
 */
const POSTGRES_DOMAIN = fromRanges([
  [0x1, 0xd7ff],
  [0xe000, 0x10ffff],
]);
const MYSQL_DOMAIN = fromRanges([
  [0x0, 0xd7ff],
  [0xe000, 0x10ffff],
]);

function simplify(node: RegexNode, domain: CodePointSet): Node {
  switch (node.kind) {
    case 'empty':
      return EMPTY;
    case 'assertion':
      return { kind: 'assertion', assertion: node.assertion };
    case 'set': {
      const set = intersect(node.set, domain);
      return set.length === 0 ? NEVER : { kind: 'set', set, at: node.start };
    }
    case 'group':
      return simplify(node.body, domain);
    case 'sequence': {
      const items: Node[] = [];
      for (const item of node.items) {
        const s = simplify(item, domain);
        if (s.kind === 'never') return NEVER;
        if (s.kind === 'empty') continue;
        if (s.kind === 'sequence') items.push(...s.items);
        else items.push(s);
      }
      return items.length === 0 ? EMPTY : items.length === 1 ? items[0]! : { kind: 'sequence', items };
    }
    case 'alternation': {
      const options: Node[] = [];
      for (const option of node.options) {
        const s = simplify(option, domain);
        if (s.kind === 'never') continue;
        if (s.kind === 'alternation') options.push(...s.options);
        else options.push(s);
      }
      if (options.length === 0) return NEVER;
      if (options.length === 1) return options[0]!;
      // a|b|[c-e] is one class: the same strings, and one way to match them instead of several
      if (options.every((o) => o.kind === 'set')) {
        const sets = options as { set: CodePointSet; at: number }[];
        return { kind: 'set', set: sets.reduce<CodePointSet>((u, o) => union(u, o.set), []), at: sets[0]!.at };
      }
      return { kind: 'alternation', options };
    }
    case 'repeat': {
      const body = simplify(node.body, domain);
      if (body.kind === 'never') return node.min === 0 ? EMPTY : NEVER;
      if (body.kind === 'empty' || node.max === 0) return EMPTY;
      if (node.min === 1 && node.max === 1) return body;
      return { kind: 'repeat', body, min: node.min, max: node.max };
    }
  }
}

/** Whether the node can match the empty string along a path that checks no assertion. */
function skippable(node: Node): boolean {
  switch (node.kind) {
    case 'empty':
      return true;
    case 'never':
    case 'set':
    case 'assertion':
      return false;
    case 'sequence':
      return node.items.every(skippable);
    case 'alternation':
      return node.options.some(skippable);
    case 'repeat':
      return node.min === 0 || skippable(node.body);
  }
}

/**
 * `test` asks whether a match exists anywhere, so in each alternative a leading or trailing term that can match
 * nothing (checking no assertion) can go: if T·R matches from i, R matches from where T ended; if R matches from j,
 * T·R matches from j with T empty. `.*foo.*` is `foo`. Likewise a leading or trailing repetition needs only its
 * minimum: if X{k}·R matches from i (k > n), X{n}·R matches from where the first k − n iterations ended; and a
 * match of R·X{k} begins with one of R·X{n}. `[A-Z]{2}-\d+` is `[A-Z]{2}-\d`. This spares a backtracking engine
 * work it would do for nothing: PCRE2 would try `.*.*.*.*.*.*.*.*\0` at every position, `\0` alone is one scan.
 */
function trimEnds(node: Node): Node {
  if (node.kind === 'alternation') {
    const options = node.options.map(trimEnds);
    return options.some((o) => o.kind === 'empty') ? EMPTY : { kind: 'alternation', options };
  }
  const items = node.kind === 'sequence' ? [...node.items] : [node];
  while (items.length > 0 && skippable(items[0]!)) items.shift();
  while (items.length > 0 && skippable(items[items.length - 1]!)) items.pop();
  const least = (n: Node): Node => (n.kind !== 'repeat' ? n : n.min === 1 ? n.body : { ...n, max: n.min });
  if (items.length > 0) items[0] = least(items[0]!);
  if (items.length > 0) items[items.length - 1] = least(items[items.length - 1]!);
  return items.length === 0 ? EMPTY : items.length === 1 ? items[0]! : { kind: 'sequence', items };
}

// ── Writing the regular expression ──

interface Spelling {
  /** One code point, outside or inside a bracket expression. */
  char(cp: number): string;
  readonly start: string;
  readonly end: string;
  readonly never: string;
  /** The largest count `{n,m}` takes. */
  readonly maxCount: number;
}

const isAsciiAlphanumeric = (cp: number): boolean =>
  (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a);

/**
 * PostgreSQL ARE: `\uXXXX` and `\UXXXXXXXX` always take exactly 4 and 8 hex digits (unlike `\x`, which takes as many
 * as follow), inside brackets too. `^` and `$` are anchors at the ends of the string only (no newline-sensitive
 * option is ever set), and `~` is case-sensitive under every deterministic collation.
 */
const POSTGRES: Spelling = {
  char: (cp) =>
    isAsciiAlphanumeric(cp)
      ? String.fromCharCode(cp)
      : cp > 0xffff
        ? `\\U${cp.toString(16).padStart(8, '0')}`
        : `\\u${cp.toString(16).padStart(4, '0')}`,
  start: '^',
  end: '$',
  // only U+0000, which PostgreSQL text cannot hold
  never: '[^\\u0001-\\U0010ffff]',
  maxCount: 255, // RE_DUP_MAX
};

/**
 * PCRE2 (MariaDB): `\x{...}` for every non-alphanumeric code point, so no option set by default_regex_flags
 * (EXTENDED ignores white space, MULTILINE changes `^` and `$`, DOTALL `.`) can change the meaning: `\A` and `\z`
 * anchor at the very ends (`$` would also match before a final newline), no `.` is written, and `(?-i)` keeps
 * the match case-sensitive whatever the operands' collation.
 */
const MYSQL: Spelling = {
  char: (cp) => (isAsciiAlphanumeric(cp) ? String.fromCharCode(cp) : `\\x{${cp.toString(16)}}`),
  start: '\\A',
  end: '\\z',
  never: '(?!)',
  maxCount: 65535,
};

function bracket(set: CodePointSet, spell: Spelling): string {
  if (set.length === 2 && set[0] === set[1]) return spell.char(set[0]!);
  let out = '[';
  for (let i = 0; i < set.length; i += 2) {
    const lo = set[i]!;
    const hi = set[i + 1]!;
    out +=
      lo === hi
        ? spell.char(lo)
        : hi === lo + 1
          ? spell.char(lo) + spell.char(hi)
          : `${spell.char(lo)}-${spell.char(hi)}`;
  }
  return `${out}]`;
}

/** `\b` (§22.2.2.6 IsWordChar on both sides): a word character on exactly one side. */
function boundary(spell: Spelling, negated: boolean): string {
  const w = bracket(WORD, spell);
  return negated ? `(?:(?<=${w})(?=${w})|(?<!${w})(?!${w}))` : `(?:(?<=${w})(?!${w})|(?<!${w})(?=${w}))`;
}

function write(node: Node, spell: Spelling): string {
  switch (node.kind) {
    case 'never':
      return spell.never;
    case 'empty':
      return '(?:)';
    case 'set':
      return bracket(node.set, spell);
    case 'assertion':
      return node.assertion === 'start'
        ? spell.start
        : node.assertion === 'end'
          ? spell.end
          : boundary(spell, node.assertion === 'notWordBoundary');
    case 'sequence':
      return node.items
        .map((item) => (item.kind === 'alternation' ? `(?:${write(item, spell)})` : write(item, spell)))
        .join('');
    case 'alternation':
      return node.options.map((option) => write(option, spell)).join('|');
    case 'repeat': {
      const body = node.body.kind === 'set' ? write(node.body, spell) : `(?:${write(node.body, spell)})`;
      return repeat(body, node.min, node.max, spell.maxCount);
    }
  }
}

/** `body{min,max}` with counts no larger than `limit`: long counts are nested (a{600} is (?:a{255}){2}a{90}). */
function repeat(body: string, min: number, max: number, limit: number): string {
  if (max === Infinity) {
    if (min === 0) return `${body}*`;
    if (min === 1) return `${body}+`;
    return `${exactly(body, min, limit)}${body}*`;
  }
  if (min === 0 && max === 1) return `${body}?`;
  if (max <= limit) return min === max ? `${body}{${min}}` : `${body}{${min},${max}}`;
  if (min === max) return exactly(body, min, limit);
  return `${min > 0 ? exactly(body, min, limit) : ''}${upTo(body, max - min, limit)}`;
}

function exactly(body: string, n: number, limit: number): string {
  if (n <= limit) return n === 1 ? body : `${body}{${n}}`;
  const rest = n % limit;
  return `${exactly(`(?:${body}{${limit}})`, Math.floor(n / limit), limit)}${rest === 0 ? '' : exactly(body, rest, limit)}`;
}

/** Between 0 and n copies: q groups of {0,limit} and one {0,r} sum to every count from 0 to n exactly. */
function upTo(body: string, n: number, limit: number): string {
  if (n <= limit) return n === 1 ? `${body}?` : `${body}{0,${n}}`;
  const rest = n % limit;
  return `${exactly(`(?:${body}{0,${limit}})`, Math.floor(n / limit), limit)}${rest === 0 ? '' : upTo(body, rest, limit)}`;
}

// ── PostgreSQL ──

/**
 * The pattern as a PostgreSQL regular expression for `(s COLLATE "C") ~ pattern` (no flags). PostgreSQL's engine
 * (Henry Spencer's, a DFA for a match without captures) takes no exponential time on any of these, so every
 * pattern the parser accepts translates. The database must use the UTF8 encoding (`\u` escapes above U+007F need it).
 */
export function toPostgresRegex(pattern: Pattern): Translation {
  return withPairQuirk(pattern, write(trimEnds(simplify(pattern.root, POSTGRES_DOMAIN)), POSTGRES), POSTGRES);
}

/** V8 also matches such a pattern in every string with an astral character (matchesEmptyInsidePair). */
function withPairQuirk(pattern: Pattern, regex: string, spell: Spelling): string {
  return matchesEmptyInsidePair(pattern.root) ? `${regex}|${bracket([0x10000, 0x10ffff], spell)}` : regex;
}

// ── MariaDB / MySQL ──

/** Most paths a backtracking engine may be following at once, at one start position, on any text. */
export const MAX_BACKTRACKING_PATHS = 16;
const MAX_POSITIONS = 1000;
const MAX_ANALYSIS_WORK = 4_000_000;

/**
 * The pattern as a MariaDB regular expression for `s REGEXP pattern`, or why it cannot be one. PCRE2 backtracks:
 * `^(a|a?)+$` or `^.*.*.*x` takes time exponential or polynomial in the value's length, and PCRE2 then stops at
 * its match limit and MariaDB answers false with a warning (1139, "match limit exceeded"): a wrong answer, not
 * an error (measured on MariaDB 10.11: test/values/regex-sql.test.ts). So a pattern is translated only if at every
 * start position PCRE2 can be exploring at most MAX_BACKTRACKING_PATHS partial matches at once
 * (backtrackingPaths): its work per start position is then at most that many times the value's length, and the
 * unanchored search, which tries each start position, at most that many times the square of the length.
 */
export function toMysqlRegex(pattern: Pattern): Translation {
  const node = trimEnds(simplify(pattern.root, MYSQL_DOMAIN));
  const paths = backtrackingPaths(node);
  if (typeof paths !== 'number') return paths;
  const size = compiledSize(node, MYSQL);
  if (size > MAX_MYSQL_COMPILED_SIZE) {
    return {
      unsupported: `matchesPattern with a pattern too large for MariaDB's regex compiler (its counted repetitions written out come to about ${size} characters; at most ${MAX_MYSQL_COMPILED_SIZE})`,
    };
  }
  return `(?-i)${withPairQuirk(pattern, write(node, MYSQL), MYSQL)}`;
}

/**
 * PCRE2 compiles a group repeated `{m,n}` as n copies of it (a class takes its count as an operand), and refuses a
 * pattern whose compiled form passes 64K units ("regular expression is too large"). Measured on MariaDB 10.11: a
 * Unicode class of 5,881 characters of text fits 18 copies and fails at 24; the limit below stays under both.
 */
const MAX_MYSQL_COMPILED_SIZE = 100_000;

/** The pattern's text with every counted group repetition written out: what PCRE2's compiled size follows. */
function compiledSize(node: Node, spell: Spelling): number {
  switch (node.kind) {
    case 'sequence':
      return node.items.reduce((total, item) => total + compiledSize(item, spell) + 4, 0);
    case 'alternation':
      return node.options.reduce((total, option) => total + compiledSize(option, spell) + 1, 0);
    case 'repeat': {
      const body = compiledSize(node.body, spell) + 4;
      if (node.body.kind === 'set') return body + 8;
      const copies = node.max === Infinity ? Math.max(node.min, 1) : Math.max(node.max, 1);
      return body * copies + 8;
    }
    default:
      return write(node, spell).length;
  }
}

// ── How many paths a backtracking engine follows ──
//
// The pattern as a Glushkov automaton (one state per class occurrence, counted repetitions written out), whose
// edges carry how many distinct ways lead from one class to the next without reading a character: (a*)* reaches
// a from a two ways (the inner loop, or out and around the outer one). PCRE2 ends an iteration that matched
// nothing (as ECMAScript does), so the ways are counted without going around an empty loop. Assertions count as
// always true, which can only add paths. Then the subset construction, with for each state the number of paths
// reaching it: the largest total over every text is how many partial matches a backtracking engine may have to
// try at one start position. Patterns whose ambiguity grows with the length of the text (exponential: (a|a?)+;
// polynomial: a*a*, ^\d+\.?\d*$) make the count grow without bound and are refused when it passes the limit.

interface Glushkov {
  readonly sets: CodePointSet[];
  readonly at: number[];
  /** follow[p]: the next positions q and the number of ways from p to q (at most 2: more is never needed). */
  readonly follow: Map<number, number>[];
}

interface Info {
  /** Ways to match the empty string (0, 1 or 2+). */
  readonly empty: number;
  readonly first: ReadonlyMap<number, number>;
  readonly last: ReadonlyMap<number, number>;
}

class TooComplex {
  constructor(readonly reason: string) {}
}

const cap = (n: number): number => Math.min(n, MAX_BACKTRACKING_PATHS + 1);

function addInto(target: Map<number, number>, source: ReadonlyMap<number, number>, times: number): void {
  if (times === 0) return;
  for (const [p, n] of source) target.set(p, cap((target.get(p) ?? 0) + n * times));
}

function scaled(source: ReadonlyMap<number, number>, times: number): Map<number, number> {
  const out = new Map<number, number>();
  addInto(out, source, times);
  return out;
}

function glushkov(node: Node): { automaton: Glushkov; root: Info } {
  const automaton: Glushkov = { sets: [], at: [], follow: [] };
  const link = (from: ReadonlyMap<number, number>, to: ReadonlyMap<number, number>): void => {
    for (const [p, m] of from) addInto(automaton.follow[p]!, to, m);
  };
  const concat = (a: Info, b: Info): Info => {
    link(a.last, b.first);
    const first = scaled(a.first, 1);
    addInto(first, b.first, a.empty);
    const last = scaled(b.last, 1);
    addInto(last, a.last, b.empty);
    return { empty: cap(a.empty * b.empty), first, last };
  };
  const optional = (body: Info): Info => ({ empty: cap(1 + body.empty), first: body.first, last: body.last });
  const build = (n: Node): Info => {
    switch (n.kind) {
      case 'never':
        return { empty: 0, first: new Map(), last: new Map() };
      case 'empty':
      case 'assertion':
        return { empty: 1, first: new Map(), last: new Map() };
      case 'set': {
        const p = automaton.sets.length;
        if (p >= MAX_POSITIONS)
          throw new TooComplex(`more than ${MAX_POSITIONS} characters once repetitions are written out`);
        automaton.sets.push(n.set);
        automaton.at.push(n.at);
        automaton.follow.push(new Map());
        const only = new Map([[p, 1]]);
        return { empty: 0, first: only, last: only };
      }
      case 'sequence':
        return n.items.map(build).reduce(concat);
      case 'alternation': {
        const infos = n.options.map(build);
        const first = new Map<number, number>();
        const last = new Map<number, number>();
        for (const info of infos) {
          addInto(first, info.first, 1);
          addInto(last, info.last, 1);
        }
        return { empty: cap(infos.reduce((sum, info) => sum + info.empty, 0)), first, last };
      }
      case 'repeat': {
        let info: Info = { empty: 1, first: new Map(), last: new Map() };
        for (let k = 0; k < n.min; k++) info = concat(info, build(n.body));
        if (n.max === Infinity) {
          const body = build(n.body);
          link(body.last, body.first); // the next iteration
          // zero iterations, or an empty one (then the loop ends); an empty iteration may also follow the last one
          const star: Info = { empty: cap(1 + body.empty), first: body.first, last: scaled(body.last, 1 + body.empty) };
          info = concat(info, star);
        } else if (n.max > n.min) {
          // x{0,k} as (x(x(x)?)?)?, as the matcher builds it
          const nested = (k: number): Info =>
            k === 1 ? optional(build(n.body)) : optional(concat(build(n.body), nested(k - 1)));
          info = concat(info, nested(n.max - n.min));
        }
        return info;
      }
    }
  };
  return { automaton, root: build(node) };
}

/**
 * The most partial matches PCRE2 may follow at once from one start position of the pattern as toMysqlRegex writes
 * it, or why that is too many.
 */
export function mysqlBacktrackingPaths(pattern: Pattern): number | { readonly unsupported: string } {
  return backtrackingPaths(trimEnds(simplify(pattern.root, MYSQL_DOMAIN)));
}

function backtrackingPaths(node: Node): number | { readonly unsupported: string } {
  let automaton: Glushkov;
  let root: Info;
  try {
    ({ automaton, root } = glushkov(node));
  } catch (error) {
    if (error instanceof TooComplex)
      return {
        unsupported: `matchesPattern with a pattern too large to prove that PCRE2's backtracking stays bounded (${error.reason})`,
      };
    throw error;
  }
  // the alphabet: classes of code points that every position treats alike
  const cuts = new Set<number>([0]);
  for (const set of automaton.sets) {
    for (let i = 0; i < set.length; i += 2) {
      cuts.add(set[i]!);
      if (set[i + 1]! < 0x10ffff) cuts.add(set[i + 1]! + 1);
    }
  }
  const representatives = [...cuts].sort((a, b) => a - b);
  let most = 1;
  let work = 0;
  const seen = new Set<string>();
  const key = (state: ReadonlyMap<number, number>): string =>
    [...state]
      .sort((a, b) => a[0] - b[0])
      .map(([p, n]) => `${p}:${n}`)
      .join(',');
  const queue: Map<number, number>[] = [];
  const visit = (state: Map<number, number>, culprit: () => string): { unsupported: string } | undefined => {
    let total = 0;
    for (const n of state.values()) total += n;
    if (total > MAX_BACKTRACKING_PATHS) {
      return {
        unsupported: `matchesPattern with a pattern PCRE2 may backtrack on without bound (${culprit()} can match the same text in more than ${MAX_BACKTRACKING_PATHS} ways; at its match limit MariaDB answers false)`,
      };
    }
    most = Math.max(most, total);
    const k = key(state);
    if (!seen.has(k)) {
      seen.add(k);
      queue.push(state);
    }
    return undefined;
  };
  const describe = (state: ReadonlyMap<number, number>): string => {
    const positions = [...new Set([...state.keys()].map((p) => automaton.at[p]!))].sort((a, b) => a - b);
    return `the pattern's characters at ${positions.slice(0, 4).join(', ')}${positions.length > 4 ? '...' : ''}`;
  };
  for (const cp of representatives) {
    const state = new Map<number, number>();
    for (const [q, n] of root.first) if (has(automaton.sets[q]!, cp)) state.set(q, cap((state.get(q) ?? 0) + n));
    if (state.size === 0) continue;
    const refused = visit(state, () => describe(state));
    if (refused !== undefined) return refused;
  }
  // the first character read from the start position made the first states; then every text, breadth first
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!;
    for (const cp of representatives) {
      const next = new Map<number, number>();
      for (const [p, n] of state) {
        for (const [q, m] of automaton.follow[p]!) {
          work++;
          if (has(automaton.sets[q]!, cp)) next.set(q, cap((next.get(q) ?? 0) + n * m));
        }
      }
      if (work > MAX_ANALYSIS_WORK || seen.size > 20_000) {
        return {
          unsupported: "matchesPattern with a pattern too complex to prove that PCRE2's backtracking stays bounded",
        };
      }
      if (next.size === 0) continue;
      const refused = visit(next, () => describe(next));
      if (refused !== undefined) return refused;
    }
  }
  return most;
}
