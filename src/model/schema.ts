// Entity types and models: the schema the validator binds queries to, the stores persist, and
// $metadata describes. Definitions are plain data; `defineEntityType` checks them once.
import { isNumeric, isOrdered, type AggregationMethod, type EdmPrimitiveType } from '../values/edm.js';

/**
 * What a create fills in when the field is omitted (not when it is sent as null): a fixed value, or one the server
 * makes: the time of the request, the next number of a per-site sequence (`PO-000123`), the next free line number
 * under the same parent, or a new GUID.
 */
export type PropertyDefault =
  | { readonly value: string | number | boolean }
  | { readonly generate: 'now' }
  | { readonly generate: 'sequence'; readonly prefix: string; readonly digits: number }
  | { readonly generate: 'nextLineNumber' }
  | { readonly generate: 'uuid' };

export interface PropertyDefinition {
  readonly type: EdmPrimitiveType;
  /** Default true; key properties are never nullable. */
  readonly nullable?: boolean;
  /** Edm.String / Edm.Binary: the maximum length in characters or bytes. */
  readonly maxLength?: number;
  /** Edm.Decimal: total digits and digits after the point. */
  readonly precision?: number;
  readonly scale?: number;
  /** Set by the server (Core.Computed): readable, never written by a client. */
  readonly computed?: boolean;
  /** Settable on create only (Core.Immutable). */
  readonly immutable?: boolean;
  /**
   * A value the service keeps (give it `computed` too): `created`, the time of the create; `modified`, the time of the
   * create and of every update (each update's later than the one before, by a millisecond if the clock has not moved);
   * `version` (Int32 or Int64), 1 on create and one more on every update.
   */
  readonly managed?: 'created' | 'modified' | 'version';
  /** Filled in on create when omitted; a non-nullable property without a default (and not computed) is required. */
  readonly default?: PropertyDefault;
  /** Accepted in request bodies but never returned, selected, filtered or sorted (e.g. uploaded content). */
  readonly writeOnly?: boolean;
  /** Edm.String: `$search` matches its words (an entity matches a term when one of its searchable properties does). */
  readonly searchable?: boolean;
  /**
   * With `searchable`: a full-text index serves `$search` on it where the store has one (PostgreSQL: a GIN index of
   * its words; SQLite: an FTS5 table of the type's indexed properties; MySQL/MariaDB: a FULLTEXT index of generated
   * columns), as a prefilter before the exact match; elsewhere `$search` scans.
   */
  readonly searchIndex?: boolean;
  /** A closed vocabulary of allowed string values. */
  readonly allowedValues?: readonly string[];
  /** Inclusive numeric bounds (`exclusiveMinimum` makes the minimum exclusive: Quantity > 0). */
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: boolean;
  readonly description?: string;
}

export interface Property extends PropertyDefinition {
  readonly name: string;
  readonly nullable: boolean;
  readonly isKey: boolean;
}

/**
 * A navigation to related rows: collection-valued (an order's lines, contained or related by foreign key), or
 * single-valued (a line's order, a book's author).
 */
export interface NavigationDefinition {
  /** The target entity type (a function so that types can refer to each other). */
  readonly target: () => EntityType;
  /**
   * How rows relate: for each property of this type, the target's property that holds the same value. A collection
   * (an order's lines): `{ PONumber: 'PONumber' }`, this type's key to the children's foreign key. Single-valued (a
   * book's author): `{ AuthorID: 'AuthorID' }`, this type's foreign key to the target's key, which it must cover.
   */
  readonly foreignKey: Readonly<Record<string, string>>;
  /** False: single-valued (at most one related row); default true. */
  readonly collection?: boolean;
  /** Contained collections exist only under their parent (work-order comments, labor records). */
  readonly contained?: boolean;
}

export interface NavigationProperty extends NavigationDefinition {
  readonly name: string;
  readonly collection: boolean;
}

