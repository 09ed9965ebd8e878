// The one reader of dates, times of day and instants (src/values/calendar.ts, temporal.ts), checked against
// JavaScript's Date for the text every rule set accepts, and for what each rule set refuses and where.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  daysInMonth,
  formatDate,
  MAX_STORABLE_DAY,
  MAX_STORABLE_INSTANT,
  MIN_STORABLE_DAY,
  MIN_STORABLE_INSTANT,
  readDateText,
} from '../../src/values/calendar.js';
import {
  formatDuration,
  formatTimeOfDay,
  parseDuration,
  readInstantText,
  readTimeOfDayText,
} from '../../src/values/temporal.js';

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Epoch milliseconds of a UTC civil time by way of Date (years 0–99 included). */
function viaDate(year: number, month: number, day: number, h: number, m: number, s: number, ms: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(h, m, s, ms);
  return date.getTime();
}

const civil = fc
  .record({ year: fc.integer({ min: 1, max: 9999 }), month: fc.integer({ min: 1, max: 12 }), dayIndex: fc.nat() })
  .map(({ year, month, dayIndex }) => ({ year, month, day: (dayIndex % daysInMonth(year, month)) + 1 }));

const clock = fc.record({
  hour: fc.integer({ min: 0, max: 23 }),
  minute: fc.integer({ min: 0, max: 59 }),
  second: fc.integer({ min: 0, max: 59 }),
  fraction: fc.stringMatching(/^\d{0,12}$/),
});

const offset = fc.option(fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }), { nil: undefined });

