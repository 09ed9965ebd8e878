// Times of day, instants and durations: one reader for each, with rules for where the text comes from (a URL
// literal, a request body, a database driver or a caller's row), and their literal forms.
import {
  calendarProblem,
  DAY,
  daysFromCivil,
  digitsAt,
  MAX_STORABLE_INSTANT,
  MIN_STORABLE_INSTANT,
  scanDate,
  type TemporalProblem,
} from './calendar.js';

const DIGIT_0 = 48;
const DIGIT_9 = 57;
const COLON = 58;
const DOT = 46;
const PLUS = 43;
const MINUS = 45;

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** The parts of `HH:MM[:SS[.f…]]`, with where each starts in the text. */
interface TimeParts {
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
  /** Digits after the point (0 without a fraction). */
  fractionDigits: number;
  at: number;
  end: number;
}

const scratch: TimeParts = { hour: 0, minute: 0, second: 0, millisecond: 0, fractionDigits: 0, at: 0, end: 0 };

/** Scans `HH:MM[:SS[.f…]]` at `at` into the shared scratch parts (no allocation); false when it is not one. */
function scanTime(text: string, at: number): boolean {
  const hour = digitsAt(text, at, 2);
  const minute = digitsAt(text, at + 3, 2);
  if (hour < 0 || minute < 0 || text.charCodeAt(at + 2) !== COLON) return false;
  let second = 0;
  let millisecond = 0;
  let digits = 0;
  let end = at + 5;
  if (text.charCodeAt(end) === COLON) {
    second = digitsAt(text, end + 1, 2);
    if (second < 0) return false;
    end += 3;
    if (text.charCodeAt(end) === DOT) {
      let i = end + 1;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c < DIGIT_0 || c > DIGIT_9) break;
        if (digits < 3) millisecond = millisecond * 10 + (c - DIGIT_0);
        digits++;
        i++;
      }
      if (digits === 0) return false;
      // truncated to milliseconds (SEMANTICS.md): `.5` is 500, `.123456` is 123
      for (let k = digits; k < 3; k++) millisecond *= 10;
      end = i;
    }
  }
  scratch.hour = hour;
  scratch.minute = minute;
  scratch.second = second;
  scratch.millisecond = millisecond;
  scratch.fractionDigits = digits;
  scratch.at = at;
  scratch.end = end;
  return true;
}

/** Why the scanned time is not a time of day (seconds up to 60 where `leapSecond`), or undefined. */
function timeProblem(parts: TimeParts, leapSecond: boolean): TemporalProblem | undefined {
  const { at } = parts;
  if (parts.hour > 23) return { problem: `hour ${pad(parts.hour)} is not between 00 and 23`, at };
  if (parts.minute > 59) return { problem: `minute ${pad(parts.minute)} is not between 00 and 59`, at: at + 3 };
  const maxSecond = leapSecond ? 60 : 59;
  if (parts.second > maxSecond)
    return { problem: `second ${pad(parts.second)} is not between 00 and ${maxSecond}`, at: at + 6 };
  if (parts.fractionDigits > 12) return { problem: 'fractional seconds have at most 12 digits', at: at + 9 + 12 };
  return undefined;
}

const timeMilliseconds = (parts: TimeParts): number =>
  parts.hour * 3_600_000 + parts.minute * 60_000 + parts.second * 1000 + parts.millisecond;

/**
 * `HH:MM[:SS[.f…]]` (at most 12 fractional digits) as milliseconds since midnight, truncated to milliseconds; why it
 * is not a time of day; or undefined when it is not time text.
 */
export function readTimeOfDayText(text: string): number | TemporalProblem | undefined {
  if (!scanTime(text, 0) || scratch.end !== text.length) return undefined;
  return timeProblem(scratch, false) ?? timeMilliseconds(scratch);
}

/** `HH:MM:SS[.fff]` of milliseconds since midnight, the TimeOfDay literal form. */
export function formatTimeOfDay(ms: number): string {
  const text = `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}`;
  return ms % 1000 === 0 ? text : `${text}.${pad(ms % 1000, 3)}`;
}

