// A small entity type with a property of every EDM type and a child collection (whose rows lead back to it through a
// single-valued navigation), for binder tests.
import { defineEntityType, type EntityType } from '../../src/index.js';

export const Line: EntityType = defineEntityType({
  name: 'Line',
  key: ['OrderId', 'LineNumber'],
  properties: {
    OrderId: { type: 'Edm.String', maxLength: 20 },
    LineNumber: { type: 'Edm.Int32' },
    Qty: { type: 'Edm.Decimal', precision: 12, scale: 2, nullable: false },
    Part: { type: 'Edm.String' },
  },
  navigation: { Order: { target: () => Item, foreignKey: { OrderId: 'Id' }, collection: false } },
});

export const Item: EntityType = defineEntityType({
  name: 'Item',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.String', maxLength: 20 },
    Name: { type: 'Edm.String', nullable: false },
    Notes: { type: 'Edm.String' },
    Active: { type: 'Edm.Boolean', nullable: false },
    Flag: { type: 'Edm.Boolean' },
    Count32: { type: 'Edm.Int32' },
    Count64: { type: 'Edm.Int64' },
    Price: { type: 'Edm.Decimal', precision: 19, scale: 4 },
    Ratio: { type: 'Edm.Double' },
    Due: { type: 'Edm.Date' },
    Created: { type: 'Edm.DateTimeOffset', computed: true },
    At: { type: 'Edm.TimeOfDay' },
    Span: { type: 'Edm.Duration' },
    Guid: { type: 'Edm.Guid' },
    Blob: { type: 'Edm.Binary' },
    Secret: { type: 'Edm.Binary', writeOnly: true },
  },
  navigation: {
    Lines: { target: () => Line, foreignKey: { Id: 'OrderId' } },
  },
});
