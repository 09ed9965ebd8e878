// The reference service's entity model (namespace PlantData), written once: the validator binds queries to it, the
// stores persist it and $metadata describes it. Source: shared/MODEL.md, with shared/spec/service-interface.md winning
// where the two differ (set names, the Accounts and MeterReadings fields, the work-order actions).
//
// Conventions applied where MODEL.md leaves a facet implicit:
// - Money is Decimal(18,4) (up to 99,999,999,999,999.9999: a scaled 64-bit integer, how SQLite stores decimals);
//   quantities, hours and meter readings are Decimal(12,2).
// - A field keeps the length it has where MODEL.md states it: Account String(30), PartID String(40),
//   VendorID/WorkOrderID/PRNumber/PONumber/BlanketPONumber String(20), Buyer/RequestedBy/people String(40),
//   Description String(200) (Accounts: 100), UnitOfMeasure String(10), Currency String(3), PaymentTerms String(20);
//   status-like vocabularies (Status, WorkType, DocumentType) String(20). Every string has a maximum (`string` requires
//   one): Notes is String(4000) like a work-order Comment, since an unbounded field let a few huge values make every
//   read of their set too large to answer.
// - Nullability is as MODEL.md states it ("not null", keys, "required"); every other field is nullable, even one with a
//   default (the default is applied when the field is omitted, not when it is sent as null). Server-computed fields the
//   server always fills (timestamps, ids, sums, IsOpen, ExtendedPrice, UploadedBy) are non-null, and so are a
//   comment's Comment and Username (AddComment requires both, not blank).
// - Defaults and server-assigned keys are `default`s (sequences, next line numbers, GUIDs, now, fixed values).
// - Contained collections (work-order Comments and ActualLabor, meter History) carry their parent's key as a computed,
//   non-key property (so `foreignKey` names a real column); their own key is unique within the parent only, as OData
//   containment allows: `WorkOrders('WO-1')/Comments(3)`.
import {
  defineEntityType,
  defineModel,
  type ActionDefinition,
  type PropertyDefinition,
  type Row,
  type RowRule,
} from '../model/schema.js';
import { describeValue } from '../service/body.js';

type Facets = Omit<PropertyDefinition, 'type'>;

function string(maxLength: number, facets: Facets = {}): PropertyDefinition {
  return { type: 'Edm.String', maxLength, ...facets };
}
const money = (facets: Facets = {}): PropertyDefinition => ({
  type: 'Edm.Decimal',
  precision: 18,
  scale: 4,
  ...facets,
});
const quantity = (facets: Facets = {}): PropertyDefinition => ({
  type: 'Edm.Decimal',
  precision: 12,
  scale: 2,
  ...facets,
});
const int32 = (facets: Facets = {}): PropertyDefinition => ({ type: 'Edm.Int32', ...facets });
const boolean = (facets: Facets = {}): PropertyDefinition => ({ type: 'Edm.Boolean', ...facets });
const date = (facets: Facets = {}): PropertyDefinition => ({ type: 'Edm.Date', ...facets });
const instant = (facets: Facets = {}): PropertyDefinition => ({ type: 'Edm.DateTimeOffset', ...facets });
const guid = (facets: Facets = {}): PropertyDefinition => ({ type: 'Edm.Guid', ...facets });

const notNull = { nullable: false } as const;
/** A custom aggregate: `$apply=aggregate(ExtendedPrice)` sums the property of its name (what OpenUI5's `$$aggregation`
 * sends without `with`). */
const sum = { method: 'sum' } as const;
/** Free text `$search` looks in (its words, case-insensitively), through a full-text index on PostgreSQL. */
const searchable = { searchable: true, searchIndex: true } as const;
/** Set by the server, never sent by a client (sending it is a 400), and always present. */
const serverSet = { computed: true, nullable: false } as const;
const priority = { minimum: 1, maximum: 5 } as const;

