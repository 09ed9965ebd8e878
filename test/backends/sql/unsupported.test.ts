// What the SQL dialects do not translate is refused with a 501 that names the construct, the dialect and where it
// is in the query, never with SQL that would answer differently from the memory backend.
import { describe, expect, it } from 'vitest';
import { isODataError, parseQuery, validateQuery } from '../../../src/index.js';
import { toSql, type SqlDialectName } from '../../../src/backends/sql/index.js';
import { defineEntityType } from '../../../src/model/schema.js';
import { Part, Thing } from './fixtures.js';

const all: readonly SqlDialectName[] = ['sqlite', 'postgres', 'mysql'];

/** [query, the dialects that refuse it, the text the message must contain] */
const refused: readonly [string, readonly SqlDialectName[], string][] = [
  // a pattern that is not a literal cannot be written in the database's own regular expressions
  ['$filter=matchesPattern(S,T)', ['postgres', 'mysql'], 'matchesPattern with a pattern that is not a literal'],
  // PCRE2 would backtrack without bound on these (src/values/regex/sql.ts): MariaDB only
  ["$filter=matchesPattern(S,'^(a|a?)+$')", ['mysql'], 'is not supported by the mysql SQL dialect'],
  ["$filter=matchesPattern(S,'^.*.*.*x')", ['mysql'], 'is not supported by the mysql SQL dialect'],
  ['$filter=F mod 2e0 eq 0', ['postgres'], 'mod on Edm.Double'],
  ['$filter=F lt NaN', ['sqlite', 'mysql'], 'NaN'],
  ['$filter=F lt INF', ['mysql'], 'INF'],
  [`$filter=D eq ${'9'.repeat(66)}.5`, ['mysql'], "MySQL's DECIMAL holds 65 digits"],
  ['$filter=D eq 0.0000000000000000000000000000001', ['mysql'], "MySQL's DECIMAL holds 65 digits"],
  ['$filter=cast(F,Edm.Decimal) eq 2.5', ['mysql'], 'cast from Edm.Double to Edm.Decimal'],
  ["$filter=cast(I,Edm.String) eq '1'", ['mysql'], 'cast from Edm.Int32 to Edm.String'],
  // MySQL's DECIMAL(65,30) cannot hold every number text denotes, and its text-to-double conversion is not exact
  ['$filter=cast(S,Edm.Decimal) eq 1.5', ['mysql'], 'cast from Edm.String to Edm.Decimal'],
  ['$filter=cast(S,Edm.Double) eq 1.5e0', ['mysql'], 'cast from Edm.String to Edm.Double'],
  ["$filter=At add duration'P1D' gt At", all, 'add on Edm.DateTimeOffset'],
  ["$filter=duration'P1D' eq duration'PT24H'", all, 'A literal of type Edm.Duration'],
  ["$filter=totalseconds(duration'PT1S') eq 1", all, 'A literal of type Edm.Duration'],
  ["$filter=cast(At,Edm.String) eq 'x'", all, 'cast from Edm.DateTimeOffset to Edm.String'],
  ["$filter=cast(12:00:00,Edm.String) eq '12:00:00'", all, 'cast from Edm.TimeOfDay to Edm.String'],
  ["$filter=cast(Day,Edm.String) eq '2024-01-01'", all, 'cast from Edm.Date to Edm.String'],
];

const bind = (query: string) => validateQuery(parseQuery(query), Thing);

describe('constructs a dialect does not translate', () => {
  for (const [query, dialects, what] of refused) {
    it(`${query}: 501 on ${dialects.join(', ')}, SQL elsewhere`, () => {
      const bound = bind(query);
      for (const dialect of all) {
        const options = { dialect, table: 'thing', navigation: { Parts: { table: 'part' } } };
        if (!dialects.includes(dialect)) {
          expect(toSql(bound, options).sql, dialect).toMatch(/^SELECT /);
          continue;
        }
        let error: unknown;
        try {
          toSql(bound, options);
        } catch (e) {
          error = e;
        }
        expect(isODataError(error), `${dialect} should refuse ${query}`).toBe(true);
        if (!isODataError(error)) continue;
        expect(error.status).toBe(501);
        expect(error.code).toBe('NotImplemented');
        expect(error.target).toBe('$filter');
        expect(error.message).toContain(what);
        expect(error.message).toContain(`the ${dialect} SQL dialect`);
        expect(typeof error.position).toBe('number');
      }
    });
  }

  it('names the position of the refused construct', () => {
    try {
      toSql(bind('$filter=I eq 1 and matchesPattern(S,T)'), { dialect: 'postgres', table: 'thing' });
      expect.unreachable();
    } catch (error) {
      expect(isODataError(error) && error.position).toBe(11);
    }
  });

  it('refuses a navigation it was given no table for', () => {
    expect(() => toSql(bind('$filter=Parts/any()'), { dialect: 'sqlite', table: 'thing' })).toThrow(
      /no table for the navigation Parts \(options\.navigation\)/,
    );
  });

  it('refuses a SQLite decimal property without a scale or wider than 18 digits', () => {
    const Wide = defineEntityType({
      name: 'Wide',
      key: ['Id'],
      properties: { Id: { type: 'Edm.Int32' }, Amount: { type: 'Edm.Decimal', precision: 30, scale: 2 } },
    });
    const bound = validateQuery(parseQuery('$filter=Amount gt 1.5'), Wide);
    expect(() => toSql(bound, { dialect: 'sqlite', table: 'wide' })).toThrow(/scaled 64-bit integers/);
    expect(toSql(bound, { dialect: 'postgres', table: 'wide' }).sql).toContain('"Amount" > $1::numeric');
  });

  it('refuses SQL beyond the length limit instead of building it', () => {
    // MySQL's exact decimal division repeats its operands; fifteen levels would be gigabytes of SQL
    const nested = Array.from({ length: 15 }).reduce<string>((x) => `(${x} divby D)`, 'D');
    expect(() => toSql(bind(`$filter=${nested} gt 0`), { dialect: 'mysql', table: 'thing' })).toThrow(/too complex/);
    // PostgreSQL computes each quotient's operands once: its SQL grows linearly
    expect(toSql(bind(`$filter=${nested} gt 0`), { dialect: 'postgres', table: 'thing' }).sql.length).toBeLessThan(
      20_000,
    );
  });

  it('keeps Part usable on its own', () => {
    expect(
      toSql(validateQuery(parseQuery('$filter=Q gt 1'), Part), { dialect: 'sqlite', table: 'part' }).params,
    ).toEqual([1n]);
  });
});
