// Typical mistakes give an ODataError with a stable code, the option, the exact position and a
// message that names what was expected.
import { describe, expect, it } from 'vitest';
import { isODataError, parseQuery, toODataErrorBody, type ErrorCode } from '../../src/index.js';

interface Mistake {
  readonly what: string;
  readonly query: string;
  readonly code: ErrorCode;
  readonly target: string;
  readonly position: number | undefined;
  /** Fragments the message must contain: what was found or expected. */
  readonly says: readonly string[];
}

const mistakes: readonly Mistake[] = [
  {
    what: 'misspelled operator',
    query: "$filter=Name eqq 'abc'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 5,
    says: ["'eqq'", 'expected an operator', "did you mean 'eq'?"],
  },
  {
    what: 'unterminated string',
    query: "$filter=Name eq 'abc",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 8,
    says: ['Unterminated string', 'closing quote'],
  },
  {
    what: 'double-quoted string',
    query: '$filter=Name eq "abc"',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 8,
    says: ['single quotes', "'abc'"],
  },
  {
    what: 'missing right operand',
    query: '$filter=Name eq',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 7,
    says: ['end of input', 'expected an operand'],
  },
  {
    what: 'missing operand after a literal',
    query: '$filter=1 eq',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 4,
    says: ['expected an operand'],
  },
  {
    what: 'dangling and',
    query: '$filter=Price gt 10 and',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 15,
    says: ['expected an operand'],
  },
  {
    what: 'negative $top',
    query: '$top=-1',
    code: 'InvalidTop',
    target: '$top',
    position: 0,
    says: ['non-negative integer', "'-1'"],
  },
  {
    what: 'non-numeric $top',
    query: '$top=abc',
    code: 'InvalidTop',
    target: '$top',
    position: 0,
    says: ['non-negative integer', "'abc'"],
  },
  {
    what: '$top beyond the limit',
    query: '$top=99999999999999999999',
    code: 'InvalidTop',
    target: '$top',
    position: 0,
    says: ['larger than the limit'],
  },
  {
    what: 'fractional $skip',
    query: '$skip=1.5',
    code: 'InvalidSkip',
    target: '$skip',
    position: 1,
    says: ['non-negative integer'],
  },
  {
    what: 'unknown $option',
    query: "$fitler=Name eq 'a'",
    code: 'UnknownOption',
    target: '$fitler',
    position: undefined,
    says: ["'$fitler'", "did you mean '$filter'?"],
  },
  {
    what: 'duplicate option',
    query: '$top=1&top=2',
    code: 'DuplicateOption',
    target: '$top',
    position: undefined,
    says: ['more than once'],
  },
  {
    what: 'unclosed parenthesis',
    query: "$filter=(Name eq 'a'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 12,
    says: ["expected ')'"],
  },
  {
    what: 'extra closing parenthesis',
    query: "$filter=Name eq 'a')",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 11,
    says: ["Unexpected ')'", 'or the end of $filter'],
  },
  {
    what: 'no space after the operator',
    query: "$filter=Name eq'a'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 7,
    says: ["Expected a space after 'eq'"],
  },
  {
    what: 'misspelled function',
    query: "$filter=contians(Name,'a')",
    code: 'UnknownFunction',
    target: '$filter',
    position: 0,
    says: ["'contians'", "did you mean 'contains'?"],
  },
  {
    what: 'DateTimeOffset without offset',
    query: '$filter=RequestedDate gt 2024-05-01T08:30:00',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 17,
    says: ['needs a time zone offset', '2024-05-01T08:30:00Z'],
  },
  {
    what: 'impossible month',
    query: '$filter=RequiredDate eq 2024-13-01',
    code: 'InvalidLiteral',
    target: '$filter',
    position: 21,
    says: ['Month 13'],
  },
  {
    what: 'OData v2 typed literal',
    query: "$filter=RequestedDate eq datetime'2024-01-01T00:00:00'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 17,
    says: ['not an OData 4 literal', '2024-05-01'],
  },
  {
    what: 'unescaped quote in a string',
    query: "$filter=Name eq 'O'Neil'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 11,
    says: ["'Neil'", "'O''Neil'"],
  },
  {
    what: '$count not a Boolean',
    query: '$count=yes',
    code: 'InvalidCount',
    target: '$count',
    position: 0,
    says: ['true or false', "'yes'"],
  },
  {
    what: 'unknown orderby direction',
    query: '$orderby=Name ascending',
    code: 'InvalidSyntax',
    target: '$orderby',
    position: 5,
    says: ["'ascending'", "'asc', 'desc'"],
  },
  {
    what: 'a canonical function in $select (ABNF selectItem has no expressions)',
    query: '$select=Name,tolower(Tag)',
    code: 'InvalidSyntax',
    target: '$select',
    position: 5,
    says: ['tolower(...) is a canonical function', 'property names', '$select=Tag'],
  },
  {
    what: 'trailing comma in $select',
    query: '$select=Name,',
    code: 'InvalidSyntax',
    target: '$select',
    position: 5,
    says: ["expected a property name or '*'"],
  },
  {
    what: 'empty $filter',
    query: '$filter=',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 0,
    says: ['empty', 'expected an expression'],
  },
  {
    what: "'+' used as a space",
    query: "$filter=Name+eq+'a'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 4,
    says: ["'+' is not a space", '%20'],
  },
  {
    what: 'malformed percent-encoding',
    query: "$filter=Name eq '%zz'",
    code: 'InvalidEncoding',
    target: '$filter',
    position: 9,
    says: ['percent-encoding', '%25'],
  },
  {
    what: 'a decimal without digits after the point',
    query: '$filter=Qty gt 1.',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 8,
    says: ["Unexpected '.'", 'digits on both sides'],
  },
  {
    what: 'a malformed Guid',
    query: '$filter=Id eq 01234567-89ab-cdef-0123-456789abcdeX',
    code: 'InvalidLiteral',
    target: '$filter',
    position: 41,
    says: ['not a Guid', '8-4-4-4-12'],
  },
  {
    what: 'lambda without colon',
    query: '$filter=Items/any(x x/Qty gt 1)',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 12,
    says: ["expected ':'"],
  },
  {
    what: 'space in an option name',
    query: '$filter =true',
    code: 'InvalidSyntax',
    target: '$filter ',
    position: 7,
    says: ['Unexpected space', "no spaces around '='"],
  },
  {
    what: 'too deep nesting',
    query: `$filter=${'('.repeat(200)}true${')'.repeat(200)}`,
    code: 'LimitExceeded',
    target: '$filter',
    position: 100,
    says: ['deeper than 100 levels'],
  },
  {
    what: 'unsupported system option',
    query: '$index=3',
    code: 'NotImplemented',
    target: '$index',
    position: undefined,
    says: ['$index', 'not supported'],
  },
  {
    what: 'unsupported option nested in $expand',
    query: '$expand=Lines($search=blue)',
    code: 'NotImplemented',
    target: '$expand',
    position: 6,
    says: ['$search', 'not supported'],
  },
  {
    what: 'an option $ref cannot take',
    query: '$expand=Lines/$ref($select=Qty)',
    code: 'InvalidSyntax',
    target: '$expand',
    position: 11,
    says: ['$select cannot be given with $ref'],
  },
  {
    what: 'a nested option given twice',
    query: '$expand=Lines($top=1;$top=2)',
    code: 'DuplicateOption',
    target: '$expand',
    position: 13,
    says: ['$top', 'more than once'],
  },
  {
    what: 'an unclosed $expand option list',
    query: '$expand=Lines($top=1',
    code: 'InvalidSyntax',
    target: '$expand',
    position: 12,
    says: ['end of input'],
  },
  {
    what: 'spaces around a path slash',
    query: '$filter=Items / Qty gt 1',
    code: 'InvalidSyntax',
    target: '$filter',
    position: 6,
    says: ["space around '/'", 'A/B'],
  },
  {
    what: 'a Double out of range',
    query: '$filter=Qty eq 1e400',
    code: 'InvalidLiteral',
    target: '$filter',
    position: 7,
    says: ['out of the range of Edm.Double', 'INF'],
  },
  {
    what: 'a wrong nested $top in $select',
    query: '$select=Lines($top=abc)',
    code: 'InvalidSyntax',
    target: '$select',
    position: 11,
    says: ['$top must be a non-negative integer'],
  },
  {
    what: 'a semicolon inside a stray string',
    query: "$filter=A eq 1 'b; c'",
    code: 'InvalidSyntax',
    target: '$filter',
    position: 7,
    says: ["Unexpected ''b; c'' at position 7 of $filter; expected an operator"],
  },
  {
    what: 'bad alias value',
    query: "$filter=Name eq @p&@p='x",
    code: 'InvalidSyntax',
    target: '@p',
    position: 0,
    says: ['Unterminated string'],
  },
];

