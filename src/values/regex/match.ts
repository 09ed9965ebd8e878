// A linear-time matcher for parsed patterns (parse.ts): Thompson's construction, simulated over code points (Pike,
// without captures, which a yes/no answer does not need), with a bounded cache of the subset-construction states
// (a lazy DFA, as RE2 does). Each character costs at most one pass over the program, whatever the pattern, so a
// value of n characters takes at most n × (program size) steps; catastrophic backtracking cannot happen.
//
// Why the answer is RegExp's: `RegExp.prototype.test` with the u flag (ECMA-262 §22.2.7.2 RegExpBuiltinExec) tries
// each code point position in turn, and at each one the backtracking matcher (§22.2.2) explores every path of the
// pattern until one succeeds. Without backreferences and lookaround, which paths exist does not depend on the order
// they are tried (greedy or lazy), nor on captures; the check that an iteration of `*` matched something
// (RepeatMatcher, §22.2.2.3.1) only prunes paths that end where another path ends too. So a match exists exactly
// when the automaton, started at every position, reaches its final state: what this computes.
import { has, isWordCodePoint, WORD, type CodePointSet } from './charset.js';
import { matchesEmptyInsidePair, type Pattern, type RegexNode } from './parse.js';

export interface Matcher {
  /** `new RegExp(pattern, 'u').test(s)`, in time linear in s's length. Keeps no state between calls. */
  test(s: string): boolean;
  /** `test`, also counting the automaton's steps (instructions visited plus characters read), for tests. */
  measure(s: string): { readonly matched: boolean; readonly steps: number };
}

export interface MatcherOptions {
  /** false: simulate the automaton for every character, with no cache (a second engine for tests). */
  readonly dfa?: boolean;
}

// Instructions.
const CHAR = 0; // x: set index; consumes a code point in the set, then pc + 1
const SPLIT = 1; // to x and y
const JMP = 2; // to x
const ASSERT = 3; // x: assertion; pc + 1 when it holds
const MATCH = 4;

const ASSERT_START = 0;
const ASSERT_END = 1;
const ASSERT_WORD = 2;
const ASSERT_NOT_WORD = 3;

// The context of a position, for assertions (§22.2.2.6): input start, input end, word characters either side.
const AT_START = 1;
const AT_END = 2;
const PREV_WORD = 4;
const NEXT_WORD = 8;

// DFA transition cells: 0 not computed yet, state index + 1, or one of these.
const ACCEPT = -1;
const DEAD = -2;

/**
 * Cache bounds per matcher: transition cells (4 bytes each, so 512 KiB) and states. Past them the cache starts
 * afresh (as RE2's does): each character still costs at most one pass over the program.
 */
const MAX_CELLS = 1 << 17;
const MAX_STATES = 4096;

interface Program {
  readonly op: Uint8Array;
  readonly x: Int32Array;
  readonly y: Int32Array;
  readonly sets: readonly CodePointSet[];
}

function compile(root: RegexNode): Program {
  const op: number[] = [];
  const x: number[] = [];
  const y: number[] = [];
  const sets: CodePointSet[] = [];
  const setIndex = new Map<CodePointSet, number>();
  const emit = (code: number, a = 0, b = 0): number => {
    op.push(code);
    x.push(a);
    y.push(b);
    return op.length - 1;
  };
  const node = (n: RegexNode): void => {
    switch (n.kind) {
      case 'empty':
        return;
      case 'set': {
        let index = setIndex.get(n.set);
        if (index === undefined) {
          index = sets.push(n.set) - 1;
          setIndex.set(n.set, index);
        }
        emit(CHAR, index);
        return;
      }
      case 'assertion':
        emit(
          ASSERT,
          n.assertion === 'start'
            ? ASSERT_START
            : n.assertion === 'end'
              ? ASSERT_END
              : n.assertion === 'wordBoundary'
                ? ASSERT_WORD
                : ASSERT_NOT_WORD,
        );
        return;
      case 'group':
        node(n.body);
        return;
      case 'sequence':
        for (const item of n.items) node(item);
        return;
      case 'alternation': {
        const jumps: number[] = [];
        n.options.forEach((option, k) => {
          if (k === n.options.length - 1) return node(option);
          const split = emit(SPLIT, op.length + 1);
          node(option);
          jumps.push(emit(JMP));
          y[split] = op.length;
        });
        for (const j of jumps) x[j] = op.length;
        return;
      }
      case 'repeat': {
        for (let k = 0; k < n.min; k++) node(n.body);
        if (n.max === Infinity) {
          const split = emit(SPLIT, op.length + 1);
          node(n.body);
          emit(JMP, split);
          y[split] = op.length;
        } else {
          // nested optionals, x{0,3} = (x(x(x)?)?)?: skipping one skips the rest
          const splits: number[] = [];
          for (let k = n.min; k < n.max; k++) {
            splits.push(emit(SPLIT, op.length + 1));
            node(n.body);
          }
          for (const split of splits) y[split] = op.length;
        }
        return;
      }
    }
  };
  node(root);
  emit(MATCH);
  return { op: Uint8Array.from(op), x: Int32Array.from(x), y: Int32Array.from(y), sets };
}

