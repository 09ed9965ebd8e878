// The entity writer (rawEntityWriter) writes a decimal stored in SQLite (an integer scaled by 10^scale, read by the
// dialect's one decoder) as exactly the decimal that was stored: its canonical text, a JSON number or (with
// IEEE754Compatible=true) a string, at every scale the column allows and across the whole Int64 range.
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createTableSql, encodeValue, registerSqliteFunctions } from '../../src/backends/sql/index.js';
import { defineEntityType } from '../../src/model/schema.js';
import { decimalToString, parseDecimal } from '../../src/values/decimal.js';
import { rawEntityWriter } from '../../src/service/json.js';

const scales = [0, 1, 4, 8, 15, 16, 18];
const Amounts = defineEntityType({
  name: 'Amounts',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    ...Object.fromEntries(scales.map((s) => [`S${s}`, { type: 'Edm.Decimal', precision: 18, scale: s } as const])),
  },
});
const properties = [...Amounts.properties.values()].filter((p) => p.name !== 'Id');

const db = new Database(':memory:');
db.defaultSafeIntegers(true);
registerSqliteFunctions(db);
db.exec(createTableSql(Amounts, { dialect: 'sqlite', table: 'Amounts' }));
afterAll(() => db.close());

/** The canonical text of a decimal of up to 18 digits, `scale` of them after the point. */
const decimal = (scale: number): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.bigInt({ min: -(10n ** 18n) + 1n, max: 10n ** 18n - 1n }),
      fc.bigInt({ min: -(2n ** 53n), max: 2n ** 53n }),
      fc.integer({ min: -1000, max: 1000 }).map(BigInt),
    )
    .map((n) => decimalToString(parseDecimal(`${n}e-${scale}`)!));

let nextId = 0;

describe('rawEntityWriter on SQLite decimals', () => {
  it('writes the exact decimal that was stored', () => {
    fc.assert(
      fc.property(fc.tuple(...scales.map(decimal)), fc.boolean(), (texts, ieee754Compatible) => {
        const id = ++nextId;
        const params = properties.map((p, i) => encodeValue('sqlite', p, texts[i]));
        db.prepare(
          `INSERT INTO "Amounts" ("Id", ${properties.map((p) => `"${p.name}"`).join(', ')}) VALUES (?, ${properties.map(() => '?').join(', ')})`,
        ).run(BigInt(id), ...params);
        const raw = db.prepare('SELECT * FROM "Amounts" WHERE "Id" = ?').get(BigInt(id)) as Record<string, unknown>;
        const quote = ieee754Compatible ? '"' : '';
        const expected = properties.map((p, i) => `"${p.name}":${quote}${texts[i]}${quote}`).join(',');
        expect(rawEntityWriter('sqlite', properties, { ieee754Compatible })(raw)).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });
});
