// The generated filter's fast readers (src/backends/memory/fast-reads.ts) against the general readers of src/values:
// wherever a fast reader answers (not NaN), its answer is the general reader's (an instant, an Int64) or the double
// nearest to it (a decimal), and for the forms it is meant for it does answer. Inputs: the usual forms, every field at
// and past its bounds (leap days, hour 24, offsets ±14:00 and ±24:00, 12 and 13 fractional digits), and random
// mutations of them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decimalTextDouble,
  instantTextEpoch,
  integerTextDouble,
  readInstantFast,
} from '../../../src/backends/memory/fast-reads.js';
import { daysInMonth } from '../../../src/values/calendar.js';
import { decimalToNumber, parseDecimal } from '../../../src/values/decimal.js';
import { readDecimal, readInstant, readInt64 } from '../../../src/values/read.js';

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A text with one character inserted, deleted or replaced at a random place (or unchanged). */
function mutated(text: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const characters = fc.constantFrom(...'0123456789-+:.TtZz eE\u0660'.split(''));
  return fc
    .tuple(text, fc.nat(), fc.constantFrom('insert', 'delete', 'replace', 'none'), characters)
    .map(([t, at, how, c]) => {
      const i = t.length === 0 ? 0 : at % t.length;
      if (how === 'insert') return t.slice(0, i) + c + t.slice(i);
      if (how === 'delete') return t.slice(0, i) + t.slice(i + 1);
      if (how === 'replace') return t.slice(0, i) + c + t.slice(i + 1);
      return t;
    });
}

// ── decimals ──────────────────────────────────────────────────────────────────────────────────────────

