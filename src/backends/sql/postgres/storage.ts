// How PostgreSQL keeps each EDM type: text and varchar under COLLATE "C" (binary order), boolean, integer and bigint,
// numeric(p,s) (numeric without a precision), double precision, date, timestamptz(3), uuid, bytea. Text cannot hold
// U+0000. Int64 and decimal parameters go as text, which the casts of the emitted SQL read exactly.
import { readBoolean, readInt64 } from '../../../values/read.js';
import { decimalToString } from '../../../values/decimal.js';
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

export const postgresStorage: Storage = {
  columnType: (property) => {
    switch (property.type) {
      case 'Edm.String':
        return property.maxLength === undefined ? 'text COLLATE "C"' : `varchar(${property.maxLength}) COLLATE "C"`;
      case 'Edm.Boolean':
        return 'boolean';
      case 'Edm.Int32':
        return 'integer';
      case 'Edm.Int64':
        return 'bigint';
      case 'Edm.Decimal':
        return property.precision === undefined ? 'numeric' : `numeric(${property.precision}, ${property.scale ?? 0})`;
      case 'Edm.Double':
        return 'double precision';
      case 'Edm.Date':
        return 'date';
      case 'Edm.DateTimeOffset':
        return 'timestamptz(3)';
      case 'Edm.Guid':
        return 'uuid';
      case 'Edm.Binary':
        return 'bytea';
      default:
        return 'text';
    }
  },

  encodeLiteral: (literal) => {
    switch (literal.type) {
      case 'Edm.String':
        return literal.value.includes('\u0000')
          ? { invalid: 'A string with the character U+0000 (PostgreSQL text cannot hold it)' }
          : literal.value;
      case 'Edm.Boolean':
        return literal.value;
      case 'Edm.Int64':
        return literal.value.toString();
      case 'Edm.Decimal':
        return decimalLiteralText(literal.value);
      case 'Edm.Double': {
        const v = literal.value;
        return Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity';
      }
      case 'Edm.DateTimeOffset': {
        const ms = storableInstant(literal);
        return typeof ms === 'number' ? isoInstant(ms) : ms;
      }
      default:
        return encodeLiteralAlike(literal);
    }
  },

  encode: (property, value) => {
    if (value === null || value === undefined) return null;
    switch (property.type) {
      case 'Edm.String':
        return typeof value !== 'string' || value.includes('\u0000') ? undefined : value;
      case 'Edm.Boolean':
        return readBoolean(value) ?? undefined;
      case 'Edm.Int64':
        return readInt64(value)?.toString() ?? undefined;
      case 'Edm.Decimal': {
        // numeric(p,s) rounds a value with more places: refused, never stored changed; numeric keeps any value
        const d = decimalValue(value);
        if (d === null) return undefined;
        const { precision, scale } = property;
        if (precision !== undefined && !fitsDigits(d, precision, scale ?? 0)) return undefined;
        return decimalToString(d);
      }
      case 'Edm.DateTimeOffset': {
        const ms = storableInstantValue(value);
        return ms === null ? undefined : isoInstant(ms);
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
