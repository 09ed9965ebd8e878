// The reference service, free of any HTTP framework: a request (method, URL, headers, body bytes) in, a response
// (status, headers, body) out. The Fastify and node:http adapters only carry bytes to and from `handle`.
//
// Order of checks: the site (404), then credentials (401), then the resource (404), the method (405), the body's
// media type (415) and size (413), then the query or body (400), then the data (404, 409). (An adapter refuses a body
// beyond maxBodyBytes while reading it, before any of these: that 413 comes first.)
import { errorCatalog, isODataError, ODataError, toODataErrorBody } from '../errors.js';
import { toCsdlJson, toCsdlXml } from '../model/csdl.js';
import {
  readableProperties,
  type ActionDefinition,
  type EntitySet,
  type EntityType,
  type NavigationProperty,
  type Property,
  type Row,
} from '../model/schema.js';
import { parseQuery } from '../syntax/query-string.js';
import type { LiteralValue } from '../syntax/ast.js';
import { validateQuery, type QueryLimits } from '../validate/bind.js';
import { suggest } from '../values/suggest.js';
import type { BoundQuery } from '../validate/bound.js';
import type { Backend } from './backend.js';
import {
  checkActionBody,
  checkRules,
  checkCreateBody,
  checkUpdateBody,
  parseJsonBody,
  type BodyOptions,
} from '../service/body.js';
import { entityMembers, propertyValueJson, rawEntityWriter, rawValueText } from '../service/json.js';
import { negotiateJson, negotiateMetadata, negotiateRaw, type JsonFormat } from '../service/negotiate.js';
import { entitySetNames, plantDataModel } from './model.js';
import { parseResource, splitPath, type KeyPredicate, type PathSegment, type ResourcePath } from '../service/paths.js';
import { collection, collections, type Collection } from './store/collections.js';
import type { ReadOptions } from './store/driver.js';
import { computeFields, insertEntity, recordMeterReading } from './writes.js';
import { addComment, removeLabor } from './work-orders.js';
import type { ReadStatements, SiteStore } from './store/site-store.js';
import { RateLimiter, type RateLimit } from '../service/rate-limit.js';
import type { Credential, Site } from './tenancy.js';

export interface ServiceRequest {
  readonly method: string;
  /** The path and query string as received (`/north/ODataApi/v1/Parts?$top=5`). */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body?: Uint8Array | undefined;
  /** The request's id (the adapter's): answered as `x-request-id` and as a detail of every error body. */
  readonly id?: string | undefined;
  /** The client's address: failed sign-ins are rate-limited per address. */
  readonly remoteAddress?: string | undefined;
  /**
   * Aborted when the client is gone (its connection closed before the answer): a running query is stopped (a
   * PostgreSQL cancel, a SQLite reader replaced) instead of finishing for nobody.
   */
  readonly signal?: AbortSignal | undefined;
}

export interface ServiceResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Text (JSON, XML, plain text), or bytes (a binary property's `/$value`). */
  readonly body?: string | Uint8Array;
  /** The failure behind a 500, for the adapter's log; never sent. */
  readonly error?: unknown;
}

export interface ServiceOptions {
  readonly backend: Backend;
  /** Most entities in one response; more come through @odata.nextLink (default 100). */
  readonly pageSize?: number;
  /**
   * Most bytes of entities in one page (default 4 MiB): a page ends early, with its next link, when the next entity
   * would pass it, so that a few very large records cannot make one answer huge. A page holds at least one entity.
   */
  readonly maxPageBytes?: number;
  /** Largest request body in bytes (default 16 MiB: a 10 MiB attachment is about 13.4 MiB of base64). */
  readonly maxBodyBytes?: number;
  /** Limits for query options (validateQuery); the service caps $top at nothing beyond the page size. */
  readonly limits?: Partial<QueryLimits>;
  /** The absolute base of links when the Host header should not be trusted (`https://odata.example.com`). */
  readonly publicUrl?: string;
  /** Also accept the site as the first label of the host name (`north.odata.example.com/ODataApi/v1/...`). */
  readonly siteFromHost?: boolean;
  /**
   * Told about every failure that is not a client's mistake (the 500s), with the request. Without it the failure
   * travels on the response (`error`) for the adapter to log, as the Fastify and node:http adapters do.
   */
  readonly onInternalError?: (error: unknown, request: ServiceRequest) => void;
  /** Requests per second per credential, and failed sign-ins per second per client address (default: no limit). */
  readonly rateLimit?: RateLimit;
}

/** On every answer, errors included: the service serves data to programs, never pages to frame or sniff. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
};

/** Errors are always OData JSON, whatever the request accepts (a 406 itself is one). */
const ERROR_TYPE = 'application/json;odata.metadata=minimal;odata.streaming=true';

/** What the model lets clients do with an entity set's entities (a contained collection: read only). */
function capabilities(set: Collection): EntitySet | { readonly insertable: false; readonly updatable: false } {
  return plantDataModel.sets.get(set.name) ?? { insertable: false, updatable: false };
}

