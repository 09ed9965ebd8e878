// Request bodies of creates, updates and actions against the service's real model (src/server/model.ts):
// every rule of src/server/body.ts, the normalized values, and fast-check properties (arbitrary JSON never throws
// anything but a 400/413 ODataError; generated valid bodies are accepted and normalized as expected).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ODataError } from '../../src/errors.js';
import { defineEntityType, type EntityType, type PropertyDefinition, type Row } from '../../src/model/schema.js';
import {
  checkActionBody,
  checkRules,
  checkCreateBody,
  checkUpdateBody,
  DEFAULT_MAX_STRING_LENGTH,
  parseJsonBody,
  type BodyOptions,
} from '../../src/service/body.js';
import { JsonNumber } from '../../src/service/json-reader.js';
import { decimalSent } from '../server/decimal-forms.js';
import {
  AddComment,
  BlanketPO,
  MeterReading,
  POAttachment,
  POLineItem,
  PRLineItem,
  PurchaseOrder,
  PurchaseRequest,
  RemoveActualLabor,
  WorkOrder,
  plantDataModel,
} from '../../src/server/model.js';

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

function errorOf(run: () => unknown): ODataError {
  try {
    run();
  } catch (error) {
    if (error instanceof ODataError) return error;
    throw error;
  }
  throw new Error('expected an ODataError, but nothing was thrown');
}

/** Every problem of an error: the error itself, then its details. */
function problems(error: ODataError): { code: string; target: string | undefined; message: string }[] {
  return [
    { code: error.code, target: error.target, message: error.message },
    ...error.details.map((d) => ({ code: d.code, target: d.target, message: d.message })),
  ];
}

const typeOfSet = (set: string): EntityType => plantDataModel.entitySets.get(set)!;

/** A valid key of `type`, for update bodies. */
function keyFor(type: EntityType): Row {
  return Object.fromEntries(
    type.key.map((p) => [
      p.name,
      p.type === 'Edm.Int32' ? 1 : p.type === 'Edm.Guid' ? '0f8fad5b-d9cb-469f-a165-70867728950e' : 'K-1',
    ]),
  );
}

/** A valid create body for each set that accepts POST: its required fields and nothing else. */
const validCreate: Record<string, Row> = {
  PurchaseRequests: { RequestedBy: 'jsmith' },
  PRLineItems: { PRNumber: 'PR-000001', Description: 'Bolts', Quantity: 10, UnitOfMeasure: 'EA' },
  PurchaseOrders: { VendorID: 'V-100' },
  POLineItems: {
    PONumber: 'PO-000001',
    Description: 'Bolts',
    QuantityOrdered: 5,
    UnitOfMeasure: 'EA',
    UnitPrice: '2.50',
  },
  POAttachments: { PONumber: 'PO-000001', FileName: 'quote.pdf', ContentType: 'application/pdf' },
  BlanketPOs: { BlanketPONumber: 'BPO-1', VendorID: 'V-100', StartDate: '2024-01-01', LimitAmount: 10000 },
  BlanketPOLineItems: { BlanketPONumber: 'BPO-1', Description: 'Gloves', UnitOfMeasure: 'BOX', UnitPrice: 12 },
  MeterReadings: { MeterID: 'M-1' },
};
const writableSets = Object.keys(validCreate);

const newYork: BodyOptions = { timeZone: 'America/New_York', offsetlessInstants: ['ReadingDate'] };

function isPlainDataObject(row: unknown): boolean {
  if (typeof row !== 'object' || row === null || Object.getPrototypeOf(row) !== Object.prototype) return false;
  return Object.values(Object.getOwnPropertyDescriptors(row)).every(
    (d) => 'value' in d && d.enumerable === true && d.writable === true,
  );
}

// ── the body itself ─────────────────────────────────────────────────────────────────────────────

describe('a body that is not a JSON object', () => {
  const notObjects: [string, unknown][] = [
    ['null', null],
    ['an array', []],
    ['an array of objects', [{ VendorID: 'V' }]],
    ['a string', '{"VendorID":"V"}'],
    ['a number', 42],
    ['a boolean', true],
    ['undefined', undefined],
    ['bytes', new Uint8Array([123, 125])],
  ];
  it.each(notObjects)('is a 400 without a field target on create, update and action: %s', (_, body) => {
    for (const run of [
      () => checkCreateBody(PurchaseOrder, body),
      () => checkUpdateBody(PurchaseOrder, body, {}),
      () => checkUpdateBody(PurchaseOrder, body, { fromPath: { PONumber: 'PO-1' } }),
      () => checkActionBody(AddComment, body),
    ]) {
      const error = errorOf(run);
      expect(error.status).toBe(400);
      expect(error.code).toBe('InvalidBody');
      expect(error.target).toBeUndefined();
      expect(error.message).toMatch(/^The request body must be a JSON object; received /);
    }
  });

  it('says what was received', () => {
    expect(errorOf(() => checkCreateBody(PurchaseOrder, [])).message).toBe(
      'The request body must be a JSON object; received an array',
    );
    expect(errorOf(() => checkCreateBody(PurchaseOrder, 'abc')).message).toBe(
      'The request body must be a JSON object; received "abc"',
    );
  });
});

describe('valid create bodies', () => {
  it.each(writableSets)('%s: the required fields alone are accepted, and nothing is added', (set) => {
    const row = checkCreateBody(typeOfSet(set), validCreate[set]);
    expect(Object.keys(row)).toEqual(Object.keys(validCreate[set]!));
    expect(isPlainDataObject(row)).toBe(true);
  });

  it('returns the fields sent, normalized, without defaults', () => {
    expect(
      checkCreateBody(POLineItem, { ...validCreate.POLineItems, UnitPrice: '2.50', IsTaxable: true, DueDate: null }),
    ).toEqual({
      PONumber: 'PO-000001',
      Description: 'Bolts',
      QuantityOrdered: '5',
      UnitOfMeasure: 'EA',
      UnitPrice: '2.5',
      IsTaxable: true,
      DueDate: null,
    });
  });

  it('accepts a key with a sequence default when it is sent (and immutable fields on create)', () => {
    expect(checkCreateBody(PurchaseOrder, { PONumber: 'PO-7', VendorID: 'V' })).toEqual({
      PONumber: 'PO-7',
      VendorID: 'V',
    });
  });

  it('accepts a write-only field', () => {
    const row = checkCreateBody(POAttachment, { ...validCreate.POAttachments, ContentBase64: 'aGVsbG8=' });
    expect(row.ContentBase64).toEqual(new Uint8Array(Buffer.from('hello')));
  });
});

describe('required fields on create', () => {
  // required = not nullable, not computed, no default
  const required: [string, string[]][] = [
    ['PurchaseRequests', ['RequestedBy']],
    ['PRLineItems', ['PRNumber', 'Description', 'Quantity', 'UnitOfMeasure']],
    ['PurchaseOrders', ['VendorID']],
    ['POLineItems', ['PONumber', 'Description', 'QuantityOrdered', 'UnitOfMeasure', 'UnitPrice']],
    ['POAttachments', ['PONumber', 'FileName', 'ContentType']],
    ['BlanketPOs', ['BlanketPONumber', 'VendorID', 'StartDate', 'LimitAmount']],
    ['BlanketPOLineItems', ['BlanketPONumber', 'Description', 'UnitOfMeasure', 'UnitPrice']],
    ['MeterReadings', ['MeterID']],
  ];
  it.each(required)('%s requires %j, each reported in one error', (set, fields) => {
    const error = errorOf(() => checkCreateBody(typeOfSet(set), {}));
    expect(error.status).toBe(400);
    expect(problems(error).map((p) => p.target)).toEqual(fields);
    for (const p of problems(error)) {
      expect(p.code).toBe('InvalidBody');
      expect(p.message).toMatch(new RegExp(`^${p.target} is required to create a \\w+; it is missing from the body$`));
    }
  });

  it.each(required.flatMap(([set, fields]) => fields.map((field) => [set, field] as const)))(
    '%s without %s is a 400 naming it',
    (set, field) => {
      const body = { ...validCreate[set] };
      delete body[field];
      const error = errorOf(() => checkCreateBody(typeOfSet(set), body));
      expect([error.status, error.code, error.target, error.details]).toEqual([400, 'InvalidBody', field, []]);
    },
  );

  it('says "an" before a vowel', () => {
    expect(errorOf(() => checkCreateBody(plantDataModel.entityTypes.get('Account')!, { IsActive: true })).message).toBe(
      'Account is required to create an Account; it is missing from the body',
    );
  });

  it('a non-enumerable property is not a field sent (only what JSON.parse could give counts)', () => {
    const body = Object.defineProperty({}, 'VendorID', { value: 'V', enumerable: false });
    expect(errorOf(() => checkCreateBody(PurchaseOrder, body)).target).toBe('VendorID');
  });

  it('a field sent with an invalid value is not also reported as missing', () => {
    const error = errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 5 }));
    expect(problems(error).map((p) => p.target)).toEqual(['VendorID']);
    expect(error.message).toBe('VendorID must be a JSON string (Edm.String); received 5');
  });
});