const createdDate = instant({
  ...serverSet,
  managed: 'created',
  description: 'Set by the server when the record is created.',
});
/** CreatedDate and LastModifiedDate: on every entity set except Accounts (MODEL.md, Conventions). */
const timestamps = {
  CreatedDate: createdDate,
  LastModifiedDate: instant({ ...serverSet, managed: 'modified', description: 'Set by the server on every change.' }),
} as const;

/** What an entity's ETag is made of (clients send If-Match with it): LastModifiedDate changes with every write. */
const etag = ['LastModifiedDate'] as const;

// Vocabularies (Validation.AllowedValues in $metadata).
export const unitsOfMeasure = ['EA', 'BOX', 'FT', 'GAL', 'L', 'KG'] as const;
export const purchaseRequestStatuses = [
  'Draft',
  'Submitted',
  'Approved',
  'Rejected',
  'Ordered',
  'Closed',
  'Canceled',
] as const;
export const prLineStatuses = ['Open', 'Ordered', 'Canceled'] as const;
export const purchaseOrderStatuses = [
  'Draft',
  'PendingApproval',
  'Approved',
  'Issued',
  'PartiallyReceived',
  'Received',
  'Closed',
  'Canceled',
] as const;
export const poLineStatuses = ['Open', 'PartiallyReceived', 'Received', 'Canceled'] as const;
export const attachmentDocumentTypes = ['Quote', 'Invoice', 'PackingSlip', 'Other'] as const;
export const blanketPOStatuses = ['Draft', 'Active', 'Expired', 'Exhausted', 'Closed', 'Canceled'] as const;
export const workOrderStatuses = ['REQ', 'APPR', 'SCHED', 'INPRG', 'HOLD', 'COMP', 'CLOSED', 'CAN'] as const;
export const workOrderTypes = ['PM', 'CM', 'EM', 'PRJ', 'SAF', 'INS'] as const;

/** POAttachments.ContentBase64: at most 10 MiB once decoded (a larger upload is 413, not 400). */
export const maxAttachmentBytes = 10 * 1024 * 1024;

export const Account = defineEntityType({
  name: 'Account',
  key: ['Account'],
  properties: {
    Account: string(30, { description: 'Account code, e.g. 5100-200.' }),
    Description: string(100, searchable),
    IsActive: boolean(notNull),
  },
});

export const Part = defineEntityType({
  name: 'Part',
  key: ['PartID'],
  concurrency: etag,
  properties: {
    PartID: string(40),
    Description: string(200, { ...notNull, ...searchable }),
    Category: string(40),
    UnitOfMeasure: string(10, { ...notNull, allowedValues: unitsOfMeasure }),
    UnitCost: money(),
    QuantityOnHand: quantity(notNull),
    ReorderPoint: quantity(),
    Stockroom: string(20),
    Bin: string(20),
    ManufacturerPartNumber: string(60),
    PreferredVendorID: string(20),
    IsCritical: boolean(notNull),
    IsActive: boolean(notNull),
    ...timestamps,
  },
});

export const PRLineItem = defineEntityType({
  name: 'PRLineItem',
  key: ['PRNumber', 'LineNumber'],
  concurrency: etag,
  properties: {
    PRNumber: string(20, { description: 'The purchase request this line belongs to; it must exist.' }),
    LineNumber: int32({ default: { generate: 'nextLineNumber' } }),
    PartID: string(40, { description: 'Null for a non-stock item.' }),
    Description: string(200, { ...notNull, ...searchable }),
    Quantity: quantity({ ...notNull, minimum: 0, exclusiveMinimum: true }),
    UnitOfMeasure: string(10, notNull),
    EstimatedUnitCost: money(),
    ExtendedCost: money({ computed: true, description: 'Quantity × EstimatedUnitCost; null when the cost is.' }),
    Account: string(30),
    WorkOrderID: string(20),
    RequiredDate: date(),
    Status: string(20, { allowedValues: prLineStatuses, default: { value: 'Open' } }),
    ...timestamps,
  },
  aggregates: { ExtendedCost: sum, Quantity: sum },
  navigation: {
    PurchaseRequest: { target: () => PurchaseRequest, foreignKey: { PRNumber: 'PRNumber' }, collection: false },
    Part: { target: () => Part, foreignKey: { PartID: 'PartID' }, collection: false },
    WorkOrder: { target: () => WorkOrder, foreignKey: { WorkOrderID: 'WorkOrderID' }, collection: false },
  },
});

