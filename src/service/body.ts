// Validation and normalization of JSON request bodies (MODEL.md "Writes in general"): creates (POST), updates
// (PATCH) and action calls. Everything is checked before anything is written, and every problem of a body is
// reported at once: the first as the error, the others in `details`, each with `target` naming the field.
//
// A body's text is read by `parseJsonBody` (json-reader.ts): numbers arrive as `JsonNumber`s holding the digits sent,
// so an Edm.Decimal or Edm.Int64 is exactly what the client wrote, and a name twice in one object is refused there.
// Values from elsewhere (`import`'s CSV, embedders, tests) may be plain JavaScript numbers: a decimal is then read by
// its shortest round-trip text, and an Int64 must be a safe integer.
//
// Names are looked up in the entity type's Map, never on an object, and rows are built in a Map and returned as
// plain objects of own data properties (Object.fromEntries defines, never assigns): `__proto__`, `constructor` and
// friends in a body are unknown fields like any other and never reach a prototype.
import { compareDecimal, decimalToString, parseDecimal, type Decimal } from '../values/decimal.js';
import { combineErrors, ODataError } from '../errors.js';
import type { EdmPrimitiveType } from '../values/edm.js';
import {
  isRequiredOnCreate,
  type ActionDefinition,
  type EntityType,
  type PropertyDefinition,
  type Row,
  type RowRule,
} from '../model/schema.js';
import { INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN } from '../values/arithmetic.js';
import { readDateText } from '../values/calendar.js';
import { suggest } from '../values/suggest.js';
import { parseDuration, readInstantText, readTimeOfDayText } from '../values/temporal.js';
import { codePointLength } from '../values/text.js';
import { JsonNumber, JsonSyntaxError, readJson, type JsonValue } from './json-reader.js';

export interface BodyOptions {
  /** IANA time zone in which an offset-less DateTimeOffset is read, for properties listed in `offsetlessInstants` (MeterReadings.ReadingDate); default 'UTC'. */
  readonly timeZone?: string;
  readonly offsetlessInstants?: readonly string[];
  /** Maximum decoded size of a Binary value; larger is a 413 (default 10 MiB). */
  readonly maxBinaryBytes?: number;
  /** Maximum length in characters of a string whose property declares no maxLength (default 1,048,576). */
  readonly maxStringLength?: number;
  /**
   * Computed properties in a create body are read like the others instead of refused: records that were stored
   * before (a benchmark's data file), not a client's request.
   */
  readonly acceptComputed?: boolean;
}

/**
 * A request body's JSON text as the value the checks below read, numbers with their exact digits; a 400
 * `InvalidBody` with the position when it is not JSON (or nests deeper than 100).
 */
export function parseJsonBody(text: string): JsonValue {
  try {
    return readJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new ODataError('InvalidBody', `The body is not valid JSON: ${error.message}`, { position: error.position });
  }
}

/** The default cap on a decoded Binary value (POAttachments.ContentBase64: 10 MiB, MODEL.md). */
const DEFAULT_MAX_BINARY_BYTES = 10 * 1024 * 1024;
/**
 * The default cap on a string whose property declares no maxLength: no field of a record is unbounded, so that a
 * client cannot store values that make every read of the set too large to answer.
 */
export const DEFAULT_MAX_STRING_LENGTH = 1024 * 1024;
/** At most this many problems are listed; the rest are counted in a last detail. */
const MAX_PROBLEMS = 50;
/** Received values are quoted up to this many characters in messages. */
const QUOTE_LIMIT = 40;
/** Longer numeric text is not read as a decimal (no facet in a real model needs more; keeps BigInt work bounded). */
const MAX_DECIMAL_TEXT = 1000;

// ── the public API ───────────────────────────────────────────────────────────────────────────────

