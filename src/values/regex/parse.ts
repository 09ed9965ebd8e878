// The ECMAScript pattern grammar with the u flag (ECMA-262 §22.2.1, [+UnicodeMode], no Annex B), parsed into a small
// tree whose character classes are code point sets (charset.ts). Every pattern `new RegExp(p, 'u')` rejects is
// `invalid` here, with the position of the offending character; a valid pattern that needs more than a finite
// automaton (backreferences, lookaround), or a larger one than we build, is `unsupported`, with its own reason.
// test/values/regex.test.ts checks validity against the running engine on random and hand-written patterns.
import {
  complement,
  DIGIT,
  DOT,
  EMPTY_SET,
  fromRanges,
  isPropertyName,
  propertySet,
  single,
  SPACE,
  union,
  WORD,
  type CodePointSet,
} from './charset.js';

export type Assertion = 'start' | 'end' | 'wordBoundary' | 'notWordBoundary';

/** Half-open span of a node in the pattern text, in UTF-16 units (as JavaScript indexes strings). */
interface Span {
  readonly start: number;
  readonly end: number;
}

export type RegexNode =
  | (Span & { readonly kind: 'empty' })
  /** One code point from the set: a literal, `.`, a class, an escape. */
  | (Span & { readonly kind: 'set'; readonly set: CodePointSet })
  | (Span & { readonly kind: 'sequence'; readonly items: readonly RegexNode[] })
  | (Span & { readonly kind: 'alternation'; readonly options: readonly RegexNode[] })
  /** `max` is Infinity when unbounded. Laziness never changes whether a match exists; it is kept for printing. */
  | (Span & {
      readonly kind: 'repeat';
      readonly body: RegexNode;
      readonly min: number;
      readonly max: number;
      readonly lazy: boolean;
    })
  | (Span & { readonly kind: 'group'; readonly body: RegexNode; readonly capturing: boolean })
  | (Span & { readonly kind: 'assertion'; readonly assertion: Assertion });

export interface Pattern {
  /** The text the pattern was parsed from. */
  readonly source: string;
  readonly root: RegexNode;
  /** The number of automaton instructions the pattern compiles to (regexSize), at most MAX_PROGRAM_SIZE. */
  readonly size: number;
}

export type ParseResult =
  | { readonly ok: true; readonly pattern: Pattern }
  | {
      readonly ok: false;
      /** `invalid`: not an ECMAScript pattern (u flag). `unsupported`: valid, but not for a linear-time engine. */
      readonly kind: 'invalid' | 'unsupported';
      readonly message: string;
      /** Where the problem is, in UTF-16 units of the pattern text. */
      readonly position: number;
    };

/**
 * The largest automaton we build. The matcher's worst case is (string length) × (program size) steps, so this bounds
 * the work per value: about 5,000 steps per character. A repetition counts its body once per copy (a{3} is 3),
 * so `(a{1000}){1000}` (1,000,000) is refused rather than built.
 */
export const MAX_PROGRAM_SIZE = 5000;

/** Groups may nest this deep (the parser and compiler recurse on them). */
export const MAX_NESTING = 100;

/**
 * Distinct `\p{...}` properties one pattern may use. Each is read from the engine's tables the first time a process
 * meets it (up to 20 ms, charset.ts propertySet); without a bound, one request could name hundreds.
 */
export const MAX_PROPERTIES = 8;

/**
 * V8 reads a quantifier bound above 2^31 − 1 as 2^31 − 1 before comparing the two (ECMA-262 compares the numbers),
 * so `a{9999999999,9999999998}` is valid there; we follow V8, the engine matchesPattern is defined by.
 */
const MAX_BOUND = 2 ** 31 - 1;

