// How MySQL and MariaDB keep each EDM type: VARCHAR or LONGTEXT under utf8mb4_nopad_bin (binary order, no padding),
// BOOLEAN (0/1), INT and BIGINT, DECIMAL(p,s) (DECIMAL(38,10) without a precision), DOUBLE, DATE, DATETIME(3) in UTC,
// CHAR(36) ascii for Guids, LONGBLOB. DECIMAL holds at most 65 digits, 30 of them after the point, and DOUBLE no NaN
// or infinity. Int64 and decimal parameters go as text (mysql2 reads them back as text with bigNumberStrings).
import { readBoolean, readInt64 } from '../../../values/read.js';
import { decimalToString } from '../../../values/decimal.js';
import type { Property } from '../../../model/schema.js';
import type { Storage } from '../dialect.js';
import {
  decimalLiteralText,
  decimalTextAlike,
  decimalValue,
  decodeAlike,
  encodeAlike,
  encodeLiteralAlike,
  fitsDigits,
  isoInstant,
  storableInstant,
  storableInstantValue,
} from '../forms.js';

/**
 * The digits a decimal column holds: DECIMAL(p,s) as declared, DECIMAL(38,10) without a precision (DECIMAL(p,0)
 * with a precision but no scale). It rounds a value with more places (MariaDB with only a Note, even in strict mode).
 */
function decimalColumn(property: Partial<Pick<Property, 'precision' | 'scale'>>): { precision: number; scale: number } {
  const { precision, scale } = property;
  return { precision: precision ?? 38, scale: scale ?? (precision === undefined ? 10 : 0) };
}

/** MySQL's DECIMAL holds at most 65 digits, at most 30 of them after the point. */
function fitsMysqlDecimal(text: string): boolean {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  return whole.replace(/^0+/, '').length + fraction.length <= 65 && fraction.length <= 30;
}

/** DATETIME's text: UTC without a zone. */
function instantText(ms: number): string {
  const iso = isoInstant(ms);
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}`;
}

export const mysqlStorage: Storage = {
  columnType: (property) => {
    switch (property.type) {
      case 'Edm.String':
        // keys and bounded strings are VARCHAR (indexable); unbounded text is LONGTEXT
        return property.maxLength !== undefined && property.maxLength <= 16_000
          ? `VARCHAR(${property.maxLength}) COLLATE utf8mb4_nopad_bin`
          : property.isKey === true
            ? 'VARCHAR(768) COLLATE utf8mb4_nopad_bin'
            : 'LONGTEXT COLLATE utf8mb4_nopad_bin';
      case 'Edm.Boolean':
        return 'BOOLEAN';
      case 'Edm.Int32':
        return 'INT';
      case 'Edm.Int64':
        return 'BIGINT';
      case 'Edm.Decimal': {
        const { precision, scale } = decimalColumn(property);
        return `DECIMAL(${precision}, ${scale})`;
      }
      case 'Edm.Double':
        return 'DOUBLE';
      case 'Edm.Date':
        return 'DATE';
      case 'Edm.DateTimeOffset':
        return 'DATETIME(3)';
      case 'Edm.Guid':
        return 'CHAR(36) CHARACTER SET ascii COLLATE ascii_bin';
      case 'Edm.Binary':
        return 'LONGBLOB';
      default:
        return 'LONGTEXT';
    }
  },

  encodeLiteral: (literal) => {
    switch (literal.type) {
      case 'Edm.Boolean':
        return literal.value ? 1 : 0;
      case 'Edm.Int64':
        return literal.value.toString();
      case 'Edm.Decimal': {
        const text = decimalLiteralText(literal.value);
        return fitsMysqlDecimal(text)
          ? text
          : { unsupported: `The decimal ${literal.value} (MySQL's DECIMAL holds 65 digits, 30 after the point)` };
      }
      case 'Edm.Double': {
        const v = literal.value;
        if (Number.isNaN(v)) return { unsupported: 'NaN (mysql cannot hold it)' };
        return Number.isFinite(v) ? v : { unsupported: `${v > 0 ? 'INF' : '-INF'} (MySQL cannot hold it)` };
      }
      case 'Edm.DateTimeOffset': {
        const ms = storableInstant(literal);
        return typeof ms === 'number' ? instantText(ms) : ms;
      }
      default:
        return encodeLiteralAlike(literal);
    }
  },

  encode: (property, value) => {
    if (value === null || value === undefined) return null;
    switch (property.type) {
      case 'Edm.String':
        return typeof value === 'string' ? value : undefined;
      case 'Edm.Boolean': {
        const b = readBoolean(value);
        return b === null ? undefined : b ? 1 : 0;
      }
      case 'Edm.Int64':
        return readInt64(value)?.toString() ?? undefined;
      case 'Edm.Decimal': {
        // a value the column would round or cannot hold is refused, never stored changed
        const d = decimalValue(value);
        const { precision, scale } = decimalColumn(property);
        return d === null || !fitsDigits(d, precision, scale) ? undefined : decimalToString(d);
      }
      case 'Edm.DateTimeOffset': {
        const ms = storableInstantValue(value);
        return ms === null ? undefined : instantText(ms);
      }
      default:
        return encodeAlike(property, value);
    }
  },

  decode: decodeAlike,
  decoder: (property) => (raw) => decodeAlike(property, raw),
  decimalText: () => decimalTextAlike,
  integerParam: (n) => n,
};