interface DfaState {
  /** Instructions to start from (before following splits, jumps and assertions), sorted. */
  readonly kernel: Int32Array;
  /** AT_START and PREV_WORD: what the assertions need to know about the code points already read. */
  readonly context: number;
  /** Whether the input may end here: -1 not computed yet, 0 no, 1 yes. */
  end: number;
}

class AutomatonMatcher implements Matcher {
  private readonly program: Program;
  private readonly size: number;
  // closure buffers, reused (JavaScript runs one call at a time)
  private readonly stack: Int32Array;
  private readonly mark: Uint32Array;
  private readonly chars: Int32Array;
  private readonly next: Int32Array;
  private generation = 0;
  private matched = false;
  private steps = 0;
  /** Whether starting again at a later position can lead anywhere (false when every path begins with ^). */
  private readonly restart: boolean;
  // the alphabet: code points are cut into classes that every set of the program treats alike
  private readonly cuts: Int32Array;
  private readonly ascii: Uint16Array;
  private readonly classWord: Uint8Array;
  private readonly classes: number;
  // the lazy DFA: state i's transition on class k is table[i * classes + k]
  private states: DfaState[] = [];
  private index = new Map<string, number>();
  private table = new Int32Array(0);
  private initial = -1;

  constructor(
    root: RegexNode,
    private readonly useDfa: boolean,
  ) {
    this.program = compile(root);
    this.size = this.program.op.length;
    this.stack = new Int32Array(3 * this.size + 4);
    this.mark = new Uint32Array(this.size);
    this.chars = new Int32Array(this.size);
    this.next = new Int32Array(this.size + 1);

    const cuts = new Set<number>();
    for (const set of [...this.program.sets, WORD]) {
      for (let i = 0; i < set.length; i += 2) {
        cuts.add(set[i]!);
        cuts.add(set[i + 1]! + 1);
      }
    }
    cuts.delete(0);
    cuts.delete(0x110000);
    this.cuts = Int32Array.from([...cuts].sort((a, b) => a - b));
    this.classes = this.cuts.length + 1;
    this.classWord = new Uint8Array(this.classes);
    for (let k = 0; k < this.classes; k++) this.classWord[k] = isWordCodePoint(this.representative(k)) ? 1 : 0;
    this.ascii = new Uint16Array(128);
    for (let cp = 0; cp < 128; cp++) this.ascii[cp] = this.classOf(cp);

    let restart = false;
    for (const context of [0, AT_END, PREV_WORD, NEXT_WORD, PREV_WORD | NEXT_WORD, PREV_WORD | AT_END]) {
      restart ||= this.closure([0], 1, context) > 0 || this.matched;
    }
    this.restart = restart;
  }

  test(s: string): boolean {
    return this.useDfa ? this.runDfa(s) : this.simulate(s);
  }

  measure(s: string): { matched: boolean; steps: number } {
    this.steps = 0;
    const matched = this.test(s);
    return { matched, steps: this.steps };
  }

  // ── the alphabet ──

  private representative(k: number): number {
    return k === 0 ? 0 : this.cuts[k - 1]!;
  }

  /** The class of a code point: the number of cuts at or below it. */
  private classOf(cp: number): number {
    const cuts = this.cuts;
    let lo = 0;
    let hi = cuts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cuts[mid]! <= cp) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // ── the automaton ──

  /**
   * Follows splits, jumps and assertions from `kernel[0..count)` in the given context: leaves the CHAR instructions
   * reached in `this.chars` (returns how many) and sets `this.matched` if MATCH is reached.
   */
  private closure(kernel: ArrayLike<number>, count: number, context: number): number {
    const { op, x, y } = this.program;
    const stack = this.stack;
    const mark = this.mark;
    const generation = ++this.generation;
    let top = 0;
    let n = 0;
    let visited = 0;
    this.matched = false;
    for (let i = count - 1; i >= 0; i--) stack[top++] = kernel[i]!;
    while (top > 0) {
      const pc = stack[--top]!;
      if (mark[pc] === generation) continue;
      mark[pc] = generation;
      visited++;
      switch (op[pc]) {
        case CHAR:
          this.chars[n++] = pc;
          break;
        case SPLIT:
          stack[top++] = y[pc]!;
          stack[top++] = x[pc]!;
          break;
        case JMP:
          stack[top++] = x[pc]!;
          break;
        case ASSERT:
          if (assertionHolds(x[pc]!, context)) stack[top++] = pc + 1;
          break;
        default:
          this.matched = true;
      }
    }
    this.steps += visited;
    return n;
  }