const SYNTAX_CHARACTERS = '^$\\.*+?()[]{}|';
const ID_START = /^[$_\p{ID_Start}]$/u;
const ID_CONTINUE = /^[$\u200c\u200d\p{ID_Continue}]$/u;
const QUANTIFIER_BRACES = /\{(\d+)(,(\d*))?\}/y;
const MODIFIERS = /\(\?([A-Za-z]*)(?:-([A-Za-z]*))?:/y;

class SyntaxProblem {
  constructor(
    readonly message: string,
    readonly position: number,
  ) {}
}

/** Thrown for a refusal that stops parsing (too deep to parse safely); other refusals are collected. */
class Refusal {
  constructor(
    readonly message: string,
    readonly position: number,
  ) {}
}

interface NamedGroup {
  readonly name: string;
  readonly position: number;
  /** For each enclosing disjunction (by id), the alternative the group is in. */
  readonly alternatives: ReadonlyMap<number, number>;
}

class Parser {
  private i = 0;
  private groups = 0;
  private depth = 0;
  private disjunctions = 0;
  private readonly alternativeStack: { id: number; alternative: number }[] = [];
  private readonly names: NamedGroup[] = [];
  private readonly numberedReferences: { n: number; position: number }[] = [];
  private readonly namedReferences: { name: string; position: number }[] = [];
  private readonly refusals: { message: string; position: number }[] = [];
  private readonly properties = new Set<string>();

  constructor(private readonly src: string) {}

  parse(): ParseResult {
    let root: RegexNode;
    try {
      root = this.disjunction();
      if (this.i < this.src.length) throw new SyntaxProblem("Unmatched ')'", this.i);
      this.checkReferences();
    } catch (problem) {
      if (problem instanceof SyntaxProblem) return this.fail('invalid', problem.message, problem.position);
      if (problem instanceof Refusal) return this.fail('unsupported', problem.message, problem.position);
      throw problem;
    }
    for (const reference of this.numberedReferences) {
      this.refuse(`the backreference \\${reference.n} (it needs backtracking)`, reference.position);
    }
    for (const reference of this.namedReferences) {
      this.refuse(`the backreference \\k<${reference.name}> (it needs backtracking)`, reference.position);
    }
    const tooLarge = largestOversized(root);
    if (tooLarge !== undefined) {
      this.refuse(
        `a pattern this large (${formatSize(regexSize(root))} automaton states, more than ${MAX_PROGRAM_SIZE.toLocaleString('en-US')}; repetition counts multiply)`,
        tooLarge.start,
      );
    }
    if (this.refusals.length > 0) {
      const first = this.refusals.reduce((a, b) => (b.position < a.position ? b : a));
      return this.fail('unsupported', first.message, first.position);
    }
    return { ok: true, pattern: { source: this.src, root, size: regexSize(root) } };
  }

  private fail(kind: 'invalid' | 'unsupported', message: string, position: number): ParseResult {
    return {
      ok: false,
      kind,
      message: kind === 'unsupported' ? `matchesPattern does not support ${message}` : message,
      position,
    };
  }

  private refuse(message: string, position: number): void {
    this.refusals.push({ message, position });
  }

  // ── Disjunction, Alternative, Term (§22.2.1) ──

  private disjunction(): RegexNode {
    const start = this.i;
    const level = { id: this.disjunctions++, alternative: 0 };
    this.alternativeStack.push(level);
    const options = [this.alternative()];
    while (this.src[this.i] === '|') {
      this.i++;
      level.alternative++;
      options.push(this.alternative());
    }
    this.alternativeStack.pop();
    return options.length === 1 ? options[0]! : { kind: 'alternation', options, start, end: this.i };
  }

  private alternative(): RegexNode {
    const start = this.i;
    const items: RegexNode[] = [];
    while (this.i < this.src.length && this.src[this.i] !== '|' && this.src[this.i] !== ')') items.push(this.term());
    if (items.length === 0) return { kind: 'empty', start, end: start };
    return items.length === 1 ? items[0]! : { kind: 'sequence', items, start, end: this.i };
  }

  private term(): RegexNode {
    const start = this.i;
    const c = this.src[start]!;
    switch (c) {
      case '^':
      case '$':
        this.i++;
        return this.unquantifiable({ kind: 'assertion', assertion: c === '^' ? 'start' : 'end', start, end: this.i });
      case '\\': {
        const next = this.src[start + 1];
        if (next === 'b' || next === 'B') {
          this.i += 2;
          const assertion = next === 'b' ? 'wordBoundary' : 'notWordBoundary';
          return this.unquantifiable({ kind: 'assertion', assertion, start, end: this.i });
        }
        return this.quantified(this.atomEscape(), start);
      }
      case '(': {
        const group = this.group();
        return group === undefined
          ? this.unquantifiable({ kind: 'empty', start, end: this.i })
          : this.quantified(group, start);
      }
      case '.':
        this.i++;
        return this.quantified({ kind: 'set', set: DOT, start, end: this.i }, start);
      case '[':
        return this.quantified(this.characterClass(), start);
      case '*':
      case '+':
      case '?':
        throw new SyntaxProblem('Nothing to repeat', start);
      case '{':
        QUANTIFIER_BRACES.lastIndex = start;
        throw new SyntaxProblem(
          QUANTIFIER_BRACES.test(this.src) ? 'Nothing to repeat' : 'Lone quantifier brackets',
          start,
        );
      case '}':
      case ']':
        throw new SyntaxProblem('Lone quantifier brackets', start);
      default: {
        const cp = this.src.codePointAt(start)!;
        this.i += cp > 0xffff ? 2 : 1;
        return this.quantified({ kind: 'set', set: single(cp), start, end: this.i }, start);
      }
    }
  }

  /** An assertion or lookaround: in the u grammar no quantifier may follow it. */
  private unquantifiable(node: RegexNode): RegexNode {
    const c = this.src[this.i];
    if (c === '*' || c === '+' || c === '?' || c === '{') throw new SyntaxProblem('Nothing to repeat', this.i);
    return node;
  }

  /** Quantifier (§22.2.1): `* + ? {n} {n,} {n,m}`, each optionally followed by `?`. */
  private quantified(atom: RegexNode, start: number): RegexNode {
    const c = this.src[this.i];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      min = c === '+' ? 1 : 0;
      max = c === '?' ? 1 : Infinity;
      this.i++;
    } else if (c === '{') {
      QUANTIFIER_BRACES.lastIndex = this.i;
      const m = QUANTIFIER_BRACES.exec(this.src);
      if (m === null) throw new SyntaxProblem('Incomplete quantifier', this.i);
      min = bound(m[1]!);
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : bound(m[3]!);
      if (max < min) throw new SyntaxProblem('numbers out of order in {} quantifier', this.i);
      this.i += m[0].length;
    } else {
      return atom;
    }
    const lazy = this.src[this.i] === '?';
    if (lazy) this.i++;
    const after = this.src[this.i];
    if (after === '*' || after === '+' || after === '?' || after === '{')
      throw new SyntaxProblem('Nothing to repeat', this.i);
    return { kind: 'repeat', body: atom, min, max, lazy, start, end: this.i };
  }

  // ── Groups ──

  /** A group; undefined for a lookaround (refused, and not quantifiable in the u grammar). */
  private group(): RegexNode | undefined {
    const start = this.i;
    if (++this.depth > MAX_NESTING) throw new Refusal(`groups nested more than ${MAX_NESTING} deep`, start);
    let capturing = false;
    let lookaround = false;
    if (this.src[start + 1] !== '?') {
      capturing = true;
      this.groups++;
      this.i++;
    } else {
      const c = this.src[start + 2];
      const d = this.src[start + 3];
      if (c === ':') {
        this.i += 3;
      } else if (c === '=' || c === '!' || (c === '<' && (d === '=' || d === '!'))) {
        lookaround = true;
        const behind = c === '<';
        this.refuse(
          `the ${behind ? 'lookbehind' : 'lookahead'} ${behind ? `(?<${d}` : `(?${c}`}...) (it needs backtracking)`,
          start,
        );
        this.i += behind ? 4 : 3;
      } else if (c === '<') {
        this.i += 3;
        this.groupName(start);
        capturing = true;
        this.groups++;
      } else {
        MODIFIERS.lastIndex = start;
        const m = MODIFIERS.exec(this.src);
        const flags = m === null ? '' : `${m[1]}${m[2] ?? ''}`;
        if (m === null || flags === '' || /[^ims]/.test(flags) || new Set(flags).size !== flags.length) {
          throw new SyntaxProblem('Invalid group', start);
        }
        // (?i:...) and its kin are ES2025; engines before it reject them. Either way we do not change flags.
        this.refuse('inline modifiers such as (?i:...)', start);
        this.i += m[0].length;
      }
    }
    const body = this.disjunction();
    if (this.src[this.i] !== ')') throw new SyntaxProblem('Unterminated group', start);
    this.i++;
    this.depth--;
    return lookaround ? undefined : { kind: 'group', body, capturing, start, end: this.i };
  }

  /** GroupName (§22.2.1): RegExpIdentifierName then `>`; `this.i` is after `<`. */
  private groupName(groupStart: number): void {
    let name = '';
    for (;;) {
      if (this.i >= this.src.length) throw new SyntaxProblem('Invalid capture group name', groupStart);
      if (this.src[this.i] === '>') break;
      let cp: number;
      if (this.src[this.i] === '\\') {
        if (this.src[this.i + 1] !== 'u') throw new SyntaxProblem('Invalid capture group name', this.i);
        this.i++;
        cp = this.unicodeEscape();
      } else {
        cp = this.src.codePointAt(this.i)!;
        this.i += cp > 0xffff ? 2 : 1;
      }
      const c = String.fromCodePoint(cp);
      if (!(name === '' ? ID_START : ID_CONTINUE).test(c))
        throw new SyntaxProblem('Invalid capture group name', groupStart);
      name += c;
    }
    if (name === '') throw new SyntaxProblem('Invalid capture group name', groupStart);
    this.i++;
    const alternatives = new Map(this.alternativeStack.map((level) => [level.id, level.alternative]));
    this.names.push({ name, position: groupStart, alternatives });
  }

  // ── Escapes ──

  /** AtomEscape[+UnicodeMode] (§22.2.1) other than \b \B; `this.i` is at the backslash. */
  private atomEscape(): RegexNode {
    const start = this.i;
    const c = this.src[start + 1];
    if (c === undefined) throw new SyntaxProblem('\\ at end of pattern', start);
    if (c >= '1' && c <= '9') {
      // DecimalEscape: a backreference. Its number is checked against the group count when the pattern is read.
      let end = start + 1;
      while (end < this.src.length && this.src[end]! >= '0' && this.src[end]! <= '9') end++;
      this.numberedReferences.push({ n: Number(this.src.slice(start + 1, end)), position: start });
      this.i = end;
      return { kind: 'empty', start, end };
    }
    if (c === 'k') {
      if (this.src[start + 2] !== '<') throw new SyntaxProblem('Invalid named reference', start);
      const close = this.src.indexOf('>', start + 3);
      if (close < 0) throw new SyntaxProblem('Invalid named reference', start);
      this.namedReferences.push({ name: decodeName(this.src.slice(start + 3, close)), position: start });
      this.i = close + 1;
      return { kind: 'empty', start, end: this.i };
    }
    this.i++;
    const set = this.characterEscape(false);
    return { kind: 'set', set, start, end: this.i };
  }

  /**
   * CharacterClassEscape or CharacterEscape[+UnicodeMode] (§22.2.1), and in a class ClassEscape's `b` and `-`.
   * `this.i` is after the backslash.
   */
  private characterEscape(inClass: boolean): CodePointSet {
    const at = this.i - 1;
    const c = this.src[this.i]!;
    this.i++;
    switch (c) {
      case 'd':
        return DIGIT;
      case 'D':
        return complement(DIGIT);
      case 's':
        return SPACE;
      case 'S':
        return complement(SPACE);
      case 'w':
        return WORD;
      case 'W':
        return complement(WORD);
      case 'p':
      case 'P':
        return this.propertyEscape(c === 'P', at);
      case 'f':
        return single(0x0c);
      case 'n':
        return single(0x0a);
      case 'r':
        return single(0x0d);
      case 't':
        return single(0x09);
      case 'v':
        return single(0x0b);
      case 'c': {
        const letter = this.src[this.i];
        if (letter === undefined || !/[A-Za-z]/.test(letter)) throw new SyntaxProblem('Invalid unicode escape', at);
        this.i++;
        return single(letter.charCodeAt(0) % 32);
      }
      case '0': {
        const next = this.src[this.i];
        if (next !== undefined && next >= '0' && next <= '9') {
          throw new SyntaxProblem(inClass ? 'Invalid class escape' : 'Invalid decimal escape', at);
        }
        return single(0);
      }
      case 'x': {
        const hex = this.src.slice(this.i, this.i + 2);
        if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new SyntaxProblem('Invalid escape', at);
        this.i += 2;
        return single(parseInt(hex, 16));
      }
      case 'u':
        this.i--;
        return single(this.unicodeEscape());
      default:
        if (inClass && c === 'b') return single(0x08);
        if (inClass && c === '-') return single(0x2d);
        if (SYNTAX_CHARACTERS.includes(c) || c === '/') return single(c.charCodeAt(0));
        throw new SyntaxProblem(inClass ? 'Invalid class escape' : 'Invalid escape', at);
    }
  }

  /**
   * RegExpUnicodeEscapeSequence[+UnicodeMode]: `u{hex}` up to 10FFFF, or `uXXXX`, where an escaped lead surrogate
   * followed by an escaped trail surrogate is one code point. `this.i` is at the `u`.
   */
  private unicodeEscape(): number {
    const at = this.i - 1;
    if (this.src[this.i + 1] === '{') {
      const close = this.src.indexOf('}', this.i + 2);
      const digits = close < 0 ? '' : this.src.slice(this.i + 2, close);
      if (!/^[0-9A-Fa-f]+$/.test(digits)) throw new SyntaxProblem('Invalid Unicode escape', at);
      const value = parseInt(digits.replace(/^0+(?=.)/, '').slice(0, 7), 16);
      if (digits.replace(/^0+(?=.)/, '').length > 6 || value > 0x10ffff) {
        throw new SyntaxProblem('Invalid Unicode escape', at);
      }
      this.i = close + 1;
      return value;
    }
    const hex = this.src.slice(this.i + 1, this.i + 5);
    if (!/^[0-9A-Fa-f]{4}$/.test(hex)) throw new SyntaxProblem('Invalid Unicode escape', at);
    const value = parseInt(hex, 16);
    this.i += 5;
    if (value >= 0xd800 && value <= 0xdbff && this.src.startsWith('\\u', this.i)) {
      const trail = this.src.slice(this.i + 2, this.i + 6);
      if (/^[0-9A-Fa-f]{4}$/.test(trail)) {
        const t = parseInt(trail, 16);
        if (t >= 0xdc00 && t <= 0xdfff) {
          this.i += 6;
          return 0x10000 + ((value - 0xd800) << 10) + (t - 0xdc00);
        }
      }
    }
    return value;
  }

  /** `\p{...}` / `\P{...}` (§22.2.1 UnicodePropertyValueExpression); `this.i` is after the p. */
  private propertyEscape(negated: boolean, at: number): CodePointSet {
    if (this.src[this.i] !== '{') throw new SyntaxProblem('Invalid property name', at);
    const close = this.src.indexOf('}', this.i + 1);
    const text = close < 0 ? '' : this.src.slice(this.i + 1, close);
    if (!isPropertyName(text)) throw new SyntaxProblem('Invalid property name', at);
    this.i = close + 1;
    this.properties.add(text);
    if (this.properties.size > MAX_PROPERTIES) {
      this.refuse(`more than ${MAX_PROPERTIES} different Unicode properties \\p{...} in one pattern`, at);
      return EMPTY_SET; // (not computed: the pattern is refused)
    }
    const set = propertySet(text);
    return negated ? complement(set) : set;
  }

  // ── Character classes ──

  /** CharacterClass[+UnicodeMode] (§22.2.1): `[...]` or `[^...]` with ranges; `this.i` is at `[`. */
  private characterClass(): RegexNode {
    const start = this.i;
    this.i++;
    const negated = this.src[this.i] === '^';
    if (negated) this.i++;
    let set: CodePointSet = EMPTY_SET;
    const ranges: [number, number][] = [];
    for (;;) {
      if (this.i >= this.src.length) throw new SyntaxProblem('Unterminated character class', start);
      if (this.src[this.i] === ']') break;
      const from = this.classAtom();
      if (this.src[this.i] === '-' && this.i + 1 < this.src.length && this.src[this.i + 1] !== ']') {
        const dash = this.i;
        this.i++;
        const to = this.classAtom();
        if (typeof from !== 'number' || typeof to !== 'number')
          throw new SyntaxProblem('Invalid character class', dash);
        if (from > to) throw new SyntaxProblem('Range out of order in character class', dash);
        ranges.push([from, to]);
      } else if (typeof from === 'number') {
        ranges.push([from, from]);
      } else {
        set = union(set, from);
      }
    }
    this.i++;
    set = union(set, fromRanges(ranges));
    return { kind: 'set', set: negated ? complement(set) : set, start, end: this.i };
  }

  /** ClassAtom: one code point (a number) or a class escape (a set). */
  private classAtom(): number | CodePointSet {
    if (this.src[this.i] !== '\\') {
      const cp = this.src.codePointAt(this.i)!;
      this.i += cp > 0xffff ? 2 : 1;
      return cp;
    }
    this.i++;
    const c = this.src[this.i];
    if (c === undefined) throw new SyntaxProblem('\\ at end of pattern', this.i - 1);
    const set = this.characterEscape(true);
    // Only d D s S w W p P escape to a class; every other escape is one code point.
    return 'dDsSwWpP'.includes(c) ? set : set[0]!;
  }

  // ── References and names, once the whole pattern is read ──

  private checkReferences(): void {
    for (const reference of this.numberedReferences) {
      if (reference.n > this.groups) throw new SyntaxProblem('Invalid escape', reference.position);
    }
    for (const reference of this.namedReferences) {
      if (!this.names.some((g) => g.name === reference.name)) {
        throw new SyntaxProblem('Invalid named capture referenced', reference.position);
      }
    }
    for (let a = 0; a < this.names.length; a++) {
      for (let b = a + 1; b < this.names.length; b++) {
        const x = this.names[a]!;
        const y = this.names[b]!;
        if (x.name !== y.name) continue;
        // MightBothParticipate (§22.2.1.1): unless they sit in different alternatives of one disjunction.
        const apart = [...x.alternatives].some(([id, alt]) => y.alternatives.has(id) && y.alternatives.get(id) !== alt);
        if (!apart) throw new SyntaxProblem('Duplicate capture group name', y.position);
        this.refuse('one group name in two alternatives (an ES2025 addition)', y.position);
      }
    }
  }
}

/** A quantifier bound, saturated as V8 does. */
function bound(digits: string): number {
  return digits.length > 10 ? MAX_BOUND : Math.min(Number(digits), MAX_BOUND);
}

/** A group name as written after `\k<`, with its \u escapes decoded (only for comparing with the groups' names). */
function decodeName(text: string): string {
  return text.replace(
    /\\u\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})/g,
    (_, braced: string | undefined, four: string | undefined) =>
      String.fromCodePoint(Math.min(parseInt(braced ?? four ?? '0', 16), 0x10ffff)),
  );
}

