// Values for the testing kit: for each property, the edge values of its EDM type that fit its facets (a string's
// maxLength and allowed values, a decimal's precision and scale, numeric bounds), the rows built from them, and each
// value's OData literal. Rows draw most values from a small pool shared with the literals the filters compare them
// with, so that generated filters keep some rows and drop others instead of matching all or none.
import fc from 'fast-check';
import type { EntityType, NavigationProperty, Property, Row } from '../model/schema.js';
import { linkTupleText } from '../backends/memory/related.js';
import { rowFormOf } from '../values/cast.js';
import type { EdmPrimitiveType } from '../values/edm.js';
import { reader, type Value } from '../values/read.js';

/** What rows look like: values in the form a JSON body or a SQL driver gives (docs/testing.md). */
export interface RowOptions {
  /** Instants with offsets other than Z (`2024-03-01T00:30:00+02:00`); default true. False: every instant in UTC. */
  readonly offsets?: boolean;
  /** One in `nullFrequency` values of a nullable property is null; default 5. */
  readonly nullFrequency?: number;
  /** Replaces the values a property draws from (row form, as they are stored), by property name. */
  readonly values?: Readonly<Record<string, readonly unknown[]>>;
}

// the first few values of each list are the common ones: rows and literals draw them most often, so that filters
// find equal values; the rest are the traps
const STRINGS = [
  'a',
  'A',
  'a%',
  'b_',
  'ab',
  'Pump',
  '',
  'b',
  'a ',
  ' a',
  "O'Neil",
  '%',
  '_',
  'a%b_c\\',
  '\\',
  '*?[a]',
  'é',
  'É',
  'e\u0301',
  'ß',
  'İ',
  '🚀',
  'x🚀y',
  'pump seal',
  '12',
  '-2.5',
] as const;
const INT32 = [0, 1, -1, 2, 3, -7, 100, 2147483647, -2147483648] as const;
const INT64 = ['0', '1', '-1', '3', '4294967296', '-9007199254740993', '9223372036854775807', '-9223372036854775808'];
const DOUBLES = [0, 1, -1, 0.5, -2.5, 2.5, 0.1, 0.30000000000000004, 123.456, 1e10, -1e-10, 1e300, -1e300, 5e-324];
const DATES = ['0001-01-01', '1969-12-31', '1970-01-01', '2024-02-29', '2024-03-01', '9999-12-31'];
/** Instants: two of them the same moment written in different offsets, one a millisecond before midnight. */
const INSTANTS = [
  '1970-01-01T00:00:00Z',
  '1969-12-31T23:59:59.999Z',
  '2024-02-29T22:30:00Z',
  '2024-03-01T00:30:00+02:00',
  '2024-02-29T23:30:00-01:00',
  '2024-02-29T12:30:45.678-05:00',
  '2024-03-01T09:00:00+14:00',
  '0001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
];
const TIMES = ['00:00:00', '08:30:00', '12:00:00.5', '23:59:59.999'];
const DURATIONS = ['PT0S', 'P1D', 'PT1H30M', '-P2DT3H', 'PT0.5S'];
const GUIDS = [
  '00000000-0000-0000-0000-000000000000',
  '0a1b2c3d-4e5f-6789-abcd-ef0123456789',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
];

/** Decimal text with at most `scale` places and `precision` digits in all. */
function fitsDecimal(text: string, property: Property): boolean {
  const [whole = '', fraction = ''] = text.replace('-', '').split('.');
  const scale = property.scale ?? 6;
  if (fraction.length > scale) return false;
  if (property.precision === undefined) return true;
  return whole.replace(/^0+/, '').length <= property.precision - scale;
}

/** The largest decimal a property holds (`99999999999999.9999` for Decimal(18,4)), or undefined when unbounded. */
function largestDecimal(property: Property): string | undefined {
  if (property.precision === undefined) return undefined;
  const scale = property.scale ?? 0;
  const whole = '9'.repeat(Math.max(property.precision - scale, 1));
  return scale === 0 ? whole : `${whole}.${'9'.repeat(scale)}`;
}