export interface EntityTypeDefinition {
  readonly name: string;
  readonly key: readonly string[];
  readonly properties: Readonly<Record<string, PropertyDefinition>>;
  readonly navigation?: Readonly<Record<string, NavigationDefinition>>;
  /**
   * The order of a read without `$orderby` (a meter's history: newest reading first), before the key that breaks
   * every tie; without it, the key alone, ascending.
   */
  readonly defaultOrder?: readonly { readonly property: string; readonly descending?: boolean }[];
  /** Checks of a body's fields together, after each field's own checks (see RowRule). */
  readonly rules?: readonly RowRule[];
  /**
   * The properties an entity's ETag is made of (`Core.OptimisticConcurrency`): each one the service changes on every
   * write (`managed: 'modified'` or `'version'`). Entities then carry `@odata.etag`, and writes honour `If-Match`.
   */
  readonly concurrency?: readonly string[];
  /**
   * Custom aggregates (Data Aggregation `Aggregation.CustomAggregate`), by name: what `$apply=aggregate(Name)` means
   * without a method, as analytical clients write it (OpenUI5's `$$aggregation` without `with`). Each is a method over a
   * property: the property of the same name unless another is given (`Spend: { property: 'ExtendedPrice', method:
   * 'sum' }`).
   */
  readonly aggregates?: Readonly<Record<string, CustomAggregateDefinition>>;
  readonly description?: string;
}

/** A custom aggregate: `method` over `property` (default: the property named like the aggregate). */
export interface CustomAggregateDefinition {
  readonly property?: string;
  readonly method: AggregationMethod;
}

export interface EntityType {
  readonly name: string;
  readonly key: readonly Property[];
  /** In declaration order. */
  readonly properties: ReadonlyMap<string, Property>;
  readonly navigation: ReadonlyMap<string, NavigationProperty>;
  /** The order of a read without `$orderby`, before the key (empty: the key alone). */
  readonly defaultOrder: readonly { readonly property: Property; readonly descending: boolean }[];
  readonly rules: readonly RowRule[];
  /** The properties its ETag is made of (empty: its entities have none). */
  readonly concurrency: readonly Property[];
  /** Its custom aggregates by name (absent: none). */
  readonly aggregates?: ReadonlyMap<
    string,
    { readonly property: Property; readonly method: CustomAggregateDefinition['method'] }
  >;
  readonly description?: string;
}

/** An entity's values by property name: what stores keep, bodies carry and the backends read. */
export type Row = Record<string, unknown>;

/**
 * The values a row holds for each EDM type, as the stores and checked bodies give them to an application's handlers
 * (docs/backends.md lists every form the backends accept).
 */
export interface EdmValues {
  'Edm.String': string;
  'Edm.Boolean': boolean;
  'Edm.Int32': number;
  /** Canonical digit text from bodies and SQL stores; a number or bigint where your own rows hold one. */
  'Edm.Int64': string | number | bigint;
  /** Canonical decimal text from bodies and SQL stores; a number where your own rows hold one. */
  'Edm.Decimal': string | number;
  'Edm.Double': number;
  'Edm.Date': string;
  'Edm.DateTimeOffset': string;
  'Edm.TimeOfDay': string;
  'Edm.Duration': string;
  'Edm.Guid': string;
  'Edm.Binary': Uint8Array;
}

/**
 * The row type of an entity type definition: each property's value, `| null` unless it is a key or not nullable.
 * Declare the definition `as const satisfies EntityTypeDefinition` and pass it to defineEntityType: `RowOfDefinition<
 * typeof bookDefinition>` is then the row your handlers receive. (defineEntityType itself cannot infer it: entity types
 * that navigate to each other would make the inference circular.)
 */
export type RowOfDefinition<D extends EntityTypeDefinition> = {
  -readonly [K in keyof D['properties']]:
    | EdmValues[D['properties'][K]['type']]
    | (K extends D['key'][number] ? never : D['properties'][K] extends { readonly nullable: false } ? never : null);
};

/** What a rule finds wrong in a row: the field to blame, a sentence, and where in the field's text (optional). */
export interface RuleProblem {
  readonly target: string;
  readonly message: string;
  readonly position?: number;
}

/**
 * A check of a body beyond each field's type and facets (an end date on or after the start date), given the fields
 * the body holds (on a PATCH, only those sent): undefined when it holds, else the problem, answered as a 400.
 */
export type RowRule = (row: Readonly<Row>) => RuleProblem | undefined;

/** A mistake in a schema definition: the embedder's bug, thrown when the schema is defined, never a client error. */
export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