const SATURATED = 1e12;

/** The number of instructions compile (match.ts) emits for a node, saturating far above MAX_PROGRAM_SIZE. */
export function regexSize(node: RegexNode): number {
  switch (node.kind) {
    case 'empty':
      return 0;
    case 'set':
    case 'assertion':
      return 1;
    case 'group':
      return regexSize(node.body);
    case 'sequence':
      return Math.min(
        node.items.reduce((sum, item) => sum + regexSize(item), 0),
        SATURATED,
      );
    case 'alternation':
      return Math.min(
        node.options.reduce((sum, option) => sum + regexSize(option), 0) + 2 * (node.options.length - 1),
        SATURATED,
      );
    case 'repeat': {
      const body = regexSize(node.body);
      const optional = node.max === Infinity ? body + 2 : (node.max - node.min) * (body + 1);
      return Math.min(node.min * body + optional, SATURATED);
    }
  }
}

/** The deepest node whose size passes MAX_PROGRAM_SIZE (where to point a refusal), if any. */
function largestOversized(node: RegexNode): RegexNode | undefined {
  if (regexSize(node) <= MAX_PROGRAM_SIZE) return undefined;
  const children =
    node.kind === 'sequence'
      ? node.items
      : node.kind === 'alternation'
        ? node.options
        : node.kind === 'group' || node.kind === 'repeat'
          ? [node.body]
          : [];
  for (const child of children) {
    const inner = largestOversized(child);
    if (inner !== undefined) return inner;
  }
  return node;
}

