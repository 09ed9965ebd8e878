// $metadata for a Model: the CSDL XML representation (OASIS odata-csdl-xml v4.01, written as edmx Version 4.0) and the
// CSDL JSON representation (OASIS odata-csdl-json v4.01, `$Version` 4.0). Both are built from one description of each
// property's facets and annotations, so they cannot disagree.
//
// Defaults differ between the two formats, and each is written for its own:
// - Nullable: XML `Nullable` defaults to true, so non-nullable properties say `Nullable="false"`; JSON `$Nullable`
//   defaults to false (properties, parameters, return types), so nullable ones say `"$Nullable": true`.
// - Decimal scale: an absent XML `Scale` means 0, an absent JSON `$Scale` means variable (CSDL, Type Facets: Scale);
//   a Decimal defined without a scale is written `Scale="variable"` and without `$Scale`.
// - Temporal precision: absent means whole seconds (CSDL, Type Facets: Precision), but the engine keeps
//   DateTimeOffset values to the millisecond (SEMANTICS.md), so DateTimeOffset properties and parameters say 3.
//
// Navigation: collection-valued (parent → children) or single-valued (a line's order). CSDL allows referential
// constraints only on single-valued navigation properties (CSDL, Referential Constraint: the declaring type is the
// dependent end, the target the principal), so a single-valued navigation's `foreignKey` is written as its
// ReferentialConstraint and a collection's stays an internal fact of the model. A single-valued navigation is nullable
// unless every property of its foreign key is not. A non-contained navigation whose target type is the type of exactly one entity set gets
// a NavigationPropertyBinding to that set (also below contained navigations, with a path such as `Notes/Author`);
// contained navigations say `ContainsTarget` and need no binding.
import {
  isRequiredOnCreate,
  SchemaError,
  type ActionDefinition,
  type FunctionDefinition,
  type NavigationProperty,
  type EntitySet,
  type EntityType,
  type Model,
  type PropertyDefinition,
} from './schema.js';
import { applyTransformations } from '../syntax/parser.js';
import { aggregateResultType } from '../values/edm.js';

const edmxNamespace = 'http://docs.oasis-open.org/odata/ns/edmx';
const edmNamespace = 'http://docs.oasis-open.org/odata/ns/edm';
const vocabularyBase = 'https://oasis-tcs.github.io/odata-vocabularies/vocabularies/';
const core = 'Org.OData.Core.V1';
const validation = 'Org.OData.Validation.V1';
const capabilities = 'Org.OData.Capabilities.V1';
const aggregation = 'Org.OData.Aggregation.V1';
const vocabularyAliases: Readonly<Record<string, string>> = {
  [core]: 'Core',
  [validation]: 'Validation',
  [capabilities]: 'Capabilities',
  [aggregation]: 'Aggregation',
};

/** Fractional-second digits of Edm.DateTimeOffset values (SEMANTICS.md: milliseconds). */
const dateTimeOffsetPrecision = 3;

/** The name of the binding parameter of bound actions (renamed if an action has a parameter of that name). */
const bindingParameterName = 'bindingParameter';

// ---------------------------------------------------------------------------------------------------------------
// One description of facets and annotations, rendered by both formats.

interface Facets {
  readonly type: string;
  readonly nullable: boolean;
  readonly maxLength?: number;
  readonly precision?: number;
  readonly scale?: number | 'variable';
  readonly defaultValue?: string | number | boolean;
}

type AnnotationValue =
  | { readonly kind: 'Bool'; readonly value: boolean }
  | { readonly kind: 'String'; readonly value: string }
  | { readonly kind: 'Decimal'; readonly value: number }
  | { readonly kind: 'EnumMember'; readonly enumType: string; readonly member: string }
  | { readonly kind: 'AllowedValues'; readonly values: readonly string[] }
  /** A collection of property paths (`Core.OptimisticConcurrency`). */
  | { readonly kind: 'PropertyPaths'; readonly paths: readonly string[] }
  | {
      readonly kind: 'Record';
      /**
       * Boolean members, collections of property paths (`RequiredProperties`) or of strings (`Transformations`), and
       * enumeration members (`Rollup`).
       */
      readonly properties: Readonly<Record<string, RecordMember>>;
    };

