// The service's model says what shared/spec/service-interface.md and shared/MODEL.md say.
import { describe, expect, it } from 'vitest';
import type { EntityType, Property } from '../../src/model/schema.js';
import {
  AddComment,
  entitySetNames,
  MeterReading,
  MeterReadingHistory,
  plantDataModel,
  POAttachment,
  PurchaseOrder,
  RemoveActualLabor,
  WorkOrder,
} from '../../src/server/model.js';

function entityType(setName: string): EntityType {
  const type = plantDataModel.entitySets.get(setName);
  if (type === undefined) throw new Error(`no entity set ${setName}`);
  return type;
}

function property(type: EntityType, name: string): Property {
  const found = type.properties.get(name);
  if (found === undefined) throw new Error(`${type.name} has no property ${name}`);
  return found;
}

/** The facets a client sees, without the description text. */
function facets(type: EntityType, name: string): Record<string, unknown> {
  const { description: _description, ...rest } = property(type, name);
  return rest;
}

const keyOf = (type: EntityType): string[] => type.key.map((key) => key.name);

describe('entity sets', () => {
  it("has the interface's eleven entity sets, in its order", () => {
    expect(entitySetNames).toEqual([
      'Accounts',
      'Parts',
      'PurchaseRequests',
      'PRLineItems',
      'PurchaseOrders',
      'POLineItems',
      'POAttachments',
      'BlanketPOs',
      'BlanketPOLineItems',
      'WorkOrders',
      'MeterReadings',
    ]);
    expect([...plantDataModel.entitySets.keys()]).toEqual(entitySetNames);
    expect(plantDataModel.namespace).toBe('PlantData');
  });

  it('names entity types in the singular and reaches the contained types', () => {
    expect([...plantDataModel.entitySets.values()].map((type) => type.name)).toEqual([
      'Account',
      'Part',
      'PurchaseRequest',
      'PRLineItem',
      'PurchaseOrder',
      'POLineItem',
      'POAttachment',
      'BlanketPO',
      'BlanketPOLineItem',
      'WorkOrder',
      'MeterReading',
    ]);
    expect([...plantDataModel.entityTypes.keys()].sort()).toEqual(
      [
        'Account',
        'ActualLabor',
        'BlanketPO',
        'BlanketPOLineItem',
        'MeterReading',
        'MeterReadingHistory',
        'Part',
        'POAttachment',
        'POLineItem',
        'PRLineItem',
        'PurchaseOrder',
        'PurchaseRequest',
        'WorkOrder',
        'WorkOrderComment',
      ].sort(),
    );
  });
});

describe('Accounts', () => {
  const Account = entityType('Accounts');

  it('has exactly the interface fields', () => {
    expect([...Account.properties.keys()]).toEqual(['Account', 'Description', 'IsActive']);
    expect(Account.navigation.size).toBe(0);
  });

  it('is keyed by Account, a non-null String(30)', () => {
    expect(keyOf(Account)).toEqual(['Account']);
    expect(property(Account, 'Account')).toMatchObject({ type: 'Edm.String', maxLength: 30, nullable: false });
    expect(property(Account, 'Description')).toMatchObject({ type: 'Edm.String', maxLength: 100, nullable: true });
    expect(property(Account, 'IsActive')).toMatchObject({ type: 'Edm.Boolean', nullable: false });
  });
});

describe('MeterReadings', () => {
  it('is keyed by MeterID and has the fields the interface accepts on create', () => {
    expect(keyOf(MeterReading)).toEqual(['MeterID']);
    for (const name of ['MeterID', 'Description', 'MeterReading', 'Unit', 'ReadingDate', 'Event'])
      expect(property(MeterReading, name).computed, name).not.toBe(true);
    expect(property(MeterReading, 'MeterReading').type).toBe('Edm.Decimal');
    expect(property(MeterReading, 'ReadingDate').type).toBe('Edm.DateTimeOffset');
    expect(property(MeterReading, 'MeterID')).toMatchObject({ type: 'Edm.String', maxLength: 40, nullable: false });
  });

  it('keeps the history in a contained collection with its own key', () => {
    expect(MeterReading.navigation.get('History')).toMatchObject({
      contained: true,
      foreignKey: { MeterID: 'MeterID' },
    });
    expect(MeterReading.navigation.get('History')?.target()).toBe(MeterReadingHistory);
    expect(keyOf(MeterReadingHistory)).toEqual(['ReadingID']);
    expect(property(MeterReadingHistory, 'ReadingID').computed).toBe(true);
    expect(property(MeterReadingHistory, 'MeterID')).toMatchObject({ computed: true, nullable: false });
  });
});