function definitionError(message: string): SchemaError {
  return new SchemaError(message);
}

/** Checks a definition (keys exist and are non-nullable, facets fit their types) and freezes it. */
export function defineEntityType(definition: EntityTypeDefinition): EntityType {
  const properties = new Map<string, Property>();
  for (const [name, property] of Object.entries(definition.properties)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
      throw definitionError(`${definition.name}.${name} is not an OData identifier`);
    const isKey = definition.key.includes(name);
    if (isKey && property.nullable === true)
      throw definitionError(`Key property ${definition.name}.${name} cannot be nullable`);
    if (property.maxLength !== undefined && property.type !== 'Edm.String' && property.type !== 'Edm.Binary') {
      throw definitionError(
        `${definition.name}.${name}: maxLength applies to strings and binaries, not ${property.type}`,
      );
    }
    const fixed = property.default !== undefined && 'value' in property.default ? property.default.value : undefined;
    if (
      fixed !== undefined &&
      property.allowedValues !== undefined &&
      !property.allowedValues.includes(String(fixed))
    ) {
      throw definitionError(
        `${definition.name}.${name}: the default ${String(fixed)} is not one of its allowed values`,
      );
    }
    if (property.managed === 'version' && property.type !== 'Edm.Int32' && property.type !== 'Edm.Int64')
      throw definitionError(
        `${definition.name}.${name}: a managed version is an Edm.Int32 or Edm.Int64, not ${property.type}`,
      );
    if (property.managed === 'modified' && property.type !== 'Edm.DateTimeOffset')
      throw definitionError(`${definition.name}.${name}: a managed modification time is an Edm.DateTimeOffset`);
    if (property.searchable === true && (property.type !== 'Edm.String' || property.writeOnly === true)) {
      throw definitionError(`${definition.name}.${name}: only a readable Edm.String can be searchable`);
    }
    if (property.searchIndex === true && property.searchable !== true) {
      throw definitionError(`${definition.name}.${name}: a search index is for a searchable property`);
    }
    if ((property.precision !== undefined || property.scale !== undefined) && property.type !== 'Edm.Decimal') {
      throw definitionError(
        `${definition.name}.${name}: precision and scale apply to Edm.Decimal, not ${property.type}`,
      );
    }
    properties.set(
      name,
      Object.freeze({ ...property, name, nullable: isKey ? false : (property.nullable ?? true), isKey }),
    );
  }
  const key = definition.key.map((name) => {
    const property = properties.get(name);
    if (property === undefined) throw definitionError(`Key ${name} is not a property of ${definition.name}`);
    return property;
  });
  if (key.length === 0) throw definitionError(`${definition.name} has no key`);
  const navigation = new Map<string, NavigationProperty>();
  for (const [name, nav] of Object.entries(definition.navigation ?? {})) {
    if (properties.has(name)) throw definitionError(`${definition.name}.${name} is both a property and a navigation`);
    for (const parentKey of Object.keys(nav.foreignKey)) {
      if (!properties.has(parentKey))
        throw definitionError(`${definition.name}.${name}: ${parentKey} is not a property`);
    }
    const collection = nav.collection !== false;
    if (!collection && nav.contained === true)
      throw definitionError(`${definition.name}.${name}: a contained navigation is a collection`);
    if (Object.keys(nav.foreignKey).length === 0)
      throw definitionError(`${definition.name}.${name}: the foreign key names no property`);
    navigation.set(name, Object.freeze({ ...nav, name, collection }));
  }
  const defaultOrder = (definition.defaultOrder ?? []).map(({ property: name, descending }) => {
    const property = properties.get(name);
    if (property === undefined || property.writeOnly === true || !isOrdered(property.type))
      throw definitionError(`${definition.name}: the default order names ${name}, not a readable ordered property`);
    return Object.freeze({ property, descending: descending === true });
  });
  const concurrency = (definition.concurrency ?? []).map((name) => {
    const property = properties.get(name);
    // an ETag must change with every write, or a client could overwrite a change it never saw
    if (property === undefined || (property.managed !== 'modified' && property.managed !== 'version'))
      throw definitionError(
        `${definition.name}: the concurrency property ${name} must be one the service changes on every write (managed: 'modified' or 'version')`,
      );
    return property;
  });
  const aggregates = new Map<string, { property: Property; method: CustomAggregateDefinition['method'] }>();
  for (const [name, aggregate] of Object.entries(definition.aggregates ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
      throw definitionError(`${definition.name}: the custom aggregate ${name} is not an OData identifier`);
    const property = properties.get(aggregate.property ?? name);
    const numeric = property !== undefined && isNumeric(property.type);
    if (
      property === undefined ||
      property.writeOnly === true ||
      ((aggregate.method === 'sum' || aggregate.method === 'average') && !numeric) ||
      ((aggregate.method === 'min' || aggregate.method === 'max') && !isOrdered(property.type))
    ) {
      throw definitionError(
        `${definition.name}: the custom aggregate ${name} takes ${aggregate.method} of ${aggregate.property ?? name}, which is not a readable property that method takes`,
      );
    }
    aggregates.set(name, Object.freeze({ property, method: aggregate.method }));
  }
  return Object.freeze({
    name: definition.name,
    key,
    properties,
    navigation,
    defaultOrder,
    rules: Object.freeze([...(definition.rules ?? [])]),
    concurrency: Object.freeze(concurrency),
    ...(aggregates.size === 0 ? {} : { aggregates }),
    ...(definition.description === undefined ? {} : { description: definition.description }),
  });
}

/**
 * An action: bound to the entities of a set (`POST WorkOrders('WO-1')/AddComment`), or unbound, served at the service
 * root as an action import (`POST /Reprice`). Its parameters travel in the body; the service's handler does its work
 * in a transaction.
 */
export interface ActionDefinition {
  readonly name: string;
  /** The entity set whose single entity the action is bound to; absent: an unbound action (an action import). */
  readonly boundTo?: string;
  readonly parameters: Readonly<Record<string, PropertyDefinition>>;
  readonly returnType: EdmPrimitiveType;
  /** Checks of the parameters together, after each one's own checks (see RowRule). */
  readonly rules?: readonly RowRule[];
}

/**
 * A function: a read without side effects, bound to the entities of a set (`GET Books('1')/Library.Rating()`) or
 * unbound, served at the service root as a function import (`GET /BooksBelow(Price=10)`). Its parameters are literals
 * in the path; it answers with a primitive value.
 */
export interface FunctionDefinition {
  readonly name: string;
  /** The entity set whose single entity the function is bound to; absent: an unbound function (a function import). */
  readonly boundTo?: string;
  readonly parameters: Readonly<Record<string, PropertyDefinition>>;
  readonly returnType: EdmPrimitiveType;
}

/**
 * An entity set and what clients may do with its entities (the Capabilities vocabulary's restrictions in $metadata).
 * A set is read-only unless it says otherwise: a write is something the model grants, never a default.
 */
export interface EntitySetDefinition {
  readonly type: EntityType;
  /** POST to the set creates an entity. */
  readonly insertable?: boolean;
  /** PATCH (and PUT) of an entity. */
  readonly updatable?: boolean;
  /** DELETE of an entity. */
  readonly deletable?: boolean;
}

export interface EntitySet {
  readonly name: string;
  readonly entityType: EntityType;
  readonly insertable: boolean;
  readonly updatable: boolean;
  readonly deletable: boolean;
}

export interface ModelDefinition {
  readonly namespace: string;
  /** Entity set name → its entity type (a read-only set) or its definition. */
  readonly entitySets: Readonly<Record<string, EntityType | EntitySetDefinition>>;
  readonly actions?: readonly ActionDefinition[];
  readonly functions?: readonly FunctionDefinition[];
  /** The service's container name in $metadata (default `Container`). */
  readonly containerName?: string;
}

export interface Model {
  readonly namespace: string;
  readonly containerName: string;
  readonly entitySets: ReadonlyMap<string, EntityType>;
  /** The entity sets with what clients may do with them, by name. */
  readonly sets: ReadonlyMap<string, EntitySet>;
  /** Every entity type reachable from the sets and their navigation, by name. */
  readonly entityTypes: ReadonlyMap<string, EntityType>;
  readonly actions: readonly ActionDefinition[];
  readonly functions: readonly FunctionDefinition[];
}

/** Groups entity sets under a namespace; collects every entity type reachable by navigation. */
export function defineModel(definition: ModelDefinition): Model {
  const entityTypes = new Map<string, EntityType>();
  const visit = (type: EntityType): void => {
    const known = entityTypes.get(type.name);
    if (known === type) return;
    if (known !== undefined) throw definitionError(`Two different entity types are named ${type.name}`);
    entityTypes.set(type.name, type);
    for (const nav of type.navigation.values()) visit(nav.target());
  };
  const sets = new Map<string, EntitySet>();
  for (const [name, entry] of Object.entries(definition.entitySets)) {
    const set: EntitySetDefinition = 'properties' in entry ? { type: entry } : entry;
    sets.set(
      name,
      Object.freeze({
        name,
        entityType: set.type,
        insertable: set.insertable === true,
        updatable: set.updatable === true,
        deletable: set.deletable === true,
      }),
    );
    visit(set.type);
  }
  // a single-valued navigation finds its row by the target's key, the foreign key must give all of it; a contained
  // entity is identified under its parent, so there the parent's key too (else it would find one row under each
  // parent, and a join would double the rows that read through it)
  const parentKeys = new Map<EntityType, readonly string[]>();
  for (const type of entityTypes.values())
    for (const nav of type.navigation.values())
      if (nav.contained === true) parentKeys.set(nav.target(), Object.values(nav.foreignKey));
  for (const type of entityTypes.values()) {
    for (const nav of type.navigation.values()) {
      if (nav.collection) continue;
      const target = nav.target();
      const parentKey = parentKeys.get(target) ?? [];
      const identity = new Set([...parentKey, ...target.key.map((k) => k.name)]);
      const referenced = new Set(Object.values(nav.foreignKey));
      if (referenced.size !== identity.size || [...identity].some((name) => !referenced.has(name)))
        throw definitionError(
          parentKey.length === 0
            ? `${type.name}.${nav.name}: a single-valued navigation's foreign key must give the whole key of ${target.name} (${[...identity].join(', ')})`
            : `${type.name}.${nav.name}: ${target.name} is contained under its parent, so a single-valued navigation's foreign key must give its parent's key too (${[...identity].join(', ')})`,
        );
    }
  }
  const operations = [
    ...(definition.actions ?? []).map((operation) => ({ kind: 'Action', operation })),
    ...(definition.functions ?? []).map((operation) => ({ kind: 'Function', operation })),
  ];
  const kinds = new Map<string, string>();
  for (const { kind, operation } of operations) {
    if (operation.boundTo !== undefined && definition.entitySets[operation.boundTo] === undefined)
      throw definitionError(`${kind} ${operation.name} is bound to unknown entity set ${operation.boundTo}`);
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(operation.name))
      throw definitionError(`${kind} ${operation.name} is not an OData identifier`);
    if ((kinds.get(operation.name) ?? kind) !== kind)
      throw definitionError(`${operation.name} is both an action and a function`);
    kinds.set(operation.name, kind);
    if (operation.boundTo === undefined && definition.entitySets[operation.name] !== undefined)
      throw definitionError(`The unbound ${kind.toLowerCase()} ${operation.name} has the name of an entity set`);
  }
  return Object.freeze({
    namespace: definition.namespace,
    containerName: definition.containerName ?? 'Container',
    entitySets: new Map([...sets].map(([name, set]) => [name, set.entityType])),
    sets,
    entityTypes,
    actions: definition.actions ?? [],
    functions: definition.functions ?? [],
  });
}

/**
 * Whether a create must send the property: not nullable, and neither computed nor filled in by a default. The body
 * check applies it and `$metadata` declares it (Capabilities.InsertRestrictions/RequiredProperties).
 */
export function isRequiredOnCreate(property: PropertyDefinition): boolean {
  return property.nullable === false && property.computed !== true && property.default === undefined;
}

/** Properties a client can read: all but write-only ones, in declaration order (computed once per type). */
export function readableProperties(type: EntityType): readonly Property[] {
  let readable = readableCache.get(type);
  if (readable === undefined) {
    readable = Object.freeze([...type.properties.values()].filter((p) => p.writeOnly !== true));
    readableCache.set(type, readable);
  }
  return readable;
}

const readableCache = new WeakMap<EntityType, readonly Property[]>();
