// A JSON reader (RFC 8259) that keeps every number's source text, for request bodies and import files: JSON.parse
// turns `1234567890123.4567` into the double 1234567890123.4568 before anyone can see the digits, and Node 20's
// reviver has no access to the source (`context.source` came later). Otherwise it reads what JSON.parse reads, with
// these differences, each on purpose:
// - a number is a `JsonNumber` holding its text (`toNumber()` is what JSON.parse would give);
// - objects have a null prototype, so a `__proto__` member is plain data and no inherited name is ever read;
// - a name twice in one object is refused (RFC 8259: "the behavior ... is unpredictable"; I-JSON forbids it), rather
//   than letting the last one win silently where another reader of the same text would take the first;
// - nesting deeper than `maxDepth` is refused; the reader itself never recurses, so no input overflows the stack.
// Speed: a string without escapes is one sticky regular-expression scan and a slice (a 13.4 MiB base64 attachment
// reads faster than with JSON.parse); a string with escapes is decoded by JSON.parse, so escapes (lone surrogates
// included) mean exactly what they mean to JSON.parse, and is walked here only when JSON.parse refuses it, for the
// message. lossless-json, the maintained library for this, reads strings a character at a time (about 100 times
// slower on an attachment) and recurses (100,000 `[` overflow the stack).

/** A JSON number as written in the text, so that no digit is lost to a double. */
export class JsonNumber {
  constructor(readonly text: string) {}

  /** The nearest double, as JSON.parse gives it. */
  toNumber(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  toJSON(): number {
    return this.toNumber();
  }
}

export type JsonValue = null | boolean | string | JsonNumber | JsonArray | JsonObject;
export type JsonArray = JsonValue[];
/** An object with a null prototype: only its own members exist. */
export interface JsonObject {
  [name: string]: JsonValue;
}

/** Text that is not JSON (or nests too deep), with the position (UTF-16 code units, as JavaScript indexes strings). */
export class JsonSyntaxError extends Error {
  override readonly name = 'JsonSyntaxError';
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
  }
}