function errorOf(query: string): unknown {
  try {
    parseQuery(query);
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('typical mistakes', () => {
  it.each(mistakes)('$what: $query', (mistake) => {
    const error = errorOf(mistake.query);
    expect(isODataError(error), 'throws an ODataError').toBe(true);
    if (!isODataError(error)) return;
    expect(error.code).toBe(mistake.code);
    expect(error.status).toBe(mistake.code === 'NotImplemented' ? 501 : 400);
    expect(error.target).toBe(mistake.target);
    expect(error.position).toBe(mistake.position);
    for (const fragment of mistake.says) expect(error.message).toContain(fragment);
    if (mistake.position !== undefined)
      expect(error.message).toContain(`at position ${mistake.position} of ${mistake.target}`);
  });

  it('has at least 20 mistakes', () => expect(mistakes.length).toBeGreaterThanOrEqual(20));

  it('reports several problems at once, the rest in details', () => {
    const error = errorOf("$top=-1&$skip=x&$filter=Name eq 'a");
    expect(isODataError(error)).toBe(true);
    if (!isODataError(error)) return;
    expect(error.code).toBe('InvalidTop');
    expect(error.details.map((d) => [d.code, d.target])).toEqual([
      ['InvalidSkip', '$skip'],
      ['InvalidSyntax', '$filter'],
    ]);
    const body = toODataErrorBody(error);
    expect(body.error.code).toBe('InvalidTop');
    expect(body.error.target).toBe('$top');
    expect(body.error.details).toHaveLength(2);
    expect(JSON.stringify(body)).not.toMatch(/at \w+ \(|\.ts:\d+/); // no stack frames
  });

  it('turns a non-OData error into a generic body without internals', () => {
    expect(toODataErrorBody(new TypeError('x is undefined at foo.ts:12'))).toEqual({
      error: { code: 'InternalError', message: 'The service could not complete the request.' },
    });
  });
});