describe('server-set timestamps', () => {
  it('gives every set except Accounts a computed, non-null CreatedDate and LastModifiedDate', () => {
    for (const setName of entitySetNames.filter((name) => name !== 'Accounts')) {
      for (const name of ['CreatedDate', 'LastModifiedDate']) {
        expect([setName, facets(entityType(setName), name)]).toEqual([
          setName,
          {
            type: 'Edm.DateTimeOffset',
            nullable: false,
            computed: true,
            // kept by the service: on create, and for LastModifiedDate on every update
            managed: name === 'CreatedDate' ? 'created' : 'modified',
            name,
            isKey: false,
          },
        ]);
      }
    }
    expect(entityType('Accounts').properties.has('CreatedDate')).toBe(false);
  });

  it('gives contained records a computed CreatedDate only', () => {
    for (const type of [
      WorkOrder.navigation.get('Comments')!.target(),
      WorkOrder.navigation.get('ActualLabor')!.target(),
    ]) {
      expect(property(type, 'CreatedDate').computed).toBe(true);
      expect(type.properties.has('LastModifiedDate')).toBe(false);
    }
  });
});

describe('facts from MODEL.md', () => {
  it('keys line items by their header key and LineNumber', () => {
    expect(keyOf(entityType('PRLineItems'))).toEqual(['PRNumber', 'LineNumber']);
    expect(keyOf(entityType('POLineItems'))).toEqual(['PONumber', 'LineNumber']);
    expect(keyOf(entityType('BlanketPOLineItems'))).toEqual(['BlanketPONumber', 'LineNumber']);
    expect(property(entityType('POLineItems'), 'LineNumber').type).toBe('Edm.Int32');
  });

  it('makes header numbers immutable String(20) keys', () => {
    for (const [setName, key] of [
      ['PurchaseRequests', 'PRNumber'],
      ['PurchaseOrders', 'PONumber'],
      ['BlanketPOs', 'BlanketPONumber'],
    ] as const) {
      expect(keyOf(entityType(setName))).toEqual([key]);
      expect(property(entityType(setName), key)).toMatchObject({ type: 'Edm.String', maxLength: 20, immutable: true });
    }
  });

  it('closes the purchase request vocabulary and bounds Priority to 1–5', () => {
    const PurchaseRequest = entityType('PurchaseRequests');
    expect(facets(PurchaseRequest, 'Status')).toMatchObject({
      type: 'Edm.String',
      maxLength: 20,
      nullable: false,
      allowedValues: ['Draft', 'Submitted', 'Approved', 'Rejected', 'Ordered', 'Closed', 'Canceled'],
    });
    expect(facets(PurchaseRequest, 'Priority')).toMatchObject({ type: 'Edm.Int32', minimum: 1, maximum: 5 });
    expect(property(PurchaseRequest, 'Status').default).toEqual({ value: 'Draft' });
    expect(property(PurchaseRequest, 'Priority').default).toEqual({ value: 3 });
    expect(property(PurchaseRequest, 'PRNumber').default).toEqual({ generate: 'sequence', prefix: 'PR-', digits: 6 });
    expect(property(entityType('POLineItems'), 'LineNumber').default).toEqual({ generate: 'nextLineNumber' });
    // bounded like a work-order Comment: unbounded notes made every read of their set too large to answer
    expect(property(PurchaseRequest, 'Notes').maxLength).toBe(4000);
    expect(property(entityType('PurchaseOrders'), 'Notes').maxLength).toBe(4000);
  });

  it('requires positive quantities and computes extended amounts as money', () => {
    const PRLineItem = entityType('PRLineItems');
    expect(facets(PRLineItem, 'Quantity')).toMatchObject({
      type: 'Edm.Decimal',
      precision: 12,
      scale: 2,
      nullable: false,
      minimum: 0,
      exclusiveMinimum: true,
    });
    expect(facets(PRLineItem, 'ExtendedCost')).toMatchObject({
      type: 'Edm.Decimal',
      precision: 18,
      scale: 4,
      computed: true,
    });
    expect(facets(entityType('POLineItems'), 'QuantityOrdered')).toMatchObject({ minimum: 0, exclusiveMinimum: true });
    expect(facets(entityType('POLineItems'), 'ExtendedPrice')).toMatchObject({ scale: 4, computed: true });
    expect(facets(entityType('BlanketPOs'), 'LimitAmount')).toMatchObject({ scale: 4, nullable: false });
  });

  it('generates attachment ids, takes content write-only and keeps the order number immutable', () => {
    expect(keyOf(POAttachment)).toEqual(['AttachmentID']);
    expect(facets(POAttachment, 'AttachmentID')).toMatchObject({ type: 'Edm.Guid', computed: true });
    expect(facets(POAttachment, 'ContentBase64')).toMatchObject({
      type: 'Edm.Binary',
      writeOnly: true,
      maxLength: 10 * 1024 * 1024,
    });
    expect(facets(POAttachment, 'PONumber')).toMatchObject({ nullable: false, immutable: true, maxLength: 20 });
    expect(facets(POAttachment, 'FileName')).toMatchObject({ maxLength: 255, nullable: false });
    for (const name of ['SizeBytes', 'UploadedBy']) expect(property(POAttachment, name).computed, name).toBe(true);
    expect(property(POAttachment, 'SizeBytes').type).toBe('Edm.Int64');
  });

  it('computes the work-order hours and IsOpen, and contains comments and labor', () => {
    for (const name of ['ActualHours', 'ActualOTHours', 'IsOpen'])
      expect(property(WorkOrder, name).computed, name).toBe(true);
    expect(property(WorkOrder, 'Status').allowedValues).toEqual([
      'REQ',
      'APPR',
      'SCHED',
      'INPRG',
      'HOLD',
      'COMP',
      'CLOSED',
      'CAN',
    ]);
    expect(property(WorkOrder, 'RequestedDate')).toMatchObject({ type: 'Edm.DateTimeOffset', nullable: false });

    const comments = WorkOrder.navigation.get('Comments');
    const labor = WorkOrder.navigation.get('ActualLabor');
    expect(comments).toMatchObject({ contained: true, foreignKey: { WorkOrderID: 'WorkOrderID' } });
    expect(labor).toMatchObject({ contained: true, foreignKey: { WorkOrderID: 'WorkOrderID' } });
    const Comment = comments!.target();
    const Labor = labor!.target();
    expect([Comment.name, Labor.name]).toEqual(['WorkOrderComment', 'ActualLabor']);
    expect(property(Comment, 'Comment')).toMatchObject({ type: 'Edm.String', maxLength: 4000 });
    expect(property(Comment, 'CommentID')).toMatchObject({ type: 'Edm.Int32', computed: true, isKey: true });
    expect(property(Labor, 'LaborID')).toMatchObject({ type: 'Edm.Guid', computed: true, isKey: true });
    expect(facets(Labor, 'Hours')).toMatchObject({ nullable: false, minimum: 0, scale: 2 });
    expect(facets(Labor, 'Hours').exclusiveMinimum).toBeUndefined();
    expect(facets(Labor, 'OTHours')).toMatchObject({ nullable: true, minimum: 0 });
  });

  it('links headers to their lines and attachments by foreign key, not by containment', () => {
    expect(PurchaseOrder.navigation.get('Lines')).toMatchObject({ foreignKey: { PONumber: 'PONumber' } });
    expect(PurchaseOrder.navigation.get('Lines')!.contained).toBeUndefined();
    expect(PurchaseOrder.navigation.get('Attachments')?.target()).toBe(POAttachment);
    expect(entityType('PurchaseRequests').navigation.get('Lines')).toMatchObject({
      foreignKey: { PRNumber: 'PRNumber' },
    });
    expect(entityType('PurchaseRequests').navigation.get('Lines')!.target()).toBe(entityType('PRLineItems'));
    expect(entityType('BlanketPOs').navigation.get('Lines')!.target()).toBe(entityType('BlanketPOLineItems'));
  });
});

