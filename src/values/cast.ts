// cast() between primitive types (SEMANTICS.md "Casts"), on working values.
import { formatDouble, INT32_MAX, INT32_MIN, toInt64 } from './arithmetic.js';
import { DAY, daysOfDate } from './calendar.js';
import { decimalToNumber, decimalToString, parseDecimal, roundDecimal, type Decimal } from './decimal.js';
import type { EdmPrimitiveType } from './edm.js';
import { decimalOf, type Value } from './read.js';
import { formatDuration, formatTimeOfDay } from './temporal.js';

/**
 * Text a String casts to a number from: the literal syntax of a number, as a pattern every regex engine reads alike
 * (JavaScript, POSIX ERE in PostgreSQL and MariaDB), so that each SQL dialect tests the same text as this cast.
 */
export const NUMBER_TEXT = '^[+-]?[0-9]+([.][0-9]+)?([eE][+-]?[0-9]+)?$';
const numberText = new RegExp(NUMBER_TEXT);

/**
 * A working value in row form, as a store's row holds it: decimals, Int64 and the temporal types with a time as their
 * canonical text (`1.50` is `'1.5'`, an instant is UTC), the rest as they are. Values made by `$apply` take this form on
 * every backend, so that equal values are written alike whichever computed them.
 */
export function rowFormOf(value: Value, type: EdmPrimitiveType): unknown {
  if (value === null) return null;
  switch (type) {
    case 'Edm.Decimal':
    case 'Edm.Int64':
    case 'Edm.DateTimeOffset':
    case 'Edm.TimeOfDay':
    case 'Edm.Duration':
      return castValue(value, type, 'Edm.String');
    default:
      return value;
  }
}

/** cast() between primitive types (SEMANTICS.md); a value that cannot be represented is null. */
export function castValue(value: NonNullable<Value>, from: EdmPrimitiveType | 'null', to: EdmPrimitiveType): Value {
  if (to === 'Edm.String') {
    switch (from) {
      case 'Edm.Decimal':
        return decimalToString(decimalOf(value)!);
      case 'Edm.DateTimeOffset':
        return new Date(value as number).toISOString();
      case 'Edm.Int64':
        return (value as bigint | number).toString();
      case 'Edm.TimeOfDay':
        return formatTimeOfDay(value as number);
      case 'Edm.Duration':
        return formatDuration(value as number);
      case 'Edm.Double':
        return formatDouble(value as number);
      default:
        return String(value);
    }
  }
  if (from === 'Edm.Date' && to === 'Edm.DateTimeOffset') return daysOfDate(value as string) * DAY;
  // to a number: from a number, or from text in the literal syntax only
  let decimal: Decimal | null;
  if (from === 'Edm.String') {
    const text = value as string;
    if (!numberText.test(text)) return null;
    decimal = parseDecimal(text) ?? null;
  } else decimal = decimalOf(value);
  if (decimal === null) return null;
  switch (to) {
    case 'Edm.Double':
      return decimalToNumber(decimal);
    case 'Edm.Decimal':
      return decimal;
    case 'Edm.Int32': {
      const n = decimalToNumber(roundDecimal(decimal));
      return n < INT32_MIN || n > INT32_MAX ? null : n;
    }
    case 'Edm.Int64': {
      const text = decimalToString(roundDecimal(decimal));
      return toInt64(BigInt(text));
    }
    default:
      return null;
  }
}
