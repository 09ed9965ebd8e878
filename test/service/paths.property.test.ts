// Key predicates: the two forms read without the parser (a quoted string, up to nine digits) give exactly what the
// parser gives, and everything else still goes to it (with its errors).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseKeyPredicate } from '../../src/service/paths.js';
import { parseFilter } from '../../src/syntax/parser.js';

const viaParser = (text: string): unknown => {
  try {
    const expr = parseFilter(text.trim());
    return expr.kind === 'literal' ? expr.literal : 'not a literal';
  } catch {
    return 'not a literal';
  }
};
const single = (text: string): unknown => {
  try {
    const key = parseKeyPredicate(text, 'Items');
    return key.kind === 'single' ? key.value : 'named';
  } catch {
    return 'not a literal';
  }
};

describe('parseKeyPredicate (property)', () => {
  it('reads quoted strings and plain digits as the parser does', () => {
    const character = fc.oneof(
      fc.constantFrom("'", ',', '(', ' ', '%'),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    );
    const quoted = fc.array(character, { maxLength: 12 }).map((cs) => `'${cs.join('').replace(/'/g, "''")}'`);
    const digits = fc.stringMatching(/^\d{1,12}$/);
    const near = fc.constantFrom(
      "'a'b'",
      "''",
      "'''",
      "'a''",
      ' 5',
      '5 ',
      '-5',
      '+5',
      '05',
      '5.0',
      '1e3',
      'null',
      'true',
    );
    fc.assert(
      fc.property(fc.oneof(quoted, digits, near), (text) => {
        // U+0000 in a string key is refused before either reading
        if (text.includes('\u0000')) expect(single(text)).toBe('not a literal');
        else expect(single(text), text).toEqual(viaParser(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('reads each part of a composite key the same way', () => {
    const key = parseKeyPredicate("PONumber='PO-1',LineNumber=2", 'POLineItems');
    expect(key).toEqual({
      kind: 'named',
      values: new Map<string, unknown>([
        ['PONumber', { type: 'Edm.String', value: 'PO-1' }],
        ['LineNumber', { type: 'Edm.Int32', value: 2 }],
      ]),
    });
  });
});