function inBounds(value: number, property: Property): boolean {
  if (
    property.minimum !== undefined &&
    (value < property.minimum || (property.exclusiveMinimum && value === property.minimum))
  )
    return false;
  return property.maximum === undefined || value <= property.maximum;
}

/** How many of the first edge values are the common ones (drawn more often than the rest). */
export const COMMON = 4;

/** The edge values of a property's type that fit its facets, in row form, the common ones first. */
export function edgeValues(property: Property, options: RowOptions = {}): readonly unknown[] {
  const given = options.values?.[property.name];
  if (given !== undefined) return given;
  if (property.allowedValues !== undefined) return property.allowedValues;
  switch (property.type) {
    case 'Edm.String':
      return STRINGS.filter((s) => property.maxLength === undefined || [...s].length <= property.maxLength);
    case 'Edm.Boolean':
      return [true, false];
    case 'Edm.Int32':
      return INT32.filter((n) => inBounds(n, property));
    case 'Edm.Int64':
      return INT64.filter((n) => inBounds(Number(n), property));
    case 'Edm.Decimal': {
      const largest = largestDecimal(property);
      const scale = property.scale ?? 6;
      const unit = scale === 0 ? '1' : `0.${'0'.repeat(scale - 1)}1`;
      const candidates = ['0', '1', '-1', '0.5', '-0.5', '2.5', '-2.5', '12.34', unit, `-${unit}`, '100'];
      if (largest !== undefined) candidates.push(largest, `-${largest}`);
      return candidates.filter((d) => fitsDecimal(d, property) && inBounds(Number(d), property));
    }
    case 'Edm.Double':
      return DOUBLES.filter((n) => inBounds(n, property));
    case 'Edm.Date':
      return DATES;
    case 'Edm.DateTimeOffset':
      return options.offsets === false ? INSTANTS.map((t) => new Date(t).toISOString()) : INSTANTS;
    case 'Edm.TimeOfDay':
      return TIMES;
    case 'Edm.Duration':
      return DURATIONS;
    case 'Edm.Guid':
      return GUIDS;
    case 'Edm.Binary':
      return [new Uint8Array([]), new Uint8Array([0]), new Uint8Array([1, 2, 3]), new Uint8Array([255, 0, 128])];
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Any value of the property's type that fits its facets, beyond the edges (row form). */
function anyValue(property: Property, options: RowOptions): fc.Arbitrary<unknown> {
  const edges = edgeValues(property, options);
  if (options.values?.[property.name] !== undefined || property.allowedValues !== undefined)
    return fc.constantFrom(...edges);
  switch (property.type) {
    case 'Edm.String': {
      // maxLength counts characters (code points); a grapheme may be several
      const max = Math.min(property.maxLength ?? 12, 12);
      return fc.string({ unit: 'grapheme', maxLength: max }).filter((s) => [...s].length <= max);
    }
    case 'Edm.Boolean':
      return fc.boolean();
    case 'Edm.Int32':
      return fc
        .integer({ min: property.minimum ?? -1000, max: property.maximum ?? 1000 })
        .filter((n) => inBounds(n, property));
    case 'Edm.Int64':
      return fc
        .bigInt({ min: -(10n ** 12n), max: 10n ** 12n })
        .map(String)
        .filter((n) => inBounds(Number(n), property));
    case 'Edm.Decimal': {
      const scale = property.scale ?? 6;
      return fc
        .tuple(fc.integer({ min: -99999, max: 99999 }), fc.nat(10 ** Math.min(scale, 6) - 1))
        .map(([whole, fraction]) =>
          scale === 0
            ? String(whole)
            : `${whole}.${String(fraction).padStart(Math.min(scale, 6), '0')}`.replace(/\.?0+$/, ''),
        )
        .map((text) => (text === '' || text === '-' ? '0' : text))
        .filter((d) => fitsDecimal(d, property) && inBounds(Number(d), property));
    }
    case 'Edm.Double':
      return fc
        .double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })
        .filter((n) => inBounds(n, property));
    case 'Edm.Date':
      return fc
        .tuple(fc.integer({ min: 1900, max: 2100 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 }))
        .map(([y, m, d]) => `${y}-${pad(m)}-${pad(d)}`);
    case 'Edm.DateTimeOffset':
      return fc
        .tuple(
          fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2050, 0, 1) }),
          options.offsets === false ? fc.constant(0) : fc.constantFrom(0, 60, -300, 330, 840, -720),
        )
        .map(([ms, offset]) => withOffset(ms, offset));
    case 'Edm.TimeOfDay':
      return fc.tuple(fc.nat(23), fc.nat(59), fc.nat(59)).map(([h, m, s]) => `${pad(h)}:${pad(m)}:${pad(s)}`);
    case 'Edm.Duration':
      return fc.tuple(fc.nat(30), fc.nat(23)).map(([d, h]) => `P${d}DT${h}H`);
    case 'Edm.Guid':
      return fc.uuid();
    case 'Edm.Binary':
      return fc.uint8Array({ maxLength: property.maxLength === undefined ? 8 : Math.min(property.maxLength, 8) });
  }
}