/** Where an instant's text comes from, and so what it may look like. */
export interface InstantRules {
  /**
   * What a date and time without an offset means: refused when undefined (the OData form requires one), else read
   * as wall-clock time in this IANA time zone ('UTC' included).
   */
  readonly offsetless?: string | undefined;
  /** Second 60 (a leap second, counted as the next minute's first) is accepted: the URL literal allows it. */
  readonly leapSecond?: boolean;
  /**
   * Four-digit years, and the instant in UTC within 0001-01-01T00:00:00Z … 9999-12-31T23:59:59.999Z, what every store
   * holds (a request body). Otherwise any year whose instant a JavaScript Date can hold.
   */
  readonly storable?: boolean;
  /**
   * Database drivers' and callers' text: a space for the `T`, a date alone (midnight), spaces before the offset, an
   * offset as ±hh, ±hhmm or ±hh:mm.
   */
  readonly driverText?: boolean;
}

/** The largest instant a JavaScript Date holds, in milliseconds either side of the epoch. */
const DATE_LIMIT = 8.64e15;

/**
 * ISO 8601 date and time text as epoch milliseconds (fractions truncated to milliseconds), or why it is not an
 * instant under `rules`, or undefined when it is not date-time text at all.
 */
export function readInstantText(text: string, rules: InstantRules): number | TemporalProblem | undefined {
  const date = scanDate(text);
  if (date === undefined) return undefined;
  if (rules.storable === true && date.end !== 10) return undefined;
  const dash = date.end - 6;
  const driverText = rules.driverText === true;
  let i = date.end;
  const separator = text.charCodeAt(i);
  let hasTime = false;
  if (separator === 84 || separator === 116 || (driverText && separator === 32)) {
    if (!scanTime(text, i + 1)) return undefined;
    hasTime = true;
    i = scratch.end;
  } else if (i === text.length && !driverText) {
    return { problem: 'a date without a time', at: i };
  }
  if (driverText) while (text.charCodeAt(i) === 32) i++;
  // the offset: Z, ±hh:mm, or with driverText also ±hh and ±hhmm
  let offsetMinutes: number | undefined;
  let offsetProblem: TemporalProblem | undefined;
  const zoneAt = i;
  const z = text.charCodeAt(i);
  if (z === 90 || z === 122) {
    offsetMinutes = 0;
    i++;
  } else if (z === PLUS || z === MINUS) {
    const hours = digitsAt(text, i + 1, 2);
    if (hours < 0) return undefined;
    let minutes = 0;
    i += 3;
    if (text.charCodeAt(i) === COLON) {
      minutes = digitsAt(text, i + 1, 2);
      if (minutes < 0) return undefined;
      i += 3;
    } else if (driverText && i < text.length) {
      minutes = digitsAt(text, i, 2);
      if (minutes < 0) return undefined;
      i += 2;
    } else if (!driverText) return undefined;
    if (hours > 23 || minutes > 59)
      offsetProblem = { problem: `the offset ${text.slice(zoneAt, i)} is out of range`, at: zoneAt };
    offsetMinutes = (z === MINUS ? -1 : 1) * (hours * 60 + minutes);
  }
  if (i !== text.length) return undefined;
  const storable = rules.storable === true;
  const dateProblem = calendarProblem(date.year, date.month, date.day, dash + 1, dash + 4, storable);
  if (dateProblem !== undefined) return dateProblem;
  let local = daysFromCivil(date.year, date.month, date.day) * DAY;
  if (hasTime) {
    const problem = timeProblem(scratch, rules.leapSecond === true);
    if (problem !== undefined) return problem;
    local += timeMilliseconds(scratch);
  }
  if (offsetProblem !== undefined) return offsetProblem;
  let instant: number;
  if (offsetMinutes !== undefined) instant = local - offsetMinutes * 60_000;
  else if (rules.offsetless === undefined)
    return { problem: 'the time zone offset is missing: add Z or ±hh:mm', at: zoneAt };
  else instant = zonedToInstant(local, rules.offsetless);
  if (storable) {
    if (instant < MIN_STORABLE_INSTANT || instant > MAX_STORABLE_INSTANT)
      return { problem: 'in UTC it is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z', at: 0 };
  } else if (!(Math.abs(instant) <= DATE_LIMIT)) {
    return { problem: 'the instant is outside the range of dates (about 275,760 years either side of 1970)', at: 0 };
  }
  return instant;
}