  /** The NFA simulation: every character follows the closure afresh. */
  private simulate(s: string): boolean {
    const sets = this.program.sets;
    const x = this.program.x;
    let kernel = new Int32Array(this.size + 1);
    let spare = new Int32Array(this.size + 1);
    kernel[0] = 0;
    let count = 1;
    let context = AT_START;
    for (let i = 0; i < s.length;) {
      let cp = s.charCodeAt(i++);
      if (cp >= 0xd800 && cp <= 0xdbff && i < s.length) {
        const trail = s.charCodeAt(i);
        if (trail >= 0xdc00 && trail <= 0xdfff) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (trail - 0xdc00);
          i++;
        }
      }
      this.steps++;
      const word = isWordCodePoint(cp);
      const n = this.closure(kernel, count, context | (word ? NEXT_WORD : 0));
      if (this.matched) return true;
      const generation = ++this.generation;
      let m = 0;
      for (let j = 0; j < n; j++) {
        const pc = this.chars[j]!;
        if (has(sets[x[pc]!]!, cp) && this.mark[pc + 1] !== generation) {
          this.mark[pc + 1] = generation;
          spare[m++] = pc + 1;
        }
      }
      if (this.restart && this.mark[0] !== generation) spare[m++] = 0;
      if (m === 0) return false;
      [kernel, spare] = [spare, kernel];
      count = m;
      context = word ? PREV_WORD : 0;
    }
    this.closure(kernel, count, context | AT_END);
    return this.matched;
  }

  // ── the lazy DFA ──

  private runDfa(s: string): boolean {
    if (this.initial < 0) this.initial = this.intern(Int32Array.of(0), AT_START);
    let state = this.initial;
    let table = this.table;
    const classes = this.classes;
    const ascii = this.ascii;
    const n = s.length;
    this.steps += n;
    for (let i = 0; i < n;) {
      let cp = s.charCodeAt(i++);
      let k: number;
      if (cp < 128) k = ascii[cp]!;
      else {
        if (cp >= 0xd800 && cp <= 0xdbff && i < n) {
          const trail = s.charCodeAt(i);
          if (trail >= 0xdc00 && trail <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (trail - 0xdc00);
            i++;
          }
        }
        k = this.classOf(cp);
      }
      let to = table[state * classes + k]!;
      if (to <= 0) {
        if (to < 0) return to === ACCEPT;
        to = this.transition(state, k);
        if (to < 0) return to === ACCEPT;
        table = this.table; // (grown, or started afresh)
      }
      state = to - 1;
    }
    const last = this.states[state]!;
    if (last.end < 0) {
      this.closure(last.kernel, last.kernel.length, last.context | AT_END);
      last.end = this.matched ? 1 : 0;
    }
    return last.end === 1;
  }

  /** Computes (and caches, if the state survives) the transition of a state on a class. */
  private transition(stateIndex: number, k: number): number {
    const state = this.states[stateIndex]!;
    const word = this.classWord[k] === 1;
    const n = this.closure(state.kernel, state.kernel.length, state.context | (word ? NEXT_WORD : 0));
    let to: number;
    if (this.matched) to = ACCEPT;
    else {
      const { sets, x } = this.program;
      const cp = this.representative(k);
      const generation = ++this.generation;
      let m = 0;
      for (let j = 0; j < n; j++) {
        const pc = this.chars[j]!;
        if (has(sets[x[pc]!]!, cp) && this.mark[pc + 1] !== generation) {
          this.mark[pc + 1] = generation;
          this.next[m++] = pc + 1;
        }
      }
      if (this.restart && this.mark[0] !== generation) this.next[m++] = 0;
      if (m === 0) to = DEAD;
      else {
        const kernel = this.next.slice(0, m).sort();
        const before = this.states;
        const target = this.intern(kernel, word ? PREV_WORD : 0);
        // a cache that started afresh no longer holds `state`: nothing to record the transition in
        if (this.states !== before) return target + 1;
        to = target + 1;
      }
    }
    this.table[stateIndex * this.classes + k] = to;
    return to;
  }

  private intern(kernel: Int32Array, context: number): number {
    const key = `${context}|${kernel.join(',')}`;
    const known = this.index.get(key);
    if (known !== undefined) return known;
    // (one state's row always fits, however many classes)
    const limit = Math.max(MAX_CELLS, this.classes);
    if (
      this.states.length > 0 &&
      (this.states.length >= MAX_STATES || (this.states.length + 1) * this.classes > limit)
    ) {
      this.states = [];
      this.index = new Map();
      this.table.fill(0);
      this.initial = -1;
    }
    const cells = (this.states.length + 1) * this.classes;
    if (cells > this.table.length) {
      const grown = new Int32Array(Math.min(Math.max(cells, 2 * this.table.length, 16 * this.classes), limit));
      grown.set(this.table);
      this.table = grown;
    }
    this.states.push({ kernel, context, end: -1 });
    this.index.set(key, this.states.length - 1);
    return this.states.length - 1;
  }
}

