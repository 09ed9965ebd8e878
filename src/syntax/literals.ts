// Decoding literal token text into typed values (OData ABNF `primitiveLiteral`, SEMANTICS.md "Literals").
// Each decoder gets the token text and its start position so that an impossible value (month 13,
// a bad base64 character) is reported at the exact character.
import { errorAt, type ODataError } from '../errors.js';
import { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN } from '../values/arithmetic.js';
import { readDateText, type TemporalProblem } from '../values/calendar.js';
import { offsetMinutesOf, parseDuration, readInstantText, readTimeOfDayText } from '../values/temporal.js';
import type { LiteralValue } from './ast.js';

export interface LiteralContext {
  /** The option the literal is in, for the error's target. */
  readonly target: string;
}

function invalid(ctx: LiteralContext, position: number, what: string, hint?: string): ODataError {
  return errorAt('InvalidLiteral', what, ctx.target, position, hint);
}

/** An integer is Int32 if it fits, else Int64, else Decimal; with `.` Decimal; with an exponent Double. */
export function decodeNumber(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const unsigned = text.startsWith('+') ? text.slice(1) : text;
  if (/[eE]/.test(unsigned)) {
    const value = Number(unsigned);
    if (!Number.isFinite(value))
      throw invalid(ctx, position, `${text} is out of the range of Edm.Double`, 'write INF or -INF for infinity');
    return { type: 'Edm.Double', value };
  }
  if (unsigned.includes('.')) return { type: 'Edm.Decimal', value: unsigned };
  // Fast path: up to 9 digits always fits Int32.
  const digits = unsigned.startsWith('-') ? unsigned.length - 1 : unsigned.length;
  // `|| 0`: the literal -0 is the integer 0
  if (digits <= 9) return { type: 'Edm.Int32', value: Number(unsigned) || 0 };
  const big = BigInt(unsigned);
  if (big >= BigInt(INT32_MIN) && big <= BigInt(INT32_MAX)) return { type: 'Edm.Int32', value: Number(big) };
  if (big >= INT64_MIN && big <= INT64_MAX) return { type: 'Edm.Int64', value: big };
  return { type: 'Edm.Decimal', value: unsigned };
}

export function decodeSpecialDouble(text: string): LiteralValue {
  if (text === 'NaN') return { type: 'Edm.Double', value: Number.NaN };
  return { type: 'Edm.Double', value: text.startsWith('-') ? -Infinity : Infinity };
}

/** `'O''Neil'` → `O'Neil`. */
export function decodeString(text: string): string {
  const inner = text.slice(1, -1);
  return inner.includes("''") ? inner.replace(/''/g, "'") : inner;
}

/** A date, time or instant problem as a literal error: at its character, in a sentence. */
function temporalError(ctx: LiteralContext, position: number, problem: TemporalProblem | undefined, what: string) {
  if (problem === undefined) return invalid(ctx, position, `${what} is not valid`);
  const sentence = problem.problem[0]!.toUpperCase() + problem.problem.slice(1);
  return invalid(ctx, position + problem.at, sentence);
}

export function decodeDate(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const days = readDateText(text, false);
  if (typeof days !== 'number') throw temporalError(ctx, position, days, 'Date');
  return { type: 'Edm.Date', value: text };
}

export function decodeTimeOfDay(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const ms = readTimeOfDayText(text);
  if (typeof ms !== 'number') throw temporalError(ctx, position, ms, 'TimeOfDay');
  return { type: 'Edm.TimeOfDay', value: text };
}

/** The URL form: a required offset (the lexer has seen it), a leap second allowed, any year a Date can hold. */
const LITERAL_INSTANT = { leapSecond: true } as const;

export function decodeDateTimeOffset(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const epochMilliseconds = readInstantText(text, LITERAL_INSTANT);
  const offsetMinutes = offsetMinutesOf(text);
  if (typeof epochMilliseconds !== 'number' || offsetMinutes === undefined)
    throw temporalError(
      ctx,
      position,
      typeof epochMilliseconds === 'number' ? undefined : epochMilliseconds,
      'DateTimeOffset',
    );
  return { type: 'Edm.DateTimeOffset', value: text, epochMilliseconds, offsetMinutes };
}

/** `duration'P1DT2H'`. */
export function decodeDuration(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const quote = text.indexOf("'");
  const value = text.slice(quote + 1, -1);
  const milliseconds = parseDuration(value);
  if (milliseconds === undefined) {
    throw invalid(
      ctx,
      position + quote + 1,
      `'${value}' is not a duration`,
      'expected the ISO 8601 form such as P1DT2H30M or PT0.5S (days, hours, minutes, seconds)',
    );
  }
  return { type: 'Edm.Duration', value, milliseconds };
}

export function decodeGuid(text: string): LiteralValue {
  return { type: 'Edm.Guid', value: text.toLowerCase() };
}

/** `binary'...'` in base64url (RFC 4648 §5), padding optional. */
export function decodeBinary(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const quote = text.indexOf("'");
  const value = text.slice(quote + 1, -1);
  const bad = value.search(/[^A-Za-z0-9_-]/);
  const unpadded = value.replace(/={1,2}$/, '');
  const badInUnpadded = unpadded.search(/[^A-Za-z0-9_-]/);
  if (badInUnpadded !== -1 || unpadded.length % 4 === 1 || (value !== unpadded && value.length % 4 !== 0)) {
    const at = badInUnpadded !== -1 ? badInUnpadded : bad !== -1 ? bad : value.length;
    throw invalid(ctx, position + quote + 1 + at, 'Binary literal is not valid base64url');
  }
  return { type: 'Edm.Binary', value, bytes: new Uint8Array(Buffer.from(unpadded, 'base64url')) };
}

/** `Namespace.Type'Member'`. */
export function decodeEnum(text: string): LiteralValue {
  const quote = text.indexOf("'");
  return { type: 'enum', typeName: text.slice(0, quote), value: decodeString(text.slice(quote)) };
}

export function decodeGeo(text: string): LiteralValue {
  const quote = text.indexOf("'");
  const type = text.slice(0, quote).toLowerCase() === 'geography' ? 'Edm.Geography' : 'Edm.Geometry';
  return { type, value: text.slice(quote + 1, -1) };
}