type RecordMember =
  | boolean
  | { readonly paths: readonly string[] }
  | { readonly strings: readonly string[] }
  | { readonly enumType: string; readonly member: string };

interface Annotation {
  /** Namespace-qualified: `Org.OData.Core.V1.Computed`. */
  readonly term: string;
  readonly value: AnnotationValue;
  /** Annotations of the annotation (`Validation.Exclusive` on a `Validation.Minimum`). */
  readonly annotations: readonly Annotation[];
}

function annotation(term: string, value: AnnotationValue, annotations: readonly Annotation[] = []): Annotation {
  return { term, value, annotations };
}

const tag = (term: string): Annotation => annotation(term, { kind: 'Bool', value: true });

function facetsOf(definition: PropertyDefinition, nullable: boolean): Facets {
  const { type } = definition;
  return {
    type,
    nullable,
    ...((type === 'Edm.String' || type === 'Edm.Binary') && definition.maxLength !== undefined
      ? { maxLength: definition.maxLength }
      : {}),
    ...(type === 'Edm.Decimal' && definition.precision !== undefined ? { precision: definition.precision } : {}),
    ...(type === 'Edm.Decimal' ? { scale: definition.scale ?? 'variable' } : {}),
    ...(type === 'Edm.DateTimeOffset' ? { precision: dateTimeOffsetPrecision } : {}),
    // CSDL DefaultValue: only a fixed value is one (a server-made default is not a literal)
    ...(definition.default !== undefined && 'value' in definition.default
      ? { defaultValue: definition.default.value }
      : {}),
  };
}

/** Annotations that apply to properties and parameters alike: description and validation. */
function valueAnnotations(definition: PropertyDefinition, where: string): Annotation[] {
  const annotations: Annotation[] = [];
  if (definition.description !== undefined) {
    annotations.push(annotation(`${core}.Description`, { kind: 'String', value: definition.description }));
  }
  if (definition.allowedValues !== undefined) {
    annotations.push(
      annotation(`${validation}.AllowedValues`, { kind: 'AllowedValues', values: definition.allowedValues }),
    );
  }
  if (definition.minimum !== undefined) {
    const exclusive = definition.exclusiveMinimum === true ? [tag(`${validation}.Exclusive`)] : [];
    annotations.push(annotation(`${validation}.Minimum`, decimal(definition.minimum, where), exclusive));
  }
  if (definition.maximum !== undefined) {
    annotations.push(annotation(`${validation}.Maximum`, decimal(definition.maximum, where)));
  }
  return annotations;
}

function propertyAnnotations(definition: PropertyDefinition, isKey: boolean, where: string): Annotation[] {
  const annotations: Annotation[] = [];
  if (definition.computed === true) annotations.push(tag(`${core}.Computed`));
  // Core.Immutable is defined for non-key properties: a key never changes anyway.
  if (definition.immutable === true && !isKey) annotations.push(tag(`${core}.Immutable`));
  if (definition.writeOnly === true) {
    annotations.push(
      annotation(`${core}.Permissions`, { kind: 'EnumMember', enumType: `${core}.Permission`, member: 'Write' }),
    );
  }
  return [...annotations, ...valueAnnotations(definition, where)];
}

function decimal(value: number, where: string): AnnotationValue {
  if (!Number.isFinite(value)) throw new SchemaError(`${where}: bound ${value} is not a finite number`);
  return { kind: 'Decimal', value };
}