function assertionHolds(assertion: number, context: number): boolean {
  switch (assertion) {
    case ASSERT_START:
      return (context & AT_START) !== 0;
    case ASSERT_END:
      return (context & AT_END) !== 0;
    case ASSERT_WORD:
      return ((context & PREV_WORD) !== 0) !== ((context & NEXT_WORD) !== 0);
    default:
      return ((context & PREV_WORD) !== 0) === ((context & NEXT_WORD) !== 0);
  }
}

// ── Literal patterns ──
//
// A pattern that is only literal code points (and perhaps ^ and $, or an alternation of literals) is answered by
// string search. Exact when no literal holds a surrogate code unit of its own: a literal then starts on a unit that
// no pair ends with and ends on one no pair starts with, so a unit match is a code point match.

interface Literal {
  readonly text: string;
  readonly start: boolean;
  readonly end: boolean;
}

function literalText(nodes: readonly RegexNode[]): string | undefined {
  let text = '';
  for (const node of nodes) {
    const inner = node.kind === 'group' ? node.body : node;
    if (inner.kind === 'group' || inner.kind === 'sequence') {
      const t = literalText(inner.kind === 'group' ? [inner] : inner.items);
      if (t === undefined) return undefined;
      text += t;
    } else if (inner.kind === 'empty') continue;
    else if (inner.kind === 'set' && inner.set.length === 2 && inner.set[0] === inner.set[1]) {
      const cp = inner.set[0]!;
      if (cp >= 0xd800 && cp <= 0xdfff) return undefined;
      text += String.fromCodePoint(cp);
    } else return undefined;
  }
  return text;
}

function literalForm(node: RegexNode): Literal | readonly string[] | undefined {
  while (node.kind === 'group') node = node.body;
  if (node.kind === 'alternation') {
    const options = node.options.map((option) => literalText([option]));
    return options.every((o): o is string => o !== undefined) ? options : undefined;
  }
  const items = node.kind === 'sequence' ? [...node.items] : [node];
  const first = items[0];
  const start = first !== undefined && first.kind === 'assertion' && first.assertion === 'start';
  if (start) items.shift();
  const last = items[items.length - 1];
  const end = last !== undefined && last.kind === 'assertion' && last.assertion === 'end';
  if (end) items.pop();
  const text = literalText(items);
  return text === undefined ? undefined : { text, start, end };
}

/** Whether s holds a surrogate pair (an astral character). */
const ASTRAL = /[\ud800-\udbff][\udc00-\udfff]/;

/** A matcher for a parsed pattern: answers as `new RegExp(pattern.source, 'u').test(s)` does, in linear time. */
export function compileMatcher(pattern: Pattern, options: MatcherOptions = {}): Matcher {
  const matcher = literalOrAutomaton(pattern, options);
  if (!matchesEmptyInsidePair(pattern.root)) return matcher;
  // V8's answer for a pattern that matches nothing between the halves of a pair (matchesEmptyInsidePair)
  return {
    test: (s) => ASTRAL.test(s) || matcher.test(s),
    measure: (s) => (ASTRAL.test(s) ? { matched: true, steps: 0 } : matcher.measure(s)),
  };
}

function literalOrAutomaton(pattern: Pattern, options: MatcherOptions): Matcher {
  const automaton = new AutomatonMatcher(pattern.root, options.dfa ?? true);
  // (closures, so that `const { test } = matcher` works too)
  const measure = (s: string): { matched: boolean; steps: number } => automaton.measure(s);
  const literal = options.dfa === false ? undefined : literalForm(pattern.root);
  if (literal === undefined) return { test: (s) => automaton.test(s), measure };
  if (Array.isArray(literal)) {
    const texts = literal as readonly string[];
    return { test: (s) => texts.some((t) => s.includes(t)), measure };
  }
  const { text, start, end } = literal as Literal;
  const test =
    start && end
      ? (s: string) => s === text
      : start
        ? (s: string) => s.startsWith(text)
        : end
          ? (s: string) => s.endsWith(text)
          : (s: string) => s.includes(text);
  return { test, measure };
}
