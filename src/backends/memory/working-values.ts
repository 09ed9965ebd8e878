// Rows and the working values the memory backend reads from them, and literals as working values. The readers,
// comparers and casts of each EDM type are the value rules of src/values/, shared with the SQL storage.
import type { LiteralValue } from '../../syntax/ast.js';
import { exactDouble, parseDecimal } from '../../values/decimal.js';
import { readTimeOfDay, type Value } from '../../values/read.js';

/** A row: an object with a value per property (and an array of child rows per navigation used in a lambda). */
export type Row = Readonly<Record<string, unknown>>;

/** A compiled expression: its working value for a row. */
export type Eval = (row: Row) => Value;

/** A literal as the working value of its (bound) type, computed once. */
export function literalValue(value: LiteralValue): Value {
  switch (value.type) {
    case 'null':
      return null;
    case 'Edm.Boolean':
    case 'Edm.Int32':
    case 'Edm.Double':
    case 'Edm.String':
    case 'Edm.Date':
      return value.value;
    case 'Edm.Int64':
      return value.value;
    case 'Edm.Decimal':
      // a decimal whose value is exactly a double's shortest text compares on the fast double path
      return exactDouble(value.value) ?? parseDecimal(value.value) ?? null;
    case 'Edm.DateTimeOffset':
      return value.epochMilliseconds;
    case 'Edm.TimeOfDay':
      return readTimeOfDay(value.value);
    case 'Edm.Duration':
      return value.milliseconds;
    case 'Edm.Guid':
      return value.value.toLowerCase();
    case 'Edm.Binary':
      return value.bytes;
    default:
      return null;
  }
}
