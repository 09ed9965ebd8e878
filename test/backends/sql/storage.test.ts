// Storage forms (storage.ts): a decimal the column would round, or cannot hold, is refused by encodeValue (the
// caller reports it) on every dialect, never stored changed. The property stores random decimals in columns of
// random facets on the real databases and reads them back.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineEntityType, type EntityType } from '../../../src/index.js';
import { decodeRow, encodeValue, type SqlDialectName } from '../../../src/backends/sql/index.js';
import { compareDecimal, parseDecimal } from '../../../src/values/decimal.js';
import { openAll, type TestDatabase } from './databases.js';

const undeclared = { type: 'Edm.Decimal', name: 'Amount' } as const;

describe('encodeValue refuses a decimal its column cannot keep', () => {
  it('an undeclared Decimal on MySQL is DECIMAL(38,10): more places or integer digits are refused', () => {
    expect(encodeValue('mysql', undeclared, '1234567890123456789012345678.0123456789')).toBe(
      '1234567890123456789012345678.0123456789',
    );
    expect(encodeValue('mysql', undeclared, '1.00000000001')).toBeUndefined(); // 11 places: MariaDB would round
    expect(encodeValue('mysql', undeclared, '1'.repeat(29))).toBeUndefined(); // 29 integer digits
    expect(encodeValue('mysql', undeclared, '0.000000000100')).toBe('0.0000000001');
  });

  it('a declared Decimal(p,s) on MySQL and PostgreSQL keeps s places and p − s integer digits', () => {
    const money = { type: 'Edm.Decimal', name: 'Price', precision: 6, scale: 2 } as const;
    for (const dialect of ['mysql', 'postgres'] as const) {
      expect(encodeValue(dialect, money, '9999.99'), dialect).toBe('9999.99');
      expect(encodeValue(dialect, money, '-9999.99'), dialect).toBe('-9999.99');
      expect(encodeValue(dialect, money, '1.005'), dialect).toBeUndefined();
      expect(encodeValue(dialect, money, '10000'), dialect).toBeUndefined();
      expect(encodeValue(dialect, money, 0.1), dialect).toBe('0.1');
    }
    // PostgreSQL's numeric without a precision keeps any value
    expect(encodeValue('postgres', undeclared, '1.00000000001')).toBe('1.00000000001');
  });

  it('SQLite keeps a scaled 64-bit integer: more places than the scale, or beyond Int64, is refused', () => {
    const scaled = { type: 'Edm.Decimal', name: 'Price', precision: 18, scale: 4 } as const;
    expect(encodeValue('sqlite', scaled, '99999999999999.9999')).toBe(999999999999999999n);
    expect(encodeValue('sqlite', scaled, '1.00001')).toBeUndefined();
    expect(encodeValue('sqlite', scaled, '1000000000000000')).toBeUndefined();
  });
});

// ── every database, random values and facets ─────────────────────────────────

const facets: readonly { precision?: number; scale?: number }[] = [
  {},
  { scale: 4 },
  { precision: 18, scale: 4 },
  { precision: 12, scale: 2 },
  { precision: 10, scale: 0 },
  { precision: 38, scale: 20 },
];
const types: EntityType[] = facets.map((f, i) =>
  defineEntityType({
    name: `Amounts${i}`,
    key: ['Id'],
    properties: { Id: { type: 'Edm.Int32' }, Amount: { type: 'Edm.Decimal', ...f } },
  }),
);

let databases: TestDatabase[] = [];
beforeAll(async () => {
  databases = await openAll();
  for (const db of databases) {
    for (const [i, type] of types.entries()) {
      // SQLite keeps decimals as scaled 64-bit integers: only columns with a scale and at most 18 digits
      if (
        db.dialect === 'sqlite' &&
        ((type.properties.get('Amount')!.precision ?? 19) > 18 || facets[i]!.scale === undefined)
      )
        continue;
      await db.load(type, `amounts${i}`, []);
    }
  }
}, 60_000);
afterAll(async () => {
  for (const db of databases) await db.close();
});

const decimalText = fc
  .tuple(
    fc.boolean(),
    fc.stringMatching(/^[0-9]{1,32}$/),
    fc.option(fc.stringMatching(/^[0-9]{1,24}$/), { nil: undefined }),
  )
  .map(
    ([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}`,
  );

describe('what encodeValue accepts, every database stores unchanged', () => {
  it('random decimals in columns of random facets', async () => {
    let stored = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(decimalText, { minLength: 1, maxLength: 8 }), async (values) => {
        for (const db of databases) {
          for (const [i, type] of types.entries()) {
            const property = type.properties.get('Amount')!;
            if (db.dialect === 'sqlite' && ((property.precision ?? 19) > 18 || facets[i]!.scale === undefined))
              continue;
            const table = `amounts${i}`;
            await db.clear(table);
            const kept = values.filter((v) => encodeValue(db.dialect, property, v) !== undefined);
            refused += values.length - kept.length;
            stored += kept.length;
            await db.insert(
              table,
              type,
              kept.map((Amount, Id) => ({ Id, Amount })),
            );
            const rows = await db.query(readBack(db.dialect, db.tableName(table)));
            const back = rows.map((r) => decodeRow(db.dialect, [...type.properties.values()], r).Amount as string);
            expect(back.length, `${db.label} ${table}`).toBe(kept.length);
            for (const [j, v] of kept.entries()) {
              expect(
                compareDecimal(parseDecimal(back[j]!)!, parseDecimal(v)!),
                `${db.label} ${table}: ${v} came back as ${back[j]}`,
              ).toBe(0);
            }
          }
        }
      }),
      { numRuns: 40 },
    );
    // both sides of the property were exercised
    expect(stored).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  }, 120_000);
});

function readBack(dialect: SqlDialectName, table: string | readonly [string, string]): { sql: string; params: [] } {
  const q = (name: string): string => (dialect === 'mysql' ? `\`${name}\`` : `"${name}"`);
  const name = typeof table === 'string' ? q(table) : table.map(q).join('.');
  return {
    sql: `SELECT ${q('Id')} AS ${q('Id')}, ${q('Amount')} AS ${q('Amount')} FROM ${name} ORDER BY ${q('Id')}`,
    params: [],
  };
}
