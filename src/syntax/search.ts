// `$search` (OData 4.01 URL Conventions §5.1.7, ABNF `searchExpr`): words, "phrases", NOT, AND (or just a space) and
// OR, with parentheses, parsed by a Chevrotain grammar of its own into a tree with positions. NOT binds tighter than
// AND, AND tighter than OR. AND, OR and NOT are operators only where an operator can stand (`AND` alone, `NOT NOT` and
// `blue OR` hold words of those letters), as the ABNF has it. A value in single quotes (`searchExpr-incomplete`) is
// searched as the words of its text, all of them. The same grammar reads the argument of `$apply`'s `search(...)`
// transformation (Data Aggregation 4.0 §3.2.3: `searchExpr`, no quoted text), at its place in the `$apply` text.
import { createToken, EmbeddedActionsParser, Lexer, type IToken } from 'chevrotain';
import { atPosition, ODataError } from '../errors.js';
import type { SearchExpr, Span } from './ast.js';
import { defaultMaxDepth, type ParseOptions } from './options.js';

const WhiteSpace = createToken({ name: 'SearchSpace', pattern: /[ \t]+/, group: Lexer.SKIPPED });
const Open = createToken({ name: 'SearchOpen', pattern: /\(/, label: '(' });
const Close = createToken({ name: 'SearchClose', pattern: /\)/, label: ')' });
/** `"..."`: any character but `"` and `\`, or `\"` and `\\`. */
const Phrase = createToken({ name: 'SearchPhrase', pattern: /"(?:[^"\\]|\\["\\])+"/, label: 'a "phrase"' });
/** `'...'` with `''` for a quote: the whole value as text to search for. */
const Quoted = createToken({ name: 'SearchQuoted', pattern: /'(?:[^']|'')*'/, label: "a 'text'" });
/** Any run of characters but space, tab, parentheses, `"` and `;`, not starting with `'`. */
const Word = createToken({ name: 'SearchWord', pattern: /[^ \t()";'][^ \t()";]*/, label: 'a word' });

const tokens = [WhiteSpace, Open, Close, Phrase, Quoted, Word];
const lexer = new Lexer(tokens, { positionTracking: 'onlyOffset', ensureOptimizations: false });

const spanOf = (first: IToken, last: IToken): Span => ({
  start: first.startOffset,
  end: last.startOffset + last.image.length,
});

class SearchParser extends EmbeddedActionsParser {
  private depth = 0;
  private maxDepth = defaultMaxDepth;
  private where: Where = { target: '$search', name: '$search', start: 0, end: 0 };

  constructor() {
    super(tokens, { maxLookahead: 2 });
    this.performSelfAnalysis();
  }

  begin(tokenized: IToken[], maxDepth: number, where: Where): void {
    this.input = tokenized;
    this.depth = 0;
    this.maxDepth = maxDepth;
    this.where = where;
  }

  /** Whether the next token is the word `keyword` standing as an operator: followed by what can start a term. */
  private operator(keyword: 'AND' | 'OR' | 'NOT'): boolean {
    const next = this.LA(1);
    if (next.tokenType !== Word || next.image !== keyword) return false;
    const after = this.LA(2).tokenType;
    return after === Word || after === Phrase || after === Open;
  }

  /** Whether the next token starts a term (the right side of an implicit AND). */
  private startsTerm(): boolean {
    const next = this.LA(1).tokenType;
    return (next === Word && !this.operator('OR')) || next === Phrase || next === Open;
  }

  readonly search = this.RULE('search', (): SearchExpr => {
    return this.OR([
      {
        GATE: () => this.LA(1).tokenType === Quoted,
        ALT: () => {
          const token = this.CONSUME(Quoted);
          return this.ACTION((): SearchExpr => ({
            kind: 'text',
            text: token.image.slice(1, -1).replace(/''/g, "'"),
            span: spanOf(token, token),
          }));
        },
      },
      { ALT: () => this.SUBRULE(this.orExpr) },
    ]);
  });