export const PurchaseRequest = defineEntityType({
  name: 'PurchaseRequest',
  key: ['PRNumber'],
  concurrency: etag,
  properties: {
    PRNumber: string(20, { immutable: true, default: { generate: 'sequence', prefix: 'PR-', digits: 6 } }),
    Description: string(200, searchable),
    Status: string(20, { ...notNull, allowedValues: purchaseRequestStatuses, default: { value: 'Draft' } }),
    Priority: int32({ ...priority, default: { value: 3 } }),
    RequestedBy: string(40, notNull),
    RequestedDate: instant({ default: { generate: 'now' } }),
    RequiredDate: date(),
    WorkOrderID: string(20),
    Account: string(30),
    SuggestedVendorID: string(20),
    Notes: string(4000, searchable),
    ...timestamps,
  },
  navigation: {
    Lines: { target: () => PRLineItem, foreignKey: { PRNumber: 'PRNumber' } },
  },
});

export const POLineItem = defineEntityType({
  name: 'POLineItem',
  key: ['PONumber', 'LineNumber'],
  concurrency: etag,
  properties: {
    PONumber: string(20, { description: 'The purchase order this line belongs to; it must exist.' }),
    LineNumber: int32({ default: { generate: 'nextLineNumber' } }),
    PartID: string(40),
    Description: string(200, { ...notNull, ...searchable }),
    QuantityOrdered: quantity({ ...notNull, minimum: 0, exclusiveMinimum: true }),
    QuantityReceived: quantity({ default: { value: 0 } }),
    UnitOfMeasure: string(10, notNull),
    UnitPrice: money(notNull),
    ExtendedPrice: money({ ...serverSet, description: 'QuantityOrdered × UnitPrice.' }),
    IsTaxable: boolean({ default: { value: false } }),
    Account: string(30),
    WorkOrderID: string(20),
    DueDate: date(),
    Status: string(20, { allowedValues: poLineStatuses, default: { value: 'Open' } }),
    ...timestamps,
  },
  aggregates: { ExtendedPrice: sum, QuantityOrdered: sum, QuantityReceived: sum },
  navigation: {
    PurchaseOrder: { target: () => PurchaseOrder, foreignKey: { PONumber: 'PONumber' }, collection: false },
    Part: { target: () => Part, foreignKey: { PartID: 'PartID' }, collection: false },
    WorkOrder: { target: () => WorkOrder, foreignKey: { WorkOrderID: 'WorkOrderID' }, collection: false },
  },
});

// ── the rules of MODEL.md that concern one body alone (fields present only) ─────────────────────────────

const sent = (row: Readonly<Row>, name: string): unknown => (Object.hasOwn(row, name) ? row[name] : undefined);

const notBlank =
  (name: string): RowRule =>
  (row) => {
    const value = sent(row, name);
    return typeof value === 'string' && value.trim() === ''
      ? { target: name, message: `${name} must not be blank; received ${describeValue(value)}` }
      : undefined;
  };

const fileNameWithoutPath: RowRule = (row) => {
  const fileName = sent(row, 'FileName');
  if (typeof fileName !== 'string') return undefined;
  const at = fileName.search(/[/\\]/);
  return at === -1
    ? undefined
    : {
        target: 'FileName',
        message: `FileName must be a file name without path separators (/ or \\); received ${describeValue(fileName)}`,
        position: at,
      };
};

const endOnOrAfterStart: RowRule = (row) => {
  const start = sent(row, 'StartDate');
  const end = sent(row, 'EndDate');
  // Normalized dates are YYYY-MM-DD with four-digit years, so text order is date order.
  return typeof start === 'string' && typeof end === 'string' && end < start
    ? { target: 'EndDate', message: `EndDate must be on or after StartDate (${start}); received ${end}` }
    : undefined;
};

