// $metadata: the CSDL XML is well-formed (checked by a strict XML 1.0 parser) and, walked element by element, says
// what the model says; the CSDL JSON says the same.
import { SaxesParser } from 'saxes';
import { describe, expect, it } from 'vitest';
import { toCsdlJson, toCsdlXml, type CsdlJsonObject, type CsdlJsonValue } from '../../src/model/csdl.js';
import { applyTransformations } from '../../src/syntax/parser.js';
import {
  defineEntityType,
  defineModel,
  SchemaError,
  type EntityType,
  type Model,
  type PropertyDefinition,
} from '../../src/model/schema.js';
import { entitySetNames, plantDataModel } from '../../src/server/model.js';

const edmx = 'http://docs.oasis-open.org/odata/ns/edmx';
const edm = 'http://docs.oasis-open.org/odata/ns/edm';
const core = 'Org.OData.Core.V1';
const validation = 'Org.OData.Validation.V1';
const capabilities = 'Org.OData.Capabilities.V1';
const aggregation = 'Org.OData.Aggregation.V1';
/** What every entity set with searchable properties says of $apply: the transformations the parser reads, no rollup. */
const applySupported = {
  [`${aggregation}.ApplySupported`]: { Transformations: [...applyTransformations], Rollup: 'None' },
};
/** What a set without searchable properties says: the same, but search (which it answers with a 501, as $search). */
const applySupportedUnsearchable = {
  [`${aggregation}.ApplySupported`]: {
    Transformations: applyTransformations.filter((t) => t !== 'search'),
    Rollup: 'None',
  },
};

// ---------------------------------------------------------------------------------------------------------------
// A small element tree from a strict, namespace-aware parser: any well-formedness error throws.

interface XmlNode {
  readonly uri: string;
  readonly local: string;
  /** Unprefixed attributes by name. */
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: XmlNode[];
  /** Text content (a PropertyPath, a String), trimmed; empty for elements with children. */
  text: string;
}