/** An instant as ISO text in an offset of `minutes` east of UTC. */
function withOffset(ms: number, minutes: number): string {
  if (minutes === 0) return new Date(ms).toISOString();
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, -1);
  const sign = minutes < 0 ? '-' : '+';
  return `${local}${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** A value of the property: mostly one of its edge values (shared with the literals), sometimes any other, or null. */
export function propertyValue(property: Property, options: RowOptions = {}): fc.Arbitrary<unknown> {
  const edges = edgeValues(property, options);
  const value =
    edges.length === 0
      ? anyValue(property, options)
      : fc.oneof(
          { weight: 3, arbitrary: fc.constantFrom(...edges.slice(0, COMMON)) },
          { weight: 2, arbitrary: fc.constantFrom(...edges) },
          { weight: 1, arbitrary: anyValue(property, options) },
        );
  if (!property.nullable) return value;
  return fc.option(value, { nil: null, freq: options.nullFrequency ?? 5 });
}

/** One row of the entity type (its key values arbitrary too: use `rowsOf` for rows with distinct keys). */
export function rowOf(entityType: EntityType, options: RowOptions = {}): fc.Arbitrary<Row> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const property of entityType.properties.values()) fields[property.name] = propertyValue(property, options);
  return fc.record(fields);
}

export interface RowsOptions extends RowOptions {
  readonly minLength?: number;
  /** Default 12: small enough to read in a report, large enough for filters to split. */
  readonly maxLength?: number;
}

/** Rows of the entity type with distinct keys (compared as the key's values, so `'1.0'` and `'1'` are one key). */
export function rowsOf(entityType: EntityType, options: RowsOptions = {}): fc.Arbitrary<Row[]> {
  return fc.uniqueArray(rowOf(entityType, options), {
    minLength: options.minLength ?? 0,
    maxLength: options.maxLength ?? 12,
    selector: (row) => keyOf(entityType, row),
  });
}

/** A value as the working value of the property's type; Booleans also from 0 and 1 (SQLite's and MySQL's form). */
export function readAs(property: Property, value: unknown): Value {
  if (property.type === 'Edm.Boolean' && (value === 0 || value === 1)) return value === 1;
  return value === undefined ? null : reader(property.type)(value);
}

/** A value's text, equal for equal values of the property's type (the forms of a driver or a JSON body alike). */
export function valueText(property: Property, value: unknown): string {
  const working = readAs(property, value);
  if (working === null) return 'null';
  const form = rowFormOf(working, property.type);
  return form instanceof Uint8Array ? Buffer.from(form).toString('hex') : String(form);
}

/** A row's key as text (`PONumber=PO-1,LineNumber=2`), equal for equal keys in any of their forms. */
export function keyOf(entityType: EntityType, row: Row): string {
  return entityType.key.map((k) => `${k.name}=${valueText(k, row[k.name])}`).join(',');
}

/** A row-form value as an OData literal (`'O''Neil'`, `12.5`, `1e300`, `duration'P1D'`). */
export function literalOf(value: unknown, type: EdmPrimitiveType): string {
  if (value === null || value === undefined) return 'null';
  switch (type) {
    case 'Edm.String':
      return `'${String(value).replace(/'/g, "''")}'`;
    case 'Edm.Boolean':
      return value ? 'true' : 'false';
    case 'Edm.Int32':
    case 'Edm.Int64':
      return String(value);
    case 'Edm.Decimal': {
      const text = String(value);
      return /[.eE]/.test(text) ? text : `${text}.0`;
    }
    case 'Edm.Double': {
      const n = Number(value);
      return Object.is(n, -0) ? '-0e0' : n.toExponential().replace('e+', 'e');
    }
    case 'Edm.Duration':
      return `duration'${String(value)}'`;
    case 'Edm.Binary':
      return `binary'${Buffer.from(value as Uint8Array).toString('base64url')}'`;
    default:
      return String(value);
  }
}