export const POAttachment = defineEntityType({
  name: 'POAttachment',
  key: ['AttachmentID'],
  concurrency: etag,
  properties: {
    AttachmentID: guid({ computed: true, default: { generate: 'uuid' } }),
    PONumber: string(20, {
      ...notNull,
      immutable: true,
      description: 'The purchase order the file is attached to; it must exist.',
    }),
    FileName: string(255, { ...notNull, description: 'A file name without path separators.' }),
    ContentType: string(100, notNull),
    SizeBytes: { type: 'Edm.Int64', computed: true, description: 'The decoded size of the uploaded content.' },
    DocumentType: string(20, { allowedValues: attachmentDocumentTypes }),
    Description: string(200),
    ContentBase64: {
      type: 'Edm.Binary',
      writeOnly: true,
      maxLength: maxAttachmentBytes,
      description: 'The file content, base64-encoded in request bodies; at most 10 MiB decoded (larger is 413).',
    },
    UploadedBy: string(40, { ...serverSet, description: 'The user of the credential that uploaded the file.' }),
    ...timestamps,
  },
  navigation: {
    PurchaseOrder: { target: () => PurchaseOrder, foreignKey: { PONumber: 'PONumber' }, collection: false },
  },
  rules: [fileNameWithoutPath],
});

export const PurchaseOrder = defineEntityType({
  name: 'PurchaseOrder',
  key: ['PONumber'],
  concurrency: etag,
  properties: {
    PONumber: string(20, { immutable: true, default: { generate: 'sequence', prefix: 'PO-', digits: 6 } }),
    VendorID: string(20, notNull),
    VendorName: string(100, searchable),
    Status: string(20, { allowedValues: purchaseOrderStatuses, default: { value: 'Draft' } }),
    OrderDate: instant({ default: { generate: 'now' } }),
    ExpectedDeliveryDate: date(),
    Buyer: string(40),
    ShipTo: string(60),
    PaymentTerms: string(20),
    Currency: string(3, { default: { value: 'USD' } }),
    FreightAmount: money(),
    TaxAmount: money(),
    PRNumber: string(20),
    BlanketPONumber: string(20),
    Account: string(30),
    Notes: string(4000, searchable),
    ...timestamps,
  },
  aggregates: { FreightAmount: sum, TaxAmount: sum },
  navigation: {
    Lines: { target: () => POLineItem, foreignKey: { PONumber: 'PONumber' } },
    Attachments: { target: () => POAttachment, foreignKey: { PONumber: 'PONumber' } },
  },
});

export const BlanketPOLineItem = defineEntityType({
  name: 'BlanketPOLineItem',
  key: ['BlanketPONumber', 'LineNumber'],
  concurrency: etag,
  properties: {
    BlanketPONumber: string(20, { description: 'The blanket purchase order this line belongs to; it must exist.' }),
    LineNumber: int32({ default: { generate: 'nextLineNumber' } }),
    PartID: string(40),
    Description: string(200, { ...notNull, ...searchable }),
    UnitOfMeasure: string(10, notNull),
    UnitPrice: money(notNull),
    MaxQuantity: quantity(),
    IsActive: boolean({ default: { value: true } }),
    Account: string(30),
    ...timestamps,
  },
  navigation: {
    BlanketPO: { target: () => BlanketPO, foreignKey: { BlanketPONumber: 'BlanketPONumber' }, collection: false },
    Part: { target: () => Part, foreignKey: { PartID: 'PartID' }, collection: false },
  },
});

export const BlanketPO = defineEntityType({
  name: 'BlanketPO',
  key: ['BlanketPONumber'],
  concurrency: etag,
  properties: {
    BlanketPONumber: string(20, { immutable: true }),
    VendorID: string(20, notNull),
    Description: string(200, searchable),
    Status: string(20, { allowedValues: blanketPOStatuses, default: { value: 'Draft' } }),
    StartDate: date(notNull),
    EndDate: date({ description: 'On or after StartDate.' }),
    LimitAmount: money(notNull),
    Currency: string(3, { default: { value: 'USD' } }),
    Buyer: string(40),
    PaymentTerms: string(20),
    Account: string(30),
    ...timestamps,
  },
  navigation: {
    Lines: { target: () => BlanketPOLineItem, foreignKey: { BlanketPONumber: 'BlanketPONumber' } },
  },
  rules: [endOnOrAfterStart],
});

