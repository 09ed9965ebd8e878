// Signatures of the canonical functions (OData 4.01 Part 2 §5.1.1.5–5.1.1.9) this engine evaluates.
// cast, isof and case are bound by their own rules in bind.ts; the collection and geo functions are
// parsed but not supported (the model has neither collections of primitives nor geo types).
import type { EdmPrimitiveType } from '../values/edm.js';
import type { CanonicalFunctionName } from '../syntax/ast.js';

export interface Overload {
  /** Accepted types of each parameter (an argument of a narrower numeric type, or a Date for a DateTimeOffset, is promoted). */
  readonly parameters: readonly (readonly EdmPrimitiveType[])[];
  readonly returns: EdmPrimitiveType;
}

const S: EdmPrimitiveType[] = ['Edm.String'];
const I32: EdmPrimitiveType[] = ['Edm.Int32'];

const overloads = (parameters: readonly (readonly EdmPrimitiveType[])[], returns: EdmPrimitiveType): Overload => ({
  parameters,
  returns,
});

export const functionSignatures: Readonly<Partial<Record<CanonicalFunctionName, readonly Overload[]>>> = {
  contains: [overloads([S, S], 'Edm.Boolean')],
  startswith: [overloads([S, S], 'Edm.Boolean')],
  endswith: [overloads([S, S], 'Edm.Boolean')],
  indexof: [overloads([S, S], 'Edm.Int32')],
  length: [overloads([S], 'Edm.Int32')],
  substring: [overloads([S, I32], 'Edm.String'), overloads([S, I32, I32], 'Edm.String')],
  tolower: [overloads([S], 'Edm.String')],
  toupper: [overloads([S], 'Edm.String')],
  trim: [overloads([S], 'Edm.String')],
  concat: [overloads([S, S], 'Edm.String')],
  matchesPattern: [overloads([S, S], 'Edm.Boolean')],
  year: [overloads([['Edm.Date', 'Edm.DateTimeOffset']], 'Edm.Int32')],
  month: [overloads([['Edm.Date', 'Edm.DateTimeOffset']], 'Edm.Int32')],
  day: [overloads([['Edm.Date', 'Edm.DateTimeOffset']], 'Edm.Int32')],
  hour: [overloads([['Edm.DateTimeOffset', 'Edm.TimeOfDay']], 'Edm.Int32')],
  minute: [overloads([['Edm.DateTimeOffset', 'Edm.TimeOfDay']], 'Edm.Int32')],
  second: [overloads([['Edm.DateTimeOffset', 'Edm.TimeOfDay']], 'Edm.Int32')],
  fractionalseconds: [overloads([['Edm.DateTimeOffset', 'Edm.TimeOfDay']], 'Edm.Decimal')],
  date: [overloads([['Edm.DateTimeOffset']], 'Edm.Date')],
  time: [overloads([['Edm.DateTimeOffset']], 'Edm.TimeOfDay')],
  totaloffsetminutes: [overloads([['Edm.DateTimeOffset']], 'Edm.Int32')],
  totalseconds: [overloads([['Edm.Duration']], 'Edm.Decimal')],
  now: [overloads([], 'Edm.DateTimeOffset')],
  maxdatetime: [overloads([], 'Edm.DateTimeOffset')],
  mindatetime: [overloads([], 'Edm.DateTimeOffset')],
  // Integers are promoted to Decimal; a Double stays a Double.
  round: [overloads([['Edm.Decimal']], 'Edm.Decimal'), overloads([['Edm.Double']], 'Edm.Double')],
  floor: [overloads([['Edm.Decimal']], 'Edm.Decimal'), overloads([['Edm.Double']], 'Edm.Double')],
  ceiling: [overloads([['Edm.Decimal']], 'Edm.Decimal'), overloads([['Edm.Double']], 'Edm.Double')],
};

/** Canonical functions the grammar knows but this engine does not evaluate, with the reason. */
export const unsupportedFunctions: Readonly<Partial<Record<CanonicalFunctionName, string>>> = {
  hassubset: 'the model has no collections of primitive values',
  hassubsequence: 'the model has no collections of primitive values',
  'geo.distance': 'the model has no geography or geometry properties',
  'geo.intersects': 'the model has no geography or geometry properties',
  'geo.length': 'the model has no geography or geometry properties',
};

/** How a function's signature reads in an error message: `contains(Edm.String, Edm.String)`. */
export function describeOverload(name: string, overload: Overload): string {
  return `${name}(${overload.parameters.map((p) => p.join(' or ')).join(', ')})`;
}