function parseXml(text: string): XmlNode {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlNode[] = [];
  let root: XmlNode | undefined;
  parser.on('error', (error) => {
    throw error;
  });
  parser.on('opentag', (tag) => {
    const attributes = new Map(
      Object.values(tag.attributes)
        .filter((attribute) => attribute.uri === '')
        .map((attribute) => [attribute.local, attribute.value] as const),
    );
    const node: XmlNode = { uri: tag.uri, local: tag.local, attributes, children: [], text: '' };
    const parent = stack.at(-1);
    if (parent === undefined) root = node;
    else parent.children.push(node);
    stack.push(node);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  parser.on('text', (text) => {
    if (text.trim() === '') return;
    // only a leaf element holds text (a PropertyPath's path, a String of a collection)
    const current = stack.at(-1);
    if (
      current === undefined ||
      current.children.length > 0 ||
      (current.local !== 'PropertyPath' && current.local !== 'String')
    )
      throw new Error(`Unexpected text ${JSON.stringify(text)}`);
    current.text += text;
  });
  parser.write(text).close();
  if (root === undefined) throw new Error('No root element');
  return root;
}

function children(node: XmlNode, local: string, uri = edm): XmlNode[] {
  return node.children.filter((child) => child.local === local && child.uri === uri);
}

function only(node: XmlNode, local: string, uri = edm): XmlNode {
  const found = children(node, local, uri);
  if (found.length !== 1) throw new Error(`${node.local} has ${found.length} ${local} elements`);
  return found[0]!;
}

function attribute(node: XmlNode, name: string): string {
  const value = node.attributes.get(name);
  if (value === undefined) throw new Error(`${node.local} has no ${name} attribute`);
  return value;
}

function named(nodes: readonly XmlNode[], name: string): XmlNode {
  const found = nodes.filter((node) => node.attributes.get('Name') === name);
  if (found.length !== 1) throw new Error(`${found.length} elements named ${name}`);
  return found[0]!;
}

function schemaOf(xml: string): XmlNode {
  const root = parseXml(xml);
  expect([root.uri, root.local, attribute(root, 'Version')]).toEqual([edmx, 'Edmx', '4.0']);
  return only(only(root, 'DataServices', edmx), 'Schema');
}

// ---------------------------------------------------------------------------------------------------------------
// One summary shape, read from the model (what $metadata should say), from the XML and from the JSON.

type Annotations = Record<string, unknown>;

interface ValueSummary {
  type: string;
  nullable: boolean;
  maxLength?: number;
  precision?: number;
  scale?: number | 'variable';
  annotations: Annotations;
}

interface Summary {
  namespace: string;
  container: string;
  types: Record<
    string,
    {
      key: string[];
      properties: Record<string, ValueSummary>;
      navigation: Record<string, { type: string; contained: boolean }>;
    }
  >;
  sets: Record<string, { type: string; bindings: Record<string, string>; restrictions: Annotations }>;
  actions: Record<
    string,
    { bound: boolean; binding: string; parameters: Record<string, ValueSummary>; returns: string }
  >;
}

/** What the model says, in $metadata's terms: the expectation both formats are held to. */
function expected(model: Model): Summary {
  const value = (definition: PropertyDefinition, nullable: boolean, isKey: boolean, isProperty: boolean) => {
    const annotations: Annotations = {};
    if (isProperty && definition.computed === true) annotations[`${core}.Computed`] = true;
    if (isProperty && definition.immutable === true && !isKey) annotations[`${core}.Immutable`] = true;
    if (isProperty && definition.writeOnly === true) annotations[`${core}.Permissions`] = 'Write';
    if (definition.description !== undefined) annotations[`${core}.Description`] = definition.description;
    if (definition.allowedValues !== undefined) annotations[`${validation}.AllowedValues`] = definition.allowedValues;
    if (definition.minimum !== undefined) annotations[`${validation}.Minimum`] = definition.minimum;
    if (definition.exclusiveMinimum === true) annotations[`${validation}.Minimum@${validation}.Exclusive`] = true;
    if (definition.maximum !== undefined) annotations[`${validation}.Maximum`] = definition.maximum;
    const summary: ValueSummary = { type: definition.type, nullable, annotations };
    if (definition.maxLength !== undefined) summary.maxLength = definition.maxLength;
    if (definition.type === 'Edm.Decimal') {
      if (definition.precision !== undefined) summary.precision = definition.precision;
      summary.scale = definition.scale ?? 'variable';
    }
    if (definition.type === 'Edm.DateTimeOffset') summary.precision = 3;
    return summary;
  };
  const setsOf = (type: EntityType) => [...model.entitySets].filter(([, setType]) => setType === type);
  // a navigation to the one set of its target type is bound to it; one through containment by its path
  const bindingsOf = (type: EntityType, prefix: string): [string, string][] =>
    [...type.navigation.values()].flatMap((nav): [string, string][] => {
      if (nav.contained === true) return bindingsOf(nav.target(), `${prefix}${nav.name}/`);
      const targets = setsOf(nav.target());
      return targets.length === 1 ? [[`${prefix}${nav.name}`, targets[0]![0]]] : [];
    });
  return {
    namespace: model.namespace,
    container: model.containerName,
    types: Object.fromEntries(
      [...model.entityTypes.values()].map((type) => [
        type.name,
        {
          key: type.key.map((property) => property.name),
          properties: Object.fromEntries(
            [...type.properties.values()].map((p) => [p.name, value(p, p.nullable, p.isKey, true)]),
          ),
          navigation: Object.fromEntries(
            [...type.navigation.values()].map((nav) => [
              nav.name,
              nav.collection
                ? { type: `Collection(${model.namespace}.${nav.target().name})`, contained: nav.contained === true }
                : {
                    type: `${model.namespace}.${nav.target().name}`,
                    contained: nav.contained === true,
                    // a single-valued navigation's foreign key is its referential constraint
                    constraints: { ...nav.foreignKey },
                  },
            ]),
          ),
        },
      ]),
    ),
    sets: Object.fromEntries(
      [...model.entitySets].map(([name, type]) => {
        const set = model.sets.get(name)!;
        const restrictions: Annotations = {};
        const required = [...type.properties.values()]
          .filter((p) => !p.nullable && p.computed !== true && p.default === undefined)
          .map((p) => p.name);
        if (!set.insertable) restrictions[`${capabilities}.InsertRestrictions`] = { Insertable: false };
        else if (required.length > 0)
          restrictions[`${capabilities}.InsertRestrictions`] = { RequiredProperties: required };
        if (!set.updatable) restrictions[`${capabilities}.UpdateRestrictions`] = { Updatable: false };
        if (!set.deletable) restrictions[`${capabilities}.DeleteRestrictions`] = { Deletable: false };
        const searchable = [...type.properties.values()].some((p) => p.searchable === true);
        if (!searchable) restrictions[`${capabilities}.SearchRestrictions`] = { Searchable: false };
        // the ETag's properties (If-Match)
        if (type.concurrency.length > 0)
          restrictions[`${core}.OptimisticConcurrency`] = type.concurrency.map((p) => p.name);
        // every set answers $apply (search where it answers $search)
        Object.assign(restrictions, searchable ? applySupported : applySupportedUnsearchable);
        return [
          name,
          {
            type: `${model.namespace}.${type.name}`,
            bindings: Object.fromEntries(bindingsOf(type, '')),
            restrictions,
          },
        ];
      }),
    ),
    actions: Object.fromEntries(
      model.actions.map((action) => [
        action.name,
        {
          bound: true,
          binding: `${model.namespace}.${model.entitySets.get(action.boundTo!)!.name}`,
          parameters: Object.fromEntries(
            Object.entries(action.parameters).map(([name, p]) => [name, value(p, p.nullable ?? true, false, false)]),
          ),
          returns: action.returnType,
        },
      ]),
    ),
  };
}

function xmlAnnotations(node: XmlNode, prefix = ''): Annotations {
  const annotations: Annotations = {};
  for (const annotation of children(node, 'Annotation')) {
    const term = `${prefix}${attribute(annotation, 'Term')}`;
    const { attributes } = annotation;
    if (attributes.has('Bool')) annotations[term] = attributes.get('Bool') === 'true';
    else if (attributes.has('String')) annotations[term] = attributes.get('String');
    else if (attributes.has('Decimal')) annotations[term] = Number(attributes.get('Decimal'));
    else if (attributes.has('EnumMember')) {
      const [enumType, member] = attribute(annotation, 'EnumMember').split('/');
      expect(enumType).toBe(`${core}.Permission`);
      annotations[term] = member;
    } else if (annotation.children.some((child) => child.local === 'Record')) {
      annotations[term] = Object.fromEntries(
        children(only(annotation, 'Record'), 'PropertyValue').map((value) => [
          attribute(value, 'Property'),
          value.attributes.has('Bool')
            ? attribute(value, 'Bool') === 'true'
            : value.attributes.has('EnumMember')
              ? attribute(value, 'EnumMember').split('/')[1]
              : [
                  ...children(only(value, 'Collection'), 'PropertyPath'),
                  ...children(only(value, 'Collection'), 'String'),
                ].map((item) => item.text.trim()),
        ]),
      );
    } else if (children(only(annotation, 'Collection'), 'PropertyPath').length > 0) {
      annotations[term] = children(only(annotation, 'Collection'), 'PropertyPath').map((path) => path.text.trim());
    } else {
      annotations[term] = children(only(annotation, 'Collection'), 'Record').map((record) => {
        const value = only(record, 'PropertyValue');
        expect(attribute(value, 'Property')).toBe('Value');
        return attribute(value, 'String');
      });
    }
    Object.assign(annotations, xmlAnnotations(annotation, `${term}@`));
  }
  return annotations;
}

function xmlValue(node: XmlNode): ValueSummary {
  const { attributes } = node;
  const summary: ValueSummary = {
    type: attribute(node, 'Type'),
    nullable: attributes.get('Nullable') !== 'false',
    annotations: xmlAnnotations(node),
  };
  expect(attributes.get('Nullable')).not.toBe('true');
  if (attributes.has('MaxLength')) summary.maxLength = Number(attributes.get('MaxLength'));
  if (attributes.has('Precision')) summary.precision = Number(attributes.get('Precision'));
  const scale = attributes.get('Scale');
  if (scale !== undefined) summary.scale = scale === 'variable' ? 'variable' : Number(scale);
  return summary;
}

function fromXml(xml: string): Summary {
  const schema = schemaOf(xml);
  const namespace = attribute(schema, 'Namespace');
  const container = only(schema, 'EntityContainer');
  return {
    namespace,
    container: attribute(container, 'Name'),
    types: Object.fromEntries(
      children(schema, 'EntityType').map((type) => [
        attribute(type, 'Name'),
        {
          key: children(only(type, 'Key'), 'PropertyRef').map((ref) => attribute(ref, 'Name')),
          properties: Object.fromEntries(
            children(type, 'Property').map((property) => [attribute(property, 'Name'), xmlValue(property)]),
          ),
          navigation: Object.fromEntries(
            children(type, 'NavigationProperty').map((nav) => {
              const constraints = children(nav, 'ReferentialConstraint');
              expect(nav.children.length).toBe(constraints.length);
              const contained = nav.attributes.get('ContainsTarget');
              expect(contained).not.toBe('false');
              const summary = { type: attribute(nav, 'Type'), contained: contained === 'true' };
              return [
                attribute(nav, 'Name'),
                constraints.length === 0
                  ? summary
                  : {
                      ...summary,
                      constraints: Object.fromEntries(
                        constraints.map((c) => [attribute(c, 'Property'), attribute(c, 'ReferencedProperty')]),
                      ),
                    },
              ];
            }),
          ),
        },
      ]),
    ),
    sets: Object.fromEntries(
      children(container, 'EntitySet').map((set) => [
        attribute(set, 'Name'),
        {
          type: attribute(set, 'EntityType'),
          bindings: Object.fromEntries(
            children(set, 'NavigationPropertyBinding').map((binding) => [
              attribute(binding, 'Path'),
              attribute(binding, 'Target'),
            ]),
          ),
          restrictions: xmlAnnotations(set),
        },
      ]),
    ),
    actions: Object.fromEntries(
      children(schema, 'Action').map((action) => {
        const [binding, ...parameters] = children(action, 'Parameter');
        expect(binding?.attributes.get('Nullable')).toBe('false');
        const returns = only(action, 'ReturnType');
        return [
          attribute(action, 'Name'),
          {
            bound: action.attributes.get('IsBound') === 'true',
            binding: attribute(binding!, 'Type'),
            parameters: Object.fromEntries(parameters.map((p) => [attribute(p, 'Name'), xmlValue(p)])),
            returns: attribute(returns, 'Type'),
          },
        ];
      }),
    ),
  };
}

function object(value: CsdlJsonValue | undefined): CsdlJsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
  return value;
}

function array(value: CsdlJsonValue | undefined): CsdlJsonValue[] {
  if (!Array.isArray(value)) throw new Error('not a JSON array');
  return value;
}

function jsonValue(member: CsdlJsonObject): ValueSummary {
  const annotations: Annotations = {};
  for (const [name, value] of Object.entries(member)) {
    if (!name.startsWith('@')) continue;
    annotations[name.slice(1)] = name.endsWith('AllowedValues')
      ? array(value).map((record) => object(record).Value)
      : value;
  }
  const summary: ValueSummary = {
    // An absent $Type means Edm.String, an absent $Nullable false, an absent $Scale variable.
    type: (member.$Type as string | undefined) ?? 'Edm.String',
    nullable: member.$Nullable === true,
    annotations,
  };
  expect(member.$Nullable).not.toBe(false);
  if (member.$MaxLength !== undefined) summary.maxLength = member.$MaxLength as number;
  if (member.$Precision !== undefined) summary.precision = member.$Precision as number;
  if (summary.type === 'Edm.Decimal') summary.scale = (member.$Scale as number | undefined) ?? 'variable';
  return summary;
}

function fromJson(document: CsdlJsonObject): Summary {
  const [namespace, containerName] = String(document.$EntityContainer).split(/\.(?=[^.]*$)/) as [string, string];
  const schema = object(document[namespace]);
  const members = Object.entries(schema).filter(([name]) => !name.startsWith('$') && !name.startsWith('@'));
  const ofKind = (kind: string) =>
    members.filter(([, value]) => (Array.isArray(value) ? object(value[0]) : object(value)).$Kind === kind);
  const container = object(schema[containerName]);
  expect(container.$Kind).toBe('EntityContainer');
  return {
    namespace,
    container: containerName,
    types: Object.fromEntries(
      ofKind('EntityType').map(([name, value]) => {
        const type = object(value);
        const entries = Object.entries(type).filter(([member]) => !member.startsWith('$') && !member.startsWith('@'));
        const isNavigation = (member: CsdlJsonValue) => object(member).$Kind === 'NavigationProperty';
        return [
          name,
          {
            key: array(type.$Key) as string[],
            properties: Object.fromEntries(
              entries
                .filter(([, member]) => !isNavigation(member))
                .map(([p, member]) => [p, jsonValue(object(member))]),
            ),
            navigation: Object.fromEntries(
              entries
                .filter(([, member]) => isNavigation(member))
                .map(([nav, member]) => {
                  const { $Collection, $Type, $ContainsTarget, $ReferentialConstraint } = object(member);
                  if ($Collection !== true) {
                    return [
                      nav,
                      {
                        type: String($Type),
                        contained: $ContainsTarget === true,
                        constraints: object($ReferentialConstraint ?? {}),
                      },
                    ];
                  }
                  return [nav, { type: `Collection(${String($Type)})`, contained: $ContainsTarget === true }];
                }),
            ),
          },
        ];
      }),
    ),
    sets: Object.fromEntries(
      Object.entries(container)
        .filter(([name]) => !name.startsWith('$'))
        .map(([name, value]) => {
          const set = object(value);
          expect(set.$Collection).toBe(true);
          const bindings = set.$NavigationPropertyBinding;
          return [
            name,
            {
              type: String(set.$Type),
              bindings: bindings === undefined ? {} : (object(bindings) as Record<string, string>),
              restrictions: Object.fromEntries(
                Object.entries(set)
                  .filter(([member]) => member.startsWith('@'))
                  .map(([member, restriction]) => [
                    member.slice(1),
                    // property paths ({"$PropertyPath": "X"}) read as their paths
                    Array.isArray(restriction)
                      ? restriction.map((path) => object(path).$PropertyPath)
                      : Object.fromEntries(
                          Object.entries(object(restriction)).map(([name, v]) => [
                            name,
                            // (a collection of strings: Transformations)
                            Array.isArray(v)
                              ? v.map((item) => (typeof item === 'string' ? item : object(item).$PropertyPath))
                              : v,
                          ]),
                        ),
                  ]),
              ),
            },
          ];
        }),
    ),
    actions: Object.fromEntries(
      ofKind('Action').map(([name, overloads]) => {
        const action = object(array(overloads)[0]);
        const [binding, ...parameters] = array(action.$Parameter).map(object);
        expect(binding?.$Nullable).toBeUndefined();
        return [
          name,
          {
            bound: action.$IsBound === true,
            binding: String(binding!.$Type),
            parameters: Object.fromEntries(parameters.map((p) => [String(p.$Name), jsonValue(p)])),
            returns: String(object(action.$ReturnType).$Type),
          },
        ];
      }),
    ),
  };
}

// ---------------------------------------------------------------------------------------------------------------

describe('CSDL XML of the service model', () => {
  const xml = toCsdlXml(plantDataModel);
  const schema = schemaOf(xml);
  const model = expected(plantDataModel);

  it('is a well-formed edmx document with the Core vocabulary referenced as Core', () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<edmx:Edmx')).toBe(true);
    const includes = children(parseXml(xml), 'Reference', edmx).flatMap((reference) => {
      expect(attribute(reference, 'Uri')).toMatch(/^https:\/\/.+\.xml$/);
      return children(reference, 'Include', edmx).map((include) => [
        attribute(include, 'Namespace'),
        attribute(include, 'Alias'),
      ]);
    });
    expect(includes).toContainEqual([core, 'Core']);
    expect(includes).toContainEqual([validation, 'Validation']);
    expect(attribute(schema, 'Namespace')).toBe('PlantData');
  });

  it('declares every entity type, property, key and navigation property of the model, with their facets', () => {
    expect(fromXml(xml)).toEqual(model);
  });

  it('declares the eleven entity sets in order, with bindings for non-contained navigation only', () => {
    const container = only(schema, 'EntityContainer');
    expect(attribute(container, 'Name')).toBe('Container');
    expect(children(container, 'EntitySet').map((set) => attribute(set, 'Name'))).toEqual(entitySetNames);
    const sets = fromXml(xml).sets;
    expect(sets.PurchaseOrders).toEqual({
      type: 'PlantData.PurchaseOrder',
      bindings: { Lines: 'POLineItems', Attachments: 'POAttachments' },
      // created and patched, never deleted (the interface); a create must name the vendor
      restrictions: {
        [`${capabilities}.InsertRestrictions`]: { RequiredProperties: ['VendorID'] },
        [`${capabilities}.DeleteRestrictions`]: { Deletable: false },
        // clients send If-Match with an order's ETag, made of its LastModifiedDate
        [`${core}.OptimisticConcurrency`]: ['LastModifiedDate'],
        ...applySupported,
      },
    });
    expect(Object.keys(sets.WorkOrders!.restrictions)).toEqual([
      `${capabilities}.InsertRestrictions`,
      `${capabilities}.UpdateRestrictions`,
      `${capabilities}.DeleteRestrictions`,
      `${core}.OptimisticConcurrency`,
      `${aggregation}.ApplySupported`,
    ]);
    // readings are recorded (a create must name the meter), never changed or deleted
    expect(sets.MeterReadings!.restrictions).toEqual({
      [`${capabilities}.InsertRestrictions`]: { RequiredProperties: ['MeterID'] },
      [`${capabilities}.UpdateRestrictions`]: { Updatable: false },
      [`${capabilities}.DeleteRestrictions`]: { Deletable: false },
      // nothing of a reading is free text
      [`${capabilities}.SearchRestrictions`]: { Searchable: false },
      [`${core}.OptimisticConcurrency`]: ['LastModifiedDate'],
      ...applySupportedUnsearchable,
    });
    expect(sets.PurchaseRequests?.bindings).toEqual({ Lines: 'PRLineItems' });
    expect(sets.BlanketPOs?.bindings).toEqual({ Lines: 'BlanketPOLineItems' });
    // under containment: a comment's and a labor record's work order, a history reading's meter
    expect(sets.WorkOrders?.bindings).toEqual({
      'Comments/WorkOrder': 'WorkOrders',
      'ActualLabor/WorkOrder': 'WorkOrders',
    });
    expect(sets.MeterReadings?.bindings).toEqual({ 'History/Meter': 'MeterReadings' });
    expect(sets.POLineItems?.bindings).toEqual({
      PurchaseOrder: 'PurchaseOrders',
      Part: 'Parts',
      WorkOrder: 'WorkOrders',
    });
  });

  it('writes facts a client relies on where the conventions put them', () => {
    const type = (name: string) => named(children(schema, 'EntityType'), name);
    const property = (typeName: string, name: string) => named(children(type(typeName), 'Property'), name);
    const attributesOf = (node: XmlNode) => Object.fromEntries(node.attributes);

    expect(attributesOf(property('Account', 'Account'))).toEqual({
      Name: 'Account',
      Type: 'Edm.String',
      Nullable: 'false',
      MaxLength: '30',
    });
    expect(attributesOf(property('PurchaseOrder', 'FreightAmount'))).toEqual({
      Name: 'FreightAmount',
      Type: 'Edm.Decimal',
      Precision: '18',
      Scale: '4',
    });
    expect(attributesOf(property('PurchaseOrder', 'CreatedDate'))).toMatchObject({ Nullable: 'false', Precision: '3' });
    expect(xmlAnnotations(property('PurchaseOrder', 'CreatedDate'))).toMatchObject({ [`${core}.Computed`]: true });
    expect(xmlAnnotations(property('POAttachment', 'PONumber'))).toMatchObject({ [`${core}.Immutable`]: true });
    expect(xmlAnnotations(property('POAttachment', 'ContentBase64'))).toMatchObject({
      [`${core}.Permissions`]: 'Write',
    });
    expect(attributesOf(property('POAttachment', 'ContentBase64'))).toMatchObject({
      Type: 'Edm.Binary',
      MaxLength: String(10 * 1024 * 1024),
    });
    expect(xmlAnnotations(property('PRLineItem', 'Quantity'))).toEqual({
      [`${validation}.Minimum`]: 0,
      [`${validation}.Minimum@${validation}.Exclusive`]: true,
    });
    expect(xmlAnnotations(property('PurchaseRequest', 'Status'))[`${validation}.AllowedValues`]).toEqual([
      'Draft',
      'Submitted',
      'Approved',
      'Rejected',
      'Ordered',
      'Closed',
      'Canceled',
    ]);

    const comments = named(children(type('WorkOrder'), 'NavigationProperty'), 'Comments');
    expect(attributesOf(comments)).toEqual({
      Name: 'Comments',
      Type: 'Collection(PlantData.WorkOrderComment)',
      ContainsTarget: 'true',
    });
    const lines = named(children(type('PurchaseOrder'), 'NavigationProperty'), 'Lines');
    expect(attributesOf(lines)).toEqual({ Name: 'Lines', Type: 'Collection(PlantData.POLineItem)' });
    const lineKey = children(only(type('POLineItem'), 'Key'), 'PropertyRef').map((ref) => attribute(ref, 'Name'));
    expect(lineKey).toEqual(['PONumber', 'LineNumber']);
  });

  it('declares both actions bound to a work order, binding parameter first, answering Edm.Boolean', () => {
    const actions = children(schema, 'Action');
    expect(actions.map((action) => attribute(action, 'Name'))).toEqual(['AddComment', 'RemoveActualLabor']);
    const remove = named(actions, 'RemoveActualLabor');
    expect(attribute(remove, 'IsBound')).toBe('true');
    expect(
      children(remove, 'Parameter').map((p) => [
        attribute(p, 'Name'),
        attribute(p, 'Type'),
        p.attributes.get('Nullable'),
      ]),
    ).toEqual([
      ['bindingParameter', 'PlantData.WorkOrder', 'false'],
      ['Craft', 'Edm.String', 'false'],
      ['Hours', 'Edm.Decimal', 'false'],
      ['OTHours', 'Edm.Decimal', undefined],
      ['PeopleID', 'Edm.String', 'false'],
      ['StartDate', 'Edm.DateTimeOffset', 'false'],
    ]);
    expect(Object.fromEntries(only(remove, 'ReturnType').attributes)).toEqual({
      Type: 'Edm.Boolean',
      Nullable: 'false',
    });
    expect(fromXml(xml).actions.AddComment?.parameters).toEqual({
      Comment: { type: 'Edm.String', nullable: false, maxLength: 4000, annotations: expect.any(Object) },
      Username: { type: 'Edm.String', nullable: false, maxLength: 40, annotations: expect.any(Object) },
    });
  });

  it('writes no referential constraint on collection-valued navigation (CSDL allows them on single-valued ones)', () => {
    let single = 0;
    for (const type of children(schema, 'EntityType'))
      for (const nav of children(type, 'NavigationProperty')) {
        if (!attribute(nav, 'Type').startsWith('Collection(')) {
          expect(children(nav, 'ReferentialConstraint').length, attribute(nav, 'Name')).toBeGreaterThan(0);
          single++;
        } else expect(children(nav, 'ReferentialConstraint')).toEqual([]);
      }
    // a line's header, part and work order, a comment's work order, a reading's meter...
    expect(single).toBeGreaterThan(0);
  });
});

