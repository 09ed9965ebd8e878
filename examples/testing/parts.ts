// The entity type the testing examples serve (docs/testing.md): parts with a nullable string, a nullable Int32 and a
// Boolean, the types both examples handle.
import { defineEntityType, type Row } from '../../src/index.js';

export const Part = defineEntityType({
  name: 'Part',
  key: ['PartID'],
  properties: {
    PartID: { type: 'Edm.String', maxLength: 20 },
    Description: { type: 'Edm.String', maxLength: 40, nullable: false },
    Category: { type: 'Edm.String', maxLength: 20 },
    ReorderPoint: { type: 'Edm.Int32' },
    IsCritical: { type: 'Edm.Boolean', nullable: false },
  },
});

/** A part as both examples store it. */
export interface PartRow {
  PartID: string;
  Description: string;
  Category: string | null;
  ReorderPoint: number | null;
  IsCritical: boolean;
}

/** A generated row (the testing kit's rows are untyped records) as a part. */
export function partOf(row: Row): PartRow {
  const text = (value: unknown): string | null => (value === null ? null : String(value));
  return {
    PartID: String(row['PartID']),
    Description: String(row['Description']),
    Category: text(row['Category']),
    ReorderPoint: row['ReorderPoint'] === null ? null : Number(row['ReorderPoint']),
    IsCritical: row['IsCritical'] === true,
  };
}