export interface ReadJsonOptions {
  /** Arrays and objects nested deeper than this are refused (default 100: no record format needs more). */
  readonly maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 100;

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const UPPER_E = 0x45;
const OPEN_BRACKET = 0x5b;
const BACKSLASH = 0x5c;
const CLOSE_BRACKET = 0x5d;
const LOWER_E = 0x65;
const LOWER_F = 0x66;
const LOWER_N = 0x6e;
const LOWER_T = 0x74;
const LOWER_U = 0x75;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/** A run of characters a string holds as they are (sticky: it ends where a quote, backslash or control character is). */
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
/** What may follow a backslash (`u` is checked on its own). */
const SIMPLE_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
const HEX4 = /^[0-9A-Fa-f]{4}$/;

/** The JSON value of `text`; a `JsonSyntaxError` when it is not JSON. */
export function readJson(text: string, options: ReadJsonOptions = {}): JsonValue {
  return new Reader(text, options.maxDepth ?? DEFAULT_MAX_DEPTH).read();
}

/** The index of the first quote, backslash or control character from `from` on (the text's length if none). */
function runEnd(text: string, from: number): number {
  STRING_RUN.lastIndex = from;
  STRING_RUN.test(text); // `*`: always matches, possibly empty
  return STRING_RUN.lastIndex;
}

/** Whether the character at `at` is escaped: preceded by an odd run of backslashes. */
function escaped(text: string, at: number): boolean {
  let k = at - 1;
  while (text.charCodeAt(k) === BACKSLASH) k--;
  return (at - 1 - k) % 2 === 1;
}

class Reader {
  private i = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  read(): JsonValue {
    const { text } = this;
    // Open arrays and objects, innermost last; for an object, the name its next value belongs to.
    const open: (JsonArray | JsonObject)[] = [];
    const names: string[] = [];
    /** Where each of those names starts, for the message about a name sent twice. */
    const nameStarts: number[] = [];
    this.skipWhitespace();
    for (;;) {
      // A value starts at `i`.
      let value: JsonValue;
      const c = text.charCodeAt(this.i);
      if (c === QUOTE) {
        value = this.readString();
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (open.length >= this.maxDepth) {
          throw this.error(`arrays and objects are nested more than ${this.maxDepth} deep`, this.i);
        }
        this.i++;
        this.skipWhitespace();
        const close = c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET;
        const container: JsonArray | JsonObject = c === OPEN_BRACE ? (Object.create(null) as JsonObject) : [];
        if (text.charCodeAt(this.i) === close) {
          this.i++;
          value = container;
        } else {
          open.push(container);
          nameStarts.push(this.i);
          names.push(c === OPEN_BRACE ? this.readName() : '');
          continue;
        }
      } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
        value = this.readNumber();
      } else if (c === LOWER_T && text.startsWith('true', this.i)) {
        this.i += 4;
        value = true;
      } else if (c === LOWER_F && text.startsWith('false', this.i)) {
        this.i += 5;
        value = false;
      } else if (c === LOWER_N && text.startsWith('null', this.i)) {
        this.i += 4;
        value = null;
      } else {
        throw this.expected('a value (a string, number, object, array, true, false or null)');
      }
      // The value is complete: add it to the innermost open container, closing containers as they end.
      for (;;) {
        this.skipWhitespace();
        const container = open[open.length - 1];
        if (container === undefined) {
          if (this.i < text.length) throw this.expected('the end of the text after the JSON value');
          return value;
        }
        const next = text.charCodeAt(this.i);
        if (Array.isArray(container)) {
          container.push(value);
          if (next === COMMA) break;
          if (next !== CLOSE_BRACKET) throw this.expected("',' or ']' after an array element");
        } else {
          const name = names[names.length - 1]!;
          // No member value is ever undefined, so this is "has an own member of that name" (the prototype is null).
          if (container[name] !== undefined) throw this.duplicate(name, nameStarts[nameStarts.length - 1]!);
          container[name] = value;
          if (next === COMMA) break;
          if (next !== CLOSE_BRACE) throw this.expected("',' or '}' after an object member");
        }
        this.i++;
        open.pop();
        names.pop();
        nameStarts.pop();
        value = container;
      }
      // After a comma: the next element, or the next member's name.
      this.i++;
      this.skipWhitespace();
      if (!Array.isArray(open[open.length - 1])) {
        nameStarts[nameStarts.length - 1] = this.i;
        names[names.length - 1] = this.readName();
      }
    }
  }

  private skipWhitespace(): void {
    const { text } = this;
    let c = text.charCodeAt(this.i);
    while (c === SPACE || c === LF || c === CR || c === TAB) c = text.charCodeAt(++this.i);
  }

  /** A member name and its colon; leaves `i` at the start of the member's value. */
  private readName(): string {
    if (this.text.charCodeAt(this.i) !== QUOTE) throw this.expected('a property name in double quotes');
    const name = this.readString();
    this.skipWhitespace();
    if (this.text.charCodeAt(this.i) !== COLON) throw this.expected("':' after the property name");
    this.i++;
    this.skipWhitespace();
    return name;
  }

  /** The string whose opening quote is at `i`; leaves `i` after its closing quote. */
  private readString(): string {
    const { text } = this;
    const start = this.i;
    const at = runEnd(text, start + 1);
    if (at >= text.length) throw this.error('the string is not closed', start);
    if (text.charCodeAt(at) === QUOTE) {
      this.i = at + 1;
      return text.slice(start + 1, at);
    }
    // An escape: the string ends at the first quote not itself escaped (an even run of backslashes before it), and
    // JSON.parse decodes it, so escapes mean exactly what they mean to JSON.parse. Only when that fails is the string
    // walked, for a message that says what is wrong where.
    let end = text.indexOf('"', at);
    while (end !== -1 && escaped(text, end)) end = text.indexOf('"', end + 1);
    if (end !== -1) {
      try {
        const value = JSON.parse(text.slice(start, end + 1)) as string;
        this.i = end + 1;
        return value;
      } catch {
        // a control character or a bad escape: found below
      }
    }
    throw this.stringError(start, at);
  }