  private readonly orExpr = this.RULE('orExpr', (): SearchExpr => {
    let left = this.SUBRULE(this.andExpr);
    this.MANY({
      GATE: () => this.operator('OR'),
      DEF: () => {
        this.CONSUME(Word);
        const right = this.SUBRULE2(this.andExpr);
        left = this.ACTION((): SearchExpr => ({
          kind: 'or',
          left,
          right,
          span: { start: left.span.start, end: right.span.end },
        }));
      },
    });
    return left;
  });

  private readonly andExpr = this.RULE('andExpr', (): SearchExpr => {
    let left = this.SUBRULE(this.notExpr);
    this.MANY({
      GATE: () => this.operator('AND') || this.startsTerm(),
      DEF: () => {
        this.OPTION({ GATE: () => this.operator('AND'), DEF: () => this.CONSUME(Word) });
        const right = this.SUBRULE2(this.notExpr);
        left = this.ACTION((): SearchExpr => ({
          kind: 'and',
          left,
          right,
          span: { start: left.span.start, end: right.span.end },
        }));
      },
    });
    return left;
  });

  private readonly notExpr = this.RULE('notExpr', (): SearchExpr => {
    return this.OR([
      {
        GATE: () => this.operator('NOT'),
        ALT: () => {
          const not = this.CONSUME(Word);
          const operand = this.SUBRULE(this.notExpr);
          return this.ACTION((): SearchExpr => ({
            kind: 'not',
            operand,
            span: { start: not.startOffset, end: operand.span.end },
          }));
        },
      },
      { ALT: () => this.SUBRULE(this.term) },
    ]);
  });