/** Contained in WorkOrder.Comments; written only by the AddComment action. */
export const WorkOrderComment = defineEntityType({
  name: 'WorkOrderComment',
  key: ['CommentID'],
  properties: {
    WorkOrderID: string(20, { ...serverSet, description: 'The work order the comment belongs to.' }),
    CommentID: int32({ computed: true, description: 'A per-work-order sequence: 1, 2, 3...' }),
    Comment: string(4000, { ...searchable, ...notNull, description: 'Not blank.' }),
    Username: string(40, { ...notNull, description: 'Not blank.' }),
    CreatedDate: createdDate,
  },
  navigation: {
    WorkOrder: { target: () => WorkOrder, foreignKey: { WorkOrderID: 'WorkOrderID' }, collection: false },
  },
});

/** Contained in WorkOrder.ActualLabor; removed by the RemoveActualLabor action. */
export const ActualLabor = defineEntityType({
  name: 'ActualLabor',
  key: ['LaborID'],
  properties: {
    WorkOrderID: string(20, { ...serverSet, description: 'The work order the labor was reported on.' }),
    LaborID: guid({ computed: true, default: { generate: 'uuid' } }),
    PeopleID: string(40, notNull),
    Craft: string(20, notNull),
    Hours: quantity({ ...notNull, minimum: 0 }),
    OTHours: quantity({ minimum: 0, default: { value: 0 }, description: 'Overtime hours.' }),
    StartDate: instant(notNull),
    CreatedDate: createdDate,
  },
  aggregates: { Hours: sum, OTHours: sum },
  navigation: {
    WorkOrder: { target: () => WorkOrder, foreignKey: { WorkOrderID: 'WorkOrderID' }, collection: false },
  },
});

export const WorkOrder = defineEntityType({
  name: 'WorkOrder',
  key: ['WorkOrderID'],
  concurrency: etag,
  description: "Addressed by its name or identifier: WorkOrders('WO-001017').",
  properties: {
    WorkOrderID: string(20),
    Description: string(200, { ...notNull, ...searchable }),
    Status: string(20, { allowedValues: workOrderStatuses }),
    Priority: int32(priority),
    WorkType: string(20, { allowedValues: workOrderTypes }),
    AssetID: string(40),
    Location: string(60),
    RequestedBy: string(40),
    RequestedDate: instant(notNull),
    TargetDate: instant(),
    CompletedDate: instant(),
    AssignedTo: string(40),
    Craft: string(20),
    EstimatedHours: quantity(),
    ActualHours: quantity({ ...serverSet, description: 'The sum of the Hours of the ActualLabor records.' }),
    ActualOTHours: quantity({ ...serverSet, description: 'The sum of the OTHours of the ActualLabor records.' }),
    Account: string(30),
    IsOpen: boolean({ ...serverSet, description: 'True unless Status is COMP, CLOSED or CAN.' }),
    ...timestamps,
  },
  aggregates: { EstimatedHours: sum, ActualHours: sum, ActualOTHours: sum },
  navigation: {
    Comments: { target: () => WorkOrderComment, foreignKey: { WorkOrderID: 'WorkOrderID' }, contained: true },
    ActualLabor: { target: () => ActualLabor, foreignKey: { WorkOrderID: 'WorkOrderID' }, contained: true },
  },
});

/** The reading fields a client sends (the interface's MeterReadings table), shared by the current and history rows. */
const readingFields = {
  Description: string(200),
  MeterReading: quantity({ description: 'The reading value.' }),
  Unit: string(10),
  ReadingDate: instant({
    default: { generate: 'now' },
    description:
      "When the reading was taken. An offset-less value is read in the site's time zone (UTC unless the site sets one).",
  }),
  Event: string(20),
} as const;

