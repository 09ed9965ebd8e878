// The proleptic Gregorian calendar as day numbers (days since 1970-01-01), without Date objects: allocation-free,
// valid for year 0 and negative years. Every layer that reads or writes a date uses these.

/** Milliseconds in a day. */
export const DAY = 86_400_000;

/** Proleptic Gregorian leap year, valid for year 0 and negative years. */
export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** Days in a month (1–12) of a year. */
export function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : MONTH_DAYS[month - 1]!;
}

/** Days since 1970-01-01 of a civil date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/** The civil date of a day number, as [year, month, day]. Writes into `out` to avoid allocating. */
export function civilFromDays(days: number, out: [number, number, number]): [number, number, number] {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  out[0] = yoe + era * 400 + (month <= 2 ? 1 : 0);
  out[1] = month;
  out[2] = day;
  return out;
}

/** `YYYY-MM-DD` of a day number (a negative year as `-YYYY`). */
export function formatDate(days: number): string {
  const [y, m, d] = civilFromDays(days, [0, 0, 0]);
  const year = y < 0 ? `-${String(-y).padStart(4, '0')}` : String(y).padStart(4, '0');
  return `${year}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The day number of `[-]YYYY-MM-DD` text (not checked: see readDateText). */
export function daysOfDate(date: string): number {
  const dash = date.indexOf('-', 1);
  return daysFromCivil(
    Number(date.slice(0, dash)),
    Number(date.slice(dash + 1, dash + 3)),
    Number(date.slice(dash + 4, dash + 6)),
  );
}

/** The dates every store holds: 0001-01-01 to 9999-12-31, as day numbers. */
export const MIN_STORABLE_DAY = daysFromCivil(1, 1, 1);
export const MAX_STORABLE_DAY = daysFromCivil(9999, 12, 31);

/** The instants every store holds: 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z, in epoch milliseconds. */
export const MIN_STORABLE_INSTANT = MIN_STORABLE_DAY * DAY;
export const MAX_STORABLE_INSTANT = MAX_STORABLE_DAY * DAY + DAY - 1;

/** Why a text is not a date, a time or an instant: a lower-case phrase and the index in the text it points at. */
export interface TemporalProblem {
  readonly problem: string;
  readonly at: number;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * Why year-month-day is not a date, or undefined if it is one; `monthAt` and `dayAt` are where the month and day are
 * in the text. With `storable`, years before 0001 are refused (the later range check covers 9999).
 */
export function calendarProblem(
  year: number,
  month: number,
  day: number,
  monthAt: number,
  dayAt: number,
  storable: boolean,
): TemporalProblem | undefined {
  if (storable && year < 1) return { problem: 'years run from 0001 to 9999', at: 0 };
  if (month < 1 || month > 12) return { problem: `month ${pad(month)} does not exist`, at: monthAt };
  if (day < 1 || day > daysInMonth(year, month)) {
    const yearText = year < 0 ? `-${pad(-year, 4)}` : pad(year, 4);
    return { problem: `${yearText}-${pad(month)} has no day ${pad(day)}`, at: dayAt };
  }
  return undefined;
}

const DIGIT_0 = 48;
const DIGIT_9 = 57;

/** The number of the `count` digits at `at`, or -1 if one of them is not a digit. */
export function digitsAt(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const c = text.charCodeAt(i);
    if (c < DIGIT_0 || c > DIGIT_9) return -1;
    n = n * 10 + (c - DIGIT_0);
  }
  return n;
}

/** The parts of a scanned date: one object, reused by every call (rows are read without allocating). */
export interface DateParts {
  year: number;
  month: number;
  day: number;
  /** Where the date ends in the text. */
  end: number;
}

const scanned: DateParts = { year: 0, month: 0, day: 0, end: 0 };

/**
 * Scans `[-]YYYY-MM-DD` at the start of `text` (four or more year digits): its parts, valid until the next call, or
 * undefined when the text does not start with one.
 */
export function scanDate(text: string): Readonly<DateParts> | undefined {
  const sign = text.charCodeAt(0) === 45 ? 1 : 0;
  let dash = sign;
  let digits = 0;
  for (; dash < text.length; dash++) {
    const c = text.charCodeAt(dash);
    if (c < DIGIT_0 || c > DIGIT_9) break;
    digits = digits * 10 + (c - DIGIT_0);
  }
  if (dash - sign < 4 || text.charCodeAt(dash) !== 45 || text.charCodeAt(dash + 3) !== 45) return undefined;
  const month = digitsAt(text, dash + 1, 2);
  const day = digitsAt(text, dash + 4, 2);
  if (month < 0 || day < 0) return undefined;
  scanned.year = sign === 1 ? -digits : digits;
  scanned.month = month;
  scanned.day = day;
  scanned.end = dash + 6;
  return scanned;
}

/**
 * `YYYY-MM-DD` text as its day number, or why it is not a date. With `storable`, exactly four year digits and years
 * 0001–9999 (what a body may send); else any `[-]YYYY…` year (the URL literal). Undefined when it is not date text.
 */
export function readDateText(text: string, storable: boolean): number | TemporalProblem | undefined {
  const date = scanDate(text);
  if (date === undefined || date.end !== text.length) return undefined;
  if (storable && date.end !== 10) return undefined;
  const dash = date.end - 6;
  const problem = calendarProblem(date.year, date.month, date.day, dash + 1, dash + 4, storable);
  return problem ?? daysFromCivil(date.year, date.month, date.day);
}
