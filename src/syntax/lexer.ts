// Chevrotain tokens for OData 4.01 query option values (OData ABNF Construction Rules 4.01).
//
// The lexer runs on the percent-decoded option value. Order matters: Chevrotain takes the first
// pattern that matches, so the longer literal forms (DateTimeOffset before Date, Guid before
// Number and Identifier, prefixed literals before names) come first, and keywords use
// `longer_alt` so that a property called `order`, `notes` or `index` still lexes as a name.
import { createToken, Lexer, type TokenType } from 'chevrotain';

const IDENT_START = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_'.split('');
const DIGITS = '0123456789'.split('');
const HEX_START = [...DIGITS, ...'abcdefABCDEF'.split('')];

/** RWS / BWS: SP and HTAB (ABNF `RWS`); whether it is required is checked by the parser. */
export const WhiteSpace = createToken({
  name: 'WhiteSpace',
  pattern: /[ \t]+/,
  group: Lexer.SKIPPED,
  start_chars_hint: [' ', '\t'],
});

// ── Names ────────────────────────────────────────────────────────────────────

/** Any token that can stand where an `odataIdentifier` is expected (identifiers and keywords). */
export const Name = createToken({ name: 'Name', pattern: Lexer.NA, label: 'a name' });

/** Every infix operator of `commonExpr` except `has` and `in` (which bind as primaries); see `binaryPrecedence`. */
export const BinaryOperator = createToken({ name: 'BinaryOperator', pattern: Lexer.NA, label: 'an operator' });
export const BooleanLiteral = createToken({ name: 'BooleanLiteral', pattern: Lexer.NA, label: 'true or false' });
/** Every token that is a complete primitive literal on its own. */
export const Literal = createToken({ name: 'Literal', pattern: Lexer.NA, label: 'a literal' });

/** `odataIdentifier` (ASCII, as the strict ABNF). */
export const Identifier = createToken({
  name: 'Identifier',
  pattern: /[A-Za-z_][A-Za-z0-9_]*/,
  categories: [Name],
  start_chars_hint: IDENT_START,
  label: 'a name',
});

/** Length of the run of identifier characters (`[A-Za-z0-9_]`) starting at `offset`. */
function wordLength(text: string, offset: number): number {
  let i = offset;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const word = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95;
    if (!word) break;
  }
  return i - offset;
}

/**
 * A matcher that runs `pattern` only when a name at `offset` is followed by a dot. Every name would
 * otherwise pay for two failing regular expressions (qualified name, enum literal): 15% of a short parse.
 */
function afterDottedName(pattern: RegExp): { exec: (text: string, offset: number) => RegExpExecArray | null } {
  const sticky = new RegExp(pattern.source, 'y');
  return {
    exec(text, offset) {
      if (text.charCodeAt(offset + wordLength(text, offset)) !== 46 /* . */) return null;
      sticky.lastIndex = offset;
      return sticky.exec(text);
    },
  };
}

/** `qualifiedTypeName`, `namespace "." odataIdentifier`, `namespace ".*"`: `Model.Customer`, `geo.distance`, `Model.*`. */
export const QualifiedName = createToken({
  name: 'QualifiedName',
  pattern: afterDottedName(/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\.(?:[A-Za-z_][A-Za-z0-9_]*|\*)/),
  line_breaks: false,
  start_chars_hint: IDENT_START,
  label: 'a qualified name',
});

/** `$it`, `$this`, `$root`, `$count`, `$filter` and the other `$`-prefixed words. */
export const DollarName = createToken({
  name: 'DollarName',
  pattern: /\$[A-Za-z]+/,
  start_chars_hint: ['$'],
  label: "a '$' keyword",
});

