// The compiled entity writer (rawEntityWriter: fast paths per type straight from the driver's values) writes exactly
// what the general path writes (decodeRow, then entityMembers), for values stored in and read back from a real
// SQLite database, in both number modes (IEEE754Compatible or not), for any $select.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { defineEntityType, type Property } from '../../src/model/schema.js';
import { createTableSql, decodeRow, encodeValue, registerSqliteFunctions } from '../../src/backends/sql/index.js';
import { entityMembers, rawEntityWriter } from '../../src/service/json.js';

const Sample = defineEntityType({
  name: 'Sample',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    Text: { type: 'Edm.String' },
    Small: { type: 'Edm.Int32' },
    Big: { type: 'Edm.Int64' },
    Money: { type: 'Edm.Decimal', precision: 18, scale: 4 },
    Whole: { type: 'Edm.Decimal', precision: 10, scale: 0 },
    Fine: { type: 'Edm.Decimal', precision: 18, scale: 8 },
    Flag: { type: 'Edm.Boolean' },
    Day: { type: 'Edm.Date' },
    At: { type: 'Edm.DateTimeOffset' },
    Ratio: { type: 'Edm.Double' },
    Ref: { type: 'Edm.Guid' },
  },
});
const properties = [...Sample.properties.values()];

const db = new Database(':memory:');
db.defaultSafeIntegers(true);
registerSqliteFunctions(db);
db.exec(createTableSql(Sample, { dialect: 'sqlite', table: 'Sample' }));
afterAll(() => db.close());

/** A decimal's canonical text with at most `precision` digits, `scale` of them after the point. */
function decimal(precision: number, scale: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** BigInt(precision) - 1n }))
    .map(([negative, digits]) => {
      const text = digits.toString().padStart(scale + 1, '0');
      const whole = text.slice(0, text.length - scale);
      const fraction = text.slice(text.length - scale).replace(/0+$/, '');
      const canonical = fraction === '' ? whole : `${whole}.${fraction}`;
      return negative && canonical !== '0' ? `-${canonical}` : canonical;
    });
}

const nullable = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { nil: null, freq: 6 });
const instant = fc
  .date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true })
  .map((d) => d.toISOString());

const row = fc.record({
  Text: nullable(fc.string({ unit: 'binary', maxLength: 12 })),
  Small: nullable(fc.integer()),
  Big: nullable(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String)),
  Money: nullable(decimal(18, 4)),
  Whole: nullable(decimal(10, 0)),
  Fine: nullable(decimal(18, 8)),
  Flag: nullable(fc.boolean()),
  Day: nullable(instant.map((t) => t.slice(0, 10))),
  At: nullable(instant),
  Ratio: nullable(fc.double({ noNaN: false })),
  Ref: nullable(fc.uuid()),
});

let nextId = 0;

/** The row stored through the engine's encoding, read back as the driver gives it. */
function roundTrip(values: Record<string, unknown>): Record<string, unknown> {
  const stored: Record<string, unknown> = { Id: ++nextId, ...values };
  const params = properties.map((p) => encodeValue('sqlite', p, stored[p.name]) ?? null);
  db.prepare(
    `INSERT INTO "Sample" (${properties.map((p) => `"${p.name}"`).join(', ')}) VALUES (${properties.map(() => '?').join(', ')})`,
  ).run(...params);
  return db.prepare('SELECT * FROM "Sample" WHERE "Id" = ?').get(nextId) as Record<string, unknown>;
}

describe('rawEntityWriter', () => {
  it('writes what decodeRow + entityMembers write, for every type, selection and number mode', () => {
    fc.assert(
      fc.property(row, fc.subarray(properties, { minLength: 1 }), fc.boolean(), (values, select, ieee754Compatible) => {
        const raw = roundTrip(values);
        const options = { ieee754Compatible };
        const compiled = rawEntityWriter('sqlite', select, options)(raw);
        const general = entityMembers(select, decodeRow('sqlite', select as Property[], raw), options);
        expect(compiled).toBe(general);
        // and it is the members of a JSON object
        expect(() => JSON.parse(`{${compiled}}`) as unknown).not.toThrow();
      }),
      { numRuns: 1000 },
    );
  });

  it('keeps every digit of decimals beyond 2^53 and of Int64 extremes', () => {
    const raw = roundTrip({
      Money: '99999999999999.9999',
      Whole: '-9999999999',
      Fine: '-9999999999.99999999',
      Big: '-9223372036854775808',
    });
    const members = rawEntityWriter('sqlite', properties, { ieee754Compatible: false })(raw);
    expect(members).toContain('"Money":99999999999999.9999');
    expect(members).toContain('"Whole":-9999999999');
    expect(members).toContain('"Fine":-9999999999.99999999');
    expect(members).toContain('"Big":-9223372036854775808');
  });
});