describe('consistency', () => {
  const types = [...plantDataModel.entityTypes.values()];

  it('ties every foreign key to a child property of the same type and length', () => {
    for (const type of types) {
      for (const navigation of type.navigation.values()) {
        const target = navigation.target();
        if (!navigation.collection) {
          // a line's header, part or work order: this type's foreign key holds the target's whole key
          expect(Object.values(navigation.foreignKey)).toEqual(keyOf(target));
          for (const [name, targetName] of Object.entries(navigation.foreignKey)) {
            const own = property(type, name);
            const key = property(target, targetName);
            expect([type.name, navigation.name, own.type, own.maxLength]).toEqual([
              type.name,
              navigation.name,
              key.type,
              key.maxLength,
            ]);
          }
          continue;
        }
        for (const [parentName, childName] of Object.entries(navigation.foreignKey)) {
          const parent = property(type, parentName);
          const child = property(target, childName);
          expect([type.name, navigation.name, child.type, child.maxLength, child.nullable]).toEqual([
            type.name,
            navigation.name,
            parent.type,
            parent.maxLength,
            false,
          ]);
        }
        expect(Object.keys(navigation.foreignKey)).toEqual(keyOf(type));
      }
    }
  });

  it('bounds every string (entity types, contained types, action parameters) and gives every decimal a precision and scale', () => {
    const members = [
      ...types.flatMap((type) => [...type.properties.values()].map((p) => [`${type.name}.${p.name}`, p] as const)),
      ...plantDataModel.actions.flatMap((action) =>
        Object.entries(action.parameters).map(([name, p]) => [`${action.name}.${name}`, p] as const),
      ),
    ];
    expect(members.map(([name]) => name)).toEqual(
      expect.arrayContaining(['WorkOrderComment.Comment', 'AddComment.Comment']),
    );
    for (const [name, p] of members) {
      if (p.type === 'Edm.String') expect(p.maxLength, name).toBeGreaterThan(0);
      if (p.type === 'Edm.String') expect(p.maxLength, name).toBeLessThanOrEqual(4000);
      if (p.type === 'Edm.Decimal') expect([p.precision, p.scale], name).not.toContain(undefined);
    }
  });

  it('never marks a field both computed and write-only', () => {
    for (const type of types)
      for (const p of type.properties.values()) expect(p.computed === true && p.writeOnly === true).toBe(false);
  });
});