/** The action bound to the set's entities that a path segment names, plainly or qualified by the namespace. */
function boundAction(set: Collection, segment: string): ActionDefinition | undefined {
  const prefix = `${plantDataModel.namespace}.`;
  const name = segment.startsWith(prefix) ? segment.slice(prefix.length) : segment;
  return plantDataModel.actions.find((action) => action.name === name && action.boundTo === set.name);
}

function header(request: ServiceRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : (value as string | undefined);
}

/** `/health` and `/ready`: no site, no credentials. */
function isProbe(pathname: string): boolean {
  return pathname === '/health' || pathname === '/ready';
}

function httpError(code: keyof typeof errorCatalog, message: string, target?: string): ODataError {
  return new ODataError(code, message, target === undefined ? {} : { target });
}

export class ODataService {
  private readonly backend: Backend;
  private readonly pageSize: number;
  private readonly maxPageBytes: number;
  readonly maxBodyBytes: number;
  private readonly limits: Partial<QueryLimits>;
  private readonly metadataXml = toCsdlXml(plantDataModel);
  /** Read plans by site, collection, parent and query string, oldest first (at most 1,000). */
  private readonly plans = new Map<string, ReadPlan>();
  private readonly metadataJson = JSON.stringify(toCsdlJson(plantDataModel));
  private readonly limiter: RateLimiter | undefined;
  private shutdown = false;