  private readonly term = this.RULE('term', (): SearchExpr => {
    return this.OR([
      {
        ALT: () => {
          const open = this.CONSUME(Open);
          this.ACTION(() => {
            if (++this.depth > this.maxDepth) {
              const { target, name } = this.where;
              throw new ODataError(
                'LimitExceeded',
                atPosition(
                  `${capitalized(name)} is nested more than ${this.maxDepth} levels deep`,
                  open.startOffset,
                  target,
                ),
                { target, position: open.startOffset },
              );
            }
          });
          const inner = this.SUBRULE(this.orExpr);
          const close = this.CONSUME(Close);
          this.ACTION(() => this.depth--);
          return this.ACTION(() => ({ ...inner, span: spanOf(open, close) }));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(Phrase);
          return this.ACTION((): SearchExpr => ({
            kind: 'phrase',
            text: token.image.slice(1, -1).replace(/\\(["\\])/g, '$1'),
            span: spanOf(token, token),
          }));
        },
      },
      {
        ALT: () => {
          const token = this.CONSUME(Word);
          return this.ACTION((): SearchExpr => ({ kind: 'word', text: token.image, span: spanOf(token, token) }));
        },
      },
    ]);
  });
}

const parser = new SearchParser();

/**
 * Where a search expression is read: the option its errors name (`target`), what they call it (`name`), and its
 * extent in that option's text (positions count from the start of the option's text).
 */
interface Where {
  readonly target: string;
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

const capitalized = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1);

/**
 * Parses a `$search` value. Throws an ODataError (400 `InvalidSyntax`) at the position of the first mistake: an
 * unclosed phrase or parenthesis, a `;`, a quote where a word cannot start, two terms without a space between them.
 */
export function parseSearch(text: string, options: ParseOptions = {}): SearchExpr {
  return parseIn(text, { target: '$search', name: '$search', start: 0, end: text.length }, options);
}

/**
 * Where the argument of `$apply`'s `search(` ends when it starts at `start` of `text`: at the `)` that closes it (the
 * parentheses of the search expression and the `"phrases"` in it, `\"` and `\\` inside, are skipped), or at the end of
 * the text when none does.
 */
export function searchArgumentEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      // a phrase, to its closing quote (or the end, where the parse says it is unclosed)
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return text.length;
}

/**
 * Parses the argument of `$apply`'s `search(...)` transformation: `text.slice(start, end)`, the `searchExpr` of the
 * extension's ABNF (words, phrases, NOT, AND, OR; a value in single quotes is `$search`'s alone). Spans and error
 * positions count from the start of the `$apply` text; errors name `$apply`.
 */
export function parseSearchArgument(text: string, start: number, end: number, options: ParseOptions = {}): SearchExpr {
  return parseIn(text, { target: '$apply', name: 'the search transformation', start, end }, options);
}

function parseIn(source: string, where: Where, options: ParseOptions): SearchExpr {
  const { target, name, start, end } = where;
  const inApply = target !== '$search';
  const fail = (position: number, what: string, hint?: string): never => {
    throw new ODataError('InvalidSyntax', atPosition(what, position, target, hint), { target, position });
  };
  // the expression's own text, lexed on its own; every position is moved by `start` to its place in the source
  const text = source.slice(start, end);
  if (text.trim().length === 0)
    fail(
      start,
      inApply ? 'The search transformation has no search expression' : '$search is empty',
      'expected a word, a "phrase" or (',
    );
  const lexed = lexer.tokenize(text);
  if (lexed.errors.length > 0) {
    const at = lexed.errors[0]!.offset;
    const c = text[at];
    fail(
      start + at,
      c === '"'
        ? 'Unclosed phrase'
        : c === "'"
          ? 'Unclosed quoted text'
          : c === ';'
            ? 'Unexpected ;'
            : `Unexpected ${JSON.stringify(c)}`,
      c === '"'
        ? 'close it with "; write \\" for a quote inside'
        : c === ';'
          ? 'write it percent-encoded (%3B) inside a "phrase"'
          : undefined,
    );
  }
  const list = lexed.tokens;
  for (const token of list) token.startOffset += start;
  // terms must be separated by whitespace (ABNF RWS): `blue(green)` and `"a""b"` are mistakes
  for (let i = 1; i < list.length; i++) {
    const [a, b] = [list[i - 1]!, list[i]!];
    const adjacent = a.startOffset + a.image.length === b.startOffset;
    const opens = b.tokenType !== Close && a.tokenType !== Open;
    if (adjacent && opens)
      fail(b.startOffset, `Unexpected ${b.image.slice(0, 20)}`, 'separate search terms with a space');
  }
  const quoted = list.find((t) => t.tokenType === Quoted);
  if (quoted !== undefined && inApply) {
    fail(
      quoted.startOffset,
      `Unexpected ${quoted.image.slice(0, 20)}`,
      'a value in single quotes is for $search alone: the search transformation takes words and "phrases"',
    );
  }
  if (quoted !== undefined && list.length > 1) {
    fail(
      quoted.startOffset,
      'Quoted text stands alone in $search',
      'write words and "phrases" with operators, or one quoted text',
    );
  }
  parser.begin(list, options.maxDepth ?? defaultMaxDepth, where);
  let result: SearchExpr;
  try {
    result = parser.search();
  } catch (error) {
    if (error instanceof RangeError)
      throw new ODataError('LimitExceeded', `${capitalized(name)} is nested too deeply to parse`, { target });
    throw error;
  }
  if (parser.errors.length > 0) {
    const error = parser.errors[0]!;
    const token = error.token.tokenType === undefined || error.token.image === '' ? undefined : error.token;
    const at = token === undefined ? end : token.startOffset;
    // (an open parenthesis left open: Chevrotain expected the closing token)
    const wantsClose = error.message.includes(Close.name) || error.message.includes('--> ) <--');
    fail(
      at,
      token === undefined ? `Unexpected end of ${target}` : `Unexpected ${token.image}`,
      wantsClose ? 'expected )' : 'expected a word, a "phrase" or (',
    );
  }
  return result;
}

/** The canonical text of a search expression: operators written out, parentheses where precedence needs them. */
export function printSearch(expr: SearchExpr): string {
  const print = (e: SearchExpr, context: 'or' | 'and' | 'not'): string => {
    switch (e.kind) {
      case 'word':
        return e.text;
      case 'phrase':
        return `"${e.text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
      case 'text':
        return `'${e.text.replace(/'/g, "''")}'`;
      case 'not':
        return `NOT ${print(e.operand, 'not')}`;
      case 'and': {
        const text = `${print(e.left, 'and')} AND ${print(e.right, 'not')}`;
        return context === 'not' ? `(${text})` : text;
      }
      case 'or': {
        const text = `${print(e.left, 'or')} OR ${print(e.right, 'and')}`;
        return context === 'or' ? text : `(${text})`;
      }
    }
  };
  return print(expr, 'or');
}