describe('CSDL JSON of the service model', () => {
  const document = toCsdlJson(plantDataModel);

  it('is plain JSON with the version, the container and the Core reference', () => {
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
    expect(document.$Version).toBe('4.0');
    expect(document.$EntityContainer).toBe('PlantData.Container');
    const includes = Object.values(object(document.$Reference)).flatMap((reference) =>
      array(object(reference).$Include).map(object),
    );
    expect(includes).toContainEqual({ $Namespace: core, $Alias: 'Core' });
  });

  it('says what the model says, as the XML does', () => {
    const summary = fromJson(document);
    expect(summary).toEqual(expected(plantDataModel));
    expect(summary).toEqual(fromXml(toCsdlXml(plantDataModel)));
    expect(Object.keys(summary.sets)).toEqual(entitySetNames);
  });

  it('uses the JSON defaults: $Nullable only when true, no $Scale for variable, full annotation names', () => {
    const schema = object(document.PlantData);
    const account = object(schema.Account);
    expect(account.$Kind).toBe('EntityType');
    expect(account.$Key).toEqual(['Account']);
    expect(account.Account).toEqual({
      $Type: 'Edm.String',
      $MaxLength: 30,
      '@Org.OData.Core.V1.Description': expect.any(String),
    });
    expect(account.Description).toEqual({ $Type: 'Edm.String', $Nullable: true, $MaxLength: 100 });
    expect(object(object(schema.PurchaseOrder).LastModifiedDate)).toMatchObject({
      $Type: 'Edm.DateTimeOffset',
      $Precision: 3,
      '@Org.OData.Core.V1.Computed': true,
    });
    expect(object(object(schema.WorkOrder).ActualLabor)).toEqual({
      $Kind: 'NavigationProperty',
      $Collection: true,
      $Type: 'PlantData.ActualLabor',
      $ContainsTarget: true,
    });
    const addComment = object(array(schema.AddComment)[0]);
    expect(addComment).toMatchObject({ $Kind: 'Action', $IsBound: true, $ReturnType: { $Type: 'Edm.Boolean' } });
    expect(array(addComment.$Parameter)[0]).toEqual({ $Name: 'bindingParameter', $Type: 'PlantData.WorkOrder' });
  });
});