  constructor(private readonly options: ServiceOptions) {
    this.backend = options.backend;
    this.pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1)
      throw new RangeError(`pageSize must be a positive integer, not ${options.pageSize}`);
    this.maxPageBytes = options.maxPageBytes ?? 4 * 1024 * 1024;
    if (!(this.maxPageBytes >= 1)) throw new RangeError(`maxPageBytes must be positive, not ${options.maxPageBytes}`);
    this.maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    this.limits = options.limits ?? {};
    this.limiter = options.rateLimit === undefined ? undefined : new RateLimiter(options.rateLimit);
  }

  /** Answers one request; never throws (an unexpected failure is a 500 without internals). */
  async handle(request: ServiceRequest): Promise<ServiceResponse> {
    let response: ServiceResponse;
    try {
      response = await this.route(request);
    } catch (error) {
      response = this.errorResponse(error, request.id);
      // a query stopped because its client left is no failure of the server: nobody is there to read the answer
      if (!isODataError(error) && request.signal?.aborted !== true) {
        if (this.options.onInternalError !== undefined) this.options.onInternalError(error, request);
        else response = { ...response, error };
      }
    }
    this.finish(response.headers, request.id);
    return response;
  }

  /**
   * The OData JSON error answer for an error (a 500 without internals for anything that is not an ODataError), with
   * the request id as a detail when there is one, and the security headers.
   */
  errorResponse(error: unknown, requestId?: string): ServiceResponse {
    const status = isODataError(error) ? error.status : 500;
    const headers: Record<string, string> = { 'content-type': ERROR_TYPE, 'odata-version': '4.0' };
    if (status === 401) headers['www-authenticate'] = 'Basic realm="odata", charset="UTF-8"';
    const allow = (error as { allow?: string } | null)?.allow;
    if (status === 405 && allow !== undefined) headers['allow'] = allow;
    const retryAfter = (error as { retryAfter?: number } | null)?.retryAfter;
    if ((status === 429 || status === 503) && retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
    this.finish(headers, requestId);
    let body = toODataErrorBody(error);
    if (requestId !== undefined) {
      body = {
        error: { ...body.error, details: [...(body.error.details ?? []), { code: 'RequestId', message: requestId }] },
      };
    }
    return { status, headers, body: JSON.stringify(body) };
  }

  /**
   * From now on `/ready` answers 503, and adapters refuse requests that arrive with `shutdownResponse` (503) while
   * they answer those already received. The Fastify adapter calls this when it starts to close.
   */
  beginShutdown(): void {
    this.shutdown = true;
  }

  get shuttingDown(): boolean {
    return this.shutdown;
  }

  /**
   * What every answer carries: the security headers, the request id, and while shutting down `Connection: close`
   * (so that a keep-alive client does not hold the drain open until its keep-alive timeout).
   */
  private finish(headers: Record<string, string>, requestId: string | undefined): void {
    Object.assign(headers, SECURITY_HEADERS);
    if (requestId !== undefined) headers['x-request-id'] = requestId;
    if (this.shutdown) headers['connection'] = 'close';
  }

  /**
   * Whether a request for `url` that arrives now gets `shutdownResponse`: during shutdown every one but the probes,
   * which answer for themselves (`/health` 200, `/ready` 503).
   */
  refuses(url: string): boolean {
    return this.shutdown && !isProbe(url.split('?')[0]!);
  }

  /** The 503 a request that arrives during shutdown gets. */
  shutdownResponse(requestId?: string): ServiceResponse {
    return this.errorResponse(
      Object.assign(new ODataError('ServiceUnavailable', 'The server is shutting down; retry on another instance'), {
        retryAfter: 1,
      }),
      requestId,
    );
  }

  /**
   * `/health`: the process answers. `/ready`: it is not shutting down, and its database answers a trivial query
   * with a connection (or SQLite reader) to spare: 503 with `Retry-After` while every one is held (`busy`).
   */
  private async probe(kind: 'health' | 'ready', method: string): Promise<ServiceResponse> {
    allow(method.toUpperCase(), ['GET']);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (kind === 'health') return { status: 200, headers, body: '{"status":"ok"}' };
    if (this.shutdown) return { status: 503, headers, body: '{"status":"shutting down"}' };
    const state = await this.backend.readiness();
    if (state.status === 'ready') return { status: 200, headers, body: '{"status":"ready"}' };
    if (state.status === 'busy') {
      headers['retry-after'] = String(state.retryAfter);
      return { status: 503, headers, body: '{"status":"busy"}' };
    }
    return { status: 503, headers, body: '{"status":"database unreachable"}' };
  }

  /** Spends a token of `key`; 429 when it has none left. */
  private limit(key: string): void {
    if (this.limiter === undefined) return;
    const wait = this.limiter.take(key);
    if (wait === 0) return;
    const seconds = Math.max(1, Math.ceil(wait));
    throw Object.assign(
      new ODataError(
        'TooManyRequests',
        `Rate limit of ${this.limiter.perSecond} requests per second exceeded; retry after ${seconds} s`,
      ),
      { retryAfter: seconds },
    );
  }

  // ── routing ────────────────────────────────────────────────────────────────

  private async route(request: ServiceRequest): Promise<ServiceResponse> {
    // an absolute-form target (`GET http://host/north/... HTTP/1.1`, RFC 9112 §3.2.2) names the host itself: its
    // authority replaces the Host header
    const absolute = ABSOLUTE_FORM.exec(request.url);
    const url = absolute === null ? request.url : request.url.slice(absolute[0].length) || '/';
    const host = absolute === null ? header(request, 'host') : absolute[1];
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    if (isProbe(pathname)) return this.probe(pathname === '/health' ? 'health' : 'ready', request.method);
    let { site: siteName, resource } = splitPath(pathname);
    if (resource === undefined && this.options.siteFromHost === true) {
      // north.odata.example.com/ODataApi/v1/...: the site is the host's first label
      const label = (host ?? '').split(':')[0]!.split('.')[0]!;
      const again = splitPath(`/${label}${pathname}`);
      if (again.resource !== undefined) ({ site: siteName, resource } = again);
    }
    const site = await this.backend.directory.site(siteName);
    if (site === undefined) throw httpError('NotFound', `No site ${JSON.stringify(siteName.slice(0, 63))}`);
    // a credential check holds a token of the client address while it runs and keeps it when the credentials are not
    // valid: an address that keeps failing waits before its next check costs a hash, however many it sends at once
    const address = `address\n${request.remoteAddress ?? ''}`;
    this.limit(address);
    let credential: Credential | undefined;
    try {
      credential = await this.backend.directory.authenticate(
        site.name,
        header(request, 'api_key'),
        header(request, 'authorization'),
      );
    } catch (error) {
      this.limiter?.refund(address);
      throw error;
    }
    if (credential !== undefined) this.limiter?.refund(address);
    else {
      const sent = header(request, 'api_key') !== undefined || header(request, 'authorization') !== undefined;
      throw httpError(
        'Unauthorized',
        sent ? 'The credentials are not valid for this site' : 'Send an API_KEY header or HTTP Basic credentials',
      );
    }
    this.limit(`${credential.site}\n${credential.kind}\n${credential.name}`);
    if (resource === undefined)
      throw httpError('NotFound', `No resource at ${pathname}; the service root is /${site.name}/ODataApi/v1`);
    const path = parseResource(resource);
    const context: Context = {
      site,
      credential,
      store: await this.backend.store(site.name),
      base: this.baseUrl(request, host, site.name),
      url,
      rawQuery,
      request,
    };
    return this.dispatch(path, context);
  }

  private baseUrl(request: ServiceRequest, hostHeader: string | undefined, site: string): string {
    if (this.options.publicUrl !== undefined) return `${this.options.publicUrl.replace(/\/$/, '')}/${site}/ODataApi/v1`;
    const host = hostHeader ?? 'localhost';
    const proto = header(request, 'x-forwarded-proto') === 'https' ? 'https' : 'http';
    return `${proto}://${host}/${site}/ODataApi/v1`;
  }

  private async dispatch(path: ResourcePath, c: Context): Promise<ServiceResponse> {
    const method = c.request.method.toUpperCase();
    switch (path.kind) {
      case 'service': {
        allow(method, ['GET']);
        const format = this.jsonFormat(c);
        return this.json(c, format, 200, {
          ...(format.metadata === 'none' ? {} : { '@odata.context': `${c.base}/$metadata` }),
          value: entitySetNames.map((name) => ({ name, kind: 'EntitySet', url: name })),
        });
      }
      case 'metadata': {
        allow(method, ['GET']);
        const kind = negotiateMetadata(header(c.request, 'accept'), formatOption(c.rawQuery));
        return kind === 'json'
          ? {
              status: 200,
              headers: { 'content-type': 'application/json', 'odata-version': '4.0' },
              body: this.metadataJson,
            }
          : {
              status: 200,
              headers: { 'content-type': 'application/xml', 'odata-version': '4.0' },
              body: this.metadataXml,
            };
      }
      case 'unsupported':
        throw httpError(
          'NotImplemented',
          `${path.what} is an OData resource this service does not offer yet; send each request on its own`,
        );
      case 'path':
        return this.path(path.segments, c, method);
    }
  }

  /**
   * `Set`, `Set/$count`, `Set(key)` and what may follow an entity: a property (`/$value`), an action, a navigation
   * (`/$count`, or a key and then a property of that entity). Names are resolved against the model here; a name that
   * is nothing of the model is a 404, a `$ref` of something that exists is a 501.
   */
  private async path(segments: readonly PathSegment[], c: Context, method: string): Promise<ServiceResponse> {
    const [first, ...rest] = segments;
    if (first === undefined || first.kind !== 'name') throw noResource(c);
    const set = this.set(first.name);
    if (first.key === undefined) {
      if (rest.length === 0) return this.collection(c, set, method);
      if (rest.length === 1 && rest[0]!.kind === '$count') {
        allow(method, ['GET']);
        return this.count(c, set);
      }
      const next = rest[0]!;
      throw httpError(
        'NotFound',
        `${set.name} is a collection: address an entity with a key, as ${set.name}('...')/${next.kind === 'name' ? next.name : next.kind}`,
      );
    }
    const key = this.key(set, first.key);
    const canonical = `${set.name}(${describeKey(key, true, set.entityType)})`;
    if (rest.length === 0) {
      allow(method, capabilities(set).updatable ? ['GET', 'PATCH'] : ['GET']);
      if (method === 'PATCH') return this.update(c, set, key);
      return this.readOne(c, set, key, set.name);
    }
    const [second, ...tail] = rest as [PathSegment, ...PathSegment[]];
    if (second.kind === '$ref') throw refUnsupported();
    if (second.kind !== 'name') throw noResource(c);
    const action = boundAction(set, second.name);
    if (action !== undefined && second.key === undefined && tail.length === 0) {
      allow(method, ['POST']);
      return this.action(c, action, key);
    }
    const property = set.entityType.properties.get(second.name);
    if (property !== undefined && second.key === undefined)
      return this.property(c, method, set, key, property, canonical, tail);
    const navigation = set.entityType.navigation.get(second.name);
    if (navigation === undefined) {
      throw httpError(
        'NotFound',
        `${set.entityType.name} has no property, navigation or action ${JSON.stringify(second.name.slice(0, 60))}`,
      );
    }
    const parent = await c.store.get(set, key, undefined, reading(c));
    if (parent === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    const child = collectionOf(navigation);
    const parentValues: Row = {};
    for (const [parentKey, childKey] of Object.entries(navigation.foreignKey))
      parentValues[childKey] = parent[parentKey];
    // a contained collection is named by its parent (Protocol §10: `WorkOrders('WO-1')/Comments`); other targets by
    // their own entity set
    const contextSet = navigation.contained === true ? `${canonical}/${navigation.name}` : child.name;
    if (second.key === undefined) {
      const [next] = tail;
      if (next === undefined) {
        allow(method, ['GET']);
        return this.read(c, child, parentValues, contextSet);
      }
      if (tail.length === 1 && next.kind === '$count') {
        allow(method, ['GET']);
        return this.count(c, child, parentValues);
      }
      if (tail.length === 1 && next.kind === '$ref') throw refUnsupported();
      throw httpError(
        'NotFound',
        `${navigation.name} is a collection: address one of its entities with a key, as ${navigation.name}(...)`,
      );
    }
    // one entity of the navigation: its key, with the parts the parent fixes taken from the parent
    const childKey = this.key(child, second.key, parentValues);
    const childCanonical =
      navigation.contained === true
        ? `${canonical}/${navigation.name}(${describeKey(pick(childKey, child.entityType.key), true, child.entityType)})`
        : `${child.name}(${describeKey(childKey, true, child.entityType)})`;
    const [next, ...more] = tail;
    if (next === undefined) {
      allow(method, ['GET']);
      return this.readOne(c, child, { ...parentValues, ...childKey }, contextSet);
    }
    if (next.kind === '$ref' && more.length === 0) throw refUnsupported();
    const childProperty =
      next.kind === 'name' && next.key === undefined ? child.entityType.properties.get(next.name) : undefined;
    if (childProperty === undefined) throw noResource(c);
    return this.property(c, method, child, { ...parentValues, ...childKey }, childProperty, childCanonical, more);
  }

  /** GET, POST and PATCH on an entity set (which of them the model lets clients use). */
  private collection(c: Context, set: Collection, method: string): Promise<ServiceResponse> {
    const { insertable, updatable } = capabilities(set);
    // PATCH of the set with the key in the body: the interface's form of an update
    allow(method, ['GET', ...(insertable ? ['POST'] : []), ...(updatable ? ['PATCH'] : [])]);
    if (method === 'POST') return set.name === 'MeterReadings' ? this.postMeterReading(c) : this.create(c, set);
    if (method === 'PATCH') return this.update(c, set, undefined);
    return this.read(c, set);
  }

  /** `/$count`: how many entities match $filter, as plain text. */
  private async count(c: Context, set: Collection, parent?: Row): Promise<ServiceResponse> {
    negotiateRaw(header(c.request, 'accept'), formatOption(c.rawQuery), 'text/plain');
    const bound = validateQuery(parseQuery(c.rawQuery), set.entityType, this.limits);
    return {
      status: 200,
      headers: { 'content-type': 'text/plain;charset=utf-8', 'odata-version': '4.0' },
      body: String(await c.store.count(set, bound, parent, reading(c))),
    };
  }

  /**
   * A property of one entity (Protocol §11.2.6): `{"@odata.context":…,"value":…}`, or its raw value with `/$value`
   * (§11.2.6.1); 204 when it is null.
   */
  private async property(
    c: Context,
    method: string,
    set: Collection,
    key: Row,
    property: Property,
    canonical: string,
    tail: readonly PathSegment[],
  ): Promise<ServiceResponse> {
    const raw = tail.length === 1 && tail[0]!.kind === '$value';
    if (tail.length > (raw ? 1 : 0)) throw noResource(c);
    allow(method, ['GET']);
    if (property.writeOnly === true)
      throw httpError('NotQueryable', `${property.name} on ${set.entityType.name} is write-only`, property.name);
    const mediaType = property.type === 'Edm.Binary' ? 'application/octet-stream' : 'text/plain';
    const format = raw ? undefined : this.jsonFormat(c);
    if (raw) negotiateRaw(header(c.request, 'accept'), formatOption(c.rawQuery), mediaType);
    const row = await c.store.get(set, key, undefined, reading(c));
    if (row === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    const value = row[property.name];
    if (value === null || value === undefined) return { status: 204, headers: { 'odata-version': '4.0' } };
    if (format === undefined) {
      const body = rawValueText(property, value);
      return {
        status: 200,
        headers: {
          'content-type': mediaType === 'text/plain' ? 'text/plain;charset=utf-8' : mediaType,
          'odata-version': '4.0',
        },
        body,
      };
    }
    const context =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${c.base}/$metadata#${canonical}/${property.name}`)},`;
    return {
      status: 200,
      headers: this.jsonHeaders(format),
      body: `{${context}"value":${propertyValueJson(property, value, format)}}`,
    };
  }

  private set(name: string): Collection {
    const set = plantDataModel.entitySets.has(name) ? collections.get(name) : undefined;
    if (set === undefined) {
      const near = suggest(name, entitySetNames);
      throw httpError(
        'NotFound',
        `No entity set ${JSON.stringify(name.slice(0, 60))}${near === undefined ? '' : `; did you mean ${near}?`}`,
      );
    }
    return set;
  }

  /**
   * A key predicate as key values, typed by the key properties. Under a navigation, `fixed` holds the key parts the
   * parent determines (its referential constraint): the predicate may name only the others (`Lines(2)` for
   * `Lines(PONumber='PO-1',LineNumber=2)`), and a part it names must agree with the parent.
   */
  private key(set: Collection, predicate: KeyPredicate, fixed: Row = {}): Row {
    const keys = set.entityType.key;
    const open = keys.filter((k) => !(k.name in fixed));
    const values = new Map<string, LiteralValue>();
    if (predicate.kind === 'single') {
      const only = open.length === 1 ? open[0] : keys.length === 1 ? keys[0] : undefined;
      if (only === undefined) {
        throw httpError(
          'InvalidSyntax',
          `${set.name} has a key of ${keys.length} parts: write ${keys.map((k) => `${k.name}=...`).join(',')}`,
        );
      }
      values.set(only.name, predicate.value);
    } else {
      for (const [name, value] of predicate.values) {
        if (!keys.some((k) => k.name === name))
          throw httpError('InvalidSyntax', `${name} is not part of the key of ${set.name}`);
        values.set(name, value);
      }
      const missing = open.filter((k) => !values.has(k.name)).map((k) => k.name);
      if (missing.length > 0)
        throw httpError('InvalidSyntax', `The key of ${set.name} also needs ${missing.join(', ')}`);
    }
    const row: Row = {};
    for (const property of keys) {
      const literal = values.get(property.name);
      if (literal === undefined) {
        row[property.name] = fixed[property.name];
        continue;
      }
      row[property.name] = keyValue(property, literal, set.name);
      if (property.name in fixed && String(fixed[property.name]) !== String(row[property.name]))
        throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(row)} under this parent`);
    }
    return row;
  }

  // ── reads ──────────────────────────────────────────────────────────────────

  private async read(c: Context, set: Collection, parent?: Row, contextPath = set.name): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    const plan = this.readPlan(c, set, parent);
    const { raw, count } = await c.store.runRead(plan.statements, reading(c));
    const write = format.ieee754Compatible ? plan.writeCompatible : plan.write;
    let body =
      format.metadata === 'none'
        ? '{'
        : `{"@odata.context":${JSON.stringify(`${c.base}/$metadata#${contextPath}${plan.selected}`)},`;
    // @odata.count is an Int64: a string under IEEE754Compatible=true (JSON Format §4.5.1)
    if (count !== undefined)
      body += format.ieee754Compatible ? `"@odata.count":"${count}",` : `"@odata.count":${count},`;
    body += '"value":[';
    // up to a page of rows, and no further than maxPageBytes once one is written
    const available = Math.min(raw.length, plan.pageTop);
    let written = 0;
    // a UTF-8 byte count costs about 1 µs per entity: while 3 bytes per character would still fit, the characters
    // are counted instead, and the bytes only once the page could come near the cap
    let bytes: number | undefined;
    for (; written < available; written++) {
      const entity = `${written === 0 ? '' : ','}{${write(raw[written]!)}}`;
      if (bytes === undefined && (body.length + entity.length) * 3 > this.maxPageBytes) bytes = Buffer.byteLength(body);
      if (bytes !== undefined) {
        const size = Buffer.byteLength(entity);
        if (written > 0 && bytes + size > this.maxPageBytes) break;
        bytes += size;
      }
      body += entity;
    }
    body += ']';
    const remaining = plan.top === undefined ? undefined : plan.top - written;
    const more = (written < available || raw.length > plan.pageTop) && (remaining === undefined || remaining > 0);
    if (more) body += `,"@odata.nextLink":${JSON.stringify(nextLink(c, plan.skip + written, remaining))}`;
    return { status: 200, headers: this.jsonHeaders(format), body: `${body}}` };
  }

  /**
   * What a collection read needs before it touches the data: the options parsed and bound, the SQL of the page (one
   * row more than the page, to know whether a next link is due) and of the count, and the entity writers. Kept per
   * site, collection, parent and query string: a repeated query skips parsing, binding and SQL generation.
   */
  private readPlan(c: Context, set: Collection, parent?: Row): ReadPlan {
    const cacheKey = `${c.site.name}\n${set.name}\n${parent === undefined ? '' : JSON.stringify(parent)}\n${c.rawQuery}`;
    const cached = this.plans.get(cacheKey);
    if (cached !== undefined) return cached;
    const options = parseQuery(c.rawQuery);
    const bound = validateQuery(options, set.entityType, this.limits);
    const top = bound.top;
    const pageTop = top === undefined || top > this.pageSize ? this.pageSize : top;
    const page: BoundQuery = { ...bound, top: pageTop === top ? pageTop : pageTop + 1 };
    const dialect = c.store.driver.dialect;
    const plan: ReadPlan = {
      statements: c.store.readStatements(set, page, parent),
      top,
      skip: bound.skip ?? 0,
      pageTop,
      selected: selectSuffix(options.select !== undefined, bound),
      write: rawEntityWriter(dialect, bound.select, { ieee754Compatible: false }),
      writeCompatible: rawEntityWriter(dialect, bound.select, { ieee754Compatible: true }),
    };
    if (this.plans.size >= 1000) this.plans.delete(this.plans.keys().next().value!);
    this.plans.set(cacheKey, plan);
    return plan;
  }

  /** One entity; `contextSet` names its entity set (or, contained, its parent's navigation) in the context URL. */
  private async readOne(c: Context, set: Collection, key: Row, contextSet: string): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    // one entity: $select applies; the options that shape a collection do not
    const { filter: _filter, orderBy: _orderBy, top: _top, skip: _skip, ...options } = parseQuery(c.rawQuery);
    const { select } = validateQuery(options, set.entityType, this.limits);
    const row = await c.store.get(set, key, undefined, reading(c));
    if (row === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    return this.entityResponse(c, format, set, row, 200, select, contextSet);
  }

  private entityResponse(
    c: Context,
    format: JsonFormat,
    set: Collection,
    row: Row,
    status: number,
    select: readonly Property[] = readableProperties(set.entityType),
    contextSet = set.name,
  ): ServiceResponse {
    const selected =
      select.length === readableProperties(set.entityType).length ? '' : `(${select.map((p) => p.name).join(',')})`;
    const context =
      format.metadata === 'none'
        ? ''
        : `"@odata.context":${JSON.stringify(`${c.base}/$metadata#${contextSet}${selected}/$entity`)}${select.length === 0 ? '' : ','}`;
    return { status, headers: this.jsonHeaders(format), body: `{${context}${entityMembers(select, row, format)}}` };
  }

  // ── writes ─────────────────────────────────────────────────────────────────

  private bodyOptions(c: Context): BodyOptions {
    return { timeZone: c.site.timeZone, offsetlessInstants: ['ReadingDate'] };
  }

  private readBody(c: Context): unknown {
    const type = header(c.request, 'content-type') ?? '';
    if (!/^application\/json\b/i.test(type.trim())) {
      throw httpError(
        'UnsupportedMediaType',
        `Send the body as application/json (received ${type === '' ? 'no Content-Type' : type.slice(0, 80)})`,
      );
    }
    const bytes = c.request.body ?? new Uint8Array();
    if (bytes.length > this.maxBodyBytes)
      throw httpError('PayloadTooLarge', `The body exceeds ${this.maxBodyBytes} bytes`);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw httpError('InvalidBody', 'The body is not valid UTF-8');
    }
    return parseJsonBody(text);
  }

  private async create(c: Context, set: Collection): Promise<ServiceResponse> {
    // negotiated before anything is written: a 406 must not follow a committed write
    const format = this.jsonFormat(c);
    const sent = checkCreateBody(set.entityType, this.readBody(c), this.bodyOptions(c));
    checkRules(set.entityType.rules, sent);
    const stored = await c.store.driver.transaction((session) =>
      insertEntity(c.store, session, set, sent, c.credential),
    );
    const response = this.entityResponse(c, format, set, stored, 201);
    response.headers['location'] = `${c.base}/${set.name}(${describeKey(keyOf(set, stored), true, set.entityType)})`;
    return response;
  }

  private async update(c: Context, set: Collection, pathKey: Row | undefined): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    const { key, changes } = checkUpdateBody(
      set.entityType,
      this.readBody(c),
      pathKey === undefined ? {} : { fromPath: pathKey },
      this.bodyOptions(c),
    );
    const stored = await c.store.driver.transaction(async (session) => {
      // a PATCH writes the merged row: concurrent PATCHes of one entity take turns, so that none loses the other's fields
      await c.store.lock(session, `${set.name}:${JSON.stringify(key)}`);
      const existing = await c.store.get(set, key, session);
      if (existing === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
      const row: Row = { ...existing, ...changes };
      checkRules(set.entityType.rules, row);
      computeFields(set, row, c.credential, changes);
      const now = new Date().toISOString();
      for (const property of set.entityType.properties.values())
        if (property.managed === 'modified') row[property.name] = now;
      await c.store.update(session, set, row);
      return row;
    });
    if (/return=minimal/i.test(header(c.request, 'prefer') ?? '')) {
      return { status: 204, headers: { 'odata-version': '4.0', 'preference-applied': 'return=minimal' } };
    }
    return this.entityResponse(c, format, set, stored, 200);
  }

  // ── meter readings and actions ─────────────────────────────────────────────

  private async postMeterReading(c: Context): Promise<ServiceResponse> {
    const readings = collection('MeterReadings');
    const format = this.jsonFormat(c);
    const sent = checkCreateBody(readings.entityType, this.readBody(c), this.bodyOptions(c));
    const stored = await c.store.driver.transaction((session) => recordMeterReading(c.store, session, sent));
    const response = this.entityResponse(c, format, readings, stored, 201);
    response.headers['location'] =
      `${c.base}/MeterReadings(${describeKey({ MeterID: stored['MeterID'] }, true, readings.entityType)})`;
    return response;
  }

  private async action(c: Context, action: ActionDefinition, key: Row): Promise<ServiceResponse> {
    negotiateRaw(header(c.request, 'accept'), formatOption(c.rawQuery), 'application/json');
    const parameters = checkActionBody(action, this.readBody(c), this.bodyOptions(c));
    const workOrders = collection('WorkOrders');
    await c.store.driver.transaction(async (session) => {
      // one action at a time per work order: comment numbers and labor removals do not race
      await c.store.lock(session, `WorkOrders:${String(key['WorkOrderID'])}`);
      const workOrder = await c.store.get(workOrders, key, session);
      if (workOrder === undefined) throw httpError('NotFound', `No work order ${describeKey(key)}`);
      const now = new Date().toISOString();
      if (action.name === 'AddComment') await addComment(c.store, session, workOrder['WorkOrderID'], parameters, now);
      else await removeLabor(c.store, session, workOrder, parameters);
      await c.store.update(session, workOrders, { ...workOrder, LastModifiedDate: now });
    });
    // the interface's answer is the JSON Boolean itself, not OData's {"value":true} wrapper (MODEL.md "Actions")
    return { status: 200, headers: { 'content-type': 'application/json', 'odata-version': '4.0' }, body: 'true' };
  }

  // ── responses ──────────────────────────────────────────────────────────────

  /** The JSON format the request accepts (406 when none): `$format` or the Accept header. */
  private jsonFormat(c: Context): JsonFormat {
    return negotiateJson(header(c.request, 'accept'), formatOption(c.rawQuery), header(c.request, 'content-type'));
  }

  private jsonHeaders(format: JsonFormat): Record<string, string> {
    return { 'content-type': format.contentType, 'odata-version': '4.0' };
  }

  private json(_c: Context, format: JsonFormat, status: number, body: unknown): ServiceResponse {
    return { status, headers: this.jsonHeaders(format), body: JSON.stringify(body) };
  }
}

interface ReadPlan {
  readonly statements: ReadStatements;
  readonly top: number | undefined;
  readonly skip: number;
  readonly pageTop: number;
  /** `(A,B)` after the context URL's set when $select was given. */
  readonly selected: string;
  readonly write: (raw: Readonly<Record<string, unknown>>) => string;
  readonly writeCompatible: (raw: Readonly<Record<string, unknown>>) => string;
}

interface Context {
  readonly site: Site;
  readonly credential: Credential;
  readonly store: SiteStore;
  /** The absolute service root of the site (`http://host/north/ODataApi/v1`). */
  readonly base: string;
  /** The request target in origin form (an absolute-form target without its scheme and authority). */
  readonly url: string;
  readonly rawQuery: string;
  readonly request: ServiceRequest;
}

class MethodNotAllowed extends ODataError {
  constructor(
    method: string,
    readonly allow: string,
  ) {
    super('MethodNotAllowed', `${method.slice(0, 20)} is not allowed here; allowed: ${allow}`);
  }
}

function allow(method: string, methods: readonly string[]): void {
  const all = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
  if (!all.includes(method)) throw new MethodNotAllowed(method, methods.join(', '));
}

function selectSuffix(selected: boolean, bound: BoundQuery): string {
  return selected ? `(${bound.select.map((p) => p.name).join(',')})` : '';
}

/** The query string with $skip and $top replaced, as an absolute URL of the same resource. */
function nextLink(c: Context, skip: number, remaining: number | undefined): string {
  const kept = c.rawQuery.split('&').filter((pair) => pair !== '' && !/^(%24|\$)?(skip|top)=/i.test(pair));
  kept.push(`$skip=${skip}`);
  if (remaining !== undefined) kept.push(`$top=${remaining}`);
  // the resource as the client addressed it, under the site's base (which names the site even when the host did)
  const q = c.url.indexOf('?');
  const path = q < 0 ? c.url : c.url.slice(0, q);
  const resource = path.slice(path.indexOf('/ODataApi/v1') + '/ODataApi/v1'.length);
  return `${c.base}${resource}?${kept.join('&')}`;
}

function keyValue(property: Property, literal: LiteralValue, set: string): unknown {
  const expected = property.type;
  const fits =
    literal.type === expected ||
    (expected === 'Edm.Int64' && literal.type === 'Edm.Int32') ||
    (expected === 'Edm.Guid' && literal.type === 'Edm.Guid');
  if (!fits) {
    throw httpError(
      'TypeMismatch',
      `The key ${property.name} of ${set} is ${expected}; the path gives ${literal.type === 'null' ? 'null' : literal.type}`,
      property.name,
    );
  }
  return 'value' in literal ? (typeof literal.value === 'bigint' ? literal.value.toString() : literal.value) : null;
}

function keyOf(set: Collection, row: Row): Row {
  return Object.fromEntries(set.entityType.key.map((p) => [p.name, row[p.name]]));
}

/** `'WO-1'` or `PONumber='PO-1',LineNumber=2` (OData literal syntax, quotes doubled; GUIDs bare). */
function describeKey(key: Row, asPath = false, entityType?: EntityType): string {
  const entries = Object.entries(key);
  const literalOf = (name: string, v: unknown): string => {
    if (typeof v !== 'string' || entityType?.properties.get(name)?.type === 'Edm.Guid') return String(v);
    const quoted = `'${v.replace(/'/g, "''")}'`;
    // in a URL every character that is not safe in a path segment is percent-encoded (quotes stay readable)
    return asPath ? encodeURIComponent(quoted) : quoted;
  };
  if (entries.length === 1) return literalOf(entries[0]![0], entries[0]![1]);
  const text = entries.map(([k, v]) => `${k}=${literalOf(k, v)}`).join(',');
  return asPath ? text : `(${text})`;
}

/** `http://host:port` at the start of an absolute-form request target; group 1 is the authority. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;

/** The `$format` query option's value (percent-decoded), if the query string has one. */
function formatOption(rawQuery: string): string | undefined {
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? pair : pair.slice(0, eq);
    if (/^(?:%24|\$)?format$/i.test(name)) {
      try {
        return decodeURIComponent(pair.slice(eq + 1));
      } catch {
        return pair.slice(eq + 1);
      }
    }
  }
  return undefined;
}

function noResource(c: Context): ODataError {
  const q = c.url.indexOf('?');
  return httpError('NotFound', `No resource at ${(q < 0 ? c.url : c.url.slice(0, q)).slice(0, 200)}`);
}

function refUnsupported(): ODataError {
  return httpError('NotImplemented', 'Entity references ($ref) are not offered by this service yet');
}

/** The collection a navigation leads to: the target's entity set, or its contained collection. */
function collectionOf(navigation: NavigationProperty): Collection {
  return [...collections.values()].find((x) => x.entityType === navigation.target())!;
}

function pick(row: Row, properties: readonly Property[]): Row {
  return Object.fromEntries(properties.map((p) => [p.name, row[p.name]]));
}

/** What stops a read early: the client leaving (the backend's budget applies either way). */
function reading(c: Context): ReadOptions {
  return c.request.signal === undefined ? {} : { signal: c.request.signal };
}
