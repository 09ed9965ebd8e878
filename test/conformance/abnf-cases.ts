// The OASIS OData ABNF test cases (`../shared/conformance/odata-abnf-testcases.yaml`, third-party
// data read in place, never copied): which cases this engine is responsible for, and how each is run.
// Used by abnf.test.ts (thresholds) and scripts/conformance-report.ts (docs/conformance.md).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { isODataError, parseFilter, parseQuery, type Expr, type LiteralType } from '../../src/index.js';
import { parseDuration } from '../../src/values/temporal.js';

const here = dirname(fileURLToPath(import.meta.url));
export const casesFile = resolve(here, '../../../shared/conformance/odata-abnf-testcases.yaml');

export interface AbnfCase {
  readonly name: string;
  readonly rule: string;
  readonly input: string;
  /** Position where the invalid part begins, for negative cases. */
  readonly failAt?: number;
}

export interface CaseResult {
  readonly testCase: AbnfCase;
  /**
   * Whether the case counts toward the thresholds (rules filter, boolCommonExpr, commonExpr,
   * select, orderby, top, skip, count, the primitive-literal rules, queryOptions). Sub-rules of
   * commonExpr (firstMemberExpr, anyExpr...) are run too and reported apart.
   */
  readonly counted: boolean;
  /** Why the case is not applicable, if it is not. */
  readonly notApplicable?: string;
  readonly passed: boolean;
  /** For negative cases: the position we reported, mapped to the raw input. */
  readonly reportedAt?: number;
  /** What happened, in a few words (error message or "parsed"). */
  readonly outcome: string;
}

export function loadCases(): AbnfCase[] | undefined {
  if (!existsSync(casesFile)) return undefined;
  const document = parseYaml(readFileSync(casesFile, 'utf8'), { schema: 'failsafe' }) as {
    TestCases: { Name: string; Rule: string; Input: string; FailAt?: string }[];
  };
  return document.TestCases.map((c) => ({
    name: c.Name,
    rule: c.Rule,
    input: c.Input ?? '',
    ...(c.FailAt === undefined ? {} : { failAt: Number(c.FailAt) }),
  }));
}

/** Literal rules (URL forms) and the literal types a case of that rule may produce. */
const literalRules: Readonly<Record<string, readonly LiteralType[] | 'any'>> = {
  primitiveLiteral: 'any',
  null: ['null'],
  boolean: ['Edm.Boolean'],
  date: ['Edm.Date'],
  guid: ['Edm.Guid'],
  binaryLiteral: ['Edm.Binary'],
  // the bare `'P1D'` form is a string the validator reads as a duration where one is expected
  durationLiteral: ['Edm.Duration', 'Edm.String'],
  dateTimeOffsetLiteral: ['Edm.DateTimeOffset'],
  dateTimeOffsetValueInUrl: ['Edm.DateTimeOffset'],
  timeOfDayLiteral: ['Edm.TimeOfDay'],
  decimalLiteral: ['Edm.Decimal', 'Edm.Int32', 'Edm.Int64'],
  doubleLiteral: ['Edm.Double', 'Edm.Decimal', 'Edm.Int32', 'Edm.Int64'],
  singleLiteral: ['Edm.Double', 'Edm.Decimal', 'Edm.Int32', 'Edm.Int64'],
  sbyteLiteral: ['Edm.Int32'],
  int16Literal: ['Edm.Int32'],
  int32Literal: ['Edm.Int32'],
  int64Literal: ['Edm.Int32', 'Edm.Int64'],
  // the type prefix is optional: `'Yellow'` is a string the validator reads as the member where an enum is expected
  enumLiteral: ['enum', 'Edm.String'],
  stringLiteral: ['Edm.String'],
};

const expressionRules = new Set([
  'commonExpr',
  'boolCommonExpr',
  'boolcommonExpr',
  'firstMemberExpr',
  'propertyPathExpr',
  'notExpr',
  'isofExpr',
]);
const queryRules = new Set([
  'filter',
  'select',
  'expand',
  'orderby',
  'orderBy',
  'compute',
  'queryOptions',
  'customQueryOption',
]);
/** Rules named by the issues (the parser's, then $expand's); the others run are sub-rules of commonExpr. */
const countedRules = new Set([
  'filter',
  'boolCommonExpr',
  'boolcommonExpr',
  'commonExpr',
  'select',
  'expand',
  'orderby',
  'orderBy',
  'top',
  'skip',
  'count',
  'queryOptions',
]);