/** A create body: returns the row of the fields sent (normalized), without defaults (the store fills those). Throws ODataError. */
export function checkCreateBody(entityType: EntityType, body: unknown, options: BodyOptions = {}): Row {
  const object = bodyObject(body);
  const context = makeContext(entityType.name, 'field', options);
  const problems = new Problems();
  const row = new Map<string, unknown>();
  const sent = new Set(Object.keys(object));
  for (const name of sent) {
    if (isAnnotation(name, entityType.properties)) continue;
    const property = entityType.properties.get(name);
    if (property === undefined) {
      problems.add(unknownField(name, context, writableNames(entityType, 'create')));
      continue;
    }
    if (property.computed === true && options.acceptComputed !== true) {
      problems.add(computedField(name, object, entityType.name));
      continue;
    }
    const result = checkValue(name, property, ownValue(object, name), context);
    if (result.ok) row.set(name, result.value);
    else problems.add(result.error);
  }
  for (const property of entityType.properties.values()) {
    if (isRequiredOnCreate(property) && !sent.has(property.name))
      problems.add(missingField(property.name, `${property.name} is required to create ${article(entityType.name)}`));
  }
  problems.throwIfAny();
  return plainRow(row);
}

/**
 * An update body: every field sent, normalized. Without `key.fromPath` (collection-path PATCH) the key properties
 * travel in the body and must all be present; with it (canonical key path) each must be absent from the body or equal
 * to the address's value. Key properties identify the entity and are never changes (so an immutable or computed key
 * is accepted here); `key` is returned in key order.
 */
export function checkUpdateBody(
  entityType: EntityType,
  body: unknown,
  key: { readonly fromPath?: Row },
  options: BodyOptions = {},
): { key: Row; changes: Row } {
  const object = bodyObject(body);
  const context = makeContext(entityType.name, 'field', options);
  const problems = new Problems();
  const fromPath = key.fromPath;
  const keyValues = new Map<string, unknown>();
  const changes = new Map<string, unknown>();
  const sent = new Set(Object.keys(object));
  for (const name of sent) {
    if (isAnnotation(name, entityType.properties)) continue;
    const property = entityType.properties.get(name);
    if (property === undefined) {
      problems.add(unknownField(name, context, writableNames(entityType, 'update')));
      continue;
    }
    const value = ownValue(object, name);
    if (property.isKey) {
      // A key property identifies the entity (even a computed or immutable one): never a change.
      const result = checkValue(name, property, value, context);
      if (!result.ok) {
        problems.add(result.error);
        continue;
      }
      const pathValue = fromPath === undefined ? undefined : ownValue(fromPath, name);
      if (pathValue !== undefined) {
        const expected = normalizedPathValue(property, pathValue, context);
        if (String(expected) !== String(result.value)) {
          problems.add(
            invalid(
              name,
              `${name} in the body (${quote(result.value)}) differs from the key in the address ` +
                `(${quote(expected)}); a key cannot be changed`,
            ),
          );
        }
      } else {
        keyValues.set(name, result.value);
      }
      continue;
    }
    if (property.computed === true) {
      problems.add(computedField(name, object, entityType.name));
      continue;
    }
    if (property.immutable === true) {
      problems.add(
        invalid(
          name,
          `${name} can only be set when ${article(entityType.name)} is created; received ${describeValue(value)}`,
        ),
      );
      continue;
    }
    const result = checkValue(name, property, value, context);
    if (result.ok) changes.set(name, result.value);
    else problems.add(result.error);
  }
  const keyRow = new Map<string, unknown>();
  for (const property of entityType.key) {
    const pathValue = fromPath === undefined ? undefined : ownValue(fromPath, property.name);
    if (pathValue !== undefined) keyRow.set(property.name, normalizedPathValue(property, pathValue, context));
    else if (keyValues.has(property.name)) keyRow.set(property.name, keyValues.get(property.name));
    else if (!sent.has(property.name)) {
      const parts = entityType.key.map((k) => k.name).join(', ');
      problems.add(
        missingField(
          property.name,
          `${property.name} is required in the body to identify the ${entityType.name} to update ` +
            `(its key: ${parts})`,
        ),
      );
    }
  }
  problems.throwIfAny();
  return { key: plainRow(keyRow), changes: plainRow(changes) };
}

/**
 * The parameters of a bound action (AddComment, RemoveActualLabor), with the same type rules as entity fields;
 * required parameters are the non-nullable ones. Also applies the action's rules. Returns the parameters sent,
 * normalized.
 */