/** `parameterAlias` (`@word`) or an annotation (`@Core.Messages`, `@Measures.Currency#Reporting`). */
export const AtName = createToken({
  name: 'AtName',
  pattern: /@[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*(?:#[A-Za-z_][A-Za-z0-9_]*)?/,
  start_chars_hint: ['@'],
  label: "an '@' alias",
});

// ── Literals (ABNF `primitiveLiteral`) ─────────────────────────────────────

/** `dateTimeOffsetValue`: a date, `T`, a time and a required offset. */
export const DateTimeOffsetLiteral = createToken({
  name: 'DateTimeOffsetLiteral',
  categories: [Literal],
  pattern: /-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/i,
  start_chars_hint: ['-', ...DIGITS],
  label: 'a DateTimeOffset',
});

/** A date and time without an offset: never valid in a URL, lexed only to say so precisely. */
export const DateTimeWithoutOffset = createToken({
  name: 'DateTimeWithoutOffset',
  pattern: /-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?/i,
  start_chars_hint: ['-', ...DIGITS],
  label: 'a DateTimeOffset without offset',
});

/** `dateValue`: `2024-05-01`, years may have more digits or a sign. */
export const DateLiteral = createToken({
  name: 'DateLiteral',
  categories: [Literal],
  pattern: /-?\d{4,}-\d{2}-\d{2}/,
  start_chars_hint: ['-', ...DIGITS],
  label: 'a Date',
});

/** `guidValue`: 8-4-4-4-12 hex digits. */
export const GuidLiteral = createToken({
  name: 'GuidLiteral',
  categories: [Literal],
  pattern: /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/,
  start_chars_hint: HEX_START,
  label: 'a Guid',
});

/** Something that starts like a Guid but is not one: lexed only to say where it goes wrong. */
export const MalformedGuid = createToken({
  name: 'MalformedGuid',
  pattern: /[0-9a-fA-F]{8}-[0-9a-fA-F]{1,4}(?:-[0-9a-fA-F]*)*/,
  // digits only: checking this pattern on every name that starts with a-f costs 5% of a short parse
  start_chars_hint: DIGITS,
  label: 'a malformed Guid',
});

/** `timeOfDayValue`: `08:30`, `08:30:00`, `08:30:00.123`. */
export const TimeOfDayLiteral = createToken({
  name: 'TimeOfDayLiteral',
  categories: [Literal],
  pattern: /\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?/,
  start_chars_hint: DIGITS,
  label: 'a TimeOfDay',
});

/** `INF`, `-INF`, `NaN` (case-sensitive, ABNF `%s"INF"`); not the start of a longer name. */
export const SpecialDoubleLiteral = createToken({
  name: 'SpecialDoubleLiteral',
  categories: [Literal],
  pattern: /-?INF(?![A-Za-z0-9_])|NaN(?![A-Za-z0-9_])/,
  start_chars_hint: ['-', 'I', 'N'],
  label: 'INF or NaN',
});

/** Integers, decimals and doubles with an optional sign (`%2B` decodes to `+`). */
export const NumberLiteral = createToken({
  name: 'NumberLiteral',
  categories: [Literal],
  pattern: /[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/,
  start_chars_hint: ['+', '-', ...DIGITS],
  label: 'a number',
});

/** `duration'P1DT2H'`. The bare `'P1DT2H'` form is a string literal the validator may read as a duration. */
export const DurationLiteral = createToken({
  name: 'DurationLiteral',
  categories: [Literal],
  pattern: /duration'[^']*'/i,
  start_chars_hint: ['d', 'D'],
  label: 'a duration',
});

/** `binary'...'` in base64url. */
export const BinaryLiteral = createToken({
  name: 'BinaryLiteral',
  categories: [Literal],
  pattern: /binary'[^']*'/i,
  start_chars_hint: ['b', 'B'],
  label: 'a binary literal',
});

/** `geography'SRID=0;Point(...)'` and `geometry'...'`: kept as text (the well-known-text is not interpreted). */
export const GeoLiteral = createToken({
  name: 'GeoLiteral',
  categories: [Literal],
  pattern: /geo(?:graphy|metry)'[^']*'/i,
  start_chars_hint: ['g', 'G'],
  label: 'a geo literal',
});

/** `enumLiteral` with its type: `Sales.Pattern'Yellow'`. */
export const EnumLiteral = createToken({
  name: 'EnumLiteral',
  categories: [Literal],
  pattern: afterDottedName(/[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+'(?:[^']|'')*'/),
  line_breaks: false,
  start_chars_hint: IDENT_START,
  label: 'an enumeration literal',
});

/** `stringLiteral`: single quotes, a quote inside doubled. */
export const StringLiteral = createToken({
  name: 'StringLiteral',
  categories: [Literal],
  pattern: /'(?:[^']|'')*'/,
  start_chars_hint: ["'"],
  label: 'a string',
});

/** A string that runs to the end without its closing quote: lexed only to report it well. */
export const UnterminatedString = createToken({
  name: 'UnterminatedString',
  pattern: /'(?:[^']|'')*/,
  start_chars_hint: ["'"],
  label: 'an unterminated string',
});

/** A JSON string: valid inside JSON arrays and objects (`Name in ["a","b"]`), a mistake elsewhere. */
export const JsonString = createToken({
  name: 'JsonString',
  // JSON forbids raw control characters inside strings
  pattern: /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/,
  start_chars_hint: ['"'],
  label: 'a double-quoted string',
});

export const UnterminatedJsonString = createToken({
  name: 'UnterminatedJsonString',
  pattern: /"[^"]*/,
  start_chars_hint: ['"'],
  label: 'an unterminated double-quoted string',
});

// ── Keywords (case-insensitive, ABNF quoted strings) ─────────────────────────

function keyword(word: string, extra: { categories?: TokenType[]; longer_alt?: TokenType[] } = {}): TokenType {
  return createToken({
    name: word[0]!.toUpperCase() + word.slice(1),
    pattern: new RegExp(word, 'i'),
    longer_alt: extra.longer_alt ?? [Identifier],
    categories: [Name, ...(extra.categories ?? [])],
    start_chars_hint: [word[0]!, word[0]!.toUpperCase()],
    label: `'${word}'`,
  });
}

