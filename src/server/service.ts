// The reference service, free of any HTTP framework: a request (method, URL, headers, body bytes) in, a response
// (status, headers, body) out. The Fastify and node:http adapters only carry bytes to and from `handle`.
//
// Order of checks: the site (404), then credentials (401), then the resource (404), the method (405), the body's
// media type (415) and size (413), then the query or body (400), then the data (404, 409). (An adapter refuses a body
// beyond maxBodyBytes while reading it, before any of these: that 413 comes first.)
import { errorCatalog, isODataError, ODataError, toODataErrorBody } from '../errors.js';
import { toCsdlJson, toCsdlXml } from '../model/csdl.js';
import type { ActionDefinition, EntityType, Property } from '../model/schema.js';
import { addDecimal, decimalToString, parseDecimal } from '../backends/memory/decimal.js';
import { parseQuery } from '../syntax/query-string.js';
import type { LiteralValue } from '../syntax/ast.js';
import { validateQuery, type QueryLimits } from '../validate/bind.js';
import { suggest } from '../validate/suggest.js';
import type { BoundQuery } from '../validate/bound.js';
import type { Backend } from './backend.js';
import {
  checkActionBody,
  checkBusinessRules,
  checkCreateBody,
  checkUpdateBody,
  parseJsonBody,
  type BodyOptions,
} from './body.js';
import { entityMembers, rawEntityWriter, readable, type JsonOptions, type Row } from './json.js';
import { AddComment, entitySetNames, plantDataModel, RemoveActualLabor } from './model.js';
import { parseResource, splitPath, type KeyPredicate, type ResourcePath } from './paths.js';
import { collection, collections, type Collection } from './store/collections.js';
import type { SqlSession } from './store/driver.js';
import { computeFields, insertEntity, recordMeterReading } from './writes.js';
import type { ReadStatements, SiteStore } from './store/site-store.js';
import { RateLimiter, type RateLimit } from './rate-limit.js';
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
}

export interface ServiceResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body?: string;
  /** The failure behind a 500, for the adapter's log; never sent. */
  readonly error?: unknown;
}