function offsetText(minutes: number | undefined): string {
  if (minutes === undefined) return 'Z';
  const sign = minutes < 0 ? '-' : '+';
  const a = Math.abs(minutes);
  return `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

describe('instants', () => {
  it('read like Date reads them, fractions truncated to milliseconds, under every rule set that takes the form', () => {
    fc.assert(
      fc.property(civil, clock, offset, ({ year, month, day }, { hour, minute, second, fraction }, minutes) => {
        const text =
          `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}` +
          `${fraction === '' ? '' : `.${fraction}`}${offsetText(minutes)}`;
        const ms = Number(fraction.slice(0, 3).padEnd(3, '0'));
        const expected = viaDate(year, month, day, hour, minute, second, ms) - (minutes ?? 0) * 60_000;
        expect(readInstantText(text, { leapSecond: true })).toBe(expected);
        expect(readInstantText(text, { driverText: true, offsetless: 'UTC' })).toBe(expected);
        const inRange = expected >= MIN_STORABLE_INSTANT && expected <= MAX_STORABLE_INSTANT;
        expect(readInstantText(text, { storable: true })).toEqual(
          inRange ? expected : { problem: expect.stringMatching(/^in UTC it is outside/), at: 0 },
        );
      }),
    );
  });

  it('say which part is impossible and where it is', () => {
    expect(readInstantText('2024-02-30T08:00:00Z', {})).toEqual({ problem: '2024-02 has no day 30', at: 8 });
    expect(readInstantText('2023-13-01T08:00:00Z', {})).toEqual({ problem: 'month 13 does not exist', at: 5 });
    expect(readInstantText('2024-05-01T24:00:00Z', {})).toEqual({
      problem: 'hour 24 is not between 00 and 23',
      at: 11,
    });
    expect(readInstantText('2024-05-01T08:60:00Z', {})).toEqual({
      problem: 'minute 60 is not between 00 and 59',
      at: 14,
    });
    expect(readInstantText('2024-05-01T08:00:60Z', {})).toEqual({
      problem: 'second 60 is not between 00 and 59',
      at: 17,
    });
    expect(readInstantText('2024-05-01T08:00:60Z', { leapSecond: true })).toBe(Date.UTC(2024, 4, 1, 8, 1));
    expect(readInstantText('2024-05-01T08:00:00+24:00', {})).toEqual({
      problem: 'the offset +24:00 is out of range',
      at: 19,
    });
    expect(readInstantText('2024-05-01T08:00:00.1234567890123Z', {})).toEqual({
      problem: 'fractional seconds have at most 12 digits',
      at: 32,
    });
    expect(readInstantText('2024-05-01T08:00:00', {})).toEqual({
      problem: 'the time zone offset is missing: add Z or ±hh:mm',
      at: 19,
    });
    expect(readInstantText('2024-05-01', {})).toEqual({ problem: 'a date without a time', at: 10 });
    expect(readInstantText('0000-12-31T23:00:00Z', { storable: true })).toEqual({
      problem: 'years run from 0001 to 9999',
      at: 0,
    });
    expect(readInstantText('0001-01-01T00:30:00+01:00', { storable: true })).toEqual({
      problem: 'in UTC it is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z',
      at: 0,
    });
    // a year a Date cannot hold is refused, not turned into a wrong number
    expect(readInstantText('300000-01-01T00:00:00Z', {})).toMatchObject({ at: 0 });
  });

  it('are not instants when the text has another form', () => {
    for (const text of ['', 'x', '2024-5-01T08:00Z', '2024-05-01T8:00Z', '2024-05-01T08:00:00.Z', '2024-05-01T08:00Zx'])
      expect(readInstantText(text, { driverText: true, offsetless: 'UTC' })).toBeUndefined();
    // a body's form: four-digit years, a T, an offset with its colon
    for (const text of [
      '12024-05-01T08:00:00Z',
      '2024-05-01 08:00:00Z',
      '2024-05-01T08:00:00+02',
      '2024-05-01T08:00:00+0200',
    ])
      expect(readInstantText(text, { storable: true })).toBeUndefined();
  });

  it("take drivers' forms with driverText: a space, short offsets, a date alone, text without an offset as UTC", () => {
    const rules = { driverText: true, offsetless: 'UTC' } as const;
    const expected = Date.UTC(2024, 4, 1, 6, 30);
    expect(readInstantText('2024-05-01 08:30:00+02', rules)).toBe(expected);
    expect(readInstantText('2024-05-01 08:30:00+0200', rules)).toBe(expected);
    expect(readInstantText('2024-05-01 08:30:00 +02:00', rules)).toBe(expected);
    expect(readInstantText('2024-05-01 06:30', rules)).toBe(expected);
    expect(readInstantText('2024-05-01', rules)).toBe(Date.UTC(2024, 4, 1));
    expect(readInstantText('-0001-03-01T00:00:00Z', rules)).toBe(viaDate(-1, 3, 1, 0, 0, 0, 0));
  });

  it('read offset-less text in a time zone, the earlier instant of a repeated hour and past a skipped one', () => {
    const zone = { storable: true, offsetless: 'Europe/Berlin' } as const;
    expect(readInstantText('2024-07-01T12:00:00', zone)).toBe(Date.UTC(2024, 6, 1, 10));
    expect(readInstantText('2024-10-27T02:30:00', zone)).toBe(Date.UTC(2024, 9, 27, 0, 30));
    expect(readInstantText('2024-03-31T02:30:00', zone)).toBe(Date.UTC(2024, 2, 31, 1, 30));
  });
});

describe('dates', () => {
  it('read back what formatDate writes, over the storable range', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_STORABLE_DAY, max: MAX_STORABLE_DAY }), (days) => {
        expect(readDateText(formatDate(days), true)).toBe(days);
        expect(readDateText(formatDate(days), false)).toBe(days);
      }),
    );
  });

  it('refuse impossible days, and years outside 0001–9999 only where storable', () => {
    expect(readDateText('2023-02-29', true)).toEqual({ problem: '2023-02 has no day 29', at: 8 });
    expect(readDateText('2024-02-29', true)).toBe(Date.UTC(2024, 1, 29) / 86_400_000);
    expect(readDateText('0000-01-01', true)).toEqual({ problem: 'years run from 0001 to 9999', at: 0 });
    expect(readDateText('0000-01-01', false)).toBe(viaDate(0, 1, 1, 0, 0, 0, 0) / 86_400_000);
    expect(readDateText('-0001-02-29', false)).toEqual({ problem: '-0001-02 has no day 29', at: 9 });
    expect(readDateText('12024-01-01', true)).toBeUndefined();
    expect(readDateText('2024-01-01T00:00Z', false)).toBeUndefined();
  });
});

describe('times of day and durations', () => {
  it('read back what they write', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400_000 - 1 }), (ms) => {
        expect(readTimeOfDayText(formatTimeOfDay(ms))).toBe(ms);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (ms) => {
        expect(parseDuration(formatDuration(ms))).toBe(ms);
      }),
    );
  });

  it('refuse a time of day out of range, saying which part', () => {
    expect(readTimeOfDayText('24:00')).toEqual({ problem: 'hour 24 is not between 00 and 23', at: 0 });
    expect(readTimeOfDayText('23:59:60')).toEqual({ problem: 'second 60 is not between 00 and 59', at: 6 });
    expect(readTimeOfDayText('8:30')).toBeUndefined();
  });
});