/**
 * Rows of an entity type and of the entity types its navigations lead to: the rows a filter through navigation paths,
 * lambdas and `/$count` reads. `related` holds the other types' rows by entity type name (a navigation back to the
 * entity type itself finds `rows`).
 */
export interface DataSet {
  readonly rows: readonly Row[];
  readonly related: Readonly<Record<string, readonly Row[]>>;
}

export interface DataSetOptions extends RowsOptions {
  /** How many navigation steps away from the entity type the related types are (default 1). */
  readonly navigation?: number;
  /**
   * Whether a foreign key may name no row (default true). False for an implementation that refuses such a row (as a
   * service checking its foreign keys does): a key naming no row is then made null where it may be, else its row is
   * left out (and the rows naming that one, in turn).
   */
  readonly danglingKeys?: boolean;
}

/** The entity types `steps` navigations away from `entityType` or nearer, the entity type first. */
export function typesWithin(entityType: EntityType, steps: number): EntityType[] {
  const types = [entityType];
  let edge = [entityType];
  for (let step = 0; step < steps; step++) {
    const next: EntityType[] = [];
    for (const type of edge)
      for (const navigation of type.navigation.values()) {
        const target = navigation.target();
        if (!types.includes(target)) {
          types.push(target);
          next.push(target);
        }
      }
    edge = next;
  }
  return types;
}

/**
 * Which rows a navigation links: a collection's children (`holder`) name their parent (`referenced`) by its values;
 * a single-valued navigation's rows name their target by its key. Each pair: the referenced row's property, and the
 * holder's that names it.
 */
function linkOf(type: EntityType, navigation: NavigationProperty) {
  const target = navigation.target();
  const [holder, referenced] = navigation.collection ? [target, type] : [type, target];
  const pairs = Object.entries(navigation.foreignKey).map(([own, other]) =>
    navigation.collection
      ? { named: type.properties.get(own)!, naming: target.properties.get(other)! }
      : { named: target.properties.get(other)!, naming: type.properties.get(own)! },
  );
  return { holder, referenced, pairs };
}

/**
 * Makes every foreign key name a row: one that names none becomes null where its properties may be, else its row is
 * left out; until nothing changes (a row left out may be the one others named).
 */