  /** What is wrong with the string opened at `start` (its first special character at `at`), which JSON.parse refused. */
  private stringError(start: number, at: number): JsonSyntaxError {
    const { text } = this;
    for (let j = at; j < text.length; j = runEnd(text, j)) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) return this.error('the string is not valid JSON', start); // JSON.parse refused it
      if (c !== BACKSLASH) {
        const code = c.toString(16).toUpperCase().padStart(4, '0');
        return this.error(`the control character U+${code} must be escaped in a string`, j);
      }
      if (j + 1 >= text.length) break;
      if (text.charCodeAt(j + 1) === LOWER_U) {
        if (!HEX4.test(text.slice(j + 2, j + 6)))
          return this.error('\\u in a string must be followed by four hexadecimal digits', j);
        j += 6;
      } else if (SIMPLE_ESCAPES.has(text.charAt(j + 1))) {
        j += 2;
      } else {
        const next = text.charCodeAt(j + 1);
        const shown = next < SPACE ? `U+${next.toString(16).toUpperCase().padStart(4, '0')}` : text.charAt(j + 1);
        return this.error(`\\${shown} is not an escape JSON allows (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)`, j);
      }
    }
    return this.error('the string is not closed', start);
  }

  /** `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` at `i`, as its text. */
  private readNumber(): JsonNumber {
    const { text } = this;
    const start = this.i;
    let j = start;
    if (text.charCodeAt(j) === MINUS) j++;
    let c = text.charCodeAt(j);
    if (c === ZERO) {
      c = text.charCodeAt(++j);
      if (c >= ZERO && c <= NINE) throw this.error('a number must not have a leading zero', start);
    } else if (c > ZERO && c <= NINE) {
      do c = text.charCodeAt(++j);
      while (c >= ZERO && c <= NINE);
    } else {
      this.i = j;
      throw this.expected("a digit after '-'");
    }
    if (c === DOT) {
      c = text.charCodeAt(++j);
      if (!(c >= ZERO && c <= NINE)) {
        this.i = j;
        throw this.expected('a digit after the decimal point');
      }
      do c = text.charCodeAt(++j);
      while (c >= ZERO && c <= NINE);
    }
    if (c === LOWER_E || c === UPPER_E) {
      c = text.charCodeAt(++j);
      if (c === PLUS || c === MINUS) c = text.charCodeAt(++j);
      if (!(c >= ZERO && c <= NINE)) {
        this.i = j;
        throw this.expected('a digit in the exponent');
      }
      do c = text.charCodeAt(++j);
      while (c >= ZERO && c <= NINE);
    }
    this.i = j;
    return new JsonNumber(text.slice(start, j));
  }

  private expected(what: string): JsonSyntaxError {
    return this.error(`expected ${what}`, this.i, true);
  }

  private duplicate(name: string, position: number): JsonSyntaxError {
    const shown = name.length > 40 ? `${JSON.stringify(name.slice(0, 40))}…` : JSON.stringify(name);
    return this.error(`the name ${shown} appears twice in one object`, position);
  }

  /** `what` at `position`, with the line and column beyond the first line (import files), and what is there. */
  private error(what: string, position: number, found = false): JsonSyntaxError {
    const { text } = this;
    let where = `at position ${position}`;
    const lineStart = position === 0 ? 0 : text.lastIndexOf('\n', position - 1) + 1;
    if (lineStart > 0) {
      let line = 1;
      for (let k = text.indexOf('\n'); k !== -1 && k < position; k = text.indexOf('\n', k + 1)) line++;
      where += ` (line ${line}, column ${position - lineStart + 1})`;
    }
    return new JsonSyntaxError(`${what} ${where}${found ? `; found ${this.foundAt(position)}` : ''}`, position);
  }

  /** What is at `position`, for messages: a word up to 20 characters, one character, or the end. */
  private foundAt(position: number): string {
    if (position >= this.text.length) return 'the end of the text';
    const word = /[^\s"',:[\]{}]{1,20}/y;
    word.lastIndex = position;
    const found = word.exec(this.text)?.[0] ?? this.text.charAt(position);
    // quoted as JSON when it holds what single quotes would hide (a quote, a control character, a lone surrogate)
    return /['\u0000-\u001f\ud800-\udfff]/.test(found) ? JSON.stringify(found) : `'${found}'`;
  }
}