function formatSize(n: number): string {
  return n >= SATURATED ? 'more than 10^12' : n.toLocaleString('en-US');
}

/** Parses an ECMAScript pattern as `new RegExp(text, 'u')` reads it. */
export function parsePattern(text: string): ParseResult {
  return new Parser(text).parse();
}

/**
 * Whether the pattern can match the empty string between the two halves of a surrogate pair. ECMA-262 tries code
 * point positions only (RegExpBuiltinExec, §22.2.7.2, advances lastIndex with AdvanceStringIndex), but V8 (Node's
 * engine) also lets a match of no characters start between a lead and a trail surrogate: `/\B/u.test('a😁a')` is
 * true there, though every code point position of 'a😁a' is a word boundary. There, the previous and next units
 * are surrogates (non-word characters) and the position is neither the start nor the end; so the answer is V8's
 * when such a pattern also matches every string holding an astral character. (A consuming match never starts there.)
 */
export function matchesEmptyInsidePair(node: RegexNode): boolean {
  switch (node.kind) {
    case 'empty':
      return true;
    case 'set':
      return false;
    case 'assertion':
      return node.assertion === 'notWordBoundary';
    case 'group':
      return matchesEmptyInsidePair(node.body);
    case 'sequence':
      return node.items.every(matchesEmptyInsidePair);
    case 'alternation':
      return node.options.some(matchesEmptyInsidePair);
    case 'repeat':
      return node.min === 0 || matchesEmptyInsidePair(node.body);
  }
}