function keepKeysThatName(
  rowsByType: Map<EntityType, Row[]>,
  navigations: readonly { readonly type: EntityType; readonly navigation: NavigationProperty }[],
): void {
  for (let changed = true; changed;) {
    changed = false;
    for (const { type, navigation } of navigations) {
      const { holder, referenced, pairs } = linkOf(type, navigation);
      const naming = pairs.map((p) => p.naming);
      const present = new Set(
        rowsByType.get(referenced)!.map((row) =>
          linkTupleText(
            naming,
            pairs.map((p) => row[p.named.name]),
          ),
        ),
      );
      const kept = rowsByType.get(holder)!.filter((row) => {
        const values = pairs.map((p) => row[p.naming.name]);
        if (values.some((v) => v === null || v === undefined)) return true;
        if (present.has(linkTupleText(naming, values))) return true;
        changed = true;
        if (naming.every((p) => p.nullable && !p.isKey)) {
          for (const p of naming) row[p.name] = null;
          return true;
        }
        return false;
      });
      rowsByType.set(holder, kept);
    }
  }
}

/** A link value as the receiving property's row form (an Int32 foreign key to an Int64 key). */
function linkValue(value: unknown, to: Property): unknown {
  if (value === null || value === undefined) return null;
  const working = reader(to.type)(typeof value === 'bigint' ? String(value) : value);
  return working === null ? value : rowFormOf(working, to.type);
}

/**
 * Rows of the entity type and of the types within `navigation` steps, linked: most foreign keys hold the key of a
 * row that exists, the rest keep a value of their own (most often no row's) or null. Children find a parent, a row
 * its single related row, some none. Links shrink away first, then rows.
 */
export function dataSetOf(entityType: EntityType, options: DataSetOptions = {}): fc.Arbitrary<DataSet> {
  const types = typesWithin(entityType, options.navigation ?? 1);
  const maxLength = options.maxLength ?? 12;
  // related rows: up to twice as many, so that a collection holds a few per parent
  const sizes = types.map((_, i) => (i === 0 ? maxLength : maxLength * 2));
  const navigations = types.flatMap((type) =>
    [...type.navigation.values()]
      .filter((navigation) => types.includes(navigation.target()))
      .map((navigation) => ({ type, navigation })),
  );
  // for each navigation and each row on the side that holds the foreign key: the index of the row it links to, or
  // none (the value of its own)
  const choices = navigations.map(({ type, navigation }) => {
    const holder = navigation.collection ? navigation.target() : type;
    const length = sizes[types.indexOf(holder)]!;
    return fc.array(fc.option(fc.nat(1023), { nil: undefined, freq: 5 }), { minLength: length, maxLength: length });
  });
  return fc
    .tuple(
      fc.tuple(
        ...types.map((type, i) =>
          rowsOf(type, { ...options, minLength: i === 0 ? (options.minLength ?? 0) : 0, maxLength: sizes[i]! }),
        ),
      ),
      fc.tuple(...choices),
    )
    .map(([generated, links]) => {
      const rowsByType = new Map(types.map((type, i) => [type, generated[i]!.map((row) => ({ ...row }))]));
      navigations.forEach(({ type, navigation }, n) => {
        const { holder, referenced, pairs } = linkOf(type, navigation);
        const candidates = rowsByType.get(referenced)!;
        if (candidates.length === 0) return;
        rowsByType.get(holder)!.forEach((row, i) => {
          const pick = links[n]![i];
          if (pick === undefined) return;
          const linked = candidates[pick % candidates.length]!;
          for (const { named, naming } of pairs) row[naming.name] = linkValue(linked[named.name], naming);
        });
      });
      if (options.danglingKeys === false) keepKeysThatName(rowsByType, navigations);
      // a link into a key may make two rows one: the first stays
      const distinct = (type: EntityType): Row[] => {
        const seen = new Set<string>();
        return rowsByType.get(type)!.filter((row) => {
          const key = keyOf(type, row);
          if (seen.has(key)) return false;
          seen.add(key);
          return true;
        });
      };
      const related: Record<string, Row[]> = {};
      for (const type of types.slice(1)) related[type.name] = distinct(type);
      return { rows: distinct(entityType), related };
    });
}