/** A Decimal literal without exponent (CSDL decimals have none): 1e-7 → 0.0000001, 1e21 → 1000000000000000000000. */
function decimalText(value: number): string {
  const text = String(value);
  const match = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

// ---------------------------------------------------------------------------------------------------------------
// What both formats need to know about the model as a whole.

interface Plan {
  readonly types: readonly EntityType[];
  /** Actions and functions grouped by name (overloads), in order of first appearance. */
  readonly operations: ReadonlyMap<string, readonly Operation[]>;
  readonly sets: readonly {
    readonly name: string;
    readonly type: EntityType;
    readonly bindings: readonly Binding[];
    readonly annotations: readonly Annotation[];
  }[];
  readonly usesValidation: boolean;
  readonly usesCapabilities: boolean;
  readonly usesAggregation: boolean;
}

/** An action or a function, as both formats write them. */
interface Operation {
  readonly kind: 'Action' | 'Function';
  readonly definition: ActionDefinition | FunctionDefinition;
}

interface Binding {
  readonly path: string;
  readonly target: string;
}

function plan(model: Model): Plan {
  const types = [...model.entityTypes.values()];
  const operations = new Map<string, Operation[]>();
  const all: Operation[] = [
    ...model.actions.map((definition) => ({ kind: 'Action' as const, definition })),
    ...model.functions.map((definition) => ({ kind: 'Function' as const, definition })),
  ];
  for (const operation of all) {
    const overloads = operations.get(operation.definition.name);
    if (overloads === undefined) operations.set(operation.definition.name, [operation]);
    else overloads.push(operation);
  }
  const schemaNames = new Set<string>();
  for (const name of [...types.map((type) => type.name), ...operations.keys(), model.containerName]) {
    if (schemaNames.has(name)) throw new SchemaError(`Two schema elements of ${model.namespace} are named ${name}`);
    schemaNames.add(name);
  }

  const setsOfType = new Map<EntityType, string[]>();
  for (const [name, type] of model.entitySets) setsOfType.set(type, [...(setsOfType.get(type) ?? []), name]);
  const bindingsOf = (type: EntityType, prefix: string, path: ReadonlySet<EntityType>): Binding[] =>
    [...type.navigation.values()].flatMap((navigation) => {
      const target = navigation.target();
      if (navigation.contained) {
        return path.has(target) ? [] : bindingsOf(target, `${prefix}${navigation.name}/`, new Set([...path, target]));
      }
      const sets = setsOfType.get(target) ?? [];
      // With no set, or several sets of the target type, the target set is not known: no binding.
      return sets.length === 1 ? [{ path: `${prefix}${navigation.name}`, target: sets[0]! }] : [];
    });
  const sets = [...model.sets.values()].map((set) => ({
    name: set.name,
    type: set.entityType,
    bindings: bindingsOf(set.entityType, '', new Set([set.entityType])),
    annotations: setAnnotations(set),
  }));

  const definitions = [
    ...types.flatMap((type) => [...type.properties.values()]),
    ...all.flatMap((operation) => Object.values(operation.definition.parameters)),
  ];
  const usesValidation = definitions.some(
    (definition) =>
      definition.allowedValues !== undefined || definition.minimum !== undefined || definition.maximum !== undefined,
  );
  const usesCapabilities = sets.some((set) => set.annotations.some((a) => a.term.startsWith(`${capabilities}.`)));
  return { types, operations, sets, usesValidation, usesCapabilities, usesAggregation: sets.length > 0 };
}

/** What a set does not allow, as the Capabilities vocabulary's restrictions (no annotation: allowed). */
function setAnnotations(set: EntitySet): Annotation[] {
  const restriction = (term: string, property: string, allowed: boolean): Annotation[] =>
    allowed ? [] : [annotation(`${capabilities}.${term}`, { kind: 'Record', properties: { [property]: false } })];
  // what a create must send: the non-nullable properties the service neither computes nor fills in
  const required = [...set.entityType.properties.values()].filter(isRequiredOnCreate).map((p) => p.name);
  const insert =
    set.insertable && required.length > 0
      ? [
          annotation(`${capabilities}.InsertRestrictions`, {
            kind: 'Record',
            properties: { RequiredProperties: { paths: required } },
          }),
        ]
      : restriction('InsertRestrictions', 'Insertable', set.insertable);
  // the properties of its entities' ETags (clients send If-Match with the ETag of what they read)
  const concurrency =
    set.entityType.concurrency.length === 0
      ? []
      : [
          annotation(`${core}.OptimisticConcurrency`, {
            kind: 'PropertyPaths',
            paths: set.entityType.concurrency.map((p) => p.name),
          }),
        ];
  // $search looks in the properties the model marks searchable: without any, the set offers none
  const searchable = [...set.entityType.properties.values()].some((p) => p.searchable === true);
  // $apply: every transformation the service answers (search where $search is), no rollup (a hierarchy), every
  // property groupable and aggregatable (no restrictions listed)
  const apply = annotation(`${aggregation}.ApplySupported`, {
    kind: 'Record',
    properties: {
      Transformations: {
        strings: searchable ? applyTransformations : applyTransformations.filter((t) => t !== 'search'),
      },
      Rollup: { enumType: `${aggregation}.RollupType`, member: 'None' },
    },
  });
  return [
    ...insert,
    ...restriction('UpdateRestrictions', 'Updatable', set.updatable),
    ...restriction('DeleteRestrictions', 'Deletable', set.deletable),
    ...restriction('SearchRestrictions', 'Searchable', searchable),
    ...concurrency,
    apply,
  ];
}

/** An entity type's custom aggregates (`aggregate(Name)` in `$apply`) and the EDM type each gives. */
function customAggregates(type: EntityType): { name: string; resultType: string }[] {
  return [...(type.aggregates ?? new Map())].map(([name, { property, method }]) => ({
    name,
    resultType: aggregateResultType(method, property.type)!.type,
  }));
}

/** A single-valued navigation finds no row when a property of its foreign key is null. */
function navigationNullable(type: EntityType, nav: NavigationProperty): boolean {
  return Object.keys(nav.foreignKey).some((name) => type.properties.get(name)?.nullable !== false);
}

function bindingParameter(operation: ActionDefinition | FunctionDefinition): string {
  let name = bindingParameterName;
  while (Object.hasOwn(operation.parameters, name)) name += '_';
  return name;
}

/** The binding parameter's type of a bound operation; undefined for an unbound one. */
function boundType(model: Model, operation: ActionDefinition | FunctionDefinition): string | undefined {
  if (operation.boundTo === undefined) return undefined;
  const type = model.entitySets.get(operation.boundTo);
  if (type === undefined)
    throw new SchemaError(`${operation.name} is bound to unknown entity set ${operation.boundTo}`);
  return `${model.namespace}.${type.name}`;
}

/** The unbound operations: each an import of the entity container. */
function imports(plan: Plan): Operation[] {
  const out: Operation[] = [];
  for (const overloads of plan.operations.values()) {
    const unbound = overloads.find((operation) => operation.definition.boundTo === undefined);
    if (unbound !== undefined) out.push(unbound);
  }
  return out;
}

function references(plan: Plan): { namespace: string; alias: string }[] {
  const namespaces = [
    core,
    ...(plan.usesValidation ? [validation] : []),
    ...(plan.usesCapabilities ? [capabilities] : []),
    ...(plan.usesAggregation ? [aggregation] : []),
  ];
  return namespaces.map((namespace) => ({ namespace, alias: vocabularyAliases[namespace]! }));
}

// ---------------------------------------------------------------------------------------------------------------
// XML

interface XmlElement {
  readonly name: string;
  readonly attributes: readonly (readonly [string, string])[];
  readonly children: readonly XmlElement[];
  /** Text content (a PropertyPath's path), for an element without children. */
  readonly text?: string;
}

type AttributeValue = string | number | boolean | undefined;

function element(
  name: string,
  attributes: Readonly<Record<string, AttributeValue>>,
  children: readonly XmlElement[] = [],
  text?: string,
): XmlElement {
  return {
    name,
    attributes: Object.entries(attributes).flatMap(([attribute, value]) =>
      value === undefined ? [] : [[attribute, String(value)] as const],
    ),
    children,
    ...(text === undefined ? {} : { text }),
  };
}

const xmlSpecial: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&apos;',
  // Character references keep tab and line breaks through attribute-value normalization (XML 1.0 §3.3.3).
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/** Characters XML 1.0 cannot carry at all, even as references (§2.2): replaced by U+FFFD. */
const xmlForbidden =
  /[\0-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Escapes text for a double-quoted attribute value. */
function escapeXml(text: string): string {
  return text.replace(/[&<>"'\t\n\r]/g, (character) => xmlSpecial[character]!).replace(xmlForbidden, '\uFFFD');
}

function renderXml(node: XmlElement, depth: number, lines: string[]): void {
  const indent = '  '.repeat(depth);
  const attributes = node.attributes.map(([name, value]) => ` ${name}="${escapeXml(value)}"`).join('');
  if (node.text !== undefined) {
    lines.push(`${indent}<${node.name}${attributes}>${escapeXml(node.text)}</${node.name}>`);
    return;
  }
  if (node.children.length === 0) {
    lines.push(`${indent}<${node.name}${attributes} />`);
    return;
  }
  lines.push(`${indent}<${node.name}${attributes}>`);
  for (const child of node.children) renderXml(child, depth + 1, lines);
  lines.push(`${indent}</${node.name}>`);
}

function facetAttributes(facets: Facets): Record<string, AttributeValue> {
  return {
    Type: facets.type,
    Nullable: facets.nullable ? undefined : false,
    MaxLength: facets.maxLength,
    Precision: facets.precision,
    Scale: facets.scale,
    DefaultValue: facets.defaultValue === undefined ? undefined : String(facets.defaultValue),
  };
}

function xmlAnnotation(annotation: Annotation): XmlElement {
  const { term, value } = annotation;
  const nested = annotation.annotations.map(xmlAnnotation);
  switch (value.kind) {
    case 'Bool':
      return element('Annotation', { Term: term, Bool: value.value }, nested);
    case 'String':
      return element('Annotation', { Term: term, String: value.value }, nested);
    case 'Decimal':
      return element('Annotation', { Term: term, Decimal: decimalText(value.value) }, nested);
    case 'EnumMember':
      return element('Annotation', { Term: term, EnumMember: `${value.enumType}/${value.member}` }, nested);
    case 'AllowedValues': {
      const records = value.values.map((allowed) =>
        element('Record', {}, [element('PropertyValue', { Property: 'Value', String: allowed })]),
      );
      return element('Annotation', { Term: term }, [element('Collection', {}, records), ...nested]);
    }
    case 'PropertyPaths':
      return element('Annotation', { Term: term }, [
        element(
          'Collection',
          {},
          value.paths.map((path) => element('PropertyPath', {}, [], path)),
        ),
        ...nested,
      ]);
    case 'Record': {
      const values = Object.entries(value.properties).map(([property, member]) => {
        if (typeof member === 'boolean') return element('PropertyValue', { Property: property, Bool: member });
        if ('enumType' in member) {
          return element('PropertyValue', { Property: property, EnumMember: `${member.enumType}/${member.member}` });
        }
        const items =
          'paths' in member
            ? member.paths.map((path) => element('PropertyPath', {}, [], path))
            : member.strings.map((text) => element('String', {}, [], text));
        return element('PropertyValue', { Property: property }, [element('Collection', {}, items)]);
      });
      return element('Annotation', { Term: term }, [element('Record', {}, values), ...nested]);
    }
    default:
      return value satisfies never;
  }
}

function xmlEntityType(namespace: string, type: EntityType): XmlElement {
  const key = element(
    'Key',
    {},
    type.key.map((property) => element('PropertyRef', { Name: property.name })),
  );
  const properties = [...type.properties.values()].map((property) =>
    element(
      'Property',
      { Name: property.name, ...facetAttributes(facetsOf(property, property.nullable)) },
      propertyAnnotations(property, property.isKey, `${type.name}.${property.name}`).map(xmlAnnotation),
    ),
  );
  const navigation = [...type.navigation.values()].map((nav) =>
    element(
      'NavigationProperty',
      {
        Name: nav.name,
        Type: nav.collection ? `Collection(${namespace}.${nav.target().name})` : `${namespace}.${nav.target().name}`,
        Nullable: !nav.collection && !navigationNullable(type, nav) ? false : undefined,
        ContainsTarget: nav.contained === true ? true : undefined,
      },
      nav.collection
        ? []
        : Object.entries(nav.foreignKey).map(([property, referenced]) =>
            element('ReferentialConstraint', { Property: property, ReferencedProperty: referenced }),
          ),
    ),
  );
  const description =
    type.description === undefined
      ? []
      : [xmlAnnotation(annotation(`${core}.Description`, { kind: 'String', value: type.description }))];
  // each custom aggregate by its name (the qualifier), with the type of its result
  const aggregates = customAggregates(type).map(({ name, resultType }) =>
    element('Annotation', { Term: `${aggregation}.CustomAggregate`, Qualifier: name, String: resultType }),
  );
  return element('EntityType', { Name: type.name }, [key, ...properties, ...navigation, ...description, ...aggregates]);
}

function xmlOperation(model: Model, { kind, definition: operation }: Operation): XmlElement {
  const bound = boundType(model, operation);
  const binding =
    bound === undefined
      ? []
      : [element('Parameter', { Name: bindingParameter(operation), Type: bound, Nullable: false })];
  const parameters = Object.entries(operation.parameters).map(([name, definition]) =>
    element(
      'Parameter',
      { Name: name, ...facetAttributes(facetsOf(definition, definition.nullable ?? true)) },
      valueAnnotations(definition, `${operation.name}(${name})`).map(xmlAnnotation),
    ),
  );
  // an action answers with a value (the work-order actions: `true`); a function may find none (null)
  const returnType = element(
    'ReturnType',
    facetAttributes(facetsOf({ type: operation.returnType }, kind === 'Function')),
  );
  return element(kind, { Name: operation.name, ...(bound === undefined ? {} : { IsBound: true }) }, [
    ...binding,
    ...parameters,
    returnType,
  ]);
}

/** The model's $metadata document in CSDL XML. */
export function toCsdlXml(model: Model): string {
  const schema = plan(model);
  const reference = (namespace: string, alias: string): XmlElement =>
    element('edmx:Reference', { Uri: `${vocabularyBase}${namespace}.xml` }, [
      element('edmx:Include', { Namespace: namespace, Alias: alias }),
    ]);
  const container = element('EntityContainer', { Name: model.containerName }, [
    ...schema.sets.map((set) =>
      element('EntitySet', { Name: set.name, EntityType: `${model.namespace}.${set.type.name}` }, [
        ...set.bindings.map((binding) =>
          element('NavigationPropertyBinding', { Path: binding.path, Target: binding.target }),
        ),
        ...set.annotations.map(xmlAnnotation),
      ]),
    ),
    ...imports(schema).map(({ kind, definition }) =>
      element(`${kind}Import`, { Name: definition.name, [kind]: `${model.namespace}.${definition.name}` }),
    ),
  ]);
  const root = element('edmx:Edmx', { 'xmlns:edmx': edmxNamespace, Version: '4.0' }, [
    ...references(schema).map(({ namespace, alias }) => reference(namespace, alias)),
    element('edmx:DataServices', {}, [
      element('Schema', { xmlns: edmNamespace, Namespace: model.namespace }, [
        ...schema.types.map((type) => xmlEntityType(model.namespace, type)),
        ...[...schema.operations.values()].flat().map((operation) => xmlOperation(model, operation)),
        container,
      ]),
    ]),
  ]);
  const lines = ['<?xml version="1.0" encoding="utf-8"?>'];
  renderXml(root, 0, lines);
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------------------------
// JSON

export type CsdlJsonValue = string | number | boolean | null | CsdlJsonValue[] | CsdlJsonObject;
export interface CsdlJsonObject {
  [member: string]: CsdlJsonValue;
}

function jsonFacets(facets: Facets): CsdlJsonObject {
  return {
    $Type: facets.type,
    ...(facets.nullable ? { $Nullable: true } : {}),
    ...(facets.maxLength === undefined ? {} : { $MaxLength: facets.maxLength }),
    ...(facets.precision === undefined ? {} : { $Precision: facets.precision }),
    ...(typeof facets.scale === 'number' ? { $Scale: facets.scale } : {}),
    ...(facets.defaultValue === undefined ? {} : { $DefaultValue: facets.defaultValue }),
  };
}

function jsonAnnotationValue(value: AnnotationValue): CsdlJsonValue {
  switch (value.kind) {
    case 'Bool':
    case 'String':
    case 'Decimal':
      return value.value;
    case 'EnumMember':
      return value.member;
    case 'AllowedValues':
      return value.values.map((allowed) => ({ Value: allowed }));
    case 'PropertyPaths':
      return value.paths.map((path) => ({ $PropertyPath: path }));
    case 'Record':
      return Object.fromEntries(
        Object.entries(value.properties).map(([property, member]) => [
          property,
          typeof member === 'boolean'
            ? member
            : 'enumType' in member
              ? member.member
              : 'paths' in member
                ? member.paths.map((path) => ({ $PropertyPath: path }))
                : [...member.strings],
        ]),
      );
    default:
      return value satisfies never;
  }
}

/** Annotation members, `@Term` and for annotations of annotations `@Term@Nested` (csdl-json, Annotation). */
function jsonAnnotations(annotations: readonly Annotation[], prefix = ''): CsdlJsonObject {
  const members: CsdlJsonObject = {};
  for (const annotation of annotations) {
    const name = `${prefix}@${annotation.term}`;
    members[name] = jsonAnnotationValue(annotation.value);
    Object.assign(members, jsonAnnotations(annotation.annotations, name));
  }
  return members;
}

function jsonEntityType(namespace: string, type: EntityType): CsdlJsonObject {
  const members: CsdlJsonObject = { $Kind: 'EntityType', $Key: type.key.map((property) => property.name) };
  for (const property of type.properties.values()) {
    members[property.name] = {
      ...jsonFacets(facetsOf(property, property.nullable)),
      ...jsonAnnotations(propertyAnnotations(property, property.isKey, `${type.name}.${property.name}`)),
    };
  }
  for (const nav of type.navigation.values()) {
    members[nav.name] = {
      $Kind: 'NavigationProperty',
      ...(nav.collection ? { $Collection: true } : {}),
      $Type: `${namespace}.${nav.target().name}`,
      ...(!nav.collection && navigationNullable(type, nav) ? { $Nullable: true } : {}),
      ...(nav.contained === true ? { $ContainsTarget: true } : {}),
      ...(nav.collection ? {} : { $ReferentialConstraint: { ...nav.foreignKey } }),
    };
  }
  if (type.description !== undefined) members[`@${core}.Description`] = type.description;
  for (const { name, resultType } of customAggregates(type))
    members[`@${aggregation}.CustomAggregate#${name}`] = resultType;
  return members;
}

function jsonOperation(model: Model, { kind, definition: operation }: Operation): CsdlJsonObject {
  const bound = boundType(model, operation);
  const parameters: CsdlJsonValue[] = bound === undefined ? [] : [{ $Name: bindingParameter(operation), $Type: bound }];
  for (const [name, definition] of Object.entries(operation.parameters)) {
    parameters.push({
      $Name: name,
      ...jsonFacets(facetsOf(definition, definition.nullable ?? true)),
      ...jsonAnnotations(valueAnnotations(definition, `${operation.name}(${name})`)),
    });
  }
  return {
    $Kind: kind,
    ...(bound === undefined ? {} : { $IsBound: true }),
    ...(parameters.length === 0 ? {} : { $Parameter: parameters }),
    $ReturnType: jsonFacets(facetsOf({ type: operation.returnType }, kind === 'Function')),
  };
}

/** The model's $metadata document in CSDL JSON. */
export function toCsdlJson(model: Model): CsdlJsonObject {
  const schema = plan(model);
  const reference: CsdlJsonObject = {};
  for (const { namespace, alias } of references(schema)) {
    reference[`${vocabularyBase}${namespace}.json`] = { $Include: [{ $Namespace: namespace, $Alias: alias }] };
  }
  const members: CsdlJsonObject = {};
  for (const type of schema.types) members[type.name] = jsonEntityType(model.namespace, type);
  for (const [name, overloads] of schema.operations)
    members[name] = overloads.map((operation) => jsonOperation(model, operation));
  const container: CsdlJsonObject = { $Kind: 'EntityContainer' };
  for (const set of schema.sets) {
    container[set.name] = {
      $Collection: true,
      $Type: `${model.namespace}.${set.type.name}`,
      ...(set.bindings.length === 0
        ? {}
        : {
            $NavigationPropertyBinding: Object.fromEntries(
              set.bindings.map((binding) => [binding.path, binding.target]),
            ),
          }),
      ...jsonAnnotations(set.annotations),
    };
  }
  for (const { kind, definition } of imports(schema))
    container[definition.name] = { [`$${kind}`]: `${model.namespace}.${definition.name}` };
  members[model.containerName] = container;
  return {
    $Version: '4.0',
    $EntityContainer: `${model.namespace}.${model.containerName}`,
    $Reference: reference,
    [model.namespace]: members,
  };
}