/** Rules outside a query-option engine, with the reason. */
function ruleNotApplicable(rule: string): string | undefined {
  if (rule === 'odataRelativeUri' || rule === 'odataUri' || rule === 'resourcePath' || rule === 'entitySetName') {
    return 'resource path or whole URL: routing belongs to the server, not the query-option engine';
  }
  if (rule === 'context') return 'context URL in response payloads';
  if (
    rule === 'preference' ||
    rule === 'prefer' ||
    rule === 'header' ||
    rule === 'request-id' ||
    /Preference$/.test(rule)
  ) {
    return 'HTTP header grammar';
  }
  if (rule === 'skiptoken' || rule === 'deltatoken') return 'paging tokens are opaque to the engine';
  if (rule === 'systemQueryOption') return '$schemaversion is not implemented';
  if (/^geo(graphy|metry)/.test(rule))
    return 'geo literals are kept as text, their well-known-text grammar is not checked';
  if (rule === 'functionParameter') return 'a fragment of a function call, not a complete option value';
  if (rule === 'stringInUrl')
    return 'JSON string in a URL: accepted inside JSON arrays and objects, not as a standalone expression';
  if (/Value$/.test(rule) || rule === 'primitiveValue') {
    return 'payload (JSON body / CSDL) value format, not a URL literal: payloads forbid percent-encoding and use lower-case booleans';
  }
  return undefined;
}