export interface ServiceOptions {
  readonly backend: Backend;
  /** Most entities in one response; more come through @odata.nextLink (default 100). */
  readonly pageSize?: number;
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

const JSON_TYPE = 'application/json;odata.metadata=minimal;odata.streaming=true;charset=utf-8';
const WRITABLE = new Set([
  'PurchaseRequests',
  'PRLineItems',
  'PurchaseOrders',
  'POLineItems',
  'POAttachments',
  'BlanketPOs',
  'BlanketPOLineItems',
]);
const ACTIONS: ReadonlyMap<string, ActionDefinition> = new Map([
  ['AddComment', AddComment],
  ['RemoveActualLabor', RemoveActualLabor],
]);

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
      if (!isODataError(error)) {
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
    const headers: Record<string, string> = { 'content-type': JSON_TYPE, 'odata-version': '4.0' };
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

  /** `/health`: the process answers. `/ready`: it also reaches its database and is not shutting down. */
  private async probe(kind: 'health' | 'ready', method: string): Promise<ServiceResponse> {
    allow(method.toUpperCase(), ['GET']);
    const headers = { 'content-type': 'application/json;charset=utf-8' };
    if (kind === 'health') return { status: 200, headers, body: '{"status":"ok"}' };
    if (this.shutdown) return { status: 503, headers, body: '{"status":"shutting down"}' };
    try {
      await this.backend.ping();
      return { status: 200, headers, body: '{"status":"ready"}' };
    } catch {
      return { status: 503, headers, body: '{"status":"database unreachable"}' };
    }
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
    const url = request.url;
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const rawQuery = q < 0 ? '' : url.slice(q + 1);
    if (isProbe(pathname)) return this.probe(pathname === '/health' ? 'health' : 'ready', request.method);
    let { site: siteName, resource } = splitPath(pathname);
    if (resource === undefined && this.options.siteFromHost === true) {
      // north.odata.example.com/ODataApi/v1/...: the site is the host's first label
      const host = (header(request, 'host') ?? '').split(':')[0]!.split('.')[0]!;
      const again = splitPath(`/${host}${pathname}`);
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
      base: this.baseUrl(request, site.name),
      rawQuery,
      json: {
        ieee754Compatible: /ieee754compatible=true/i.test(
          `${header(request, 'accept') ?? ''};${header(request, 'content-type') ?? ''}`,
        ),
      },
      request,
    };
    return this.dispatch(path, context);
  }

  private baseUrl(request: ServiceRequest, site: string): string {
    if (this.options.publicUrl !== undefined) return `${this.options.publicUrl.replace(/\/$/, '')}/${site}/ODataApi/v1`;
    const host = header(request, 'host') ?? 'localhost';
    const proto = header(request, 'x-forwarded-proto') === 'https' ? 'https' : 'http';
    return `${proto}://${host}/${site}/ODataApi/v1`;
  }

  private async dispatch(path: ResourcePath, c: Context): Promise<ServiceResponse> {
    const method = c.request.method.toUpperCase();
    switch (path.kind) {
      case 'service':
        allow(method, ['GET']);
        return this.json(200, {
          '@odata.context': `${c.base}/$metadata`,
          value: entitySetNames.map((name) => ({ name, kind: 'EntitySet', url: name })),
        });
      case 'metadata': {
        allow(method, ['GET']);
        const accept = header(c.request, 'accept') ?? '';
        const wantsJson =
          /\$format=json/i.test(c.rawQuery) || (/application\/json/i.test(accept) && !/xml/i.test(accept));
        return wantsJson
          ? {
              status: 200,
              headers: { 'content-type': 'application/json;charset=utf-8', 'odata-version': '4.0' },
              body: this.metadataJson,
            }
          : {
              status: 200,
              headers: { 'content-type': 'application/xml;charset=utf-8', 'odata-version': '4.0' },
              body: this.metadataXml,
            };
      }
      case 'collection': {
        const set = this.set(path.set);
        if (set.name === 'MeterReadings') {
          allow(method, ['GET', 'POST']);
          return method === 'GET' ? this.read(c, set) : this.postMeterReading(c);
        }
        if (WRITABLE.has(set.name)) {
          allow(method, ['GET', 'POST', 'PATCH']);
          if (method === 'POST') return this.create(c, set);
          if (method === 'PATCH') return this.update(c, set, undefined);
          return this.read(c, set);
        }
        allow(method, ['GET']);
        return this.read(c, set);
      }
      case 'count': {
        const set = this.set(path.set);
        allow(method, ['GET']);
        const bound = validateQuery(parseQuery(c.rawQuery), set.entityType, this.limits);
        return {
          status: 200,
          headers: { 'content-type': 'text/plain;charset=utf-8', 'odata-version': '4.0' },
          body: String(await c.store.count(set, bound)),
        };
      }
      case 'entity': {
        const set = this.set(path.set);
        const key = this.key(set, path.key);
        allow(method, WRITABLE.has(set.name) ? ['GET', 'PATCH'] : ['GET']);
        if (method === 'PATCH') return this.update(c, set, key);
        return this.readOne(c, set, key);
      }
      case 'navigation': {
        const set = this.set(path.set);
        const key = this.key(set, path.key);
        const name = path.navigation.replace(/^PlantData\./, '');
        const action = ACTIONS.get(name);
        if (action !== undefined && action.boundTo === set.name) {
          allow(method, ['POST']);
          return this.action(c, action, key);
        }
        const navigation = set.entityType.navigation.get(path.navigation);
        if (navigation === undefined) {
          throw httpError(
            'NotFound',
            `${set.entityType.name} has no navigation or action ${JSON.stringify(path.navigation.slice(0, 60))}`,
          );
        }
        allow(method, ['GET']);
        const parent = await c.store.get(set, key);
        if (parent === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
        const child = [...collections.values()].find((x) => x.entityType === navigation.target())!;
        const parentValues: Row = {};
        for (const [parentKey, childKey] of Object.entries(navigation.foreignKey))
          parentValues[childKey] = parent[parentKey];
        return this.read(c, child, parentValues, `${path.set}(${describeKey(key, true)})/${navigation.name}`);
      }
    }
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

  /** A key predicate as key values, typed by the key properties. */
  private key(set: Collection, predicate: KeyPredicate): Row {
    const keys = set.entityType.key;
    const values = new Map<string, LiteralValue>();
    if (predicate.kind === 'single') {
      if (keys.length !== 1) {
        throw httpError(
          'InvalidSyntax',
          `${set.name} has a key of ${keys.length} parts: write ${keys.map((k) => `${k.name}=...`).join(',')}`,
        );
      }
      values.set(keys[0]!.name, predicate.value);
    } else {
      for (const [name, value] of predicate.values) {
        if (!keys.some((k) => k.name === name))
          throw httpError('InvalidSyntax', `${name} is not part of the key of ${set.name}`);
        values.set(name, value);
      }
      const missing = keys.filter((k) => !values.has(k.name)).map((k) => k.name);
      if (missing.length > 0)
        throw httpError('InvalidSyntax', `The key of ${set.name} also needs ${missing.join(', ')}`);
    }
    const row: Row = {};
    for (const property of keys) row[property.name] = keyValue(property, values.get(property.name)!, set.name);
    return row;
  }

  // ── reads ──────────────────────────────────────────────────────────────────

  private async read(c: Context, set: Collection, parent?: Row, contextPath = set.name): Promise<ServiceResponse> {
    const plan = this.readPlan(c, set, parent);
    const { raw, count } = await c.store.runRead(plan.statements);
    const rows = raw.length > plan.pageTop ? raw.slice(0, plan.pageTop) : raw;
    const remaining = plan.top === undefined ? undefined : plan.top - rows.length;
    const more = raw.length > plan.pageTop && (remaining === undefined || remaining > 0);
    const write = c.json.ieee754Compatible ? plan.writeCompatible : plan.write;
    let body = `{"@odata.context":${JSON.stringify(`${c.base}/$metadata#${contextPath}${plan.selected}`)}`;
    if (count !== undefined) body += `,"@odata.count":${count}`;
    body += ',"value":[';
    for (let i = 0; i < rows.length; i++) body += `${i === 0 ? '' : ','}{${write(rows[i]!)}}`;
    body += ']';
    if (more) body += `,"@odata.nextLink":${JSON.stringify(nextLink(c, plan.skip + rows.length, remaining))}`;
    return { status: 200, headers: this.headers(), body: `${body}}` };
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
    let options = parseQuery(c.rawQuery);
    // a meter's history reads newest first unless the client orders it (MODEL.md)
    if (set.name === 'MeterReadingHistory' && options.orderBy === undefined) {
      options = { ...options, ...parseQuery('$orderby=ReadingID desc') };
    }
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

  private async readOne(c: Context, set: Collection, key: Row): Promise<ServiceResponse> {
    // one entity: $select applies; the options that shape a collection do not
    const { filter: _filter, orderBy: _orderBy, top: _top, skip: _skip, ...options } = parseQuery(c.rawQuery);
    const { select } = validateQuery(options, set.entityType, this.limits);
    const row = await c.store.get(set, key);
    if (row === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    return this.entityResponse(c, set, row, 200, select);
  }

  private entityResponse(
    c: Context,
    set: Collection,
    row: Row,
    status: number,
    select: readonly Property[] = readable(set.entityType),
  ): ServiceResponse {
    const selected =
      select.length === readable(set.entityType).length ? '' : `(${select.map((p) => p.name).join(',')})`;
    const context = `"@odata.context":${JSON.stringify(`${c.base}/$metadata#${set.name}${selected}/$entity`)}`;
    return { status, headers: this.headers(), body: `{${context},${entityMembers(select, row, c.json)}}` };
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
    const sent = checkCreateBody(set.entityType, this.readBody(c), this.bodyOptions(c));
    checkBusinessRules(set.name, sent);
    const stored = await c.store.driver.transaction((session) =>
      insertEntity(c.store, session, set, sent, c.credential),
    );
    const response = this.entityResponse(c, set, stored, 201);
    response.headers['location'] = `${c.base}/${set.name}(${describeKey(keyOf(set, stored), true, set.entityType)})`;
    return response;
  }

  private async update(c: Context, set: Collection, pathKey: Row | undefined): Promise<ServiceResponse> {
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
      checkBusinessRules(set.name, row);
      computeFields(set, row, c.credential, changes);
      row['LastModifiedDate'] = new Date().toISOString();
      await c.store.update(session, set, row);
      return row;
    });
    if (/return=minimal/i.test(header(c.request, 'prefer') ?? '')) {
      return { status: 204, headers: { 'odata-version': '4.0', 'preference-applied': 'return=minimal' } };
    }
    return this.entityResponse(c, set, stored, 200);
  }

  // ── meter readings and actions ─────────────────────────────────────────────

  private async postMeterReading(c: Context): Promise<ServiceResponse> {
    const readings = collection('MeterReadings');
    const sent = checkCreateBody(readings.entityType, this.readBody(c), this.bodyOptions(c));
    const stored = await c.store.driver.transaction((session) => recordMeterReading(c.store, session, sent));
    const response = this.entityResponse(c, readings, stored, 201);
    response.headers['location'] =
      `${c.base}/MeterReadings(${describeKey({ MeterID: stored['MeterID'] }, true, readings.entityType)})`;
    return response;
  }

  private async action(c: Context, action: ActionDefinition, key: Row): Promise<ServiceResponse> {
    const parameters = checkActionBody(action, this.readBody(c), this.bodyOptions(c));
    const workOrders = collection('WorkOrders');
    await c.store.driver.transaction(async (session) => {
      // one action at a time per work order: comment numbers and labor removals do not race
      await c.store.lock(session, `WorkOrders:${String(key['WorkOrderID'])}`);
      const workOrder = await c.store.get(workOrders, key, session);
      if (workOrder === undefined) throw httpError('NotFound', `No work order ${describeKey(key)}`);
      const now = new Date().toISOString();
      if (action.name === 'AddComment') {
        const comments = collection('WorkOrderComments');
        const id = { WorkOrderID: workOrder['WorkOrderID'] };
        const next = (await c.store.maxOf(session, comments, 'CommentID', id)) + 1;
        await c.store.insert(session, comments, {
          ...id,
          CommentID: next,
          Comment: parameters['Comment'],
          Username: parameters['Username'],
          CreatedDate: now,
        });
      } else {
        await this.removeLabor(c, session, workOrder, parameters);
      }
      await c.store.update(session, workOrders, { ...workOrder, LastModifiedDate: now });
    });
    return {
      status: 200,
      headers: this.headers(),
      body: `{"@odata.context":${JSON.stringify(`${c.base}/$metadata#Edm.Boolean`)},"value":true}`,
    };
  }

  /** Removes the oldest labor record equal to the parameters, and keeps the work order's hour sums. */
  private async removeLabor(c: Context, session: SqlSession, workOrder: Row, p: Row): Promise<void> {
    const labor = collection('ActualLabor');
    const records = await c.store.children(labor, { WorkOrderID: workOrder['WorkOrderID'] }, session);
    const same = (a: unknown, b: unknown): boolean => decimalText(a) === decimalText(b);
    const match = records
      .filter(
        (r) =>
          r['PeopleID'] === p['PeopleID'] &&
          r['Craft'] === p['Craft'] &&
          same(r['Hours'], p['Hours']) &&
          same(r['OTHours'] ?? '0', p['OTHours'] ?? '0') &&
          Date.parse(String(r['StartDate'])) === Date.parse(String(p['StartDate'])),
      )
      .sort(
        (a, b) =>
          String(a['CreatedDate']).localeCompare(String(b['CreatedDate'])) ||
          String(a['LaborID']).localeCompare(String(b['LaborID'])),
      )[0];
    if (match === undefined)
      throw httpError(
        'LaborRecordNotFound',
        `Work order ${String(workOrder['WorkOrderID'])} has no labor record with these values`,
      );
    await c.store.delete(session, labor, { WorkOrderID: workOrder['WorkOrderID'], LaborID: match['LaborID'] });
    const left = records.filter((r) => r !== match);
    const sum = (name: string): string =>
      decimalToString(
        left.reduce((total, r) => addDecimal(total, parseDecimal(String(r[name] ?? '0'))!), parseDecimal('0')!),
      );
    workOrder['ActualHours'] = sum('Hours');
    workOrder['ActualOTHours'] = sum('OTHours');
  }

  // ── responses ──────────────────────────────────────────────────────────────

  private headers(): Record<string, string> {
    return { 'content-type': JSON_TYPE, 'odata-version': '4.0' };
  }

  private json(status: number, body: unknown): ServiceResponse {
    return { status, headers: this.headers(), body: JSON.stringify(body) };
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
  readonly rawQuery: string;
  readonly json: JsonOptions;
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
  const q = c.request.url.indexOf('?');
  const path = q < 0 ? c.request.url : c.request.url.slice(0, q);
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

function decimalText(value: unknown): string | undefined {
  const d = value === null || value === undefined ? undefined : parseDecimal(String(value));
  return d === undefined ? undefined : decimalToString(d);
}