/**
 * One recorded reading of a meter, contained in MeterReading.History (newest first). A type of its own rather than
 * MeterReading reused: MeterID cannot key the history (a meter has many readings), and a history row has no History.
 * Its key is ReadingID, a per-meter sequence assigned on POST; MeterID names the meter.
 */
export const MeterReadingHistory = defineEntityType({
  name: 'MeterReadingHistory',
  key: ['ReadingID'],
  properties: {
    MeterID: string(40, { ...serverSet, description: 'The meter the reading was recorded for.' }),
    ReadingID: int32({ computed: true, description: 'A per-meter sequence assigned when the reading is posted.' }),
    ...readingFields,
    CreatedDate: createdDate,
  },
  navigation: {
    Meter: { target: () => MeterReading, foreignKey: { MeterID: 'MeterID' }, collection: false },
  },
  // a meter's history: newest reading first, ties by the latest posted (MODEL.md)
  defaultOrder: [
    { property: 'ReadingDate', descending: true },
    { property: 'ReadingID', descending: true },
  ],
});

export const MeterReading = defineEntityType({
  name: 'MeterReading',
  key: ['MeterID'],
  concurrency: etag,
  description:
    'The latest reading of a meter. Each POST records a reading, keeps it in History and makes it the current one ' +
    'when its ReadingDate is the latest.',
  properties: {
    MeterID: string(40, { description: 'The meter receiving the reading; required in every request.' }),
    ...readingFields,
    ...timestamps,
  },
  navigation: {
    History: { target: () => MeterReadingHistory, foreignKey: { MeterID: 'MeterID' }, contained: true },
  },
});

/** POST WorkOrders('<id>')/AddComment: both fields required and not blank; the answer is `true`. */
export const AddComment: ActionDefinition = {
  name: 'AddComment',
  boundTo: 'WorkOrders',
  parameters: {
    Comment: string(4000, { ...notNull, description: 'The comment text; not blank.' }),
    Username: string(40, { ...notNull, description: 'The user the comment is recorded for; not blank.' }),
  },
  returnType: 'Edm.Boolean',
  rules: [notBlank('Comment'), notBlank('Username')],
};

/**
 * POST WorkOrders('<id>')/RemoveActualLabor: removes the one labor record (the oldest of identical ones) whose fields
 * equal the parameters (decimals by value, StartDate as an instant); the answer is `true`, no match is a 404.
 */
export const RemoveActualLabor: ActionDefinition = {
  name: 'RemoveActualLabor',
  boundTo: 'WorkOrders',
  parameters: {
    Craft: string(20, notNull),
    Hours: quantity({ ...notNull, minimum: 0 }),
    OTHours: quantity({ minimum: 0, description: 'Omitted matches a record with 0 overtime hours.' }),
    PeopleID: string(40, notNull),
    StartDate: instant(notNull),
  },
  returnType: 'Edm.Boolean',
};

/** The entity sets in the interface's order. */
export const entitySetNames = [
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
] as const;

export type EntitySetName = (typeof entitySetNames)[number];

export const plantDataModel = defineModel({
  namespace: 'PlantData',
  // what the interface lets clients write: purchasing documents are created and patched, a meter reading is posted
  // (and then only read, in its meter's history); nothing is deleted
  entitySets: {
    Accounts: Account,
    Parts: Part,
    PurchaseRequests: { type: PurchaseRequest, insertable: true, updatable: true },
    PRLineItems: { type: PRLineItem, insertable: true, updatable: true },
    PurchaseOrders: { type: PurchaseOrder, insertable: true, updatable: true },
    POLineItems: { type: POLineItem, insertable: true, updatable: true },
    POAttachments: { type: POAttachment, insertable: true, updatable: true },
    BlanketPOs: { type: BlanketPO, insertable: true, updatable: true },
    BlanketPOLineItems: { type: BlanketPOLineItem, insertable: true, updatable: true },
    WorkOrders: WorkOrder,
    MeterReadings: { type: MeterReading, insertable: true },
  } satisfies Record<EntitySetName, unknown>,
  actions: [AddComment, RemoveActualLabor],
});