export function checkActionBody(action: ActionDefinition, body: unknown, options: BodyOptions = {}): Row {
  const object = bodyObject(body);
  const parameters = new Map(Object.entries(action.parameters));
  const context = makeContext(action.name, 'parameter', options);
  const problems = new Problems();
  const row = new Map<string, unknown>();
  const sent = new Set(Object.keys(object));
  for (const name of sent) {
    if (isAnnotation(name, parameters)) continue;
    const parameter = parameters.get(name);
    if (parameter === undefined) {
      problems.add(unknownField(name, context, parameters.keys()));
      continue;
    }
    const result = checkValue(name, parameter, ownValue(object, name), context);
    if (result.ok) row.set(name, result.value);
    else problems.add(result.error);
  }
  for (const [name, parameter] of parameters) {
    if (parameter.nullable === false && !sent.has(name))
      problems.add(missingField(name, `${name} is required by ${action.name}`));
  }
  const result = plainRow(row);
  applyRules(action.rules, result, problems);
  problems.throwIfAny();
  return result;
}

/**
 * The model's rules for a body (an entity type's or an action's, RowRule): all of them, every problem reported.
 * Only fields present in `row` are checked: on a PATCH that sends one of two related fields, comparing with the
 * stored other one is the store's job.
 */
export function checkRules(rules: readonly RowRule[] | undefined, row: Row): void {
  const problems = new Problems();
  applyRules(rules, row, problems);
  problems.throwIfAny();
}

function applyRules(rules: readonly RowRule[] | undefined, row: Row, problems: Problems): void {
  for (const rule of rules ?? []) {
    const problem = rule(row);
    if (problem !== undefined) problems.add(invalid(problem.target, problem.message, problem.position));
  }
}

// ── bodies, fields and problems ──────────────────────────────────────────────────────────────────

type Body = Readonly<Record<string, unknown>>;

interface Context {
  /** The entity type or action name, for messages. */
  readonly owner: string;
  /** What a member is called in messages: an entity's field or an action's parameter. */
  readonly member: 'field' | 'parameter';
  readonly timeZone: string;
  readonly offsetless: ReadonlySet<string>;
  readonly maxBinaryBytes: number;
  readonly maxStringLength: number;
}

function makeContext(owner: string, member: Context['member'], options: BodyOptions): Context {
  return {
    owner,
    member,
    timeZone: options.timeZone ?? 'UTC',
    offsetless: new Set(options.offsetlessInstants ?? []),
    maxBinaryBytes: options.maxBinaryBytes ?? DEFAULT_MAX_BINARY_BYTES,
    maxStringLength: options.maxStringLength ?? DEFAULT_MAX_STRING_LENGTH,
  };
}

/** A JSON object as parsers give it: a plain object (its prototype is some realm's Object.prototype) or a null-prototype one. */
function bodyObject(body: unknown): Body {
  const prototype: unknown = typeof body === 'object' && body !== null ? Object.getPrototypeOf(body) : undefined;
  if (
    prototype === undefined ||
    (prototype !== null && Object.getPrototypeOf(prototype) !== null) ||
    Array.isArray(body)
  ) {
    throw new ODataError('InvalidBody', `The request body must be a JSON object; received ${describeValue(body)}`);
  }
  return body as Body;
}

/** An own data property's value (never a getter's, never an inherited one); undefined when there is none. */
function ownValue(object: object, name: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, name);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

function plainRow(row: ReadonlyMap<string, unknown>): Row {
  return Object.fromEntries(row);
}

/**
 * OData instance annotations (`@odata.type`, `Quantity@Core.Description`) are control information, not fields:
 * clients such as Olingo and the .NET client send `@odata.type`. They are ignored, but only when they annotate the
 * body itself or one of its fields.
 */
