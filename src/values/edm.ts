// EDM primitive types (OData 4.01 CSDL §4.4) and the relations between them that binding needs.

export const edmPrimitiveTypes = [
  'Edm.String',
  'Edm.Boolean',
  'Edm.Int32',
  'Edm.Int64',
  'Edm.Decimal',
  'Edm.Double',
  'Edm.Date',
  'Edm.DateTimeOffset',
  'Edm.TimeOfDay',
  'Edm.Duration',
  'Edm.Guid',
  'Edm.Binary',
] as const;

export type EdmPrimitiveType = (typeof edmPrimitiveTypes)[number];

export function isEdmPrimitiveType(name: string): name is EdmPrimitiveType {
  return (edmPrimitiveTypes as readonly string[]).includes(name);
}

/** Numeric types in promotion order (SEMANTICS.md: Int32 → Int64 → Decimal → Double). */
const numericRank: Readonly<Partial<Record<EdmPrimitiveType, number>>> = {
  'Edm.Int32': 0,
  'Edm.Int64': 1,
  'Edm.Decimal': 2,
  'Edm.Double': 3,
};

export function isNumeric(type: EdmPrimitiveType): boolean {
  return numericRank[type] !== undefined;
}

export function isIntegral(type: EdmPrimitiveType): boolean {
  return type === 'Edm.Int32' || type === 'Edm.Int64';
}

/** The type both numeric operands are promoted to: the wider of the two. */
export function widerNumeric(a: EdmPrimitiveType, b: EdmPrimitiveType): EdmPrimitiveType {
  return numericRank[a]! >= numericRank[b]! ? a : b;
}

/** Types whose values have an order (`lt`, `gt`, `$orderby`): all but Binary. Guids order by their lower-case text. */
export function isOrdered(type: EdmPrimitiveType): boolean {
  return type !== 'Edm.Binary';
}

/** The aggregation methods of `$apply` (Data Aggregation 4.0 §3.2.1.1): `expr with method as Alias`. */
export const aggregationMethods = ['sum', 'min', 'max', 'average', 'countdistinct'] as const;
export type AggregationMethod = (typeof aggregationMethods)[number];

/** The type of an aggregate's result (Data Aggregation 4.0 §3.2.1.3), or undefined where the method cannot take it. */
export function aggregateResultType(
  method: AggregationMethod,
  type: EdmPrimitiveType | 'null',
): { type: EdmPrimitiveType; scale?: number } | undefined {
  if (type === 'null') return undefined;
  switch (method) {
    case 'sum':
      // a type that holds any sum: Int64 for Int32 (2^31 rows could not overflow it), Decimal for Int64
      if (type === 'Edm.Int32') return { type: 'Edm.Int64' };
      if (type === 'Edm.Int64') return { type: 'Edm.Decimal', scale: 0 };
      if (type === 'Edm.Decimal' || type === 'Edm.Double') return { type };
      return undefined;
    case 'average':
      if (type === 'Edm.Double') return { type };
      return isNumeric(type) ? { type: 'Edm.Decimal' } : undefined;
    case 'min':
    case 'max':
      return isOrdered(type) ? { type } : undefined;
    case 'countdistinct':
      return { type: 'Edm.Decimal', scale: 0 };
  }
}