const CANONICAL_INSTANT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Whether a value is an instant in the one text form stores keep and answers carry, `YYYY-MM-DDTHH:MM:SS.sssZ`
 * (what `toISOString` writes within 0001–9999): such text needs no reading to be written out.
 */
export function isCanonicalInstant(value: unknown): value is string {
  return typeof value === 'string' && value.length === 24 && CANONICAL_INSTANT.test(value);
}

/** The offset in minutes of instant text ending in `Z` or `±hh:mm` (a URL literal's form), or undefined. */
export function offsetMinutesOf(text: string): number | undefined {
  const last = text.charCodeAt(text.length - 1);
  if (last === 90 || last === 122) return 0;
  const sign = text.charCodeAt(text.length - 6);
  if ((sign !== PLUS && sign !== MINUS) || text.charCodeAt(text.length - 3) !== COLON) return undefined;
  const minutes = digitsAt(text, text.length - 5, 2) * 60 + digitsAt(text, text.length - 2, 2);
  return sign === MINUS ? -minutes : minutes;
}

// ── time zones ───────────────────────────────────────────────────────────────────────────────────

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** Offset of `timeZone` from UTC at an instant, in milliseconds (wall clock minus UTC), from Intl. */
function zoneOffset(timeZone: string, instant: number): number {
  let format = zoneFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    zoneFormats.set(timeZone, format);
  }
  const whole = Math.floor(instant / 1000) * 1000;
  const parts: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of format.formatToParts(new Date(whole))) parts[part.type] = part.value;
  const yearOfEra = Number(parts.year);
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - yearOfEra : yearOfEra;
  const wall =
    daysFromCivil(year, Number(parts.month), Number(parts.day)) * DAY +
    (Number(parts.hour) % 24) * 3_600_000 +
    Number(parts.minute) * 60_000 +
    Number(parts.second) * 1000;
  return wall - whole;
}

/**
 * The instant of a wall-clock time (`local`, as if it were UTC) in `timeZone`, disambiguated like Temporal's
 * 'compatible': a time that occurs twice (the autumn hour) is the earlier instant; a time that does not occur (the
 * spring gap) is moved forward by the gap (02:30 becomes 03:30). Assumes at most one transition within a day.
 */
function zonedToInstant(local: number, timeZone: string): number {
  if (timeZone === 'UTC') return local;
  const before = zoneOffset(timeZone, local - DAY);
  const after = zoneOffset(timeZone, local + DAY);
  let best: number | undefined;
  for (const offset of before === after ? [before] : [before, after]) {
    const candidate = local - offset;
    if (zoneOffset(timeZone, candidate) === offset && (best === undefined || candidate < best)) best = candidate;
  }
  return best ?? local - before;
}

// ── durations ────────────────────────────────────────────────────────────────────────────────────

const DURATION = /^(-)?P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** Parses an ISO 8601 day-time duration (`[-]P[nD][T[nH][nM][n[.n]S]]`) to milliseconds; undefined if it is not one. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  if (match === null || text.endsWith('P') || text.endsWith('T')) return undefined;
  const [, sign, days, hours, minutes, seconds] = match;
  const ms =
    Number(days ?? 0) * DAY +
    Number(hours ?? 0) * 3_600_000 +
    Number(minutes ?? 0) * 60_000 +
    Math.round(Number(seconds ?? 0) * 1000);
  return sign === '-' ? -ms : ms;
}

/** ISO 8601 day-time duration of milliseconds, as a Duration literal writes it: `P1DT2H`, `-PT0.5S`, `PT0S`. */
export function formatDuration(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const days = Math.floor(rest / DAY);
  rest -= days * DAY;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  const time = `${hours ? `${hours}H` : ''}${minutes ? `${minutes}M` : ''}${seconds ? `${seconds}S` : ''}`;
  if (days === 0 && time === '') return 'PT0S';
  return `${sign}P${days ? `${days}D` : ''}${time ? `T${time}` : ''}`;
}