function isAnnotation(name: string, members: ReadonlyMap<string, unknown>): boolean {
  const at = name.indexOf('@');
  if (at === -1) return false;
  if (at > 0 && !members.has(name.slice(0, at))) return false;
  return /^@[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:#\w+)?$/.test(name.slice(at));
}

/** The names a client may send, for "did you mean" (a computed name would only lead to the next 400). */
function writableNames(entityType: EntityType, mode: 'create' | 'update'): string[] {
  const names: string[] = [];
  for (const property of entityType.properties.values()) {
    if (mode === 'update' && property.isKey) names.push(property.name);
    else if (property.computed !== true && (mode === 'create' || property.immutable !== true))
      names.push(property.name);
  }
  return names;
}

/** 'a PurchaseOrder', 'an Account'. */
function article(name: string): string {
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}`;
}

function invalid(target: string, message: string, position?: number): ODataError {
  return new ODataError('InvalidBody', message, position === undefined ? { target } : { target, position });
}

function missingField(name: string, message: string): ODataError {
  return invalid(name, `${message}; it is missing from the body`);
}

function computedField(name: string, object: Body, owner: string): ODataError {
  return invalid(
    name,
    `${name} is set by the server and cannot be sent in ${article(owner)} body; received ${describeValue(ownValue(object, name))}`,
  );
}

function unknownField(name: string, context: Context, candidates: Iterable<string>): ODataError {
  const hint = name.length <= 128 ? suggest(name, candidates) : undefined;
  return new ODataError(
    'UnknownProperty',
    `${context.owner} has no ${context.member} ${quoteName(name)}${hint === undefined ? '' : `; did you mean '${hint}'?`}`,
    { target: truncate(name, 128) },
  );
}

class Problems {
  private readonly list: ODataError[] = [];
  private more = 0;

  add(problem: ODataError): void {
    if (this.list.length < MAX_PROBLEMS) this.list.push(problem);
    else this.more++;
  }

  /** One error: 400s first (a malformed body is a 400 whatever its size), then 413s, each in body order. */
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const ordered = [...this.list.filter((p) => p.status === 400), ...this.list.filter((p) => p.status !== 400)];
    if (this.more > 0)
      ordered.push(new ODataError('InvalidBody', `${this.more} more problems in the body are not listed`));
    throw combineErrors(ordered);
  }
}

// ── values ───────────────────────────────────────────────────────────────────────────────────────

type Checked = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: ODataError };

function accept(value: unknown): Checked {
  return { ok: true, value };
}

function reject(error: ODataError): Checked {
  return { ok: false, error };
}

/** What each type expects, said the same way in every message. */
function expectation(type: EdmPrimitiveType, offsetless: string | undefined): string {
  switch (type) {
    case 'Edm.String':
      return 'a JSON string (Edm.String)';
    case 'Edm.Boolean':
      return 'true or false (Edm.Boolean)';
    case 'Edm.Int32':
      return `an integer JSON number between ${INT32_MIN} and ${INT32_MAX} (Edm.Int32)`;
    case 'Edm.Int64':
      return `an integer between ${INT64_MIN} and ${INT64_MAX} (Edm.Int64): a JSON number or a string of digits`;
    case 'Edm.Decimal':
      return 'a decimal number (Edm.Decimal): a JSON number or a numeric string such as "12.50"';
    case 'Edm.Double':
      return 'a JSON number (Edm.Double)';
    case 'Edm.Date':
      return 'a date in the form YYYY-MM-DD between 0001-01-01 and 9999-12-31 (Edm.Date)';
    case 'Edm.DateTimeOffset':
      return offsetless === undefined
        ? 'a date and time with a time zone offset, such as 2024-05-01T08:30:00Z or 2024-05-01T08:30:00+02:00 ' +
            '(Edm.DateTimeOffset)'
        : 'a date and time such as 2024-05-01T08:30:00 (read in the time zone ' +
            `${offsetless}), 2024-05-01T08:30:00Z or 2024-05-01T08:30:00+02:00 (Edm.DateTimeOffset)`;
    case 'Edm.TimeOfDay':
      return 'a time of day in the form HH:MM[:SS[.fff]] (Edm.TimeOfDay)';
    case 'Edm.Duration':
      return 'an ISO 8601 duration such as P1DT2H30M (Edm.Duration)';
    case 'Edm.Guid':
      return 'a GUID in the form 01234567-89ab-cdef-0123-456789abcdef (Edm.Guid)';
    case 'Edm.Binary':
      return 'base64 or base64url text (Edm.Binary)';
  }
}

/** Checks one value against its property's type and facets; gives the normalized value or the problem. */
function checkValue(name: string, property: PropertyDefinition, value: unknown, context: Context): Checked {
  if (value === null) {
    return property.nullable === false ? reject(invalid(name, `${name} cannot be null`)) : accept(null);
  }
  const type = property.type;
  const offsetless = type === 'Edm.DateTimeOffset' && context.offsetless.has(name) ? context.timeZone : undefined;
  const wrong = (reason?: string): Checked =>
    reject(
      invalid(
        name,
        `${name} must be ${expectation(type, offsetless)}; received ${describeValue(value)}` +
          (reason === undefined ? '' : ` (${reason})`),
      ),
    );
  switch (type) {
    case 'Edm.String': {
      if (typeof value !== 'string') return wrong();
      const problem = textProblem(value);
      if (problem !== undefined) return reject(invalid(name, `${name} ${problem.message}`, problem.position));
      // A vocabulary says more than a length: check it first.
      if (property.allowedValues !== undefined && !property.allowedValues.includes(value)) {
        const hint = value.length <= 128 ? suggest(value, property.allowedValues) : undefined;
        return reject(
          invalid(
            name,
            `${name} must be one of ${property.allowedValues.join(', ')}; received ${describeValue(value)}` +
              (hint === undefined ? '' : `; did you mean '${hint}'?`),
          ),
        );
      }
      const maxLength = property.maxLength ?? context.maxStringLength;
      if (value.length > maxLength) {
        const length = codePointLength(value);
        if (length > maxLength) {
          return reject(
            invalid(
              name,
              `${name} must be at most ${maxLength} characters long; received ${length} characters: ` + quoteCut(value),
            ),
          );
        }
      }
      return accept(value);
    }
    case 'Edm.Boolean':
      return typeof value === 'boolean' ? accept(value) : wrong();
    case 'Edm.Int32': {
      // read as JSON.parse reads it (the nearest double), as before exact reading
      const n = value instanceof JsonNumber ? value.toNumber() : value;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX) return wrong();
      return checkBounds(name, property, n === 0 ? 0 : n, parseDecimal(n)!);
    }
    case 'Edm.Int64': {
      let n: bigint;
      if (value instanceof JsonNumber) {
        // exact: the digits sent, whatever their size (`1.0`, `1e3` and `-0` are integers too)
        const decimal = value.text.length <= MAX_DECIMAL_TEXT ? parseDecimal(value.text) : undefined;
        if (decimal === undefined || decimal.exponent < 0) return wrong();
        // more than 19 digits is out of range: no BigInt is built for `1e6000`
        if (decimalDigits(decimal).integer > 19) return wrong('out of range');
        n = decimal.coefficient * 10n ** BigInt(decimal.exponent);
        if (n < INT64_MIN || n > INT64_MAX) return wrong('out of range');
      } else if (typeof value === 'number') {
        if (!Number.isInteger(value)) return wrong();
        // a JavaScript number this large may have lost digits already (a body's JsonNumber has not)
        if (!Number.isSafeInteger(value))
          return wrong('an integer beyond ±9007199254740991 must be sent as a string of digits to stay exact');
        n = BigInt(value);
      } else if (typeof value === 'string' && /^-?\d{1,40}$/.test(value)) {
        n = BigInt(value);
        if (n < INT64_MIN || n > INT64_MAX) return wrong('out of range');
      } else {
        return wrong();
      }
      // A safe integer stays a number; a larger one is kept exact as its canonical digits.
      const normalized =
        n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : `${n}`;
      return checkBounds(name, property, normalized, parseDecimal(n)!);
    }
    case 'Edm.Decimal': {
      let decimal: Decimal | undefined;
      if (value instanceof JsonNumber) {
        if (value.text.length > MAX_DECIMAL_TEXT) return wrong(`more than ${MAX_DECIMAL_TEXT} characters`);
        decimal = parseDecimal(value.text);
        if (decimal === undefined) return wrong('its exponent is out of range');
      } else if (typeof value === 'number') decimal = parseDecimal(value);
      else if (typeof value === 'string' && value.length <= MAX_DECIMAL_TEXT) decimal = parseDecimal(value);
      if (decimal === undefined) return wrong();
      const digits = decimalDigits(decimal);
      const { precision, scale } = property;
      if (scale !== undefined && digits.fraction > scale) {
        return reject(
          invalid(
            name,
            `${name} must have at most ${scale} digits after the decimal point (${decimalFacets(property)}); ` +
              `received ${describeValue(value)}`,
          ),
        );
      }
      if (precision !== undefined) {
        const integerLimit = scale === undefined ? undefined : precision - scale;
        if (integerLimit !== undefined && digits.integer > integerLimit) {
          return reject(
            invalid(
              name,
              `${name} must have at most ${integerLimit} digits before the decimal point ` +
                `(${decimalFacets(property)}); received ${describeValue(value)}`,
            ),
          );
        }
        if (integerLimit === undefined && digits.integer + digits.fraction > precision) {
          return reject(
            invalid(
              name,
              `${name} must have at most ${precision} digits (${decimalFacets(property)}); received ${describeValue(value)}`,
            ),
          );
        }
      }
      return checkBounds(name, property, decimalToString(decimal), decimal);
    }
    case 'Edm.Double': {
      const n = value instanceof JsonNumber ? value.toNumber() : value;
      if (typeof n !== 'number') return wrong();
      if (!Number.isFinite(n)) return wrong(value instanceof JsonNumber ? 'beyond the range of a double' : undefined);
      return checkBounds(name, property, n, parseDecimal(n)!);
    }
    case 'Edm.Date': {
      if (typeof value !== 'string') return wrong();
      const date = readDateText(value, true);
      return typeof date === 'number' ? accept(value) : wrong(date?.problem);
    }
    case 'Edm.DateTimeOffset': {
      if (typeof value !== 'string') return wrong();
      const instant = readInstantText(value, { storable: true, offsetless });
      return typeof instant === 'number' ? accept(new Date(instant).toISOString()) : wrong(instant?.problem);
    }
    case 'Edm.TimeOfDay': {
      if (typeof value !== 'string') return wrong();
      const time = readTimeOfDayText(value);
      return typeof time === 'number' ? accept(value) : wrong(time?.problem);
    }
    case 'Edm.Duration':
      return typeof value === 'string' && parseDuration(value) !== undefined ? accept(value) : wrong();
    case 'Edm.Guid': {
      if (typeof value !== 'string' || !/^[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$/.test(value))
        return wrong();
      return accept(value.toLowerCase());
    }
    case 'Edm.Binary': {
      if (typeof value !== 'string') return wrong();
      const unpadded = value.endsWith('==') ? value.slice(0, -2) : value.endsWith('=') ? value.slice(0, -1) : value;
      const size = Math.floor((unpadded.length * 3) / 4);
      const limit = Math.min(property.maxLength ?? Infinity, context.maxBinaryBytes);
      // Checked before decoding, so that an oversized upload costs no allocation.
      if (size > limit) {
        return reject(
          new ODataError(
            'PayloadTooLarge',
            `${name} is ${size} bytes once decoded; at most ${limit} bytes are accepted`,
            { target: name },
          ),
        );
      }
      const bad = value.search(/[^A-Za-z0-9+/_=-]/);
      if (bad !== -1) return wrong(`the character at position ${bad} is not a base64 character`);
      if (unpadded.includes('=')) return wrong('the padding = is only allowed at the end');
      if (/[+/]/.test(unpadded) && /[-_]/.test(unpadded))
        return wrong('it mixes the base64 (+ /) and base64url (- _) alphabets');
      if (unpadded.length % 4 === 1 || (unpadded.length !== value.length && value.length % 4 !== 0))
        return wrong('its length or padding is not that of base64');
      const decoded = Buffer.from(unpadded, /[-_]/.test(unpadded) ? 'base64url' : 'base64');
      return accept(new Uint8Array(decoded)); // a copy that owns its bytes (not Buffer's shared pool)
    }
  }
}

/** minimum / maximum / exclusiveMinimum, compared exactly as decimals. */
function checkBounds(name: string, property: PropertyDefinition, normalized: unknown, value: Decimal): Checked {
  const { minimum, maximum } = property;
  const exclusive = property.exclusiveMinimum === true;
  const low = minimum === undefined ? undefined : parseDecimal(minimum);
  const high = maximum === undefined ? undefined : parseDecimal(maximum);
  const tooLow = low !== undefined && (exclusive ? compareDecimal(value, low) <= 0 : compareDecimal(value, low) < 0);
  const tooHigh = high !== undefined && compareDecimal(value, high) > 0;
  if (!tooLow && !tooHigh) return accept(normalized);
  const lowText = minimum === undefined ? '' : exclusive ? `greater than ${minimum}` : `at least ${minimum}`;
  const range =
    minimum !== undefined && maximum !== undefined
      ? exclusive
        ? `${lowText} and at most ${maximum}`
        : `between ${minimum} and ${maximum}`
      : minimum !== undefined
        ? lowText
        : `at most ${maximum}`;
  return reject(invalid(name, `${name} must be ${range}; received ${decimalToString(value)}`));
}

function decimalFacets(property: PropertyDefinition): string {
  const facets = [
    ...(property.precision === undefined ? [] : [`precision ${property.precision}`]),
    ...(property.scale === undefined ? [] : [`scale ${property.scale}`]),
  ];
  return facets.length === 0 ? 'Edm.Decimal' : `Edm.Decimal, ${facets.join(', ')}`;
}

/** Digits before and after the point of a normalized decimal: 120.5 → 3 and 1; 0.05 → 0 and 2; 0 → 0 and 0. */
function decimalDigits(value: Decimal): { readonly integer: number; readonly fraction: number } {
  if (value.coefficient === 0n) return { integer: 0, fraction: 0 };
  const length = (value.coefficient < 0n ? -value.coefficient : value.coefficient).toString().length;
  return { integer: Math.max(0, length + value.exponent), fraction: Math.max(0, -value.exponent) };
}

/** The key value from the address, normalized like a body value when it reads as one (for comparison and output). */
function normalizedPathValue(property: PropertyDefinition, value: unknown, context: Context): unknown {
  const result = checkValue('key', property, value, context);
  return result.ok ? result.value : value;
}

// ── text ─────────────────────────────────────────────────────────────────────────────────────────

/** U+0000 (no database column holds it) or a lone surrogate (not Unicode text), with its position. */
function textProblem(text: string): { message: string; position: number } | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return { message: `must not contain the character U+0000 (found at position ${i})`, position: i };
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      const code = c.toString(16).toUpperCase();
      return {
        message: `must be well-formed Unicode text; it has a lone surrogate U+${code} at position ${i}`,
        position: i,
      };
    }
  }
  return undefined;
}

/** The first `limit` code points of `text`, never splitting a surrogate pair. */
function prefix(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = 0;
  for (let n = 0; n < limit && end < text.length; n++) {
    const c = text.charCodeAt(end);
    const next = end + 1 < text.length ? text.charCodeAt(end + 1) : 0;
    end += c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff ? 2 : 1;
  }
  return text.slice(0, end);
}

/** At most `limit` code points, with `…` when cut. */
function truncate(text: string, limit: number): string {
  const start = prefix(text, limit);
  return start.length === text.length ? text : `${start}…`;
}

/** Text quoted and escaped as JSON, cut at about 40 characters (`…` after the quote when cut). */
function quoteCut(text: string): string {
  const start = prefix(text, QUOTE_LIMIT);
  return start.length === text.length ? JSON.stringify(text) : `${JSON.stringify(start)}…`;
}

/** A received value as a message shows it: strings quoted and escaped, cut at about 40 characters. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') {
    const quoted = quoteCut(value);
    return quoted.endsWith('…') ? `${quoted} (${codePointLength(value)} characters)` : quoted;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof JsonNumber) {
    // the digits sent, cut like a string (a number may be 400 digits long)
    const shown = truncate(value.text, QUOTE_LIMIT);
    return shown.length === value.text.length ? shown : `${shown} (${value.text.length} characters)`;
  }
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

/** A normalized value in a message (key comparisons). */
function quote(value: unknown): string {
  return typeof value === 'string' ? `'${truncate(value, QUOTE_LIMIT)}'` : describeValue(value);
}

/** A name from the body: plain if it looks like one, else escaped. */
function quoteName(name: string): string {
  return /^[\w.@#-]{1,128}$/.test(name) ? `'${name}'` : describeValue(name);
}