const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^\\d{${min},${max}}$`));
/** Decimal text as drivers write it, with up to 25 digits either side (so past 2^53 and past 22 places). */
const decimalText = fc
  .tuple(
    fc.constantFrom('', '-', '+'),
    fc.oneof(digits(1, 3), digits(1, 25), fc.constantFrom('0', '00', '9007199254740991', '9007199254740992')),
    fc.option(fc.oneof(digits(1, 4), digits(0, 25), fc.constantFrom('0000', '5', '9999999999999999999999')), {
      nil: undefined,
    }),
    fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '-', '+'), digits(0, 3)), { nil: undefined }),
  )
  .map(
    ([sign, whole, fraction, exponent]) =>
      `${sign}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : exponent.join('')}`,
  );

describe('decimalTextDouble', () => {
  it('answers the double nearest to the exact decimal, or NaN; never a number for text readDecimal refuses', () => {
    fc.assert(
      fc.property(fc.oneof(decimalText, mutated(decimalText), fc.string()), (text) => {
        const fast = decimalTextDouble(text);
        if (Number.isNaN(fast)) return;
        expect(readDecimal(text)).toBe(text);
        const exact = parseDecimal(text)!;
        // both are the correctly rounded double (decimalToNumber is; decimal.test.ts checks it), -0 for '-0' aside
        expect(fast === decimalToNumber(exact)).toBe(true);
        expect(fast === 0 || Math.abs(fast) >= 1e-22).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('answers every plain decimal of up to 15 digits and 22 places', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('', '-', '+'),
        digits(1, 8),
        fc.option(digits(1, 7), { nil: undefined }),
        (s, w, f) => {
          const text = `${s}${w}${f === undefined ? '' : `.${f}`}`;
          expect(decimalTextDouble(text)).toBe(Number(text));
        },
      ),
      { numRuns: 2_000 },
    );
    expect(decimalTextDouble('0.0000000000000000000001')).toBe(1e-22);
    expect(decimalTextDouble('9007199254740991')).toBe(9007199254740991);
    for (const text of ['9007199254740992', '0.00000000000000000000001', '1e3', '1.', '.5', ' 1', '1 ', '', '-', '0x1'])
      expect(decimalTextDouble(text)).toBeNaN();
  });
});

describe('integerTextDouble', () => {
  it('answers exactly what readInt64 reads when it is a safe integer, else NaN', () => {
    const integerText = fc
      .tuple(fc.constantFrom('', '-', '+'), fc.oneof(digits(1, 4), digits(1, 20)))
      .map(([s, d]) => s + d);
    fc.assert(
      fc.property(fc.oneof(integerText, mutated(integerText), fc.string()), (text) => {
        const fast = integerTextDouble(text);
        const exact = readInt64(text);
        if (exact !== null && exact <= BigInt(Number.MAX_SAFE_INTEGER) && exact >= -BigInt(Number.MAX_SAFE_INTEGER))
          expect(fast === Number(exact)).toBe(true);
        else expect(fast).toBeNaN();
      }),
      { numRuns: 10_000 },
    );
  });
});

// ── instants ──────────────────────────────────────────────────────────────────────────────────────────

/** Epoch milliseconds of a UTC civil time by way of Date (years 0–99 included). */
function viaDate(year: number, month: number, day: number, h: number, m: number, s: number, ms: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(h, m, s, ms);
  return date.getTime();
}

interface InstantParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly separator: string;
  readonly hour: number;
  readonly minute: number;
  /** undefined: `HH:MM` only. */
  readonly second: number | undefined;
  /** The digits after the point ('' for none). */
  readonly fraction: string;
  /** Offset minutes, and how it is written. */
  readonly offset: number;
  readonly offsetForm: 'Z' | 'z' | 'colon' | 'hhmm' | 'hh' | 'none';
}

/** Parts within (and, with `loose`, just outside) each field's range; leap days and ±14:00 are frequent. */
function instantParts(loose: boolean): fc.Arbitrary<InstantParts> {
  const edge = loose ? 1 : 0;
  const year = fc.oneof(
    fc.integer({ min: 0, max: 9999 }),
    fc.constantFrom(0, 1, 4, 100, 1900, 1970, 2000, 2023, 2024, 2100, 9996, 9999),
  );
  return fc
    .record({
      year,
      month: fc.integer({ min: 1 - edge, max: 12 + edge }),
      dayIndex: fc.oneof(fc.nat(), fc.constant(-1)),
      separator: loose ? fc.constantFrom('T', 't', ' ', 'x', '_') : fc.constantFrom('T', 't', ' '),
      hour: fc.integer({ min: 0, max: 23 + edge }),
      minute: fc.integer({ min: 0, max: 59 + edge }),
      second: fc.option(fc.integer({ min: 0, max: 59 + edge }), { nil: undefined, freq: 6 }),
      fraction: fc.oneof(
        fc.constant(''),
        fc.stringMatching(/^\d{1,3}$/),
        fc.stringMatching(loose ? /^\d{4,13}$/ : /^\d{4,12}$/),
      ),
      offsetHours: fc.oneof(fc.integer({ min: 0, max: 23 + edge }), fc.constant(14)),
      offsetMinutes: fc.oneof(fc.integer({ min: 0, max: 59 + edge }), fc.constantFrom(0, 30, 45)),
      negative: fc.boolean(),
      offsetForm: fc.constantFrom('Z', 'z', 'colon', 'colon', 'colon', 'hhmm', 'hh', 'none'),
    })
    .map((p) => {
      const monthDays = p.month >= 1 && p.month <= 12 ? daysInMonth(p.year, p.month) : 31;
      // -1: one past the last day (Feb 29 of a common year, Apr 31...); else a day of the month, often the last
      const day = p.dayIndex === -1 ? (loose ? monthDays + 1 : monthDays) : (p.dayIndex % monthDays) + 1;
      const minutes = p.offsetForm === 'hh' ? 0 : p.offsetMinutes;
      const offset =
        p.offsetForm === 'Z' || p.offsetForm === 'z' || p.offsetForm === 'none'
          ? 0
          : (p.negative ? -1 : 1) * (p.offsetHours * 60 + minutes);
      return {
        year: p.year,
        month: p.month,
        day,
        separator: p.separator,
        hour: p.hour,
        minute: p.minute,
        second: p.second,
        fraction: p.second === undefined ? '' : p.fraction,
        offset,
        offsetForm: p.offsetForm,
      };
    });
}

function instantText(p: InstantParts): string {
  const a = Math.abs(p.offset);
  const sign = p.offset < 0 ? '-' : '+';
  const zone = {
    Z: 'Z',
    z: 'z',
    none: '',
    colon: `${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`,
    hhmm: `${sign}${pad(Math.floor(a / 60))}${pad(a % 60)}`,
    hh: `${sign}${pad(Math.floor(a / 60))}`,
  }[p.offsetForm];
  const seconds = p.second === undefined ? '' : `:${pad(p.second)}${p.fraction === '' ? '' : `.${p.fraction}`}`;
  return `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}${p.separator}${pad(p.hour)}:${pad(p.minute)}${seconds}${zone}`;
}

describe('instantTextEpoch', () => {
  it('reads the usual forms as Date does, fractions truncated to milliseconds, and as readInstant does', () => {
    fc.assert(
      fc.property(instantParts(false), (p) => {
        const text = instantText(p);
        const ms = Number(p.fraction.slice(0, 3).padEnd(3, '0'));
        const expected = viaDate(p.year, p.month, p.day, p.hour, p.minute, p.second ?? 0, ms) - p.offset * 60_000;
        expect([text, instantTextEpoch(text)]).toEqual([text, expected]);
        expect([text, readInstant(text)]).toEqual([text, expected]);
      }),
      { numRuns: 20_000 },
    );
  });

  it('never answers where readInstant does not, nor differently: fields out of range, other forms, mutations', () => {
    const texts = fc.oneof(
      instantParts(true).map(instantText),
      mutated(instantParts(false).map(instantText)),
      mutated(mutated(instantParts(true).map(instantText))),
      fc.string(),
    );
    let answered = 0;
    fc.assert(
      fc.property(texts, (text) => {
        const fast = instantTextEpoch(text);
        const general = readInstant(text);
        if (Number.isNaN(fast)) return;
        answered++;
        expect([text, fast]).toEqual([text, general]);
      }),
      { numRuns: 30_000 },
    );
    // (not vacuous: about one text in seven is one the fast reader answers)
    expect(answered).toBeGreaterThan(2_000);
  });

  it('at the edges', () => {
    const cases: readonly (readonly [string, number | null])[] = [
      ['2024-02-29T12:00:00Z', Date.UTC(2024, 1, 29, 12)],
      ['2023-02-29T12:00:00Z', null],
      ['1900-02-29T00:00:00Z', null],
      ['2000-02-29T00:00:00Z', Date.UTC(2000, 1, 29)],
      ['0000-02-29T00:00:00Z', viaDate(0, 2, 29, 0, 0, 0, 0)],
      ['9999-12-31T23:59:59.9999999+14:00', Date.UTC(9999, 11, 31, 9, 59, 59, 999)],
      ['0001-01-01T00:00:00-14:00', viaDate(1, 1, 1, 14, 0, 0, 0)],
      ['2024-03-01T00:00:00+23:59', Date.UTC(2024, 1, 29, 0, 1)],
      ['2024-03-01T00:00:00+24:00', null],
      ['2024-03-01T00:00:00+02:60', null],
      ['2024-03-01T24:00:00Z', null],
      ['2024-03-01T23:60:00Z', null],
      ['2024-03-01T23:59:60Z', null],
      ['2024-03-01T10:00:00.123456789012+02:00', Date.UTC(2024, 2, 1, 8, 0, 0, 123)],
      ['2024-03-01T10:00:00.1234567890123+02:00', null],
      ['2024-03-01T10:00:00.+02:00', null],
      ['2024-03-01T10:00:00.5-05:30', Date.UTC(2024, 2, 1, 15, 30, 0, 500)],
      ['2024-03-01T10:00:00.05-00:00', Date.UTC(2024, 2, 1, 10, 0, 0, 50)],
      ['2024-03-01 10:00:00+0530', Date.UTC(2024, 2, 1, 4, 30)],
      ['2024-03-01t10:00+05', Date.UTC(2024, 2, 1, 5)],
      ['2024-03-01T10:00:00', Date.UTC(2024, 2, 1, 10)],
      ['2024-03-01T10:00:00+5', null],
      ['2024-03-01T10:00:00+05:3', null],
      ['2024-03-01T10:00:00Z ', null],
    ];
    for (const [text, expected] of cases) {
      expect([text, readInstant(text)]).toEqual([text, expected]);
      expect([text, instantTextEpoch(text)]).toEqual([text, expected ?? Number.NaN]);
    }
    // forms the general reader takes that the fast one leaves to it
    for (const text of ['2024-03-01', '2024-03-01T10:00:00 +02:00', '12024-03-01T10:00:00Z', '-0001-03-01T10:00:00Z']) {
      expect(instantTextEpoch(text)).toBeNaN();
      expect(readInstantFast(text)).toBe(readInstant(text));
    }
  });

  it('readInstantFast reads every value as readInstant does', () => {
    const values = fc.oneof(
      instantParts(true).map(instantText),
      mutated(instantParts(false).map(instantText)),
      fc.string(),
      fc.double(),
      fc.date({ noInvalidDate: false }),
      fc.constantFrom(null, undefined, {}, true, 7n),
    );
    fc.assert(
      fc.property(values, (value) => {
        expect(readInstantFast(value)).toBe(readInstant(value));
      }),
      { numRuns: 10_000 },
    );
  });
});