describe('work-order actions', () => {
  it('binds AddComment and RemoveActualLabor to WorkOrders and answers a Boolean', () => {
    expect(plantDataModel.actions).toEqual([AddComment, RemoveActualLabor]);
    for (const action of plantDataModel.actions) {
      expect(action.boundTo).toBe('WorkOrders');
      expect(action.returnType).toBe('Edm.Boolean');
    }
  });

  it('requires Comment (String 4000) and Username (String 40)', () => {
    expect(Object.keys(AddComment.parameters)).toEqual(['Comment', 'Username']);
    expect(AddComment.parameters.Comment).toMatchObject({ type: 'Edm.String', maxLength: 4000, nullable: false });
    expect(AddComment.parameters.Username).toMatchObject({ type: 'Edm.String', maxLength: 40, nullable: false });
  });

  it('identifies a labor record by Craft, Hours, OTHours (optional), PeopleID and StartDate', () => {
    const parameters = RemoveActualLabor.parameters;
    expect(Object.keys(parameters)).toEqual(['Craft', 'Hours', 'OTHours', 'PeopleID', 'StartDate']);
    expect(
      Object.entries(parameters)
        .filter(([, p]) => p.nullable !== false)
        .map(([name]) => name),
    ).toEqual(['OTHours']);
    expect(parameters.Hours).toMatchObject({ type: 'Edm.Decimal', scale: 2 });
    expect(parameters.StartDate).toMatchObject({ type: 'Edm.DateTimeOffset' });
  });
});
