// defineEntityType checks a definition once (keys, facets, names); defineModel collects the types reachable by navigation.
import { describe, expect, it } from 'vitest';
import { defineEntityType, defineModel, SchemaError, type EntityType } from '../../src/model/schema.js';

const order = (): EntityType =>
  defineEntityType({
    name: 'Order',
    key: ['OrderID'],
    properties: { OrderID: { type: 'Edm.String', maxLength: 20 }, Total: { type: 'Edm.Decimal', scale: 2 } },
  });

describe('defineEntityType', () => {
  it('rejects a type without a key', () => {
    expect(() =>
      defineEntityType({ name: 'NoKey', key: [], properties: { Name: { type: 'Edm.String' } } }),
    ).toThrowError(new SchemaError('NoKey has no key'));
  });

  it('rejects a key that names no property', () => {
    expect(() =>
      defineEntityType({ name: 'Order', key: ['OrderID'], properties: { Number: { type: 'Edm.String' } } }),
    ).toThrowError(new SchemaError('Key OrderID is not a property of Order'));
  });

  it('rejects a nullable key', () => {
    expect(() =>
      defineEntityType({
        name: 'Order',
        key: ['OrderID'],
        properties: { OrderID: { type: 'Edm.String', nullable: true } },
      }),
    ).toThrowError(new SchemaError('Key property Order.OrderID cannot be nullable'));
  });

  it('checks custom aggregates: a method the property takes, by name or by the property given', () => {
    const lines = (aggregates: Parameters<typeof defineEntityType>[0]['aggregates']): EntityType =>
      defineEntityType({
        name: 'Line',
        key: ['ID'],
        properties: {
          ID: { type: 'Edm.Int32' },
          Amount: { type: 'Edm.Decimal', scale: 2 },
          Note: { type: 'Edm.String' },
        },
        ...(aggregates === undefined ? {} : { aggregates }),
      });
    const type = lines({
      Amount: { method: 'sum' },
      Largest: { property: 'Amount', method: 'max' },
      Notes: { property: 'Note', method: 'countdistinct' },
    });
    expect([...type.aggregates!].map(([name, a]) => [name, a.property.name, a.method])).toEqual([
      ['Amount', 'Amount', 'sum'],
      ['Largest', 'Amount', 'max'],
      ['Notes', 'Note', 'countdistinct'],
    ]);
    expect(lines(undefined).aggregates).toBeUndefined();
    expect(() => lines({ Note: { method: 'sum' } })).toThrowError(
      new SchemaError(
        'Line: the custom aggregate Note takes sum of Note, which is not a readable property that method takes',
      ),
    );
    expect(() => lines({ Total: { method: 'sum' } })).toThrowError(/the custom aggregate Total takes sum of Total/);
  });

  it('makes key properties non-nullable and others nullable by default', () => {
    const type = order();
    expect(type.key.map((property) => [property.name, property.nullable, property.isKey])).toEqual([
      ['OrderID', false, true],
    ]);
    expect(type.properties.get('Total')).toMatchObject({ nullable: true, isKey: false });
  });

  it('rejects maxLength on a number', () => {
    expect(() =>
      defineEntityType({
        name: 'Order',
        key: ['OrderID'],
        properties: { OrderID: { type: 'Edm.Int32' }, Quantity: { type: 'Edm.Int32', maxLength: 10 } },
      }),
    ).toThrowError(new SchemaError('Order.Quantity: maxLength applies to strings and binaries, not Edm.Int32'));
  });

  it('rejects precision or scale on a type other than Decimal', () => {
    expect(() =>
      defineEntityType({
        name: 'Order',
        key: ['OrderID'],
        properties: { OrderID: { type: 'Edm.Int32' }, Ratio: { type: 'Edm.Double', scale: 2 } },
      }),
    ).toThrowError(SchemaError);
  });

  it('rejects a property name that is not an OData identifier', () => {
    expect(() =>
      defineEntityType({
        name: 'Order',
        key: ['OrderID'],
        properties: { OrderID: { type: 'Edm.Int32' }, 'Unit Price': { type: 'Edm.Decimal' } },
      }),
    ).toThrowError(SchemaError);
  });

  it('rejects a navigation whose foreign key names no parent property', () => {
    expect(() =>
      defineEntityType({
        name: 'Order',
        key: ['OrderID'],
        properties: { OrderID: { type: 'Edm.Int32' } },
        navigation: { Lines: { target: order, foreignKey: { OrderNumber: 'OrderID' } } },
      }),
    ).toThrowError(SchemaError);
  });

  it('keeps properties in declaration order and freezes them', () => {
    const type = defineEntityType({
      name: 'Line',
      key: ['OrderID', 'LineNumber'],
      properties: {
        OrderID: { type: 'Edm.String' },
        LineNumber: { type: 'Edm.Int32' },
        Note: { type: 'Edm.String' },
      },
    });
    expect([...type.properties.keys()]).toEqual(['OrderID', 'LineNumber', 'Note']);
    expect(type.key.map((property) => property.name)).toEqual(['OrderID', 'LineNumber']);
    expect(Object.isFrozen(type)).toBe(true);
    expect(Object.isFrozen(type.properties.get('Note'))).toBe(true);
  });
});