describe('unknown fields', () => {
  const cases: [EntityType, string, string][] = [
    [PurchaseOrder, 'Statuss', "PurchaseOrder has no field 'Statuss'; did you mean 'Status'?"],
    [PurchaseOrder, 'vendorid', "PurchaseOrder has no field 'vendorid'; did you mean 'VendorID'?"],
    [PRLineItem, 'Quantiy', "PRLineItem has no field 'Quantiy'; did you mean 'Quantity'?"],
    [PurchaseOrder, 'Colour', "PurchaseOrder has no field 'Colour'"],
    [PurchaseOrder, '__proto__', "PurchaseOrder has no field '__proto__'"],
    [PurchaseOrder, 'constructor', "PurchaseOrder has no field 'constructor'"],
    [PurchaseOrder, 'toString', "PurchaseOrder has no field 'toString'"],
    [PurchaseOrder, 'hasOwnProperty', "PurchaseOrder has no field 'hasOwnProperty'"],
    [PurchaseOrder, 'Lines', "PurchaseOrder has no field 'Lines'"],
    [PurchaseOrder, 'Foo@odata.type', "PurchaseOrder has no field 'Foo@odata.type'"],
    [PurchaseOrder, 'a b\n', 'PurchaseOrder has no field "a b\\n"'],
  ];
  it.each(cases)('%s: %s on create and update', (type, name, message) => {
    const body = { VendorID: 'V', PONumber: 'PO-1', [name]: 1 };
    for (const run of [() => checkCreateBody(type, body), () => checkUpdateBody(type, body, {})]) {
      const error = errorOf(run);
      const problem = problems(error).find((p) => p.target === name);
      expect(problem).toEqual({ code: 'UnknownProperty', target: name, message });
    }
  });

  it('does not suggest a computed field on create, nor an immutable one on update', () => {
    expect(errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', CreatedDat: 1 })).message).toBe(
      "PurchaseOrder has no field 'CreatedDat'",
    );
    expect(
      errorOf(() =>
        checkUpdateBody(POAttachment, { AttachmentID: '00000000-0000-0000-0000-000000000000', PONumbr: 'x' }, {}),
      ).message,
    ).toBe("POAttachment has no field 'PONumbr'");
  });

  it('never touches a prototype: JSON __proto__ and constructor keys are unknown fields', () => {
    const body: unknown = JSON.parse(
      '{"VendorID":"V","__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}',
    );
    const error = errorOf(() => checkCreateBody(PurchaseOrder, body));
    expect(problems(error).map((p) => [p.code, p.target])).toEqual([
      ['UnknownProperty', '__proto__'],
      ['UnknownProperty', 'constructor'],
    ]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('a null-prototype body is read like any other', () => {
    const body = Object.assign(Object.create(null) as Row, { VendorID: 'V' });
    expect(checkCreateBody(PurchaseOrder, body)).toEqual({ VendorID: 'V' });
  });

  it('only own data properties of a plain object count (no inherited fields, no getters read)', () => {
    const inherited = Object.create({ VendorID: 'V' }) as Row;
    expect(errorOf(() => checkCreateBody(PurchaseOrder, inherited)).message).toBe(
      'The request body must be a JSON object; received an object',
    );
    for (const notPlain of [new Map([['VendorID', 'V']]), new Date(0), Object('V'), new (class Body {})()])
      expect(errorOf(() => checkCreateBody(PurchaseOrder, notPlain)).target).toBeUndefined();
    let read = false;
    const withGetter = Object.defineProperty({}, 'VendorID', {
      enumerable: true,
      get() {
        read = true;
        return 'V';
      },
    });
    expect(errorOf(() => checkCreateBody(PurchaseOrder, withGetter)).target).toBe('VendorID');
    expect(read).toBe(false);
  });

  it('ignores OData instance annotations on the body and its fields', () => {
    expect(
      checkCreateBody(PurchaseOrder, {
        '@odata.type': '#PlantData.PurchaseOrder',
        VendorID: 'V',
        'VendorID@Core.Description': 'the vendor',
      }),
    ).toEqual({ VendorID: 'V' });
    expect(checkActionBody(AddComment, { '@odata.context': 'x', Comment: 'c', Username: 'u' })).toEqual({
      Comment: 'c',
      Username: 'u',
    });
  });

  it('a very long unknown name is cut in the target and not compared for suggestions', () => {
    const name = 'X'.repeat(100_000);
    const error = errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', [name]: 1 }));
    expect(error.code).toBe('UnknownProperty');
    expect(error.target!.length).toBeLessThanOrEqual(130);
    expect(error.message.length).toBeLessThan(200);
  });
});

describe('computed (read-only) fields', () => {
  const cases: [string, string, unknown][] = [
    ['PurchaseOrders', 'CreatedDate', '2024-01-01T00:00:00Z'],
    ['PurchaseOrders', 'LastModifiedDate', null],
    ['PRLineItems', 'ExtendedCost', 12],
    ['POLineItems', 'ExtendedPrice', '1.00'],
    ['POAttachments', 'AttachmentID', '0f8fad5b-d9cb-469f-a165-70867728950e'],
    ['POAttachments', 'SizeBytes', 10],
    ['POAttachments', 'UploadedBy', 'me'],
    ['MeterReadings', 'CreatedDate', '2024-01-01T00:00:00Z'],
  ];
  it.each(cases)('%s.%s sent on create is a 400', (set, field, value) => {
    const error = errorOf(() => checkCreateBody(typeOfSet(set), { ...validCreate[set], [field]: value }));
    expect([error.status, error.code, error.target]).toEqual([400, 'InvalidBody', field]);
    expect(error.message).toMatch(new RegExp(`^${field} is set by the server and cannot be sent in a \\w+ body`));
  });

  it.each(cases.filter(([set, field]) => !typeOfSet(set).properties.get(field)!.isKey))(
    '%s.%s sent on update is a 400',
    (set, field, value) => {
      const type = typeOfSet(set);
      const error = errorOf(() => checkUpdateBody(type, { ...keyFor(type), [field]: value }, {}));
      expect([error.status, error.code, error.target]).toEqual([400, 'InvalidBody', field]);
    },
  );

  it('a computed key identifies the entity on update (POAttachments by AttachmentID)', () => {
    expect(
      checkUpdateBody(POAttachment, { AttachmentID: '0F8FAD5B-D9CB-469F-A165-70867728950E', Description: 'x' }, {}),
    ).toEqual({ key: { AttachmentID: '0f8fad5b-d9cb-469f-a165-70867728950e' }, changes: { Description: 'x' } });
  });

  it('WorkOrders: sums and IsOpen are read-only', () => {
    const error = errorOf(() =>
      checkCreateBody(WorkOrder, {
        WorkOrderID: 'WO-1',
        Description: 'd',
        RequestedDate: '2024-01-01T00:00:00Z',
        ActualHours: 1,
        IsOpen: true,
      }),
    );
    expect(problems(error).map((p) => p.target)).toEqual(['ActualHours', 'IsOpen']);
  });
});

describe('null', () => {
  const nonNullable: [string, string][] = [
    ['PurchaseRequests', 'RequestedBy'],
    ['PurchaseRequests', 'Status'],
    ['PRLineItems', 'Quantity'],
    ['POLineItems', 'UnitPrice'],
    ['POAttachments', 'FileName'],
    ['BlanketPOs', 'StartDate'],
    ['MeterReadings', 'MeterID'],
  ];
  it.each(nonNullable)('%s.%s: null is a 400 on create and update', (set, field) => {
    const type = typeOfSet(set);
    const create = errorOf(() => checkCreateBody(type, { ...validCreate[set], [field]: null }));
    expect([create.status, create.code, create.target, create.message]).toEqual([
      400,
      'InvalidBody',
      field,
      `${field} cannot be null`,
    ]);
    if (!type.properties.get(field)!.isKey) {
      const update = errorOf(() => checkUpdateBody(type, { ...keyFor(type), [field]: null }, {}));
      expect([update.status, update.target, update.message]).toEqual([400, field, `${field} cannot be null`]);
    }
  });

  it('a null key is a 400 on update', () => {
    const error = errorOf(() => checkUpdateBody(PurchaseOrder, { PONumber: null, Status: 'Approved' }, {}));
    expect([error.target, error.message]).toEqual(['PONumber', 'PONumber cannot be null']);
  });

  it('null is accepted for a nullable field, even one with a default', () => {
    expect(checkCreateBody(PurchaseOrder, { VendorID: 'V', Status: null, Currency: null, Notes: null })).toEqual({
      VendorID: 'V',
      Status: null,
      Currency: null,
      Notes: null,
    });
    expect(checkUpdateBody(PurchaseOrder, { PONumber: 'PO-1', Buyer: null }, {}).changes).toEqual({ Buyer: null });
  });
});

// ── types and facets ────────────────────────────────────────────────────────────────────────────

/** A type of its own for the EDM types the service's writable fields do not use. */
const Sample = defineEntityType({
  name: 'Sample',
  key: ['Id'],
  properties: {
    Id: { type: 'Edm.Int32' },
    Big: { type: 'Edm.Int64' },
    BigBounded: { type: 'Edm.Int64', minimum: 0, maximum: 10 },
    Real: { type: 'Edm.Double' },
    RealBounded: { type: 'Edm.Double', minimum: 0, exclusiveMinimum: true, maximum: 1 },
    Free: { type: 'Edm.Decimal' },
    Digits: { type: 'Edm.Decimal', precision: 5 },
    Time: { type: 'Edm.TimeOfDay' },
    Span: { type: 'Edm.Duration' },
    Tiny: { type: 'Edm.Binary', maxLength: 3 },
  },
});

type TypeCase = readonly [type: EntityType, field: string, value: unknown, expected: unknown];
/** An accepted value and its normalized form. */
const accepted: TypeCase[] = [
  // Edm.String
  [PurchaseOrder, 'Notes', '', ''],
  [PurchaseOrder, 'Notes', 'Ünïcödé 🚀 text', 'Ünïcödé 🚀 text'],
  [PurchaseOrder, 'Notes', '  spaces are kept  ', '  spaces are kept  '],
  [PurchaseOrder, 'Currency', 'EUR', 'EUR'],
  [PurchaseOrder, 'Currency', '🚀🚀🚀', '🚀🚀🚀'], // 3 code points, 6 UTF-16 units
  [PurchaseOrder, 'Currency', 'e\u0301e', 'e\u0301e'], // 3 code points
  [PurchaseOrder, 'Status', 'PendingApproval', 'PendingApproval'],
  // Edm.Boolean
  [POLineItem, 'IsTaxable', true, true],
  [POLineItem, 'IsTaxable', false, false],
  // Edm.Int32
  [PurchaseRequest, 'Priority', 1, 1],
  [PurchaseRequest, 'Priority', 5, 5],
  [PurchaseRequest, 'Priority', 3.0, 3],
  [PRLineItem, 'LineNumber', 2147483647, 2147483647],
  [PRLineItem, 'LineNumber', -2147483648, -2147483648],
  [PRLineItem, 'LineNumber', -0, 0],
  // Edm.Int64
  [Sample, 'Big', 42, 42],
  [Sample, 'Big', Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  [Sample, 'Big', '42', 42],
  [Sample, 'Big', '-0042', -42],
  [Sample, 'Big', '9223372036854775807', '9223372036854775807'],
  [Sample, 'Big', '-9223372036854775808', '-9223372036854775808'],
  [Sample, 'BigBounded', 10, 10],
  // Edm.Decimal: the exact canonical text; a JSON number is read by its shortest decimal text
  [PRLineItem, 'Quantity', '1.50', '1.5'],
  [PRLineItem, 'Quantity', 1.5, '1.5'],
  [PRLineItem, 'Quantity', 0.1, '0.1'],
  [PRLineItem, 'Quantity', 0.01, '0.01'],
  [PRLineItem, 'Quantity', '1.500000', '1.5'],
  [PRLineItem, 'Quantity', '+2', '2'],
  [PRLineItem, 'Quantity', '1e2', '100'],
  [PRLineItem, 'Quantity', '12.5E-1', '1.25'],
  [PRLineItem, 'Quantity', 100, '100'],
  [PRLineItem, 'Quantity', '0010.10', '10.1'],
  [PRLineItem, 'Quantity', '9999999999.99', '9999999999.99'],
  [PRLineItem, 'EstimatedUnitCost', '-0', '0'],
  [PRLineItem, 'EstimatedUnitCost', '-12.3400', '-12.34'],
  [PRLineItem, 'EstimatedUnitCost', '99999999999999.9999', '99999999999999.9999'],
  [PRLineItem, 'EstimatedUnitCost', 0.0001, '0.0001'],
  [PRLineItem, 'EstimatedUnitCost', 1e-4, '0.0001'],
  [PRLineItem, 'EstimatedUnitCost', 123456789.1234, '123456789.1234'],
  [Sample, 'Free', '1e-30', '0.000000000000000000000000000001'],
  [Sample, 'Free', 1e21, '1000000000000000000000'],
  [Sample, 'Digits', '123.45', '123.45'],
  [Sample, 'Digits', '0.00001', '0.00001'],
  // Edm.Double
  [Sample, 'Real', 1.5, 1.5],
  [Sample, 'Real', -1e308, -1e308],
  [Sample, 'RealBounded', 1, 1],
  [Sample, 'RealBounded', 5e-324, 5e-324],
  // Edm.Date
  [PRLineItem, 'RequiredDate', '2024-02-29', '2024-02-29'],
  [PRLineItem, 'RequiredDate', '2000-02-29', '2000-02-29'],
  [PRLineItem, 'RequiredDate', '0001-01-01', '0001-01-01'],
  [PRLineItem, 'RequiredDate', '9999-12-31', '9999-12-31'],
  // Edm.DateTimeOffset: UTC with milliseconds
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00Z', '2024-05-01T08:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00+02:00', '2024-05-01T06:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T20:30:00-05:30', '2024-05-02T02:00:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30Z', '2024-05-01T08:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01t08:30:00z', '2024-05-01T08:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00.5Z', '2024-05-01T08:30:00.500Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00.1239999Z', '2024-05-01T08:30:00.123Z'],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00.123456789012+00:00', '2024-05-01T08:30:00.123Z'],
  [PurchaseOrder, 'OrderDate', '2024-12-31T23:30:00-01:00', '2025-01-01T00:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '2024-03-01T00:30:00+01:00', '2024-02-29T23:30:00.000Z'],
  [PurchaseOrder, 'OrderDate', '0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
  [PurchaseOrder, 'OrderDate', '9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  [PurchaseOrder, 'OrderDate', '0001-01-01T00:30:00-00:30', '0001-01-01T01:00:00.000Z'],
  // Edm.TimeOfDay, Edm.Duration
  [Sample, 'Time', '08:30', '08:30'],
  [Sample, 'Time', '23:59:59.999', '23:59:59.999'],
  [Sample, 'Span', 'P1DT2H30M', 'P1DT2H30M'],
  // Edm.Guid: lower case
  [POAttachment, 'AttachmentID', '0F8FAD5B-D9CB-469F-A165-70867728950E', '0f8fad5b-d9cb-469f-a165-70867728950e'],
  // Edm.Binary: base64 or base64url, padded or not
  [POAttachment, 'ContentBase64', 'aGVsbG8=', new Uint8Array(Buffer.from('hello'))],
  [POAttachment, 'ContentBase64', 'aGVsbG8', new Uint8Array(Buffer.from('hello'))],
  [POAttachment, 'ContentBase64', '', new Uint8Array(0)],
  [POAttachment, 'ContentBase64', '-_-_', new Uint8Array([0xfb, 0xff, 0xbf])],
  [POAttachment, 'ContentBase64', '+/+/', new Uint8Array([0xfb, 0xff, 0xbf])],
  [Sample, 'Tiny', 'AQID', new Uint8Array([1, 2, 3])],
];

/** A rejected value: the 400's message. */
const rejected: [type: EntityType, field: string, value: unknown, message: string | RegExp][] = [
  // wrong JSON types
  [PurchaseOrder, 'VendorID', 42, 'VendorID must be a JSON string (Edm.String); received 42'],
  [PurchaseOrder, 'VendorID', true, 'VendorID must be a JSON string (Edm.String); received true'],
  [PurchaseOrder, 'VendorID', ['V'], 'VendorID must be a JSON string (Edm.String); received an array'],
  [PurchaseOrder, 'VendorID', { id: 'V' }, 'VendorID must be a JSON string (Edm.String); received an object'],
  [POLineItem, 'IsTaxable', 'true', 'IsTaxable must be true or false (Edm.Boolean); received "true"'],
  [POLineItem, 'IsTaxable', 1, 'IsTaxable must be true or false (Edm.Boolean); received 1'],
  [
    PurchaseRequest,
    'Priority',
    '3',
    'Priority must be an integer JSON number between -2147483648 and 2147483647 (Edm.Int32); received "3"',
  ],
  [PurchaseRequest, 'Priority', 2.5, /^Priority must be an integer JSON number .*; received 2\.5$/],
  [PRLineItem, 'LineNumber', 2147483648, /^LineNumber must be an integer JSON number .*; received 2147483648$/],
  [PRLineItem, 'LineNumber', -2147483649, /received -2147483649$/],
  [PRLineItem, 'LineNumber', 1e100, /received 1e\+100$/],
  [Sample, 'Big', 1.5, /^Big must be an integer between -9223372036854775808 and 9223372036854775807 \(Edm\.Int64\)/],
  [Sample, 'Big', 2 ** 53, /received 9007199254740992 \(an integer beyond ±9007199254740991 must be sent as a string/],
  [Sample, 'Big', '9223372036854775808', /received "9223372036854775808" \(out of range\)$/],
  [Sample, 'Big', '1.0', /received "1\.0"$/],
  [Sample, 'Big', '+1', /received "\+1"$/],
  [Sample, 'Big', ' 1', /received " 1"$/],
  [Sample, 'Big', '', /received ""$/],
  [Sample, 'Big', true, /received true$/],
  [Sample, 'Real', '1.5', 'Real must be a JSON number (Edm.Double); received "1.5"'],
  [Sample, 'Real', 'NaN', 'Real must be a JSON number (Edm.Double); received "NaN"'],
  // decimals: syntax, scale and precision
  ...['abc', '', ' 1', '1 ', '1.', '.5', '1,5', 'NaN', 'Infinity', '-INF', '0x10', '1e', '--1', '1e99999'].map(
    (text): [EntityType, string, unknown, RegExp] => [
      PRLineItem,
      'Quantity',
      text,
      new RegExp(
        `^Quantity must be a decimal number \\(Edm\\.Decimal\\): a JSON number or a numeric string such as "12\\.50"; received ${JSON.stringify(text).replace(/[.+]/g, '\\$&')}$`,
      ),
    ],
  ),
  [PRLineItem, 'Quantity', true, /^Quantity must be a decimal number .*; received true$/],
  [PRLineItem, 'Quantity', { value: 1 }, /received an object$/],
  [
    PRLineItem,
    'Quantity',
    '1'.repeat(1001),
    /^Quantity must be a decimal number .*received "1{40}"… \(1001 characters\)$/,
  ],
  [
    PRLineItem,
    'Quantity',
    '1.234',
    'Quantity must have at most 2 digits after the decimal point (Edm.Decimal, precision 12, scale 2); received "1.234"',
  ],
  [PRLineItem, 'Quantity', 1.005, /^Quantity must have at most 2 digits after the decimal point .*received 1\.005$/],
  [PRLineItem, 'Quantity', 0.1 + 0.2, /after the decimal point .*received 0\.30000000000000004$/],
  [
    PRLineItem,
    'Quantity',
    '10000000000',
    'Quantity must have at most 10 digits before the decimal point (Edm.Decimal, precision 12, scale 2); received "10000000000"',
  ],
  [PRLineItem, 'EstimatedUnitCost', '100000000000000', /^EstimatedUnitCost must have at most 14 digits before/],
  [PRLineItem, 'EstimatedUnitCost', 1e21, /^EstimatedUnitCost must have at most 14 digits before .*received 1e\+21$/],
  [PRLineItem, 'EstimatedUnitCost', '0.00001', /^EstimatedUnitCost must have at most 4 digits after/],
  [Sample, 'Digits', '123456', 'Digits must have at most 5 digits (Edm.Decimal, precision 5); received "123456"'],
  [Sample, 'Digits', '1234.56', /^Digits must have at most 5 digits/],
  // bounds
  [PRLineItem, 'Quantity', -1, 'Quantity must be greater than 0; received -1'],
  [PRLineItem, 'Quantity', 0, 'Quantity must be greater than 0; received 0'],
  [PRLineItem, 'Quantity', '-0.00', 'Quantity must be greater than 0; received 0'],
  [POLineItem, 'QuantityOrdered', '-2.50', 'QuantityOrdered must be greater than 0; received -2.5'],
  [PurchaseRequest, 'Priority', 0, 'Priority must be between 1 and 5; received 0'],
  [PurchaseRequest, 'Priority', 6, 'Priority must be between 1 and 5; received 6'],
  [Sample, 'BigBounded', '11', 'BigBounded must be between 0 and 10; received 11'],
  [Sample, 'RealBounded', 0, 'RealBounded must be greater than 0 and at most 1; received 0'],
  [
    Sample,
    'RealBounded',
    1.0000000000000002,
    'RealBounded must be greater than 0 and at most 1; received 1.0000000000000002',
  ],
  // maxLength in code points, vocabularies
  [PurchaseOrder, 'Currency', 'EURO', 'Currency must be at most 3 characters long; received 4 characters: "EURO"'],
  [
    PurchaseOrder,
    'Currency',
    '🚀🚀🚀🚀',
    /^Currency must be at most 3 characters long; received 4 characters: "🚀🚀🚀🚀"$/,
  ],
  [
    PurchaseRequest,
    'Description',
    'a'.repeat(201),
    `Description must be at most 200 characters long; received 201 characters: "${'a'.repeat(40)}"…`,
  ],
  [
    PurchaseOrder,
    'Status',
    'approved',
    'Status must be one of Draft, PendingApproval, Approved, Issued, PartiallyReceived, Received, Closed, Canceled; received "approved"; did you mean \'Approved\'?',
  ],
  [PRLineItem, 'Status', 'Closed', 'Status must be one of Open, Ordered, Canceled; received "Closed"'],
  [
    POAttachment,
    'DocumentType',
    'Quote ',
    /^DocumentType must be one of Quote, Invoice, PackingSlip, Other; received "Quote "/,
  ],
  // text that no database holds
  [PurchaseOrder, 'Notes', 'a\u0000b', 'Notes must not contain the character U+0000 (found at position 1)'],
  [
    PurchaseOrder,
    'Notes',
    'ab\uD800',
    'Notes must be well-formed Unicode text; it has a lone surrogate U+D800 at position 2',
  ],
  [
    PurchaseOrder,
    'Notes',
    '\uDC00x',
    'Notes must be well-formed Unicode text; it has a lone surrogate U+DC00 at position 0',
  ],
  [PurchaseOrder, 'Notes', '\uDBFF\uDBFF\uDC00', /lone surrogate U\+DBFF at position 0$/],
  // dates
  [
    PRLineItem,
    'RequiredDate',
    '2023-02-29',
    /^RequiredDate must be a date in the form YYYY-MM-DD .*; received "2023-02-29" \(2023-02 has no day 29\)$/,
  ],
  [PRLineItem, 'RequiredDate', '2024-13-01', /received "2024-13-01" \(month 13 does not exist\)$/],
  [PRLineItem, 'RequiredDate', '2024-04-31', /\(2024-04 has no day 31\)$/],
  [PRLineItem, 'RequiredDate', '2024-04-00', /\(2024-04 has no day 00\)$/],
  [PRLineItem, 'RequiredDate', '0000-01-01', /\(years run from 0001 to 9999\)$/],
  [PRLineItem, 'RequiredDate', '10000-01-01', /received "10000-01-01"$/],
  [PRLineItem, 'RequiredDate', '2024-1-01', /received "2024-1-01"$/],
  [PRLineItem, 'RequiredDate', '2024-01-01T00:00:00Z', /received "2024-01-01T00:00:00Z"$/],
  [PRLineItem, 'RequiredDate', 20240101, /received 20240101$/],
  // instants
  [
    PurchaseOrder,
    'OrderDate',
    '2024-05-01T08:30:00',
    'OrderDate must be a date and time with a time zone offset, such as 2024-05-01T08:30:00Z or 2024-05-01T08:30:00+02:00 (Edm.DateTimeOffset); received "2024-05-01T08:30:00" (the time zone offset is missing: add Z or ±hh:mm)',
  ],
  [PurchaseOrder, 'OrderDate', '2024-05-01', /received "2024-05-01" \(a date without a time\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01 08:30:00Z', /received "2024-05-01 08:30:00Z"$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00+0200', /received "2024-05-01T08:30:00\+0200"$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00+02', /received "2024-05-01T08:30:00\+02"$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T8:30:00Z', /received "2024-05-01T8:30:00Z"$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00.Z', /received "2024-05-01T08:30:00\.Z"$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00.1234567890123Z', /\(fractional seconds have at most 12 digits\)$/],
  [PurchaseOrder, 'OrderDate', '2024-02-30T08:30:00Z', /\(2024-02 has no day 30\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T24:00:00Z', /\(hour 24 is not between 00 and 23\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:60:00Z', /\(minute 60 is not between 00 and 59\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:60Z', /\(second 60 is not between 00 and 59\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00+24:00', /\(the offset \+24:00 is out of range\)$/],
  [PurchaseOrder, 'OrderDate', '2024-05-01T08:30:00-05:60', /\(the offset -05:60 is out of range\)$/],
  [PurchaseOrder, 'OrderDate', '0000-12-31T23:00:00Z', /\(years run from 0001 to 9999\)$/],
  [
    PurchaseOrder,
    'OrderDate',
    '0001-01-01T00:30:00+01:00',
    /\(in UTC it is outside 0001-01-01T00:00:00Z to 9999-12-31T23:59:59\.999Z\)$/,
  ],
  [PurchaseOrder, 'OrderDate', '9999-12-31T23:30:00-01:00', /\(in UTC it is outside/],
  [PurchaseOrder, 'OrderDate', 1714550400000, /received 1714550400000$/],
  // time of day, duration
  [
    Sample,
    'Time',
    '24:00',
    /^Time must be a time of day in the form HH:MM\[:SS\[\.fff\]\] \(Edm\.TimeOfDay\); received "24:00" \(hour 24 is not between 00 and 23\)$/,
  ],
  [Sample, 'Time', '8:30', /received "8:30"$/],
  [Sample, 'Span', 'P', /^Span must be an ISO 8601 duration such as P1DT2H30M \(Edm\.Duration\); received "P"$/],
  [Sample, 'Span', 1000, /received 1000$/],
  // guids
  ...[
    '0f8fad5bd9cb469fa16570867728950e',
    '{0f8fad5b-d9cb-469f-a165-70867728950e}',
    '0f8fad5b-d9cb-469f-a165-70867728950',
    '0f8fad5b-d9cb-469f-a165-70867728950g',
    ' 0f8fad5b-d9cb-469f-a165-70867728950e',
  ].map((text): [EntityType, string, unknown, string] => [
    POAttachment,
    'AttachmentID',
    text,
    `AttachmentID must be a GUID in the form 01234567-89ab-cdef-0123-456789abcdef (Edm.Guid); received ${JSON.stringify(text)}`,
  ]),
  // binaries
  [
    POAttachment,
    'ContentBase64',
    'aGVs bG8=',
    'ContentBase64 must be base64 or base64url text (Edm.Binary); received "aGVs bG8=" (the character at position 4 is not a base64 character)',
  ],
  [POAttachment, 'ContentBase64', 'aGVsbG8=\n', /\(the character at position 8 is not a base64 character\)$/],
  [POAttachment, 'ContentBase64', 'a=b=', /\(the padding = is only allowed at the end\)$/],
  [POAttachment, 'ContentBase64', 'ab+_', /\(it mixes the base64 \(\+ \/\) and base64url \(- _\) alphabets\)$/],
  [POAttachment, 'ContentBase64', 'a', /\(its length or padding is not that of base64\)$/],
  [POAttachment, 'ContentBase64', 'aGVsbG8==', /\(its length or padding is not that of base64\)$/],
  [POAttachment, 'ContentBase64', 'aGVsbA=', /\(its length or padding is not that of base64\)$/],
  [
    POAttachment,
    'ContentBase64',
    [104, 105],
    /^ContentBase64 must be base64 or base64url text \(Edm\.Binary\); received an array$/,
  ],
];

describe('types and facets', () => {
  /** A body of `type` with the one field under test (the others of the type's checks are not involved). */
  const runCreate = (type: EntityType, field: string, value: unknown): Row =>
    checkCreateBody(type, Object.fromEntries([[field, value]]), {});

  it.each(accepted.map(([type, ...rest]) => [type.name, ...rest, type] as const))(
    '%s.%s: %j is accepted as %j (create and update)',
    (_, field, value, expected, type) => {
      const property = type.properties.get(field)!;
      // create: through a lenient view of the same property (not computed, not required by the others)
      const loose = looseType(type, field);
      expect(runCreate(loose, field, value)).toEqual({ [field]: expected });
      if (!property.isKey && property.computed !== true && property.immutable !== true) {
        expect(checkUpdateBody(type, { ...keyFor(type), [field]: value }, {}).changes).toEqual({ [field]: expected });
      }
    },
  );

  it.each(rejected.map(([type, ...rest]) => [type.name, ...rest, type] as const))(
    '%s.%s: %j is a 400',
    (_, field, value, message, type) => {
      const loose = type.properties.has(field) ? looseType(type, field) : type;
      const error = errorOf(() => runCreate(loose, field, value));
      expect(error.status).toBe(400);
      expect(error.target).toBe(field);
      expect(error.details).toEqual([]);
      if (typeof message === 'string') expect(error.message).toBe(message);
      else expect(error.message).toMatch(message);
      const property = type.properties.get(field);
      if (property !== undefined && !property.isKey && property.computed !== true && property.immutable !== true) {
        const update = errorOf(() => checkUpdateBody(type, { ...keyFor(type), [field]: value }, {}));
        expect([update.status, update.target, update.message]).toEqual([400, field, error.message]);
      }
    },
  );

  it('gives the position of a bad character in text', () => {
    expect(errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', Notes: 'abc\u0000' })).position).toBe(3);
  });

  it('counts maxLength in code points: 200 emoji fit a Description(200)', () => {
    const text = '🚀'.repeat(200);
    expect(checkCreateBody(PurchaseRequest, { RequestedBy: 'u', Description: text }).Description).toBe(text);
    expect(errorOf(() => checkCreateBody(PurchaseRequest, { RequestedBy: 'u', Description: text + 'x' })).message).toBe(
      `Description must be at most 200 characters long; received 201 characters: "${'🚀'.repeat(40)}"…`,
    );
  });

  it('a returned Binary owns its bytes (not a view of a shared pool)', () => {
    const row = checkCreateBody(POAttachment, { ...validCreate.POAttachments, ContentBase64: 'AQID' });
    const bytes = row.ContentBase64 as Uint8Array;
    expect(bytes.byteOffset).toBe(0);
    expect(bytes.buffer.byteLength).toBe(3);
  });
});

/** The same type with `field` made optional and writable, so a single-field body exercises only the value rules. */
function looseType(type: EntityType, field: string): EntityType {
  const property = type.properties.get(field)!;
  const { name: _name, isKey: _isKey, computed: _computed, ...facets } = property;
  const definition: PropertyDefinition = { ...facets, nullable: true };
  return defineEntityType({
    name: type.name,
    key: ['Key__'],
    properties: { Key__: { type: 'Edm.Int32', default: { generate: 'nextLineNumber' } }, [field]: definition },
  });
}

describe('Binary size caps (413)', () => {
  const base = validCreate.POAttachments!;
  it('a decoded value over maxBinaryBytes is a 413 PayloadTooLarge naming the field', () => {
    const error = errorOf(() =>
      checkCreateBody(POAttachment, { ...base, ContentBase64: 'AAAAAAAA' }, { maxBinaryBytes: 5 }),
    );
    expect([error.status, error.code, error.target, error.message]).toEqual([
      413,
      'PayloadTooLarge',
      'ContentBase64',
      'ContentBase64 is 6 bytes once decoded; at most 5 bytes are accepted',
    ]);
  });

  it('exactly at the cap is accepted, padded or not', () => {
    expect(
      checkCreateBody(POAttachment, { ...base, ContentBase64: 'AAAAAA==' }, { maxBinaryBytes: 4 }).ContentBase64,
    ).toEqual(new Uint8Array(4));
    expect(
      checkCreateBody(POAttachment, { ...base, ContentBase64: 'AAAAAA' }, { maxBinaryBytes: 4 }).ContentBase64,
    ).toEqual(new Uint8Array(4));
    expect(
      errorOf(() => checkCreateBody(POAttachment, { ...base, ContentBase64: 'AAAAAAA' }, { maxBinaryBytes: 4 })).status,
    ).toBe(413);
  });

  it('the default cap is 10 MiB', () => {
    const exactly = Buffer.alloc(10 * 1024 * 1024, 7).toString('base64');
    expect(
      (checkCreateBody(POAttachment, { ...base, ContentBase64: exactly }).ContentBase64 as Uint8Array).length,
    ).toBe(10 * 1024 * 1024);
    const over = Buffer.alloc(10 * 1024 * 1024 + 1).toString('base64url');
    const error = errorOf(() => checkCreateBody(POAttachment, { ...base, ContentBase64: over }));
    expect([error.status, error.message]).toEqual([
      413,
      'ContentBase64 is 10485761 bytes once decoded; at most 10485760 bytes are accepted',
    ]);
  });

  it("a property's maxLength caps it too", () => {
    expect(errorOf(() => checkCreateBody(Sample, { Id: 1, Tiny: 'AQIDBA' })).status).toBe(413);
  });

  it('on update as on create', () => {
    const error = errorOf(() =>
      checkUpdateBody(
        POAttachment,
        { ContentBase64: 'AAAAAAAA' },
        { fromPath: { AttachmentID: '0f8fad5b-d9cb-469f-a165-70867728950e' } },
        { maxBinaryBytes: 1 },
      ),
    );
    expect(error.status).toBe(413);
  });

  it('with other problems in the body, the 400s come first and the 413 is a detail', () => {
    const error = errorOf(() =>
      checkCreateBody(POAttachment, { ...base, ContentBase64: 'AAAAAAAA', FileName: 5 }, { maxBinaryBytes: 1 }),
    );
    expect(error.status).toBe(400);
    expect(problems(error).map((p) => [p.code, p.target])).toEqual([
      ['InvalidBody', 'FileName'],
      ['PayloadTooLarge', 'ContentBase64'],
    ]);
  });
});

// ── instants read in a time zone ────────────────────────────────────────────────────────────────

// ── bodies read from JSON text: numbers with the digits sent ───────────────────────────────────

describe('numbers in a JSON body keep the digits sent (parseJsonBody)', () => {
  /** The body text `{"<field>":<json>}` through parseJsonBody and a create of `type`. */
  const create = (type: EntityType, field: string, json: string, options: BodyOptions = {}): Row =>
    checkCreateBody(looseType(type, field), parseJsonBody(`{"${field}":${json}}`), options);
  const refusal = (type: EntityType, field: string, json: string): ODataError =>
    errorOf(() => create(type, field, json));
  const fourHundredDigits = `1.${'0'.repeat(397)}1`;

  const decimals: [field: string, json: string, stored: string][] = [
    // a double holds 1234567890123.4568 and 100000000000000: the digits sent are what is stored
    ['FreightAmount', '1234567890123.4567', '1234567890123.4567'],
    ['FreightAmount', '99999999999999.9999', '99999999999999.9999'],
    ['FreightAmount', '-99999999999999.9999', '-99999999999999.9999'],
    ['FreightAmount', '0.0001', '0.0001'],
    ['FreightAmount', '1.5E+3', '1500'],
    ['FreightAmount', '1.5e3', '1500'],
    ['FreightAmount', '15000E-1', '1500'],
    ['FreightAmount', '-0', '0'],
    ['FreightAmount', '0.10', '0.1'],
    ['FreightAmount', '12345678901234.5678000', '12345678901234.5678'],
    ['FreightAmount', `12.34${'0'.repeat(394)}`, '12.34'], // 400 characters, trailing zeros
    ['FreightAmount', '1e-4', '0.0001'],
  ];
  it.each(decimals)('PurchaseOrders.%s: %s is stored as %s', (field, json, stored) => {
    expect(create(PurchaseOrder, field, json)).toEqual({ [field]: stored });
    expect(create(PurchaseOrder, field, JSON.stringify(json))).toEqual({ [field]: stored }); // as a string too
  });

  it('a decimal a double would round into range or to zero is refused by its facets, with the digits sent', () => {
    expect(refusal(PurchaseOrder, 'FreightAmount', '1e-400').message).toBe(
      'FreightAmount must have at most 4 digits after the decimal point (Edm.Decimal, precision 18, scale 4); received 1e-400',
    );
    expect(refusal(PurchaseOrder, 'FreightAmount', fourHundredDigits).message).toBe(
      'FreightAmount must have at most 4 digits after the decimal point (Edm.Decimal, precision 18, scale 4); ' +
        `received 1.${'0'.repeat(38)}… (400 characters)`,
    );
    expect(refusal(PurchaseOrder, 'FreightAmount', '100000000000000.0001').message).toMatch(
      /^FreightAmount must have at most 14 digits before the decimal point .*; received 100000000000000\.0001$/,
    );
    expect(refusal(PRLineItem, 'Quantity', '0.0000000000000000001').message).toMatch(/at most 2 digits after/);
    expect(refusal(PurchaseOrder, 'FreightAmount', '1e99999').message).toMatch(
      /^FreightAmount must be a decimal number .*; received 1e99999 \(its exponent is out of range\)$/,
    );
    expect(refusal(PurchaseOrder, 'FreightAmount', '1'.repeat(1001)).message).toMatch(
      /; received 1{40}… \(1001 characters\) \(more than 1000 characters\)$/,
    );
  });

  it('Int64 is exact over its whole range', () => {
    const int64: [json: string, stored: unknown][] = [
      ['9223372036854775807', '9223372036854775807'],
      ['-9223372036854775808', '-9223372036854775808'],
      ['9007199254740993', '9007199254740993'], // JSON.parse gives 9007199254740992
      ['9007199254740991', 9007199254740991],
      ['922337203685477580.7e1', '9223372036854775807'],
      ['1e3', 1000],
      ['1.0', 1],
      ['-0', 0],
    ];
    for (const [json, stored] of int64) expect(create(Sample, 'Big', json), json).toEqual({ Big: stored });
    for (const json of ['9223372036854775808', '-9223372036854775809', '1e19', '1e6000', '-1e400'])
      expect(refusal(Sample, 'Big', json).message, json).toMatch(new RegExp(`; received ${json} \\(out of range\\)$`));
    for (const json of ['1.5', '1e-400', '9223372036854775807.5'])
      expect(refusal(Sample, 'Big', json).message, json).toMatch(
        /^Big must be an integer between -9223372036854775808 and 9223372036854775807 \(Edm\.Int64\): a JSON number or a string of digits; received /,
      );
    // a computed Int64 sent anyway is named with the digits sent
    expect(
      errorOf(() => checkCreateBody(POAttachment, parseJsonBody('{"SizeBytes":9223372036854775807}'))).message,
    ).toBe('SizeBytes is set by the server and cannot be sent in a POAttachment body; received 9223372036854775807');
  });

  it('Edm.Double is the nearest double of the text, as JSON.parse reads it', () => {
    expect(create(Sample, 'Real', '1234567890123.4567')).toEqual({ Real: 1234567890123.4568 });
    expect(create(Sample, 'Real', '0.1')).toEqual({ Real: 0.1 });
    expect(create(Sample, 'Real', '1e-400')).toEqual({ Real: 0 });
    expect(create(Sample, 'Real', '-1.5E+3')).toEqual({ Real: -1500 });
    expect(refusal(Sample, 'Real', '1e400').message).toBe(
      'Real must be a JSON number (Edm.Double); received 1e400 (beyond the range of a double)',
    );
    expect(create(Sample, 'RealBounded', '1.00000000000000001')).toEqual({ RealBounded: 1 });
    expect(refusal(Sample, 'RealBounded', '1.0000000000000002').message).toBe(
      'RealBounded must be greater than 0 and at most 1; received 1.0000000000000002',
    );
  });

  it('Edm.Int32 reads as before: the nearest double must be an integer in range', () => {
    expect(create(PurchaseRequest, 'Priority', '3.0')).toEqual({ Priority: 3 });
    expect(create(PurchaseRequest, 'Priority', '4e0')).toEqual({ Priority: 4 });
    expect(create(PRLineItem, 'LineNumber', '-0')).toEqual({ LineNumber: 0 });
    expect(create(PRLineItem, 'LineNumber', '2147483647')).toEqual({ LineNumber: 2147483647 });
    expect(refusal(PRLineItem, 'LineNumber', '2147483648').message).toMatch(/\(Edm\.Int32\); received 2147483648$/);
    expect(refusal(PurchaseRequest, 'Priority', '2.5').message).toMatch(/\(Edm\.Int32\); received 2\.5$/);
  });

  it('action parameters are read the same way', () => {
    const labor = (hours: string) =>
      checkActionBody(
        RemoveActualLabor,
        parseJsonBody(`{"Craft":"MECH","Hours":${hours},"PeopleID":"P1","StartDate":"2024-02-09T18:45:00Z"}`),
      );
    expect(labor('9999999999.99')['Hours']).toBe('9999999999.99');
    expect(labor('1.50E0')['Hours']).toBe('1.5');
    // a double reads 1.0000000000000001 as 1, which would match (and remove) a 1-hour record
    expect(errorOf(() => labor('1.0000000000000001')).target).toBe('Hours');
  });

  it('a number of the wrong type is quoted with the digits sent', () => {
    expect(refusal(PurchaseOrder, 'VendorID', '12345678901234567890').message).toBe(
      'VendorID must be a JSON string (Edm.String); received 12345678901234567890',
    );
    expect(errorOf(() => checkCreateBody(PurchaseOrder, parseJsonBody('1e400'))).message).toBe(
      'The request body must be a JSON object; received 1e400',
    );
  });

  it('property: decimals of every precision and scale of the model, as JSON numbers and as strings, keep every digit', () => {
    const fields = [
      ...writableSets.flatMap((set) =>
        [...typeOfSet(set).properties.values()].map((p) => [typeOfSet(set), p] as const),
      ),
    ].filter(([, p]) => p.type === 'Edm.Decimal' && p.computed !== true);
    expect(new Set(fields.map(([, p]) => `${p.precision},${p.scale}`))).toEqual(new Set(['18,4', '12,2']));
    fc.assert(
      fc.property(
        fc
          .constantFrom(...fields)
          .chain(([type, p]) =>
            fc.tuple(
              fc.constant(type),
              fc.constant(p),
              decimalSent(p.precision!, p.scale!, p.minimum !== undefined),
              fc.boolean(),
            ),
          ),
        ([type, p, sent, asString]) => {
          const json = asString ? JSON.stringify(sent.token) : sent.token;
          const body = parseJsonBody(`{${JSON.stringify(p.name)}:${json}}`);
          expect(checkCreateBody(looseType(type, p.name), body)).toEqual({ [p.name]: sent.canonical });
          expect(checkUpdateBody(type, { ...keyFor(type), ...(body as object) }, {}).changes).toEqual({
            [p.name]: sent.canonical,
          });
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('body text that is not JSON, or is hostile', () => {
  const invalidBody = (text: string): ODataError => {
    const error = errorOf(() => parseJsonBody(text));
    expect([error.status, error.code, error.target]).toEqual([400, 'InvalidBody', undefined]);
    return error;
  };

  it('says what was expected and where', () => {
    const error = invalidBody('{"RequestedBy":"KIM",}');
    expect(error.message).toBe(
      "The body is not valid JSON: expected a property name in double quotes at position 21; found '}'",
    );
    expect(error.position).toBe(21);
    expect(invalidBody('').message).toBe(
      'The body is not valid JSON: expected a value (a string, number, object, array, true, false or null) at position 0; found the end of the text',
    );
    expect(invalidBody('{"Notes":"a\u0001"}').message).toBe(
      'The body is not valid JSON: the control character U+0001 must be escaped in a string at position 11',
    );
  });

  it('a name sent twice is refused, whatever the values', () => {
    expect(invalidBody('{"VendorID":"V","Status":"Approved","Status":"Draft"}').message).toBe(
      'The body is not valid JSON: the name "Status" appears twice in one object at position 36',
    );
    expect(invalidBody('{"a":1,"a":1}').message).toMatch(/the name "a" appears twice/);
  });

  it('100,000 [ and deep objects are a clean 400', () => {
    expect(invalidBody('['.repeat(100_000)).message).toBe(
      'The body is not valid JSON: arrays and objects are nested more than 100 deep at position 100',
    );
    expect(invalidBody(`{"Notes":${'{"a":'.repeat(100_000)}`).message).toMatch(/nested more than 100 deep/);
  });

  it('__proto__ in a body is an unknown field and pollutes nothing', () => {
    const body = parseJsonBody('{"VendorID":"V","__proto__":{"polluted":true}}');
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect(problems(errorOf(() => checkCreateBody(PurchaseOrder, body)))).toEqual([
      { code: 'UnknownProperty', target: '__proto__', message: "PurchaseOrder has no field '__proto__'" },
    ]);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });

  it('a JsonNumber from elsewhere is read like one from a body', () => {
    expect(checkCreateBody(PurchaseOrder, { VendorID: 'V', FreightAmount: new JsonNumber('1e2') })).toEqual({
      VendorID: 'V',
      FreightAmount: '100',
    });
  });
});

// ── string maxima ──────────────────────────────────────────────────────────────────────────────

describe('every string has a maximum', () => {
  it.each([
    ['PurchaseOrder', PurchaseOrder],
    ['PurchaseRequest', PurchaseRequest],
  ] as const)('%s.Notes: at most 4000 characters (code points)', (_, type) => {
    const base = type === PurchaseOrder ? { VendorID: 'V' } : { RequestedBy: 'u' };
    expect(checkCreateBody(type, { ...base, Notes: 'n'.repeat(4000) }).Notes).toHaveLength(4000);
    expect(checkCreateBody(type, { ...base, Notes: '🚀'.repeat(4000) }).Notes).toHaveLength(8000);
    const error = errorOf(() => checkCreateBody(type, { ...base, Notes: 'n'.repeat(4001) }));
    expect([error.status, error.target, error.message]).toEqual([
      400,
      'Notes',
      `Notes must be at most 4000 characters long; received 4001 characters: "${'n'.repeat(40)}"…`,
    ]);
    const update = errorOf(() => checkUpdateBody(type, { ...keyFor(type), Notes: 'n'.repeat(15 * 1024 * 1024) }, {}));
    expect([update.status, update.target]).toEqual([400, 'Notes']);
  });

  const Unbounded = defineEntityType({
    name: 'Unbounded',
    key: ['Id'],
    properties: { Id: { type: 'Edm.Int32', default: { generate: 'nextLineNumber' } }, Text: { type: 'Edm.String' } },
  });
  const Greeting = {
    name: 'Greet',
    boundTo: 'Things',
    parameters: { Text: { type: 'Edm.String' } },
    returnType: 'Edm.Boolean',
  } as const;

  it('a string property without maxLength is capped at 1,048,576 characters by default', () => {
    expect(DEFAULT_MAX_STRING_LENGTH).toBe(1024 * 1024);
    const atCap = 'é'.repeat(DEFAULT_MAX_STRING_LENGTH);
    expect(checkCreateBody(Unbounded, { Text: atCap }).Text).toBe(atCap);
    const error = errorOf(() => checkCreateBody(Unbounded, { Text: `${atCap}é` }));
    expect([error.status, error.code, error.target]).toEqual([400, 'InvalidBody', 'Text']);
    expect(error.message).toMatch(
      /^Text must be at most 1048576 characters long; received 1048577 characters: "é{40}"…$/,
    );
    expect(errorOf(() => checkUpdateBody(Unbounded, { Id: 1, Text: `${atCap}é` }, {})).target).toBe('Text');
    expect(errorOf(() => checkActionBody(Greeting, { Text: `${atCap}é` })).target).toBe('Text');
    // counted in code points, like a declared maxLength
    expect(checkCreateBody(Unbounded, { Text: '🚀'.repeat(DEFAULT_MAX_STRING_LENGTH) }).Text).toHaveLength(
      2 * DEFAULT_MAX_STRING_LENGTH,
    );
  });

  it('the default cap is an option; a declared maxLength wins over it', () => {
    expect(errorOf(() => checkCreateBody(Unbounded, { Text: 'abcd' }, { maxStringLength: 3 })).message).toBe(
      'Text must be at most 3 characters long; received 4 characters: "abcd"',
    );
    expect(checkCreateBody(Unbounded, { Text: 'abc' }, { maxStringLength: 3 })).toEqual({ Text: 'abc' });
    expect(
      checkCreateBody(PurchaseOrder, { VendorID: 'V', Notes: 'n'.repeat(4000) }, { maxStringLength: 3 }).Notes,
    ).toHaveLength(4000);
  });
});

describe('offset-less instants (MeterReadings.ReadingDate)', () => {
  const cases: [options: BodyOptions, sent: string, stored: string][] = [
    // New York: EST (−05:00) in winter, EDT (−04:00) in summer
    [newYork, '2024-01-15T08:30:00', '2024-01-15T13:30:00.000Z'],
    [newYork, '2024-07-15T08:30:00', '2024-07-15T12:30:00.000Z'],
    [newYork, '2024-07-15T08:30', '2024-07-15T12:30:00.000Z'],
    [newYork, '2024-07-15T08:30:00.1234', '2024-07-15T12:30:00.123Z'],
    [newYork, '2024-12-31T22:00:00', '2025-01-01T03:00:00.000Z'],
    // the spring gap: 02:30 does not exist, moved forward by the gap (03:30 EDT)
    [newYork, '2024-03-10T02:30:00', '2024-03-10T07:30:00.000Z'],
    [newYork, '2024-03-10T01:59:59', '2024-03-10T06:59:59.000Z'],
    [newYork, '2024-03-10T03:00:00', '2024-03-10T07:00:00.000Z'],
    // the autumn hour that occurs twice: the earlier instant (EDT)
    [newYork, '2024-11-03T01:30:00', '2024-11-03T05:30:00.000Z'],
    [newYork, '2024-11-03T02:00:00', '2024-11-03T07:00:00.000Z'],
    // an offset, when given, wins over the zone
    [newYork, '2024-07-15T08:30:00Z', '2024-07-15T08:30:00.000Z'],
    [newYork, '2024-07-15T08:30:00+02:00', '2024-07-15T06:30:00.000Z'],
    // other zones
    [{ ...newYork, timeZone: 'Asia/Kolkata' }, '2024-05-01T08:30:00', '2024-05-01T03:00:00.000Z'],
    [{ ...newYork, timeZone: 'Europe/Berlin' }, '2024-05-01T08:30:00', '2024-05-01T06:30:00.000Z'],
    [{ ...newYork, timeZone: 'Australia/Sydney' }, '2024-01-01T08:30:00', '2023-12-31T21:30:00.000Z'],
    [{ ...newYork, timeZone: 'Australia/Lord_Howe' }, '2024-01-01T08:30:00', '2023-12-31T21:30:00.000Z'],
    [{ ...newYork, timeZone: 'Australia/Lord_Howe' }, '2024-07-01T08:30:00', '2024-06-30T22:00:00.000Z'],
    // UTC unless the site sets a zone
    [{ offsetlessInstants: ['ReadingDate'] }, '2024-05-01T08:30:00', '2024-05-01T08:30:00.000Z'],
    [{ offsetlessInstants: ['ReadingDate'], timeZone: 'UTC' }, '2024-05-01T08:30:00', '2024-05-01T08:30:00.000Z'],
    // the edges of the range
    // local mean time before standard zones (Tokyo +09:18:59, New York −04:56:02)
    [{ ...newYork, timeZone: 'Asia/Tokyo' }, '0001-01-01T10:00:00', '0001-01-01T00:41:01.000Z'],
    [newYork, '0001-01-01T00:00:00', '0001-01-01T04:56:02.000Z'],
    [newYork, '9999-12-31T18:00:00', '9999-12-31T23:00:00.000Z'],
  ];
  it.each(cases)('%j: %s → %s', (options, sent, stored) => {
    expect(checkCreateBody(MeterReading, { MeterID: 'M-1', ReadingDate: sent }, options)).toEqual({
      MeterID: 'M-1',
      ReadingDate: stored,
    });
    // history rows share the field
    expect(
      checkCreateBody(plantDataModel.entityTypes.get('MeterReadingHistory')!, { ReadingDate: sent }, options),
    ).toEqual({ ReadingDate: stored });
  });

  it('an offset-less value outside the range in UTC is a 400', () => {
    const error = errorOf(() =>
      checkCreateBody(
        MeterReading,
        { MeterID: 'M', ReadingDate: '0001-01-01T09:00:00' },
        { ...newYork, timeZone: 'Asia/Tokyo' },
      ),
    );
    expect(error.message).toMatch(/\(in UTC it is outside/);
  });

  it('is refused for a field not listed, and for ReadingDate when the option does not list it', () => {
    expect(
      errorOf(() => checkCreateBody(MeterReading, { MeterID: 'M', ReadingDate: '2024-05-01T08:30:00' })).message,
    ).toMatch(/\(the time zone offset is missing: add Z or ±hh:mm\)$/);
    const error = errorOf(() =>
      checkCreateBody(PurchaseOrder, { VendorID: 'V', OrderDate: '2024-05-01T08:30:00' }, newYork),
    );
    expect(error.target).toBe('OrderDate');
  });

  it('names the zone in the expectation when offset-less values are allowed', () => {
    expect(
      errorOf(() => checkCreateBody(MeterReading, { MeterID: 'M', ReadingDate: 'yesterday' }, newYork)).message,
    ).toBe(
      'ReadingDate must be a date and time such as 2024-05-01T08:30:00 (read in the time zone America/New_York), ' +
        '2024-05-01T08:30:00Z or 2024-05-01T08:30:00+02:00 (Edm.DateTimeOffset); received "yesterday"',
    );
  });

  const zones = [
    'America/New_York',
    'Europe/Berlin',
    'Europe/London',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'America/Sao_Paulo',
    'Pacific/Chatham',
    'America/St_Johns',
    'Pacific/Apia',
  ];
  /** `YYYY-MM-DDTHH:MM:SS` of an instant's wall clock in a zone, through a different Intl path (sv-SE's format). */
  const wallClock = (instant: number, timeZone: string): string =>
    new Date(instant).toLocaleString('sv-SE', { timeZone, hourCycle: 'h23' }).replace(' ', 'T');

  it('property: the wall-clock time of any instant reads back as an instant with that wall-clock time, the earliest', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.integer({ min: Date.UTC(1900, 0, 1) / 1000, max: Date.UTC(2100, 0, 1) / 1000 }),
        (timeZone, seconds) => {
          const instant = seconds * 1000;
          const wall = wallClock(instant, timeZone);
          const row = checkCreateBody(
            MeterReading,
            { MeterID: 'M', ReadingDate: wall },
            {
              timeZone,
              offsetlessInstants: ['ReadingDate'],
            },
          );
          const read = Date.parse(row.ReadingDate as string);
          expect(wallClock(read, timeZone)).toBe(wall);
          expect(read).toBeLessThanOrEqual(instant);
          expect(instant - read).toBeLessThanOrEqual(2 * 3_600_000);
        },
      ),
      { numRuns: 500 },
    );
  });
});

// ── updates ─────────────────────────────────────────────────────────────────────────────────────

describe('update bodies', () => {
  it('collection path: the key travels in the body and is not a change', () => {
    expect(checkUpdateBody(PurchaseOrder, { PONumber: 'PO-1001', Status: 'Approved' }, {})).toEqual({
      key: { PONumber: 'PO-1001' },
      changes: { Status: 'Approved' },
    });
  });

  it('composite keys need every part, returned in key order', () => {
    expect(checkUpdateBody(POLineItem, { QuantityOrdered: '3.50', LineNumber: 2, PONumber: 'PO-1001' }, {})).toEqual({
      key: { PONumber: 'PO-1001', LineNumber: 2 },
      changes: { QuantityOrdered: '3.5' },
    });
    const error = errorOf(() => checkUpdateBody(POLineItem, { PONumber: 'PO-1001', QuantityOrdered: 3 }, {}));
    expect([error.status, error.code, error.target, error.message]).toEqual([
      400,
      'InvalidBody',
      'LineNumber',
      'LineNumber is required in the body to identify the POLineItem to update (its key: PONumber, LineNumber); it is missing from the body',
    ]);
    expect(problems(errorOf(() => checkUpdateBody(POLineItem, { Status: 'Open' }, {}))).map((p) => p.target)).toEqual([
      'PONumber',
      'LineNumber',
    ]);
  });

  it('a key with a wrong value is reported once (not also as missing)', () => {
    const error = errorOf(() => checkUpdateBody(POLineItem, { PONumber: 'PO-1', LineNumber: '2' }, {}));
    expect(problems(error).map((p) => p.target)).toEqual(['LineNumber']);
  });

  it('canonical path: the key may be absent from the body, or equal', () => {
    const fromPath = { PONumber: 'PO-1001', LineNumber: 2 };
    expect(checkUpdateBody(POLineItem, { Status: 'Received' }, { fromPath })).toEqual({
      key: fromPath,
      changes: { Status: 'Received' },
    });
    expect(
      checkUpdateBody(POLineItem, { PONumber: 'PO-1001', LineNumber: 2, Status: 'Received' }, { fromPath }),
    ).toEqual({
      key: fromPath,
      changes: { Status: 'Received' },
    });
  });

  it('canonical path: a different key in the body is a 400', () => {
    const error = errorOf(() =>
      checkUpdateBody(
        POLineItem,
        { PONumber: 'PO-1002', LineNumber: 3 },
        { fromPath: { PONumber: 'PO-1001', LineNumber: 2 } },
      ),
    );
    expect(problems(error)).toEqual([
      {
        code: 'InvalidBody',
        target: 'PONumber',
        message:
          "PONumber in the body ('PO-1002') differs from the key in the address ('PO-1001'); a key cannot be changed",
      },
      {
        code: 'InvalidBody',
        target: 'LineNumber',
        message: 'LineNumber in the body (3) differs from the key in the address (2); a key cannot be changed',
      },
    ]);
  });

  it('keys compare as normalized values (a GUID in any case)', () => {
    const fromPath = { AttachmentID: '0f8fad5b-d9cb-469f-a165-70867728950e' };
    expect(
      checkUpdateBody(
        POAttachment,
        { AttachmentID: '0F8FAD5B-D9CB-469F-A165-70867728950E', DocumentType: 'Quote' },
        { fromPath },
      ),
    ).toEqual({ key: fromPath, changes: { DocumentType: 'Quote' } });
    expect(
      checkUpdateBody(
        POAttachment,
        { DocumentType: 'Quote' },
        { fromPath: { AttachmentID: '0F8FAD5B-D9CB-469F-A165-70867728950E' } },
      ).key,
    ).toEqual(fromPath);
  });

  it('an immutable field is a 400 on update, unless it is the key that identifies the entity', () => {
    const attachment = { AttachmentID: '0f8fad5b-d9cb-469f-a165-70867728950e' };
    const error = errorOf(() => checkUpdateBody(POAttachment, { ...attachment, PONumber: 'PO-2' }, {}));
    expect([error.status, error.code, error.target, error.message]).toEqual([
      400,
      'InvalidBody',
      'PONumber',
      'PONumber can only be set when a POAttachment is created; received "PO-2"',
    ]);
    expect(errorOf(() => checkUpdateBody(POAttachment, { PONumber: 'PO-2' }, { fromPath: attachment })).target).toBe(
      'PONumber',
    );
    // PurchaseOrders.PONumber, PurchaseRequests.PRNumber, BlanketPOs.BlanketPONumber are immutable keys
    expect(checkUpdateBody(PurchaseOrder, { PONumber: 'PO-1', Notes: 'n' }, {}).key).toEqual({ PONumber: 'PO-1' });
    expect(checkUpdateBody(PurchaseRequest, { PRNumber: 'PR-1' }, { fromPath: { PRNumber: 'PR-1' } }).changes).toEqual(
      {},
    );
    expect(checkUpdateBody(BlanketPO, { BlanketPONumber: 'B-1', EndDate: '2025-01-01' }, {}).changes).toEqual({
      EndDate: '2025-01-01',
    });
  });

  it('an update does not require the fields a create requires', () => {
    expect(checkUpdateBody(PRLineItem, { PRNumber: 'PR-1', LineNumber: 1 }, {})).toEqual({
      key: { PRNumber: 'PR-1', LineNumber: 1 },
      changes: {},
    });
  });

  it('returns plain objects', () => {
    const { key, changes } = checkUpdateBody(PurchaseOrder, { PONumber: 'PO-1', Status: 'Issued' }, {});
    expect(isPlainDataObject(key)).toBe(true);
    expect(isPlainDataObject(changes)).toBe(true);
  });
});

// ── several problems ────────────────────────────────────────────────────────────────────────────

describe('several problems in one body', () => {
  it('are one error: the first, with the others in details, in body order then missing fields', () => {
    const error = errorOf(() =>
      checkCreateBody(PRLineItem, {
        PRNumber: 'PR-1',
        Quantity: -1,
        Statuss: 'Open',
        ExtendedCost: 5,
        RequiredDate: '2024-02-30',
      }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('InvalidBody');
    expect(error.target).toBe('Quantity');
    expect(problems(error).map((p) => [p.code, p.target])).toEqual([
      ['InvalidBody', 'Quantity'],
      ['UnknownProperty', 'Statuss'],
      ['InvalidBody', 'ExtendedCost'],
      ['InvalidBody', 'RequiredDate'],
      ['InvalidBody', 'Description'],
      ['InvalidBody', 'UnitOfMeasure'],
    ]);
  });

  it('lists at most 50 and counts the rest', () => {
    const body = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`Unknown${i}`, i]));
    const error = errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', ...body }));
    expect(error.details).toHaveLength(50);
    expect(error.details.at(-1)).toEqual({
      code: 'InvalidBody',
      message: '30 more problems in the body are not listed',
    });
  });
});

// ── messages ────────────────────────────────────────────────────────────────────────────────────

describe('messages', () => {
  it('cut received strings at 40 characters and say how long they were', () => {
    const error = errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', Status: 'x'.repeat(5000) }));
    expect(problems(error)[0]!.message).toBe(
      `Status must be one of Draft, PendingApproval, Approved, Issued, PartiallyReceived, Received, Closed, Canceled; received "${'x'.repeat(40)}"… (5000 characters)`,
    );
  });

  it('escape control characters and lone surrogates in received values', () => {
    expect(
      errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', OrderDate: '\u0000\uD800\n' })).message,
    ).toMatch(/received "\\u0000\\ud800\\n"$/);
  });

  it('never cut a surrogate pair in half', () => {
    const error = errorOf(() => checkCreateBody(PurchaseOrder, { VendorID: 'V', Status: 'x' + '🚀'.repeat(60) }));
    expect(error.message).toContain(`received "x${'🚀'.repeat(39)}"… (61 characters)`);
  });
});

// ── business rules ──────────────────────────────────────────────────────────────────────────────

describe('business rules of one body', () => {
  const cases: [set: string, row: Row, target: string | undefined, message?: string][] = [
    ['POAttachments', { FileName: 'quote.pdf' }, undefined],
    ['POAttachments', { FileName: 'my quote (v2).final.PDF' }, undefined],
    [
      'POAttachments',
      { FileName: 'docs/quote.pdf' },
      'FileName',
      'FileName must be a file name without path separators (/ or \\); received "docs/quote.pdf"',
    ],
    ['POAttachments', { FileName: 'C:\\temp\\quote.pdf' }, 'FileName'],
    ['POAttachments', { FileName: '../../etc/passwd' }, 'FileName'],
    ['POAttachments', { Description: 'no file name: a PATCH' }, undefined],
    ['BlanketPOs', { StartDate: '2024-01-01', EndDate: '2024-12-31' }, undefined],
    ['BlanketPOs', { StartDate: '2024-01-01', EndDate: '2024-01-01' }, undefined],
    [
      'BlanketPOs',
      { StartDate: '2024-01-02', EndDate: '2024-01-01' },
      'EndDate',
      'EndDate must be on or after StartDate (2024-01-02); received 2024-01-01',
    ],
    ['BlanketPOs', { EndDate: '2020-01-01' }, undefined],
    ['BlanketPOs', { StartDate: '2024-01-01', EndDate: null }, undefined],
    ['AddComment', { Comment: 'Replaced the seal', Username: 'jsmith' }, undefined],
    ['AddComment', { Comment: '   ', Username: 'jsmith' }, 'Comment', 'Comment must not be blank; received "   "'],
    ['AddComment', { Comment: 'ok', Username: '\t\n\u00a0' }, 'Username'],
    ['AddComment', { Comment: '' }, 'Comment'],
    ['PurchaseOrders', { Notes: '' }, undefined],
    ['NoSuchSet', { FileName: 'a/b' }, undefined],
  ];
  /** The rules the plant model declares for a set's entity type or for an action, by name. */
  const checkBusinessRules = (name: string, row: Row): void =>
    checkRules(
      plantDataModel.sets.get(name)?.entityType.rules ?? plantDataModel.actions.find((a) => a.name === name)?.rules,
      row,
    );
  it.each(cases)('%s %j', (set, row, target, message) => {
    if (target === undefined) {
      expect(() => checkBusinessRules(set, row)).not.toThrow();
      return;
    }
    const error = errorOf(() => checkBusinessRules(set, row));
    expect([error.status, error.code, error.target]).toEqual([400, 'InvalidBody', target]);
    if (message !== undefined) expect(error.message).toBe(message);
  });

  it('reports every broken rule of a body', () => {
    const error = errorOf(() => checkBusinessRules('AddComment', { Comment: ' ', Username: '' }));
    expect(problems(error).map((p) => p.target)).toEqual(['Comment', 'Username']);
  });

  it('reads only own fields of the row', () => {
    expect(() => checkBusinessRules('POAttachments', Object.create({ FileName: 'a/b' }) as Row)).not.toThrow();
  });

  it('work on rows from checkCreateBody', () => {
    const row = checkCreateBody(BlanketPO, { ...validCreate.BlanketPOs, EndDate: '2023-12-31' });
    expect(errorOf(() => checkBusinessRules('BlanketPOs', row)).target).toBe('EndDate');
  });
});

// ── actions ─────────────────────────────────────────────────────────────────────────────────────

describe('action bodies', () => {
  const labor = { Craft: 'MECH', Hours: 1.5, PeopleID: 'P-7', StartDate: '2024-05-01T08:00:00+02:00' };

  it('AddComment: both parameters required and not blank', () => {
    expect(checkActionBody(AddComment, { Comment: 'Replaced the seal', Username: 'jsmith' })).toEqual({
      Comment: 'Replaced the seal',
      Username: 'jsmith',
    });
    const cases: [Row, [string, string][]][] = [
      [
        {},
        [
          ['Comment', 'Comment is required by AddComment; it is missing from the body'],
          ['Username', 'Username is required by AddComment; it is missing from the body'],
        ],
      ],
      [{ Comment: 'c' }, [['Username', 'Username is required by AddComment; it is missing from the body']]],
      [{ Comment: null, Username: 'u' }, [['Comment', 'Comment cannot be null']]],
      [{ Comment: '', Username: 'u' }, [['Comment', 'Comment must not be blank; received ""']]],
      [{ Comment: 'c', Username: ' ' }, [['Username', 'Username must not be blank; received " "']]],
      [{ Comment: 7, Username: 'u' }, [['Comment', 'Comment must be a JSON string (Edm.String); received 7']]],
      [
        { Comment: 'c', Username: 'u'.repeat(41) },
        [['Username', `Username must be at most 40 characters long; received 41 characters: "${'u'.repeat(40)}"…`]],
      ],
      [
        { Comment: 'c', Username: 'u', Coment: 'x' },
        [['Coment', "AddComment has no parameter 'Coment'; did you mean 'Comment'?"]],
      ],
      [
        { Comment: ' ', Usernam: 'u' },
        [
          ['Usernam', "AddComment has no parameter 'Usernam'; did you mean 'Username'?"],
          ['Username', 'Username is required by AddComment; it is missing from the body'],
          ['Comment', 'Comment must not be blank; received " "'],
        ],
      ],
    ];
    for (const [body, expected] of cases) {
      const error = errorOf(() => checkActionBody(AddComment, body));
      expect(error.status).toBe(400);
      expect(problems(error).map((p) => [p.target, p.message])).toEqual(expected);
    }
  });

  it('RemoveActualLabor: normalized parameters, OTHours optional', () => {
    expect(checkActionBody(RemoveActualLabor, labor)).toEqual({
      Craft: 'MECH',
      Hours: '1.5',
      PeopleID: 'P-7',
      StartDate: '2024-05-01T06:00:00.000Z',
    });
    expect(checkActionBody(RemoveActualLabor, { ...labor, Hours: '1.50', OTHours: '0.00' })).toMatchObject({
      Hours: '1.5',
      OTHours: '0',
    });
    expect(checkActionBody(RemoveActualLabor, { ...labor, OTHours: null }).OTHours).toBeNull();
  });

  it.each([
    ['Craft', undefined, 'Craft is required by RemoveActualLabor; it is missing from the body'],
    ['Hours', undefined, 'Hours is required by RemoveActualLabor; it is missing from the body'],
    ['PeopleID', undefined, 'PeopleID is required by RemoveActualLabor; it is missing from the body'],
    ['StartDate', undefined, 'StartDate is required by RemoveActualLabor; it is missing from the body'],
    ['Hours', -1, 'Hours must be at least 0; received -1'],
    ['OTHours', '-0.5', 'OTHours must be at least 0; received -0.5'],
    ['Hours', '1.555', /^Hours must have at most 2 digits after the decimal point/],
    ['Hours', null, 'Hours cannot be null'],
    ['StartDate', '2024-05-01T08:00:00', /\(the time zone offset is missing: add Z or ±hh:mm\)$/],
    ['Craft', 'X'.repeat(21), /^Craft must be at most 20 characters long/],
  ] as const)('RemoveActualLabor: %s = %j is a 400', (name, value, message) => {
    const body: Row = { ...labor };
    if (value === undefined) delete body[name];
    else body[name] = value;
    const error = errorOf(() => checkActionBody(RemoveActualLabor, body));
    expect([error.status, error.target]).toEqual([400, name]);
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });
});

// ── properties ──────────────────────────────────────────────────────────────────────────────────

const entityTypes = [...plantDataModel.entityTypes.values()];
const actions = plantDataModel.actions;
const options = fc.constantFrom<BodyOptions>({}, newYork, { maxBinaryBytes: 3 });

function onlyClientErrors(run: () => unknown): void {
  try {
    expect(typeof run()).toBe('object');
  } catch (error) {
    if (!(error instanceof ODataError)) throw error;
    expect([400, 413]).toContain(error.status);
  }
}

describe('properties', () => {
  it('arbitrary JSON values as bodies never throw anything but a 400 or 413 ODataError', () => {
    fc.assert(
      fc.property(fc.constantFrom(...entityTypes), fc.jsonValue(), options, (type, body, opts) => {
        onlyClientErrors(() => checkCreateBody(type, body, opts));
        onlyClientErrors(() => checkUpdateBody(type, body, {}, opts));
        onlyClientErrors(() => checkUpdateBody(type, body, { fromPath: { [type.key[0]!.name]: 'K' } }, opts));
      }),
      { numRuns: 500 },
    );
  });

  it('objects with the right field names and arbitrary values never throw anything else either', () => {
    const bodies = (names: string[]) =>
      fc.dictionary(
        fc.constantFrom(...names, '__proto__', 'constructor', 'toString', '@odata.type', `${names[0]}@odata.type`),
        fc.oneof(
          fc.jsonValue(),
          fc.constantFrom(
            '1.5',
            '2024-05-01',
            '2024-05-01T08:30:00',
            '2024-05-01T08:30:00Z',
            'AQID',
            '\u0000',
            '\uD800',
          ),
          fc.string({ unit: 'binary' }),
          fc.double(),
          fc.integer(),
        ),
        { maxKeys: 12 },
      );
    fc.assert(
      fc.property(
        fc
          .constantFrom(...entityTypes)
          .chain((type) => fc.tuple(fc.constant(type), bodies([...type.properties.keys()]))),
        options,
        ([type, body], opts) => {
          onlyClientErrors(() => checkCreateBody(type, body, opts));
          onlyClientErrors(() => checkUpdateBody(type, body, {}, opts));
          onlyClientErrors(() => checkUpdateBody(type, body, { fromPath: { [type.key[0]!.name]: 1 } }, opts));
        },
      ),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(
        fc
          .constantFrom(...actions)
          .chain((action) => fc.tuple(fc.constant(action), bodies(Object.keys(action.parameters)))),
        options,
        ([action, body], opts) => onlyClientErrors(() => checkActionBody(action, body, opts)),
      ),
      { numRuns: 300 },
    );
  });

  it('anything at all (not only JSON) is a 400, never a TypeError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...entityTypes),
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true }),
        (type, body) => {
          onlyClientErrors(() => checkCreateBody(type, body));
          onlyClientErrors(() => checkUpdateBody(type, body, {}));
        },
      ),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(fc.anything(), (body) => onlyClientErrors(() => checkActionBody(RemoveActualLabor, body))),
      { numRuns: 200 },
    );
  });

  it('valid generated bodies are accepted, and each value is normalized as expected', () => {
    const writableTypes = writableSets.map(typeOfSet);
    fc.assert(
      fc.property(
        fc.constantFrom(...writableTypes).chain((type) => fc.tuple(fc.constant(type), validBody(type, 'create'))),
        ([type, [body, expected]]) => {
          expect(checkCreateBody(type, body, newYork)).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...writableTypes).chain((type) => fc.tuple(fc.constant(type), validBody(type, 'update'))),
        ([type, [body, expected]]) => {
          const keyNames = new Set(type.key.map((p) => p.name));
          const key = Object.fromEntries(Object.entries(expected).filter(([name]) => keyNames.has(name)));
          const changes = Object.fromEntries(Object.entries(expected).filter(([name]) => !keyNames.has(name)));
          expect(checkUpdateBody(type, body, {}, newYork)).toEqual({ key, changes });
          const withoutKey = Object.fromEntries(Object.entries(body).filter(([name]) => !keyNames.has(name)));
          expect(checkUpdateBody(type, withoutKey, { fromPath: key }, newYork)).toEqual({ key, changes });
        },
      ),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(
        fc
          .constantFrom(...actions)
          .chain((action) =>
            fc.tuple(
              fc.constant(action),
              validFields(Object.entries(action.parameters), (p) => p.nullable === false),
            ),
          )
          // AddComment's business rule: not blank
          .filter(([, [body]]) => Object.values(body).every((v) => typeof v !== 'string' || v.trim() !== '')),
        ([action, [body, expected]]) => {
          expect(checkActionBody(action, body)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});

// ── generators of valid values ─────────────────────────────────────────────────────────────────

type Pair = [sent: unknown, normalized: unknown];
const DAY = 86_400_000;
const FIRST_INSTANT = new Date('0001-01-01T00:00:00.000Z').getTime();
const LAST_INSTANT = new Date('9999-12-31T23:59:59.999Z').getTime();

/** Decimal text with exactly `scale` fraction digits of the integer `units` (units × 10^-scale), plain. */
function scaled(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** The canonical text: no trailing fraction zeros, no point without a fraction, no -0. */
function canonical(text: string): string {
  const trimmed = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  return trimmed === '-0' ? '0' : trimmed;
}

function valueArbitrary(name: string, property: PropertyDefinition): fc.Arbitrary<Pair> {
  const same = (arbitrary: fc.Arbitrary<unknown>): fc.Arbitrary<Pair> => arbitrary.map((v) => [v, v]);
  switch (property.type) {
    case 'Edm.String':
      if (property.allowedValues !== undefined) return same(fc.constantFrom(...property.allowedValues));
      return same(
        fc
          .string({ unit: 'binary', maxLength: Math.min(property.maxLength ?? 60, 60) })
          .filter((s) => !s.includes('\u0000')),
      );
    case 'Edm.Boolean':
      return same(fc.boolean());
    case 'Edm.Int32':
      return same(fc.integer({ min: property.minimum ?? -2147483648, max: property.maximum ?? 2147483647 }));
    case 'Edm.Decimal': {
      const scale = property.scale ?? 0;
      const limit = 10n ** BigInt(property.precision ?? 18) - 1n;
      const min =
        property.minimum === undefined
          ? -limit
          : BigInt(property.minimum) * 10n ** BigInt(scale) + (property.exclusiveMinimum ? 1n : 0n);
      return fc
        .tuple(fc.bigInt({ min, max: limit }), fc.nat(3), fc.constantFrom('text', 'number', 'exponent'))
        .map(([units, zeros, form]): Pair => {
          const text = scaled(units, scale);
          const expected = canonical(text);
          if (form === 'number' && Number(expected).toString() === expected) return [Number(expected), expected];
          if (form === 'exponent') return [`${units}e-${scale}`, expected];
          return [text + (scale > 0 ? '0'.repeat(zeros) : ''), expected];
        });
    }
    case 'Edm.Date':
      return fc
        .integer({ min: Math.ceil(FIRST_INSTANT / DAY), max: Math.floor(LAST_INSTANT / DAY) })
        .map((day) => new Date(day * DAY).toISOString().slice(0, 10))
        .map((d) => [d, d]);
    case 'Edm.DateTimeOffset':
      return fc
        .tuple(
          fc.integer({ min: FIRST_INSTANT + DAY, max: LAST_INSTANT - DAY }),
          fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
          fc.constantFrom(0, 3, 7),
          fc.boolean(),
        )
        .map(([ms, offset, fractionDigits, zulu]): Pair => {
          const instant = fractionDigits === 0 ? ms - (((ms % 1000) + 1000) % 1000) : ms;
          const minutes = zulu ? 0 : offset;
          const local = new Date(instant + minutes * 60_000).toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
          const fraction =
            fractionDigits === 0 ? '' : fractionDigits === 3 ? local.slice(19, 23) : `${local.slice(19, 23)}4567`;
          const sign = minutes < 0 ? '-' : '+';
          const abs = Math.abs(minutes);
          const zone = zulu
            ? 'Z'
            : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
          return [`${local.slice(0, 19)}${fraction}${zone}`, new Date(instant).toISOString()];
        });
    case 'Edm.Guid':
      return fc
        .tuple(fc.uuid(), fc.boolean())
        .map(([uuid, upper]) => [upper ? uuid.toUpperCase() : uuid, uuid.toLowerCase()]);
    case 'Edm.Binary':
      return fc
        .tuple(fc.uint8Array({ maxLength: 48 }), fc.constantFrom<BufferEncoding>('base64', 'base64url'), fc.boolean())
        .map(([bytes, encoding, pad]): Pair => {
          let text = Buffer.from(bytes).toString(encoding);
          if (!pad) text = text.replace(/=+$/, '');
          else if (encoding === 'base64url') text = text.padEnd(Math.ceil(text.length / 4) * 4, '=');
          return [text, new Uint8Array(bytes)];
        });
    default:
      throw new Error(`no generator for ${name}: ${property.type}`);
  }
}

/** A body of the given fields: those `required` always, the others sometimes (and sometimes null if nullable). */
function validFields(
  fields: [string, PropertyDefinition][],
  required: (property: PropertyDefinition, name: string) => boolean,
): fc.Arbitrary<[Row, Row]> {
  const entries = fields.map(([name, property]) => {
    const value = valueArbitrary(name, property);
    const nullable = property.nullable !== false;
    const arbitrary: fc.Arbitrary<Pair | undefined> = required(property, name)
      ? value
      : fc.oneof(fc.constant(undefined), value, ...(nullable ? [fc.constant<Pair>([null, null])] : []));
    return arbitrary.map((pair) => [name, pair] as const);
  });
  return fc.tuple(...entries).map((pairs) => {
    const body: Row = {};
    const expected: Row = {};
    for (const [name, pair] of pairs) {
      if (pair === undefined) continue;
      body[name] = pair[0];
      expected[name] = pair[1];
    }
    return [body, expected];
  });
}

function validBody(type: EntityType, mode: 'create' | 'update'): fc.Arbitrary<[Row, Row]> {
  const fields = [...type.properties.values()]
    .filter(
      (p) => (mode === 'update' && p.isKey) || (p.computed !== true && (mode === 'create' || p.immutable !== true)),
    )
    .map((p): [string, PropertyDefinition] => [p.name, p]);
  return validFields(fields, (p) =>
    mode === 'update'
      ? (p as { isKey?: boolean }).isKey === true
      : p.nullable === false && p.computed !== true && p.default === undefined,
  );
}