export const And = keyword('and', { categories: [BinaryOperator] });
export const Or = keyword('or', { categories: [BinaryOperator] });
export const Not = keyword('not');
export const Eq = keyword('eq', { categories: [BinaryOperator] });
export const Ne = keyword('ne', { categories: [BinaryOperator] });
export const Gt = keyword('gt', { categories: [BinaryOperator] });
export const Ge = keyword('ge', { categories: [BinaryOperator] });
export const Lt = keyword('lt', { categories: [BinaryOperator] });
export const Le = keyword('le', { categories: [BinaryOperator] });
export const Has = keyword('has');
export const In = keyword('in');
export const Add = keyword('add', { categories: [BinaryOperator] });
export const Sub = keyword('sub', { categories: [BinaryOperator] });
export const Mul = keyword('mul', { categories: [BinaryOperator] });
export const DivBy = keyword('divby', { categories: [BinaryOperator] });
export const Div = keyword('div', { categories: [BinaryOperator], longer_alt: [DivBy, Identifier] });
export const Mod = keyword('mod', { categories: [BinaryOperator] });
export const Asc = keyword('asc');
export const Desc = keyword('desc');
export const True = keyword('true', { categories: [BooleanLiteral, Literal] });
export const False = keyword('false', { categories: [BooleanLiteral, Literal] });
/** `null` is case-sensitive in the ABNF (`%s"null"`). */
export const Null = createToken({
  name: 'Null',
  pattern: /null/,
  longer_alt: Identifier,
  categories: [Name, Literal],
  start_chars_hint: ['n'],
  label: 'null',
});

// ── Punctuation ──────────────────────────────────────────────────────────────

const punctuation = (name: string, char: string): TokenType => createToken({ name, pattern: char, label: `'${char}'` });

export const LParen = punctuation('LParen', '(');
export const RParen = punctuation('RParen', ')');
export const LBracket = punctuation('LBracket', '[');
export const RBracket = punctuation('RBracket', ']');
export const LBrace = punctuation('LBrace', '{');
export const RBrace = punctuation('RBrace', '}');
export const Comma = punctuation('Comma', ',');
export const Slash = punctuation('Slash', '/');
export const Colon = punctuation('Colon', ':');
export const Semicolon = punctuation('Semicolon', ';');
export const Equals = punctuation('Equals', '=');
export const Star = punctuation('Star', '*');
export const Minus = punctuation('Minus', '-');

/** Every token the lexer can produce, in matching order. */
export const allTokens: TokenType[] = [
  WhiteSpace,
  DateTimeOffsetLiteral,
  DateTimeWithoutOffset,
  DateLiteral,
  GuidLiteral,
  MalformedGuid,
  TimeOfDayLiteral,
  SpecialDoubleLiteral,
  NumberLiteral,
  DurationLiteral,
  BinaryLiteral,
  GeoLiteral,
  EnumLiteral,
  QualifiedName,
  // keywords before the identifier they would otherwise lose to
  And,
  Or,
  Not,
  Eq,
  Ne,
  Gt,
  Ge,
  Lt,
  Le,
  Has,
  In,
  Add,
  Sub,
  Mul,
  DivBy,
  Div,
  Mod,
  Asc,
  Desc,
  True,
  False,
  Null,
  Identifier,
  DollarName,
  AtName,
  StringLiteral,
  UnterminatedString,
  JsonString,
  UnterminatedJsonString,
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Slash,
  Colon,
  Semicolon,
  Equals,
  Star,
  Minus,
  // categories
  Name,
  BinaryOperator,
  BooleanLiteral,
  Literal,
];

/** Binding strength of each binary operator token, weakest first (OData 4.01 Part 2 §5.1.1.16). */
export const binaryPrecedence: ReadonlyMap<TokenType, number> = new Map([
  [Or, 1],
  [And, 2],
  [Eq, 3],
  [Ne, 3],
  [Gt, 4],
  [Ge, 4],
  [Lt, 4],
  [Le, 4],
  [Add, 5],
  [Sub, 5],
  [Mul, 6],
  [Div, 6],
  [DivBy, 6],
  [Mod, 6],
]);

/** Tokens that read as one literal word, well-formed or not (used to recognize two words glued together). */
export const literalTokens: readonly TokenType[] = [
  ...allTokens.filter(
    (token) => token !== True && token !== False && token !== Null && token.CATEGORIES?.includes(Literal),
  ),
  DateTimeWithoutOffset,
  MalformedGuid,
  UnterminatedString,
];

/** The single lexer instance. `ensureOptimizations` fails loudly if a pattern defeats first-char dispatch. */
export const odataLexer = new Lexer(allTokens, {
  positionTracking: 'onlyOffset',
  ensureOptimizations: true,
  // Hints above cover every token; skipping the runtime analysis keeps module load fast.
  skipValidations: false,
});
