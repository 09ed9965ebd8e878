// Every property of every entity set of the service can be selected, filtered and ordered as its
// type allows, and the interface's 400 conditions (misspelled field, badly quoted string, invalid
// syntax) give the right code, option and position.
import { describe, expect, it } from 'vitest';
import {
  isODataError,
  parseQuery,
  readableProperties,
  validateQuery,
  type EntityType,
  type Property,
} from '../../src/index.js';
import { entitySetNames, plantDataModel } from '../../src/server/model.js';

const sets = entitySetNames.map((name) => [name, plantDataModel.entitySets.get(name)!] as const);

/** A literal of the property's type, for a comparison that must bind. */
function sampleLiteral(property: Property): string {
  switch (property.type) {
    case 'Edm.String':
      return "'x'";
    case 'Edm.Boolean':
      return 'true';
    case 'Edm.Int32':
    case 'Edm.Int64':
      return '1';
    case 'Edm.Decimal':
    case 'Edm.Double':
      return '1.5';
    case 'Edm.Date':
      return '2024-05-01';
    case 'Edm.DateTimeOffset':
      return '2024-05-01T08:30:00Z';
    case 'Edm.TimeOfDay':
      return '08:30:00';
    case 'Edm.Duration':
      return "duration'PT1H'";
    case 'Edm.Guid':
      return '01234567-89ab-cdef-0123-456789abcdef';
    case 'Edm.Binary':
      return "binary'Zm9v'";
  }
}

function bind(type: EntityType, query: string) {
  return validateQuery(parseQuery(query), type);
}

function errorOf(type: EntityType, query: string) {
  try {
    bind(type, query);
  } catch (error) {
    if (isODataError(error))
      return { code: error.code, target: error.target, position: error.position, message: error.message };
    throw error;
  }
  throw new Error(`${query} bound without error`);
}

describe.each(sets)('%s', (setName, type) => {
  const readable = readableProperties(type);

  it('has the interface name and readable properties', () => {
    expect(entitySetNames).toContain(setName);
    expect(readable.length).toBeGreaterThan(0);
  });

  it.each(readable.map((p) => [p.name, p] as const))('%s can be selected, filtered and ordered', (name, property) => {
    expect(bind(type, `$select=${name}`).select.map((p) => p.name)).toEqual([name]);
    const filter = bind(type, `$filter=${encodeURIComponent(`${name} eq ${sampleLiteral(property)}`)}`).filter;
    expect(filter).toMatchObject({ kind: 'comparison', left: { kind: 'property', property: { name } } });
    if (property.nullable) expect(bind(type, `$filter=${name} eq null`).filter?.type).toBe('Edm.Boolean');
    if (property.type !== 'Edm.Binary') {
      expect(bind(type, `$filter=${encodeURIComponent(`${name} ge ${sampleLiteral(property)}`)}`).filter?.kind).toBe(
        'comparison',
      );
      expect(bind(type, `$orderby=${name} desc`).orderBy[0]).toMatchObject({
        direction: 'desc',
        expr: { property: { name } },
      });
    }
  });

  it('selects all readable properties together and with *', () => {
    expect(bind(type, `$select=${readable.map((p) => p.name).join(',')}`).select).toEqual(readable);
    expect(bind(type, '$select=*').select).toEqual(readable);
  });

  it('rejects a misspelled field in $filter, $select and $orderby with its position', () => {
    const name = readable[readable.length - 1]!.name;
    const misspelled = `${name.slice(0, -1)}${name.endsWith('x') ? 'y' : 'x'}`;
    expect(errorOf(type, `$filter=${misspelled} eq null`)).toMatchObject({
      code: 'UnknownProperty',
      target: '$filter',
      position: 0,
    });
    expect(errorOf(type, `$select=${readable[0]!.name},${misspelled}`)).toMatchObject({
      code: 'UnknownProperty',
      target: '$select',
      position: readable[0]!.name.length + 1,
    });
    expect(errorOf(type, `$orderby=${misspelled} desc`)).toMatchObject({
      code: 'UnknownProperty',
      target: '$orderby',
      position: 0,
    });
  });
});

describe("the interface's Errors table (400)", () => {
  const Accounts = plantDataModel.entitySets.get('Accounts')!;
  const WorkOrders = plantDataModel.entitySets.get('WorkOrders')!;

  it.each([
    // a field name is misspelled
    ["$filter=Acount eq '5100-200'", 'UnknownProperty', '$filter', 0, "did you mean 'Account'?"],
    ['$filter=IsActiv eq true', 'UnknownProperty', '$filter', 0, "did you mean 'IsActive'?"],
    ['$select=Account,Descripton', 'UnknownProperty', '$select', 8, "did you mean 'Description'?"],
    ['$orderby=Descripion', 'UnknownProperty', '$orderby', 0, "did you mean 'Description'?"],
    // a string value is not quoted correctly
    ["$filter=Account eq '5100-200", 'InvalidSyntax', '$filter', 11, 'Unterminated string'],
    ['$filter=Account eq "5100-200"', 'InvalidSyntax', '$filter', 11, 'single quotes'],
    [
      '$filter=Description eq pump',
      'UnknownProperty',
      '$filter',
      15,
      "a string value is written in single quotes: 'pump'",
    ],
    ["$filter=Account eq 'O'Neil'", 'InvalidSyntax', '$filter', 14, "'O''Neil'"],
    ["$filter=IsActive eq 'true'", 'TypeMismatch', '$filter', 9, 'Cannot compare Edm.Boolean with Edm.String'],
    // the query string is not valid OData syntax
    ['$filter=IsActive eq', 'InvalidSyntax', '$filter', 11, 'expected an operand'],
    ['$filter=IsActive = true', 'InvalidSyntax', '$filter', 9, "Unexpected '='"],
    ['$filter=(IsActive eq true', 'InvalidSyntax', '$filter', 17, "expected ')'"],
    ['$top=ten', 'InvalidTop', '$top', 0, 'non-negative integer'],
    ['$orderby=Account sideways', 'InvalidSyntax', '$orderby', 8, "'asc', 'desc'"],
  ])('%s → %s', (query, code, target, position, says) => {
    const error = errorOf(Accounts, query);
    expect([error.code, error.target, error.position]).toEqual([code, target, position]);
    expect(error.message).toContain(says);
  });

  it('binds the interface example and lambdas over work-order child collections', () => {
    expect(bind(Accounts, '$filter=IsActive eq true').filter).toMatchObject({ kind: 'comparison' });
    expect(
      bind(WorkOrders, "$filter=Comments/any(c: c/Username eq 'jdoe') and ActualLabor/$count gt 0").filter,
    ).toMatchObject({
      kind: 'logical',
      left: { kind: 'lambda', navigation: { name: 'Comments' } },
      right: { left: { kind: 'count', navigation: { name: 'ActualLabor' } } },
    });
  });

  it('refuses write-only fields', () => {
    const POAttachments = plantDataModel.entitySets.get('POAttachments')!;
    expect(errorOf(POAttachments, '$select=ContentBase64')).toMatchObject({ code: 'NotQueryable', target: '$select' });
    expect(errorOf(POAttachments, '$filter=ContentBase64 eq null')).toMatchObject({
      code: 'NotQueryable',
      target: '$filter',
    });
  });
});