describe('CSDL of any model', () => {
  const hostile = `<b title="x">&amp; 'quoted'\n\tline\r\u0001`;
  const Thing = defineEntityType({
    name: 'Thing',
    key: ['ID'],
    description: hostile,
    properties: {
      ID: { type: 'Edm.Int64' },
      Ratio: { type: 'Edm.Decimal', description: 'a < b && c > d' },
      Name: { type: 'Edm.String', nullable: false },
    },
  });

  it('escapes special characters in names and descriptions, and replaces those XML cannot carry', () => {
    const namespace = `Odd&<"Ns'>`;
    const model = defineModel({ namespace, entitySets: { Things: Thing } });
    const xml = toCsdlXml(model);
    const schema = schemaOf(xml);
    expect(attribute(schema, 'Namespace')).toBe(namespace);
    const container = only(schema, 'EntityContainer');
    expect(attribute(only(container, 'EntitySet'), 'EntityType')).toBe(`${namespace}.Thing`);
    const type = only(schema, 'EntityType');
    expect(xmlAnnotations(type)).toEqual({ [`${core}.Description`]: hostile.replace('\u0001', '\uFFFD') });
    expect(xmlAnnotations(named(children(type, 'Property'), 'Ratio'))).toEqual({
      [`${core}.Description`]: 'a < b && c > d',
    });

    const json = JSON.parse(JSON.stringify(toCsdlJson(model))) as CsdlJsonObject;
    expect(json.$EntityContainer).toBe(`${namespace}.Container`);
    expect(object(object(json[namespace]).Thing)[`@${core}.Description`]).toBe(hostile);
  });

  it('writes a Decimal without scale as Scale="variable" in XML and without $Scale in JSON', () => {
    const model = defineModel({ namespace: 'Demo', entitySets: { Things: Thing } });
    const ratio = named(children(only(schemaOf(toCsdlXml(model)), 'EntityType'), 'Property'), 'Ratio');
    expect(Object.fromEntries(ratio.attributes)).toEqual({ Name: 'Ratio', Type: 'Edm.Decimal', Scale: 'variable' });
    const json = object(object(object(toCsdlJson(model).Demo).Thing).Ratio);
    expect(json).toEqual({ $Type: 'Edm.Decimal', $Nullable: true, '@Org.OData.Core.V1.Description': 'a < b && c > d' });
    expect(fromJson(toCsdlJson(model))).toEqual(expected(model));
    expect(fromXml(toCsdlXml(model))).toEqual(expected(model));
  });

  it('binds navigation through containment, and not when several sets share the target type', () => {
    const Person = defineEntityType({ name: 'Person', key: ['ID'], properties: { ID: { type: 'Edm.Int32' } } });
    const Note = defineEntityType({
      name: 'Note',
      key: ['NoteID'],
      properties: { NoteID: { type: 'Edm.Int32' }, AuthorID: { type: 'Edm.Int32' } },
      navigation: { Authors: { target: () => Person, foreignKey: { AuthorID: 'ID' } } },
    });
    const Folder = defineEntityType({
      name: 'Folder',
      key: ['ID'],
      properties: { ID: { type: 'Edm.Int32' } },
      navigation: {
        Notes: { target: () => Note, foreignKey: { ID: 'FolderID' }, contained: true },
        Owners: { target: () => Person, foreignKey: { ID: 'FolderID' } },
      },
    });
    const single = defineModel({ namespace: 'Demo', entitySets: { Folders: Folder, People: Person } });
    expect(fromXml(toCsdlXml(single)).sets.Folders?.bindings).toEqual({ 'Notes/Authors': 'People', Owners: 'People' });
    expect(fromJson(toCsdlJson(single)).sets.Folders?.bindings).toEqual({
      'Notes/Authors': 'People',
      Owners: 'People',
    });

    const twoSets = defineModel({ namespace: 'Demo', entitySets: { Folders: Folder, People: Person, Staff: Person } });
    expect(fromXml(toCsdlXml(twoSets)).sets.Folders?.bindings).toEqual({});
  });

  it('writes numeric bounds as plain decimals, never with an exponent', () => {
    const Reading = defineEntityType({
      name: 'Reading',
      key: ['ID'],
      properties: {
        ID: { type: 'Edm.Int32' },
        Tiny: { type: 'Edm.Double', minimum: 2.5e-8, maximum: 1e-7 },
        Huge: { type: 'Edm.Double', minimum: -1.5e21, maximum: 1e21 },
      },
    });
    const type = only(
      schemaOf(toCsdlXml(defineModel({ namespace: 'Demo', entitySets: { Readings: Reading } }))),
      'EntityType',
    );
    const bounds = (name: string) =>
      children(named(children(type, 'Property'), name), 'Annotation').map((a) => attribute(a, 'Decimal'));
    expect(bounds('Tiny')).toEqual(['0.000000025', '0.0000001']);
    expect(bounds('Huge')).toEqual(['-1500000000000000000000', '1000000000000000000000']);
  });

  it('renames the binding parameter when an action has a parameter of that name', () => {
    const model = defineModel({
      namespace: 'Demo',
      entitySets: { Things: Thing },
      actions: [
        {
          name: 'Touch',
          boundTo: 'Things',
          parameters: { bindingParameter: { type: 'Edm.String' } },
          returnType: 'Edm.Boolean',
        },
      ],
    });
    const action = only(schemaOf(toCsdlXml(model)), 'Action');
    expect(children(action, 'Parameter').map((p) => attribute(p, 'Name'))).toEqual([
      'bindingParameter_',
      'bindingParameter',
    ]);
    const touch = object(array(object(toCsdlJson(model).Demo).Touch)[0]);
    expect(array(touch.$Parameter).map((p) => object(p).$Name)).toEqual(['bindingParameter_', 'bindingParameter']);
    expect(fromJson(toCsdlJson(model))).toEqual(expected(model));
  });

  it('declares functions, and imports for the unbound functions and actions, in both formats', () => {
    const model = defineModel({
      namespace: 'Demo',
      entitySets: { Things: Thing },
      functions: [
        { name: 'Score', boundTo: 'Things', parameters: {}, returnType: 'Edm.Decimal' },
        { name: 'Cheaper', parameters: { Below: { type: 'Edm.Int32', nullable: false } }, returnType: 'Edm.Int32' },
      ],
      actions: [{ name: 'Reset', parameters: {}, returnType: 'Edm.Boolean' }],
    });
    const schema = schemaOf(toCsdlXml(model));
    const functions = children(schema, 'Function');
    expect(functions.map((f) => [attribute(f, 'Name'), f.attributes.get('IsBound')])).toEqual([
      ['Score', 'true'],
      ['Cheaper', undefined],
    ]);
    // a function may find no value: its result is nullable; an unbound one has no binding parameter
    expect(only(functions[0]!, 'ReturnType').attributes.get('Nullable')).toBeUndefined();
    expect(children(functions[1]!, 'Parameter').map((p) => attribute(p, 'Name'))).toEqual(['Below']);
    expect(only(schema, 'Action').attributes.get('IsBound')).toBeUndefined();
    const container = only(schema, 'EntityContainer');
    expect(attribute(only(container, 'FunctionImport'), 'Function')).toBe('Demo.Cheaper');
    expect(attribute(only(container, 'ActionImport'), 'Action')).toBe('Demo.Reset');
    const json = object(toCsdlJson(model).Demo);
    expect(object(array(json.Score)[0])).toMatchObject({ $Kind: 'Function', $IsBound: true });
    expect(object(array(json.Reset)[0])).toEqual({ $Kind: 'Action', $ReturnType: { $Type: 'Edm.Boolean' } });
    expect(object(json.Container)).toMatchObject({
      Cheaper: { $Function: 'Demo.Cheaper' },
      Reset: { $Action: 'Demo.Reset' },
    });
  });

  it('refuses an operation named like an entity set, or an action and a function of one name', () => {
    const functions = [{ name: 'Things', parameters: {}, returnType: 'Edm.Int32' as const }];
    expect(() => defineModel({ namespace: 'Demo', entitySets: { Things: Thing }, functions })).toThrowError(
      SchemaError,
    );
    expect(() =>
      defineModel({
        namespace: 'Demo',
        entitySets: { Things: Thing },
        functions: [{ name: 'Go', parameters: {}, returnType: 'Edm.Int32' }],
        actions: [{ name: 'Go', parameters: {}, returnType: 'Edm.Int32' }],
      }),
    ).toThrowError(SchemaError);
  });

  it('refuses a schema where two elements share a name', () => {
    const model = defineModel({
      namespace: 'Demo',
      entitySets: { Things: Thing },
      actions: [{ name: 'Thing', boundTo: 'Things', parameters: {}, returnType: 'Edm.Boolean' }],
    });
    expect(() => toCsdlXml(model)).toThrowError(SchemaError);
    expect(() => toCsdlJson(model)).toThrowError(SchemaError);
  });

  it('references the Validation vocabulary only when a property uses it', () => {
    // a set that allows everything, of a type a create needs nothing for, restricts nothing: no Capabilities either
    // (Aggregation is referenced for every model with sets: each says it answers $apply)
    const Open = defineEntityType({
      name: 'Open',
      key: ['ID'],
      properties: {
        ID: { type: 'Edm.Guid', default: { generate: 'uuid' } },
        Note: { type: 'Edm.String', searchable: true },
      },
    });
    const writable = { type: Open, insertable: true, updatable: true, deletable: true };
    const model = defineModel({ namespace: 'Demo', entitySets: { Things: writable } });
    const includes = children(parseXml(toCsdlXml(model)), 'Reference', edmx).map((reference) =>
      attribute(only(reference, 'Include', edmx), 'Namespace'),
    );
    expect(includes).toEqual([core, aggregation]);
    expect(Object.keys(object(toCsdlJson(model).$Reference))).toEqual([
      'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Core.V1.json',
      'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Aggregation.V1.json',
    ]);
  });

  it('says what a set does not allow with the Capabilities restrictions, read-only unless the model grants writes', () => {
    const model = defineModel({
      namespace: 'Demo',
      entitySets: { Things: Thing, Notes: { type: Thing, insertable: true, updatable: true } },
    });
    const container = only(schemaOf(toCsdlXml(model)), 'EntityContainer');
    const restrictions = (name: string): Annotations => xmlAnnotations(named(children(container, 'EntitySet'), name));
    expect(restrictions('Things')).toEqual({
      [`${capabilities}.InsertRestrictions`]: { Insertable: false },
      [`${capabilities}.UpdateRestrictions`]: { Updatable: false },
      [`${capabilities}.DeleteRestrictions`]: { Deletable: false },
      // no property is searchable: no $search, nor search in $apply
      [`${capabilities}.SearchRestrictions`]: { Searchable: false },
      ...applySupportedUnsearchable,
    });
    // an insertable set says what a create must send: the key and Name, neither nullable nor filled in by the service
    expect(restrictions('Notes')).toEqual({
      [`${capabilities}.InsertRestrictions`]: { RequiredProperties: ['ID', 'Name'] },
      [`${capabilities}.DeleteRestrictions`]: { Deletable: false },
      [`${capabilities}.SearchRestrictions`]: { Searchable: false },
      ...applySupportedUnsearchable,
    });
    const json = object(object(toCsdlJson(model).Demo).Container);
    expect(object(json.Notes)[`@${capabilities}.DeleteRestrictions`]).toEqual({ Deletable: false });
    expect(Object.keys(object(toCsdlJson(model).$Reference))).toContain(
      'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/Org.OData.Capabilities.V1.json',
    );
    expect(model.sets.get('Things')).toMatchObject({ insertable: false, updatable: false, deletable: false });
  });
});
