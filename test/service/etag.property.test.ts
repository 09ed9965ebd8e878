// The ETag as a page writes it (etagJson, without JSON.stringify) is the JSON text of the ETag itself, whatever the
// concurrency values hold: instants in any form, and text a store may hand back that is not an instant at all.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineEntityType } from '../../src/model/schema.js';
import { etagJson, etagOf } from '../../src/service/etag.js';

const Versioned = defineEntityType({
  name: 'Versioned',
  key: ['ID'],
  properties: {
    ID: { type: 'Edm.Int32' },
    Updated: { type: 'Edm.DateTimeOffset', computed: true, managed: 'modified' },
    Version: { type: 'Edm.Int64', computed: true, managed: 'version' },
  },
  concurrency: ['Updated', 'Version'],
});

const instantLike = fc.oneof(
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2024-02-29T14:30:45.678+02:00', '2024-02-29T14:30:45Z', 'not an instant', 'a\\b', '\\', '"', 'é'),
  fc.string({ unit: 'binary' }),
  fc.constant(null),
);

describe('etagJson', () => {
  it('is JSON.stringify of the ETag', () => {
    fc.assert(
      fc.property(
        instantLike,
        fc.oneof(fc.bigInt().map(String), fc.string(), fc.constant(null)),
        (updated, version) => {
          const row = { ID: 1, Updated: updated, Version: version };
          const json = etagJson(Versioned, row);
          expect(json).toBe(JSON.stringify(etagOf(Versioned, row)));
          expect(JSON.parse(json!)).toBe(etagOf(Versioned, row));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
