// The JSON reader of request bodies and import files (src/server/json-reader.ts): it reads what JSON.parse reads, with
// each number's source text kept, and refuses what JSON.parse refuses, with a position; the documented differences
// (a name twice in one object, nesting beyond maxDepth) are tested on their own. Hostile input: deep nesting, huge
// strings, lone surrogates.
import { randomBytes } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber, JsonSyntaxError, readJson, type JsonValue } from '../../src/service/json-reader.js';

/** What JSON.parse gives for the same text: numbers as doubles, objects with Object.prototype. */
function asJsonParse(value: JsonValue): unknown {
  if (value instanceof JsonNumber) return value.toNumber();
  if (Array.isArray(value)) return value.map(asJsonParse);
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const [name, member] of Object.entries(value))
      Object.defineProperty(out, name, {
        value: asJsonParse(member),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return value;
}

/** Compact JSON text of a value, numbers written as their source text. */
function writeBack(value: JsonValue): string {
  if (value instanceof JsonNumber) return value.text;
  if (Array.isArray(value)) return `[${value.map(writeBack).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.entries(value)
      .map(([name, member]) => `${JSON.stringify(name)}:${writeBack(member)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

function outcome(run: () => unknown): Outcome {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    return { ok: false, error };
  }
}

function syntaxError(text: string, options = {}): JsonSyntaxError {
  const result = outcome(() => readJson(text, options));
  if (result.ok) throw new Error(`expected a JsonSyntaxError for ${JSON.stringify(text.slice(0, 80))}`);
  expect(result.error).toBeInstanceOf(JsonSyntaxError);
  return result.error as JsonSyntaxError;
}

/** Any UTF-16 code unit, lone surrogates and control characters included. */
const codeUnit = fc.nat(0xffff).map((c) => String.fromCharCode(c));
const anyText = fc.string({ unit: codeUnit, maxLength: 30 });
const unlimited = { maxDepth: Infinity };

describe('agreement with JSON.parse', () => {
  it('property: every JSON document reads as JSON.parse reads it, numbers with their exact text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom(undefined, 2, '\t', ' \r\n'), (value, space) => {
        const text = JSON.stringify(value, null, space);
        const read = readJson(text, unlimited);
        expect(isDeepStrictEqual(asJsonParse(read), JSON.parse(text))).toBe(true);
        // JSON.stringify wrote each number as its shortest text, which the reader keeps digit for digit
        expect(writeBack(read)).toBe(JSON.stringify(value));
      }),
      { numRuns: 1000 },
    );
  });

  it('property: documents of fc.json (strings of any code points, lone surrogates escaped) agree', () => {
    fc.assert(
      fc.property(fc.json({ maxDepth: 3, stringUnit: 'binary' }), (text) => {
        expect(isDeepStrictEqual(asJsonParse(readJson(text)), JSON.parse(text))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  /** Number tokens of the JSON grammar, long mantissas and huge exponents included. */
  const numberToken = fc
    .tuple(
      fc.boolean(),
      fc.oneof(fc.constant('0'), fc.stringMatching(/^[1-9][0-9]{0,60}$/)),
      fc.option(fc.stringMatching(/^[0-9]{1,60}$/), { nil: undefined }),
      fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,4}$/)), {
        nil: undefined,
      }),
    )
    .map(
      ([negative, whole, fraction, exponent]) =>
        `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : exponent.join('')}`,
    );

  it('property: a number keeps its text exactly, and toNumber() is what JSON.parse gives (-0 and ±Infinity too)', () => {
    fc.assert(
      fc.property(fc.array(numberToken, { minLength: 1, maxLength: 8 }), (tokens) => {
        const text = `[${tokens.join(' , ')}]`;
        const read = readJson(text);
        const expected = JSON.parse(text) as number[];
        expect(Array.isArray(read)).toBe(true);
        const numbers = read as JsonNumber[];
        expect(numbers.map((n) => n.text)).toEqual(tokens);
        numbers.forEach((n, i) => expect(Object.is(n.toNumber(), expected[i])).toBe(true));
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps the digits a double cannot hold', () => {
    const read = readJson('{"a":1234567890123.4567,"b":99999999999999.9999,"c":1e-400,"d":-0,"e":1.5E+3,"f":0.10}');
    const texts = Object.fromEntries(Object.entries(read as object).map(([k, v]) => [k, (v as JsonNumber).text]));
    expect(texts).toEqual({
      a: '1234567890123.4567',
      b: '99999999999999.9999',
      c: '1e-400',
      d: '-0',
      e: '1.5E+3',
      f: '0.10',
    });
    expect(JSON.parse('1234567890123.4567')).toBe(1234567890123.4568); // what JSON.parse would have kept
    const long = `1.${'0'.repeat(397)}1`; // 400 characters
    expect((readJson(long) as JsonNumber).text).toBe(long);
    expect(Object.is((readJson('-0') as JsonNumber).toNumber(), -0)).toBe(true);
    expect((readJson('9223372036854775807') as JsonNumber).text).toBe('9223372036854775807');
  });

  /** Text near JSON: valid documents with one character deleted, inserted or replaced, or cut short. */
  const nearJson = fc
    .tuple(
      fc.json({ maxDepth: 2 }),
      fc.nat(),
      fc.constantFrom('delete', 'insert', 'replace', 'cut'),
      fc.constantFrom(...'{}[],:"\\ \t\n\u0000\u001f0123456789eE.+-tfnulra\ud800/'.split('')),
    )
    .map(([text, at, how, c]) => {
      const i = at % (text.length + 1);
      if (how === 'delete') return text.slice(0, i) + text.slice(i + 1);
      if (how === 'insert') return text.slice(0, i) + c + text.slice(i);
      if (how === 'replace') return text.slice(0, i) + c + text.slice(i + 1);
      return text.slice(0, i);
    });

  it('property: text near JSON is refused exactly when JSON.parse refuses it, and read alike when not', () => {
    fc.assert(
      fc.property(fc.oneof(nearJson, anyText), (text) => {
        const expected = outcome(() => JSON.parse(text));
        const actual = outcome(() => readJson(text));
        if (!actual.ok) {
          expect(actual.error).toBeInstanceOf(JsonSyntaxError);
          const error = actual.error as JsonSyntaxError;
          expect(error.position).toBeGreaterThanOrEqual(0);
          expect(error.position).toBeLessThanOrEqual(text.length);
          expect(error.message).toMatch(/ at position \d+/);
          // the one refusal JSON.parse does not make: a name twice in one object
          if (expected.ok) expect(error.message).toMatch(/^the name ".*" appears twice in one object/);
        } else {
          expect(expected.ok).toBe(true);
          if (expected.ok) expect(isDeepStrictEqual(asJsonParse(actual.value as JsonValue), expected.value)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });
});

describe('differences from JSON.parse, on purpose', () => {
  it('objects have a null prototype; __proto__ is an own member like any other', () => {
    const read = readJson('{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}') as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(read)).toBeNull();
    expect(Object.keys(read)).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(read['__proto__'])).toBeNull();
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(readJson('{}')).toEqual(Object.create(null));
    expect(Object.getPrototypeOf(readJson('{}'))).toBeNull();
  });

  it('a name twice in one object is refused, at the second', () => {
    const error = syntaxError('{"Status":"Approved","Status":"Draft"}');
    expect(error.message).toBe('the name "Status" appears twice in one object at position 21');
    expect(error.position).toBe(21);
    expect(syntaxError('{"a":{"b":1,"b":1}}').message).toMatch(/^the name "b" appears twice/);
    expect(syntaxError(`{"${'x'.repeat(100)}":1,"${'x'.repeat(100)}":2}`).message).toMatch(
      /^the name "x{40}"… appears twice/,
    );
    // the same name in different objects is fine
    expect(asJsonParse(readJson('[{"a":1},{"a":2}]'))).toEqual([{ a: 1 }, { a: 2 }]);
  });

  it('nesting deeper than maxDepth (default 100) is refused where it starts', () => {
    expect(() => readJson(`${'['.repeat(100)}${']'.repeat(100)}`)).not.toThrow();
    const error = syntaxError(`${'['.repeat(101)}${']'.repeat(101)}`);
    expect(error.message).toBe('arrays and objects are nested more than 100 deep at position 100');
    expect(syntaxError('[{"a":[[]]}]', { maxDepth: 3 }).position).toBe(7);
    expect(() => readJson('[{"a":[]}]', { maxDepth: 3 })).not.toThrow();
  });
});

describe('hostile input', () => {
  it('100,000 [ is a clean error, never a stack overflow', () => {
    const text = '['.repeat(100_000);
    expect(syntaxError(text).position).toBe(100);
    const unlimitedError = syntaxError(text, unlimited);
    expect(unlimitedError.message).toMatch(/^expected a value .* at position 100000; found the end of the text$/);
    expect(syntaxError('{"a":'.repeat(100_000)).message).toMatch(/nested more than 100 deep/);
  });

  it('100,000 levels of valid nesting read without recursion when allowed', () => {
    const text = `${'['.repeat(100_000)}1${']'.repeat(100_000)}`;
    let value: JsonValue = readJson(text, unlimited);
    let depth = 0;
    while (Array.isArray(value)) {
      expect(value.length).toBe(1);
      value = value[0]!;
      depth++;
    }
    expect(depth).toBe(100_000);
    expect((value as JsonNumber).text).toBe('1');
  });

  // (its speed beside JSON.parse is measured by `npm run bench -- body`, not asserted here)
  it('a 13.4 MiB base64 string (a 10 MiB attachment) reads as JSON.parse reads it', () => {
    const content = randomBytes(10 * 1024 * 1024).toString('base64');
    const text = JSON.stringify({ PONumber: 'PO-1', FileName: 'a.pdf', ContentBase64: content });
    const read = readJson(text) as Record<string, unknown>;
    expect(read['ContentBase64'] === content).toBe(true);
  });

  it('huge strings with escapes, unterminated, or with a raw control character at the end', () => {
    const escapes = `"${'a\\n\\u00e9\\"'.repeat(500_000)}"`;
    expect(readJson(escapes)).toBe(JSON.parse(escapes));
    const open = `"${'x'.repeat(5_000_000)}`;
    expect(syntaxError(open).message).toBe('the string is not closed at position 0');
    const escapedOpen = `"${'x\\"'.repeat(1_000_000)}`;
    expect(syntaxError(escapedOpen).message).toBe('the string is not closed at position 0');
    const control = `"${'x'.repeat(5_000_000)}\n"`;
    expect(syntaxError(control).message).toBe(
      'the control character U+000A must be escaped in a string at position 5000001',
    );
    const lateControl = `"${'\\n'.repeat(1_000_000)}\u0001"`;
    expect(syntaxError(lateControl).position).toBe(2_000_001);
  });

  it('lone surrogates, escaped or raw, are kept as JSON.parse keeps them', () => {
    for (const text of [
      '"\\ud800"',
      '"\\udc00\\ud800"',
      '"\\ud83d\\ude80"',
      '"\\uD83Dx"',
      '"\ud800"',
      '"a\udc00b"',
      '{"\\ud800":"\\udfff"}',
    ]) {
      expect(isDeepStrictEqual(asJsonParse(readJson(text)), JSON.parse(text)), text).toBe(true);
    }
    fc.assert(
      fc.property(anyText, (s) => {
        const escaped = JSON.stringify(s); // escapes control characters and lone surrogates
        expect(readJson(escaped)).toBe(s);
        const raw = `"${s.replace(/["\\\u0000-\u001f]/g, '')}"`;
        expect(readJson(raw)).toBe(JSON.parse(raw));
      }),
      { numRuns: 500 },
    );
  });
});

describe('messages say what was expected, where', () => {
  const value = 'expected a value (a string, number, object, array, true, false or null)';
  const escapes = String.raw`(\" \\ \/ \b \f \n \r \t \uXXXX)`;
  const cases: [text: string, message: string][] = [
    ['', `${value} at position 0; found the end of the text`],
    ['{"RequestedBy":"KIM",}', `expected a property name in double quotes at position 21; found '}'`],
    ['[1,]', `${value} at position 3; found ']'`],
    ['{"a" 1}', `expected ':' after the property name at position 5; found '1'`],
    ['{"a":1 "b":2}', `expected ',' or '}' after an object member at position 7; found '"'`],
    ['[1 2]', `expected ',' or ']' after an array element at position 3; found '2'`],
    ['{"a":tru}', `${value} at position 5; found 'tru'`],
    ["{'a':1}", `expected a property name in double quotes at position 1; found "'"`],
    ['{"a":NaN}', `${value} at position 5; found 'NaN'`],
    ['{"a":1}x', `expected the end of the text after the JSON value at position 7; found 'x'`],
    ['{"a":1}{"a":1}', `expected the end of the text after the JSON value at position 7; found '{'`],
    ['01', 'a number must not have a leading zero at position 0'],
    ['-', `expected a digit after '-' at position 1; found the end of the text`],
    ['-a', `expected a digit after '-' at position 1; found 'a'`],
    ['1.', 'expected a digit after the decimal point at position 2; found the end of the text'],
    ['1.e5', `expected a digit after the decimal point at position 2; found 'e5'`],
    ['1e+', 'expected a digit in the exponent at position 3; found the end of the text'],
    ['.5', `${value} at position 0; found '.5'`],
    ['"abc', 'the string is not closed at position 0'],
    ['["a\\x"]', `\\x is not an escape JSON allows ${escapes} at position 3`],
    ['"\\u12G4"', '\\u in a string must be followed by four hexadecimal digits at position 1'],
    ['"a\tb"', 'the control character U+0009 must be escaped in a string at position 2'],
    ['"\\\u0001"', `\\U+0001 is not an escape JSON allows ${escapes} at position 1`],
    ['\ufeff{}', `${value} at position 0; found '\ufeff'`],
    ['[\n  1,\n  2\n  3\n]', `expected ',' or ']' after an array element at position 13 (line 4, column 3); found '3'`],
    ['"\ud800', 'the string is not closed at position 0'],
    ['[\ud800]', `${value} at position 1; found "\\ud800"`],
  ];
  it.each(cases)('%j: %s', (text, message) => {
    const error = syntaxError(text);
    expect(error.message).toBe(message);
    expect(error.position).toBe(Number(/at position (\d+)/.exec(message)![1]));
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
  });
});

describe('JsonNumber', () => {
  it('is its text as a string, and the nearest double as a number and in JSON.stringify', () => {
    const n = new JsonNumber('1234567890123.4567');
    expect(String(n)).toBe('1234567890123.4567');
    expect(n.toNumber()).toBe(1234567890123.4568);
    expect(JSON.stringify({ n })).toBe('{"n":1234567890123.4568}');
  });
});