describe('defineModel', () => {
  // Header → Line (by set), Line → Note (reachable only by navigation), Header → Comment (contained).
  const Note: EntityType = defineEntityType({
    name: 'Note',
    key: ['NoteID'],
    properties: { NoteID: { type: 'Edm.Int32' }, LineID: { type: 'Edm.Int32' } },
  });
  const Line: EntityType = defineEntityType({
    name: 'Line',
    key: ['LineID'],
    properties: { LineID: { type: 'Edm.Int32' }, HeaderID: { type: 'Edm.Int32' } },
    navigation: { Notes: { target: () => Note, foreignKey: { LineID: 'LineID' } } },
  });
  const Comment: EntityType = defineEntityType({
    name: 'Comment',
    key: ['CommentID'],
    properties: { CommentID: { type: 'Edm.Int32' }, HeaderID: { type: 'Edm.Int32' } },
  });
  const Header: EntityType = defineEntityType({
    name: 'Header',
    key: ['HeaderID'],
    properties: { HeaderID: { type: 'Edm.Int32' } },
    navigation: {
      Lines: { target: () => Line, foreignKey: { HeaderID: 'HeaderID' } },
      Comments: { target: () => Comment, foreignKey: { HeaderID: 'HeaderID' }, contained: true },
    },
  });

  it('collects every entity type reachable from the sets through navigation, transitively', () => {
    const model = defineModel({ namespace: 'Demo', entitySets: { Headers: Header, Lines: Line } });
    expect([...model.entityTypes.keys()].sort()).toEqual(['Comment', 'Header', 'Line', 'Note']);
    expect(model.entityTypes.get('Note')).toBe(Note);
    expect([...model.entitySets.keys()]).toEqual(['Headers', 'Lines']);
    expect(model.containerName).toBe('Container');
    expect(model.actions).toEqual([]);
  });

  it('follows navigation cycles without looping', () => {
    const Parent: EntityType = defineEntityType({
      name: 'Parent',
      key: ['ID'],
      properties: { ID: { type: 'Edm.Int32' } },
      navigation: { Children: { target: () => Child, foreignKey: { ID: 'ParentID' } } },
    });
    const Child: EntityType = defineEntityType({
      name: 'Child',
      key: ['ID'],
      properties: { ID: { type: 'Edm.Int32' }, ParentID: { type: 'Edm.Int32' } },
      navigation: { Parents: { target: () => Parent, foreignKey: { ParentID: 'ID' } } },
    });
    const model = defineModel({ namespace: 'Demo', entitySets: { Parents: Parent } });
    expect([...model.entityTypes.keys()]).toEqual(['Parent', 'Child']);
  });

  it('rejects two different entity types with one name', () => {
    expect(() => defineModel({ namespace: 'Demo', entitySets: { A: order(), B: order() } })).toThrowError(
      new SchemaError('Two different entity types are named Order'),
    );
  });

  it('rejects a single-valued navigation to a contained type that does not give its parent key', () => {
    // reviews are numbered under their book: review 1 of every book has No = 1
    const Review: EntityType = defineEntityType({
      name: 'Review',
      key: ['No'],
      properties: { ISBN: { type: 'Edm.String' }, No: { type: 'Edm.Int32' } },
    });
    const book = (top: Record<string, string>): EntityType =>
      defineEntityType({
        name: 'Book',
        key: ['ISBN'],
        properties: { ISBN: { type: 'Edm.String' }, Top: { type: 'Edm.Int32' } },
        navigation: {
          Reviews: { target: () => Review, foreignKey: { ISBN: 'ISBN' }, contained: true },
          TopReview: { target: () => Review, foreignKey: top, collection: false },
        },
      });
    expect(() => defineModel({ namespace: 'Demo', entitySets: { Books: book({ Top: 'No' }) } })).toThrowError(
      new SchemaError(
        "Book.TopReview: Review is contained under its parent, so a single-valued navigation's foreign key must give its parent's key too (ISBN, No)",
      ),
    );
    expect(() =>
      defineModel({ namespace: 'Demo', entitySets: { Books: book({ ISBN: 'ISBN', Top: 'No' }) } }),
    ).not.toThrow();
  });

  it('rejects an action bound to an unknown entity set', () => {
    expect(() =>
      defineModel({
        namespace: 'Demo',
        entitySets: { Headers: Header },
        actions: [{ name: 'Close', boundTo: 'Orders', parameters: {}, returnType: 'Edm.Boolean' }],
      }),
    ).toThrowError(new SchemaError('Action Close is bound to unknown entity set Orders'));
  });
});

describe('a default order and what a set allows', () => {
  const reading = (defaultOrder: readonly { property: string; descending?: boolean }[]): EntityType =>
    defineEntityType({
      name: 'Reading',
      key: ['ReadingID'],
      properties: {
        ReadingID: { type: 'Edm.Int32' },
        ReadingDate: { type: 'Edm.DateTimeOffset' },
        Photo: { type: 'Edm.Binary', writeOnly: true },
      },
      defaultOrder,
    });

  it('keeps the declared order with its properties, and none by default', () => {
    const type = reading([{ property: 'ReadingDate', descending: true }, { property: 'ReadingID' }]);
    expect(type.defaultOrder.map((o) => [o.property.name, o.descending])).toEqual([
      ['ReadingDate', true],
      ['ReadingID', false],
    ]);
    expect(order().defaultOrder).toEqual([]);
  });

  it('rejects a default order naming a missing, write-only or unordered property', () => {
    for (const property of ['Nothing', 'Photo'])
      expect(() => reading([{ property }])).toThrowError(
        new SchemaError(`Reading: the default order names ${property}, not a readable ordered property`),
      );
  });

  it('makes a set read-only unless the model grants writes, and keeps entitySets by type', () => {
    const type = order();
    const model = defineModel({
      namespace: 'Shop',
      entitySets: { Orders: { type, insertable: true, deletable: true }, Archive: type },
    });
    expect(model.sets.get('Orders')).toEqual({
      name: 'Orders',
      entityType: type,
      insertable: true,
      updatable: false,
      deletable: true,
    });
    expect(model.sets.get('Archive')).toMatchObject({ insertable: false, updatable: false, deletable: false });
    expect([...model.entitySets]).toEqual([
      ['Orders', type],
      ['Archive', type],
    ]);
  });
});