/** Query options the engine does not implement; a case using them is not applicable. */
const unsupportedOption = /(^|&)\$?(format|index|schemaversion|levels)=|[(;]\$?(search|compute|apply)=/i;

/** Cases that deliberately differ from the ABNF, with the decision that makes them differ. */
const deliberateDifferences: Readonly<Record<string, string>> = {
  '$search=#1':
    "a bare # is read as the character it stands for in every option (a URL never carries one in its query: the fragment starts there), as `$filter=S eq '#'` is; encoded, `%231` is the case that must parse",
  '$search=more&more':
    'the second `more` is a custom query option (customQueryOption = customName [ EQ customValue ]), which the queryOptions rule accepts; the case expects a failure at its end',
  'FirstName in (FirstName,LastName)':
    'SEMANTICS.md: `in` accepts any expressions comparable with the left side, not only literals (4.01 listExpr allows only literals)',
};

/** Maps a position in a percent-decoded string back to the raw (encoded) string. */
function rawPosition(raw: string, decodedPosition: number): number {
  let decoded = 0;
  let i = 0;
  while (i < raw.length && decoded < decodedPosition) {
    if (raw[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(raw.slice(i + 1, i + 3))) {
      // a UTF-8 sequence of several %XX decodes to one character
      let bytes = 1;
      const first = parseInt(raw.slice(i + 1, i + 3), 16);
      if (first >= 0xf0) bytes = 4;
      else if (first >= 0xe0) bytes = 3;
      else if (first >= 0xc0) bytes = 2;
      i += 3 * bytes;
      decoded += bytes === 4 ? 2 : 1;
    } else {
      i++;
      decoded++;
    }
  }
  return i;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

type Attempt =
  { ok: true; value: unknown } | { ok: false; position: number | undefined; message: string; odata: boolean };

function attempt(run: () => unknown): Attempt {
  try {
    return { ok: true, value: run() };
  } catch (error) {
    if (isODataError(error)) return { ok: false, position: error.position, message: error.message, odata: true };
    return { ok: false, position: undefined, message: String(error), odata: false };
  }
}

/** Where in the raw query string a parseQuery error's option value starts. */
function queryErrorPosition(input: string, target: string | undefined, position: number | undefined): number {
  const parts = input.split('&');
  let offset = 0;
  for (const part of parts) {
    const eq = part.indexOf('=');
    const name = safeDecode(eq === -1 ? part : part.slice(0, eq));
    if (target !== undefined && name === target && /\s/.test(name)) return offset + (position ?? 0); // error in the name
    const canonical = name.startsWith('$') || name.startsWith('@') ? name.toLowerCase() : `$${name.toLowerCase()}`;
    if (target !== undefined && (canonical === target.toLowerCase() || name === target)) {
      if (position === undefined || eq === -1) return eq === -1 ? offset + part.length : offset;
      return offset + eq + 1 + rawPosition(part.slice(eq + 1), position);
    }
    offset += part.length + 1;
  }
  return 0;
}

export function runCase(testCase: AbnfCase): CaseResult {
  return { ...runCaseUncounted(testCase), counted: countedRules.has(testCase.rule) || testCase.rule in literalRules };
}

function runCaseUncounted(testCase: AbnfCase): Omit<CaseResult, 'counted'> {
  const { rule, input, failAt } = testCase;
  const negative = failAt !== undefined;
  const notApplicable =
    ruleNotApplicable(rule) ??
    (queryRules.has(rule) && unsupportedOption.test(input)
      ? 'uses a system query option the engine does not implement ($format, $index, $schemaversion, or $search/$compute/$apply inside $expand or $select)'
      : undefined) ??
    deliberateDifferences[input];
  if (notApplicable !== undefined) return { testCase, notApplicable, passed: false, outcome: 'not run' };
  if (
    !queryRules.has(rule) &&
    !expressionRules.has(rule) &&
    !(rule in literalRules) &&
    rule !== 'anyExpr' &&
    rule !== 'odataIdentifier'
  ) {
    return {
      testCase,
      notApplicable: `rule ${rule} is not one a query-option parser is responsible for`,
      passed: false,
      outcome: 'not run',
    };
  }

  let result: Attempt;
  let mapPosition = (p: number | undefined): number => rawPosition(input, p ?? 0);
  let accepted: (value: unknown) => string | undefined = () => undefined;

  if (queryRules.has(rule)) {
    let target: string | undefined;
    result = attempt(() => parseQuery(input));
    if (!result.ok) {
      try {
        parseQuery(input);
      } catch (error) {
        if (isODataError(error)) target = error.target;
      }
    }
    mapPosition = (p) => queryErrorPosition(input, target, p);
  } else if (rule === 'anyExpr') {
    // anyExpr is a path segment: run it after a collection
    const prefix = 'Items/';
    result = attempt(() => parseFilter(prefix + safeDecode(input)));
    mapPosition = (p) => rawPosition(input, Math.max(0, (p ?? 0) - prefix.length));
  } else {
    result = attempt(() => parseFilter(safeDecode(input)));
    const types = literalRules[rule];
    if (types !== undefined) {
      accepted = (value) => {
        const expr = value as Expr;
        if (expr.kind !== 'literal') return `parsed as ${expr.kind}, not a literal`;
        if (types === 'any' || types.includes(expr.literal.type)) {
          if (
            rule === 'durationLiteral' &&
            expr.literal.type === 'Edm.String' &&
            parseDuration(expr.literal.value) === undefined
          ) {
            return 'a string that is not a duration';
          }
          return undefined;
        }
        return `a ${expr.literal.type} literal, not what ${rule} means`;
      };
    } else if (rule === 'odataIdentifier') {
      accepted = (value) => {
        const expr = value as Expr;
        return expr.kind === 'path' && expr.segments.length === 1 && expr.segments[0]!.kind === 'property'
          ? undefined
          : `parsed as ${expr.kind}, not a single identifier`;
      };
    }
  }

  if (result.ok) {
    const rejection = accepted(result.value);
    if (rejection === undefined) return { testCase, passed: !negative, outcome: 'parsed' };
    return { testCase, passed: negative, reportedAt: 0, outcome: rejection };
  }
  if (!result.odata) return { testCase, passed: false, outcome: `CRASH: ${result.message}` };
  return { testCase, passed: negative, reportedAt: mapPosition(result.position), outcome: result.message };
}

export interface ConformanceSummary {
  readonly results: readonly CaseResult[];
  readonly positive: { readonly applicable: number; readonly passed: number };
  readonly negative: { readonly applicable: number; readonly rejected: number; readonly positionMatches: number };
  readonly notApplicable: number;
  /** Sub-rules of commonExpr run beside the counted rules. */
  readonly extra: { readonly run: number; readonly passed: number };
}

export function runAll(cases: readonly AbnfCase[]): ConformanceSummary {
  const results = cases.map(runCase);
  const applicable = results.filter((r) => r.notApplicable === undefined && r.counted);
  const extra = results.filter((r) => r.notApplicable === undefined && !r.counted);
  const positives = applicable.filter((r) => r.testCase.failAt === undefined);
  const negatives = applicable.filter((r) => r.testCase.failAt !== undefined);
  return {
    results,
    positive: { applicable: positives.length, passed: positives.filter((r) => r.passed).length },
    negative: {
      applicable: negatives.length,
      rejected: negatives.filter((r) => r.passed).length,
      positionMatches: negatives.filter((r) => r.passed && r.reportedAt === r.testCase.failAt).length,
    },
    notApplicable: results.filter((r) => r.notApplicable !== undefined).length,
    extra: { run: extra.length, passed: extra.filter((r) => r.passed).length },
  };
}
