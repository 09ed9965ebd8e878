// Decoding literal token text into typed values (OData ABNF `primitiveLiteral`, SEMANTICS.md "Literals").
// Each decoder gets the token text and its start position so that an impossible value (month 13,
// a bad base64 character) is reported at the exact character.
import { errorAt, type ODataError } from '../errors.js';
import type { LiteralValue } from './ast.js';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

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

/** Proleptic Gregorian leap year, valid for year 0 and negative years. */
function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

interface DateParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** Validates `[-]YYYY-MM-DD` at `position`; returns its parts. */
function checkDate(text: string, position: number, ctx: LiteralContext): DateParts {
  const dash = text.indexOf('-', 1);
  const year = Number(text.slice(0, dash));
  const month = Number(text.slice(dash + 1, dash + 3));
  const day = Number(text.slice(dash + 4, dash + 6));
  if (month < 1 || month > 12) throw invalid(ctx, position + dash + 1, `Month ${month} is not between 01 and 12`);
  if (day < 1 || day > daysInMonth(year, month)) {
    throw invalid(ctx, position + dash + 4, `Day ${day} does not exist in ${text.slice(0, dash + 3)}`);
  }
  return { year, month, day };
}

export function decodeDate(text: string, position: number, ctx: LiteralContext): LiteralValue {
  checkDate(text, position, ctx);
  return { type: 'Edm.Date', value: text };
}

/** Checks `HH:MM[:SS[.f+]]` starting at `position`; seconds may be 60 only where `allowLeapSecond`. */
function checkTime(
  text: string,
  position: number,
  ctx: LiteralContext,
  allowLeapSecond: boolean,
): { hour: number; minute: number; second: number; fraction: string } {
  const hour = Number(text.slice(0, 2));
  const minute = Number(text.slice(3, 5));
  const second = text.length > 5 ? Number(text.slice(6, 8)) : 0;
  const dot = text.indexOf('.');
  const fraction = dot === -1 ? '' : text.slice(dot + 1);
  if (hour > 23) throw invalid(ctx, position, `Hour ${text.slice(0, 2)} is not between 00 and 23`);
  if (minute > 59) throw invalid(ctx, position + 3, `Minute ${text.slice(3, 5)} is not between 00 and 59`);
  if (second > (allowLeapSecond ? 60 : 59)) {
    throw invalid(ctx, position + 6, `Second ${text.slice(6, 8)} is out of range`);
  }
  if (fraction.length > 12) {
    throw invalid(ctx, position + dot + 13, 'Fractional seconds have at most 12 digits');
  }
  return { hour, minute, second, fraction };
}

export function decodeTimeOfDay(text: string, position: number, ctx: LiteralContext): LiteralValue {
  checkTime(text, position, ctx, false);
  return { type: 'Edm.TimeOfDay', value: text };
}

/** Milliseconds since the epoch of a proleptic Gregorian date-time in UTC (years 0–99 and negatives included). */
export function utcMilliseconds(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  millisecond = 0,
): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}

export function decodeDateTimeOffset(text: string, position: number, ctx: LiteralContext): LiteralValue {
  const t = text.search(/[tT]/);
  const datePart = checkDate(text.slice(0, t), position, ctx);
  const rest = text.slice(t + 1);
  const zoneAt = rest.search(/[zZ+-]/);
  const timeText = rest.slice(0, zoneAt);
  const zone = rest.slice(zoneAt);
  const time = checkTime(timeText, position + t + 1, ctx, true);
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    const zonePosition = position + t + 1 + zoneAt;
    if (hours > 23 || minutes > 59) throw invalid(ctx, zonePosition, `Time zone offset ${zone} is out of range`);
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  // DateTimeOffset precision is milliseconds: truncate longer fractions (SEMANTICS.md).
  const millisecond = time.fraction === '' ? 0 : Number(time.fraction.slice(0, 3).padEnd(3, '0'));
  const local = utcMilliseconds(
    datePart.year,
    datePart.month,
    datePart.day,
    time.hour,
    time.minute,
    time.second,
    millisecond,
  );
  const epochMilliseconds = local - offsetMinutes * 60_000;
  if (!Number.isFinite(epochMilliseconds))
    throw invalid(ctx, position, 'DateTimeOffset is outside the supported range');
  return { type: 'Edm.DateTimeOffset', value: text, epochMilliseconds, offsetMinutes };
}

const DURATION = /^(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Parses an ISO 8601 day-time duration (`[-]P[nD][T[nH][nM][n[.n]S]]`); undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null || text.endsWith('P') || text.endsWith('T')) return undefined;
  const [, sign, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * 86_400_000 +
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Math.round(Number(seconds ?? 0) * 1000);
  return sign === '-' ? -ms : ms;
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
