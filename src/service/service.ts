// The OData service of a model, free of any HTTP framework: a request (method, URL, headers, body bytes) in, a
// response (status, headers, body) out. The adapters (Fastify, node:http, Express, fetch) only carry bytes to and
// from `handle`. Written once for every model and store: what is particular to an application comes in through its
// options (where a request's store is and who is asking, computed fields, create and action handlers).
//
// Order of checks: what `resolve` refuses (an unknown tenant 404, credentials 401), then the resource (404), the
// method (405), the body's media type (415) and size (413), then the query or body (400), then the data (404, 409).
// (An adapter refuses a body beyond maxBodyBytes while reading it, before any of these: that 413 comes first.)
import { errorCatalog, isODataError, ODataError, toODataErrorBody } from '../errors.js';
import { toCsdlJson, toCsdlXml } from '../model/csdl.js';
import {
  readableProperties,
  type ActionDefinition,
  type EntitySet,
  type FunctionDefinition,
  type EntityType,
  type Model,
  type Property,
  type Row,
} from '../model/schema.js';
import { parseQuery, type QueryOptions } from '../syntax/query-string.js';
import { Lifting } from '../syntax/lifted.js';
import { liftLiterals, queryShape } from '../syntax/shape.js';
import type { LiteralValue } from '../syntax/ast.js';
import { andOf, defaultLimits, validateQuery, type QueryLimits } from '../validate/bind.js';
import type { EdmPrimitiveType } from '../values/edm.js';
import { suggest } from '../values/suggest.js';
import type { BoundExpand, BoundExpr, BoundQuery } from '../validate/bound.js';
import {
  checkActionBody,
  checkRules,
  checkCreateBody,
  checkUpdateBody,
  parseJsonBody,
  type BodyOptions,
} from './body.js';
import {
  readJsonBatch,
  readMultipartBatch,
  runBatch,
  writeJsonBatch,
  writeMultipartBatch,
  type BatchRequest,
  type ResolvedBatchRequest,
} from './batch.js';
import { readExpansions, selectForExpand, type ExpandedNavigation } from './expand.js';
import { applyPreparedCount, applyPreparedRead, nestedSelection } from './apply-read.js';
import { computedPreparedRead, selectedComputed, withComputed } from './compute-read.js';
import { etagJson, etagMatches, etagOf } from './etag.js';
import { afterLevels, keysetOrder, orderValues, SkipTokens, type OrderItem } from './keyset.js';
import { entityMembers, propertyValueJson, rawValueText } from './json.js';
import { PlanCache, sumStats, type PlanCacheStats, type Rebindable } from './plan-cache.js';
import { negotiateJson, negotiateMetadata, negotiateRaw, type JsonFormat } from './negotiate.js';
import { parseResource, resourceSegments, type KeyPredicate, type PathSegment, type ResourcePath } from './paths.js';
import type { Readiness } from './sql/driver.js';
import {
  collectionOfType,
  collectionsOf,
  linkValueText,
  readingAlso,
  readingUnder,
  SignalOf,
  type PreparedCount,
  type PreparedRead,
  type PrepareOptions,
  type ReadOptions,
  type Store,
  type StoreCollection,
  type StoreTransaction,
} from './store.js';
import { fixedDefault, insertRow, touchModified } from './writes.js';

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
  /** The scheme the request arrived on, when the adapter knows it (links use it; else `X-Forwarded-Proto`). */
  readonly protocol?: 'http' | 'https' | undefined;
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

/** What `resolve` is told about a request. */
export interface ResolveRequest {
  readonly request: ServiceRequest;
  /** The request's path, without the query string (an absolute-form target's authority removed). */
  readonly pathname: string;
  /** The host the request names: the authority of an absolute-form target, or the Host header. */
  readonly host: string | undefined;
}

/** Where a request goes: its store, its service root, and what the application's hooks are told about it. */
export interface Resolved<Context> {
  readonly store: Store;
  readonly context: Context;
  /** The path of the service root in links (`/north/ODataApi/v1`): the base of context URLs, next links, Location. */
  readonly root: string;
  /** The resource's path after the root, as sent (`/Parts('P-1')`; '' or '/' for the service document). */
  readonly resource: string;
}

/** A write about to reach the store: the full row (after defaults, or merged with the stored row on an update). */
export interface WriteEvent<Context> {
  readonly collection: StoreCollection;
  /** Set computed properties here; throw an ODataError to refuse the write. */
  readonly row: Row;
  /** An update: the properties the client sent. */
  readonly changes?: Row;
  readonly context: Context;
  readonly tx: StoreTransaction;
}

/** A create of an entity set handled by the application (a reading that also updates a current value). */
export type CreateHandler<Context> = (event: {
  readonly collection: StoreCollection;
  /** The body, checked against the entity type's facets and rules. */
  readonly sent: Row;
  readonly context: Context;
  readonly tx: StoreTransaction;
}) => Promise<Row>;

/**
 * A bound action's work, inside a transaction that holds the entity (no concurrent update or action on it): the
 * entity read in that transaction and the checked parameters; its result is the action's answer.
 */
export type ActionHandler<Context, Entity extends Row = Row> = {
  // a method's parameters are compared both ways: a handler typed for its set's rows fits the options' record
  handle(event: {
    readonly action: ActionDefinition;
    readonly collection: StoreCollection;
    readonly entity: Entity;
    readonly parameters: Row;
    readonly context: Context;
    readonly tx: StoreTransaction;
  }): Promise<unknown>;
}['handle'];

/** An unbound action's work (`POST /Name`), inside a transaction; its result is the action's answer. */
export type ActionImportHandler<Context> = (event: {
  readonly action: ActionDefinition;
  readonly parameters: Row;
  readonly context: Context;
  readonly tx: StoreTransaction;
}) => Promise<unknown>;

/**
 * A function's answer: for a bound one, the entity it is called on; the checked parameters; the store to read (a
 * function has no side effects).
 */
export type FunctionHandler<Context, Entity extends Row = Row> = {
  handle(event: {
    readonly function: FunctionDefinition;
    readonly parameters: Row;
    readonly context: Context;
    readonly store: Store;
    readonly collection?: StoreCollection;
    readonly entity?: Entity;
  }): unknown;
}['handle'];

export interface ODataServiceOptions<Context = undefined> {
  readonly model: Model;
  /** The store of every request; or give `resolve`, which finds each request's own. */
  readonly store?: Store;
  /** Where the service root is on this server without `resolve` (default '': `/$metadata`, `/Parts`). */
  readonly basePath?: string;
  /**
   * Finds a request's store and service root, and what the hooks are told about it (a tenant, who is asking). Throws
   * an ODataError to refuse the request (404 for an unknown tenant, 401 without valid credentials); undefined: no
   * resource at this path (404).
   */
  readonly resolve?: (request: ResolveRequest) => Promise<Resolved<Context> | undefined>;
  /** Most entities in one response; more come through @odata.nextLink (default 100). */
  readonly pageSize?: number;
  /**
   * Plans of reads and of `/$count` kept (default 1,000 of each; 0 keeps none), least recently used first out: by
   * query string, and by query shape, so that a query differing from an earlier one only in its `$filter` literals
   * reuses its plan (docs/embedding.md).
   */
  readonly planCacheSize?: number;
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
  /**
   * Told about every failure that is not a client's mistake (the 500s), with the request. Without it the failure
   * travels on the response (`error`) for the adapter to log, as the Fastify and node:http adapters do.
   */
  readonly onInternalError?: (error: unknown, request: ServiceRequest) => void;
  /**
   * `/health` (the process answers) and `/ready` (not shutting down, and `readiness` says the database is ready),
   * outside the service root, without `resolve`. Off by default.
   */
  readonly probes?: { readonly readiness: () => Promise<Readiness> };
  /** How bodies are read for a request (time zone of offset-less instants, size limits). */
  readonly bodyOptions?: (context: Context) => BodyOptions;
  /** Called with every row about to be inserted or updated: computed properties, checks of the whole row. */
  readonly prepareWrite?: (event: WriteEvent<Context>) => void | Promise<void>;
  /** Create handlers by entity set name, in place of the plain insert. */
  readonly create?: Readonly<Record<string, CreateHandler<Context>>>;
  /** Bound action handlers by action name; an action of the model without one answers 501. */
  readonly actions?: Readonly<Record<string, ActionHandler<Context>>>;
  /** Unbound action handlers (action imports, `POST /Name`) by action name. */
  readonly actionImports?: Readonly<Record<string, ActionImportHandler<Context>>>;
  /** Function handlers, bound or unbound, by function name. */
  readonly functions?: Readonly<Record<string, FunctionHandler<Context>>>;
  /**
   * `odata` (default): an action's result as OData JSON (`{"@odata.context":…,"value":true}`); `bare`: the JSON value
   * alone (`true`), for interfaces that define it so.
   */
  readonly actionResults?: 'odata' | 'bare';
  /** PATCH of the entity set with the key in the body (an update without a key in the path); off by default. */
  readonly keyInBodyUpdate?: boolean;
  /** Most requests in one `$batch`, change sets' requests included (default 1,000): a larger batch is a 400. */
  readonly maxBatchRequests?: number;
  /**
   * The secret that signs `$skiptoken`s (keyset paging's next links): give every instance of a service the same one,
   * kept across restarts, for a next link to work on any of them; default: random per service (a next link from
   * before a restart is then a 400).
   */
  readonly skipTokenSecret?: string | Uint8Array;
  /**
   * A PATCH, PUT, DELETE or bound action of an entity with an ETag must send If-Match (428 without it); default
   * false: without If-Match the write applies, as it does for clients that know nothing of ETags.
   */
  readonly requireIfMatch?: boolean;
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

/** What the model lets clients do with a collection's entities (a contained collection: read only). */
function capabilities(model: Model, set: StoreCollection): Pick<EntitySet, 'insertable' | 'updatable' | 'deletable'> {
  return model.sets.get(set.name) ?? { insertable: false, updatable: false, deletable: false };
}

/** The operation bound to the set's entities that a path segment names, plainly or qualified by the namespace. */
function boundOperation<T extends ActionDefinition | FunctionDefinition>(
  operations: readonly T[],
  namespace: string,
  set: StoreCollection,
  segment: string,
): T | undefined {
  const name = segment.startsWith(`${namespace}.`) ? segment.slice(namespace.length + 1) : segment;
  return operations.find((operation) => operation.name === name && operation.boundTo === set.name);
}

/** The action or function import a first path segment names. */
function unboundOperation(
  model: Model,
  name: string,
):
  | { readonly kind: 'action'; readonly operation: ActionDefinition }
  | { readonly kind: 'function'; readonly operation: FunctionDefinition }
  | undefined {
  const action = model.actions.find((operation) => operation.name === name && operation.boundTo === undefined);
  if (action !== undefined) return { kind: 'action', operation: action };
  const fn = model.functions.find((operation) => operation.name === name && operation.boundTo === undefined);
  return fn === undefined ? undefined : { kind: 'function', operation: fn };
}

/** A request header's value (repeated ones joined by commas, as HTTP allows); undefined when absent. */
export function header(request: ServiceRequest, name: string): string | undefined {
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

/** What an HTTP adapter needs of a service: answers, error answers, and the shutdown it drains. */
export interface HttpService {
  /** Largest request body in bytes: adapters refuse a larger one while reading it. */
  readonly maxBodyBytes: number;
  /** Answers one request; never throws. */
  handle(request: ServiceRequest): Promise<ServiceResponse>;
  /** The OData JSON error answer for an error an adapter meets before the service (a body too large). */
  errorResponse(error: unknown, requestId?: string): ServiceResponse;
  /** Whether a request for `url` arriving now is refused with `shutdownResponse` (shutdown has begun). */
  refuses(url: string): boolean;
  shutdownResponse(requestId?: string): ServiceResponse;
  /** From now on new requests are refused; those received are answered. */
  beginShutdown(): void;
}

/** The OData service of a model (see ODataServiceOptions). */
export function createODataService<Context = undefined>(options: ODataServiceOptions<Context>): ODataService<Context> {
  return new ODataService(options);
}

export class ODataService<Context = undefined> implements HttpService {
  private readonly model: Model;
  private readonly collections: ReadonlyMap<string, StoreCollection>;
  private readonly setNames: readonly string[];
  private readonly pageSize: number;
  private readonly maxPageBytes: number;
  readonly maxBodyBytes: number;
  private readonly limits: Partial<QueryLimits>;
  private readonly metadataXml: string;
  private readonly metadataJson: string;
  /** Read plans by store, collection, parent and query string or shape; and the same for counts. */
  private readonly plans: PlanCache<ReadPlan>;
  private readonly counts: PlanCache<CountPlan>;
  /** A number per store, for the plan cache's keys. */
  private readonly storeIds = new WeakMap<Store, number>();
  private readonly resolveRequest: (request: ResolveRequest) => Promise<Resolved<Context> | undefined>;
  private readonly skipTokens: SkipTokens;
  /** Plans of queries whose pages after a skip token are read, by exact query string (see keysetPlan). */
  private readonly keysetPlans = new Map<string, ReadPlan>();
  private shutdown = false;

  constructor(private readonly options: ODataServiceOptions<Context>) {
    this.model = options.model;
    this.collections = collectionsOf(options.model);
    this.setNames = [...options.model.sets.keys()];
    this.metadataXml = toCsdlXml(options.model);
    this.metadataJson = JSON.stringify(toCsdlJson(options.model));
    this.resolveRequest = options.resolve ?? this.atBasePath(options);
    this.pageSize = options.pageSize ?? 100;
    if (!Number.isInteger(this.pageSize) || this.pageSize < 1)
      throw new RangeError(`pageSize must be a positive integer, not ${options.pageSize}`);
    this.maxPageBytes = options.maxPageBytes ?? 4 * 1024 * 1024;
    if (!(this.maxPageBytes >= 1)) throw new RangeError(`maxPageBytes must be positive, not ${options.maxPageBytes}`);
    this.maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    this.limits = options.limits ?? {};
    this.plans = new PlanCache(options.planCacheSize ?? 1000);
    this.counts = new PlanCache(options.planCacheSize ?? 1000);
    this.skipTokens = new SkipTokens(options.skipTokenSecret);
  }

  /** How the plans of reads and counts were found so far (for monitoring, and for tests of the cache). */
  planCacheStats(): PlanCacheStats {
    return sumStats(this.plans.stats(), this.counts.stats());
  }

  /** Without `resolve`: one store, the service root at `basePath`. */
  private atBasePath(
    options: ODataServiceOptions<Context>,
  ): (request: ResolveRequest) => Promise<Resolved<Context> | undefined> {
    const { store } = options;
    if (store === undefined) throw new TypeError("createODataService needs a store, or resolve to find each request's");
    const root = (options.basePath ?? '').replace(/\/+$/, '');
    return async ({ pathname }) => {
      if (pathname !== root && !pathname.startsWith(`${root}/`)) return undefined;
      return { store, context: undefined as Context, root, resource: pathname.slice(root.length) };
    };
  }

  /** Answers one request; never throws (an unexpected failure is a 500 without internals). */
  async handle(request: ServiceRequest): Promise<ServiceResponse> {
    const response = await this.answer(request, () => this.route(request));
    this.finish(response.headers, request.id);
    return response;
  }

  /**
   * The answer of `work` for a request (an error answer when it throws), in the OData version the request negotiates
   * (OData-MaxVersion and OData-Version: 4.0 or 4.01).
   */
  private async answer(request: ServiceRequest, work: () => Promise<ServiceResponse>): Promise<ServiceResponse> {
    let response: ServiceResponse;
    let version: ODataVersion = '4.0';
    try {
      version = negotiateVersion(request);
      response = await work();
    } catch (error) {
      response = this.errorResponse(error, request.id);
      // a query stopped because its client left is no failure of the server: nobody is there to read the answer
      if (!isODataError(error) && request.signal?.aborted !== true) {
        if (this.options.onInternalError !== undefined) this.options.onInternalError(error, request);
        else response = { ...response, error };
      }
    }
    if (response.headers['odata-version'] !== undefined) response.headers['odata-version'] = version;
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
    return this.shutdown && !(this.options.probes !== undefined && isProbe(url.split('?')[0]!));
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
    const state = await this.options.probes!.readiness();
    if (state.status === 'ready') return { status: 200, headers, body: '{"status":"ready"}' };
    if (state.status === 'busy') {
      headers['retry-after'] = String(state.retryAfter);
      return { status: 503, headers, body: '{"status":"busy"}' };
    }
    return { status: 503, headers, body: '{"status":"database unreachable"}' };
  }

  // ── routing ────────────────────────────────────────────────────────────────

  /**
   * Finds the request's store and resource, then answers it. In a batch, `batch` is the batch's call: a request of a
   * change set (`changes`) must address the batch's store, and runs in the change set's transaction.
   */
  private async route(
    request: ServiceRequest,
    batch?: { readonly call: Call<Context>; readonly changes?: ChangeSetPart<Context> },
  ): Promise<ServiceResponse> {
    const { url, host, pathname, rawQuery } = targetOf(request);
    if (this.options.probes !== undefined && isProbe(pathname) && batch === undefined)
      return this.probe(pathname === '/health' ? 'health' : 'ready', request.method);
    let store: Store;
    let resolved: Resolved<Context>;
    let resource: string;
    const changes = batch?.changes;
    if (changes === undefined) {
      const found = await this.resolveRequest({ request, pathname, host });
      if (found === undefined) throw httpError('NotFound', `No resource at ${pathname.slice(0, 200)}`);
      resolved = found;
      store = found.store;
      resource = found.resource;
    } else {
      // a request of a change set: resolved before its transaction began (resolvePart); its URL may have changed
      // since (a `$1` reference replaced), but not its service root
      if ('error' in changes) throw changes.error;
      resolved = changes.resolved;
      store = changes.store;
      if (pathname === changes.pathname) resource = resolved.resource;
      else if (pathname === resolved.root || pathname.startsWith(`${resolved.root}/`))
        resource = pathname.slice(resolved.root.length);
      else throw oneServiceRoot();
    }
    const path = parseResource(resourceSegments(resource));
    const call: Call<Context> = {
      store,
      context: resolved.context,
      base: this.baseUrl(request, host, resolved.root),
      root: resolved.root,
      resource: resource.replace(/\/$/, ''),
      url,
      rawQuery,
      request,
      inBatch: batch !== undefined,
    };
    return this.dispatch(path, call);
  }

  private baseUrl(request: ServiceRequest, hostHeader: string | undefined, root: string): string {
    if (this.options.publicUrl !== undefined) return `${this.options.publicUrl.replace(/\/$/, '')}${root}`;
    const host = hostHeader ?? 'localhost';
    const proto = header(request, 'x-forwarded-proto') === 'https' ? 'https' : (request.protocol ?? 'http');
    return `${proto}://${host}${root}`;
  }

  private async dispatch(path: ResourcePath, c: Call<Context>): Promise<ServiceResponse> {
    const method = c.request.method.toUpperCase();
    switch (path.kind) {
      case 'service': {
        allow(method, ['GET']);
        const format = this.jsonFormat(c);
        return this.json(c, format, 200, {
          ...(format.metadata === 'none' ? {} : { '@odata.context': `${c.base}/$metadata` }),
          value: this.setNames.map((name) => ({ name, kind: 'EntitySet', url: name })),
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
      case 'batch':
        if (c.inBatch) throw httpError('InvalidBatch', 'A request of a batch cannot be a batch itself');
        allow(method, ['POST']);
        return this.batch(c);
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
  private async path(segments: readonly PathSegment[], c: Call<Context>, method: string): Promise<ServiceResponse> {
    const [first, ...rest] = segments;
    if (first === undefined || first.kind !== 'name') throw noResource(c);
    const unbound = unboundOperation(this.model, first.name);
    if (unbound !== undefined) {
      if (rest.length > 0) throw noResource(c);
      if (unbound.kind === 'action') {
        if (first.key !== undefined) throw noResource(c);
        allow(method, ['POST']);
        return this.action(c, unbound.operation, undefined);
      }
      allow(method, ['GET']);
      return this.callFunction(c, unbound.operation, first.key, undefined);
    }
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
    if (rest.length === 0) {
      const { updatable, deletable } = capabilities(this.model, set);
      allow(method, ['GET', ...(updatable ? ['PATCH', 'PUT'] : []), ...(deletable ? ['DELETE'] : [])]);
      if (method === 'PATCH' || method === 'PUT') return this.update(c, set, key, method === 'PUT');
      if (method === 'DELETE') return this.remove(c, set, key);
      return this.readOne(c, set, key, set.name);
    }
    const canonical = `${set.name}(${describeKey(key, true, set.entityType)})`;
    const [second, ...tail] = rest as [PathSegment, ...PathSegment[]];
    if (second.kind === '$ref') throw refUnsupported();
    if (second.kind !== 'name') throw noResource(c);
    const action = boundOperation(this.model.actions, this.model.namespace, set, second.name);
    if (action !== undefined && second.key === undefined && tail.length === 0) {
      allow(method, ['POST']);
      return this.action(c, action, { set, key });
    }
    const fn = boundOperation(this.model.functions, this.model.namespace, set, second.name);
    if (fn !== undefined && tail.length === 0) {
      allow(method, ['GET']);
      return this.callFunction(c, fn, second.key, { set, key });
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
    const parent = await c.store.get(set, key, reading(c));
    if (parent === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    const child = collectionOfType(this.model, navigation.target());
    const parentValues: Row = {};
    for (const [parentKey, childKey] of Object.entries(navigation.foreignKey))
      parentValues[childKey] = parent[parentKey];
    // a contained collection is named by its parent (Protocol §10: `WorkOrders('WO-1')/Comments`); other targets by
    // their own entity set
    const contextSet = navigation.contained === true ? `${canonical}/${navigation.name}` : child.name;
    if (!navigation.collection) {
      // one related entity (`Books('1')/Author`), found by the foreign key's values: none when one of them is null
      if (second.key !== undefined)
        throw httpError(
          'NotFound',
          `${navigation.name} is a single ${child.entityType.name}: address it without a key`,
        );
      const [next, ...more] = tail;
      if (next?.kind === '$ref' && more.length === 0) throw refUnsupported();
      const related = Object.values(parentValues).some((value) => value === null || value === undefined)
        ? undefined
        : parentValues;
      const childProperty =
        next?.kind === 'name' && next.key === undefined ? child.entityType.properties.get(next.name) : undefined;
      if (next !== undefined && childProperty === undefined) throw noResource(c);
      allow(method, ['GET']);
      if (related === undefined) return { status: 204, headers: { 'odata-version': '4.0' } };
      const relatedCanonical = `${child.name}(${describeKey(related, true, child.entityType)})`;
      if (childProperty !== undefined)
        return this.property(c, method, child, related, childProperty, relatedCanonical, more);
      return this.readOne(c, child, related, contextSet);
    }
    if (second.key === undefined) {
      const [next] = tail;
      if (next === undefined) {
        // a create through the navigation (`PurchaseOrders('PO-1')/Lines`): the new entity related to this one
        const insertable = navigation.contained !== true && capabilities(this.model, child).insertable;
        allow(method, ['GET', ...(insertable ? ['POST'] : [])]);
        if (method === 'POST') return this.create(c, child, parentValues);
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
  private collection(c: Call<Context>, set: StoreCollection, method: string): Promise<ServiceResponse> {
    const { insertable, updatable } = capabilities(this.model, set);
    // PATCH of the set with the key in the body, where the application offers that form of an update
    const keyInBody = updatable && this.options.keyInBodyUpdate === true;
    allow(method, ['GET', ...(insertable ? ['POST'] : []), ...(keyInBody ? ['PATCH'] : [])]);
    if (method === 'POST') return this.create(c, set);
    if (method === 'PATCH') return this.update(c, set, undefined);
    return this.read(c, set);
  }

  /** `/$count`: how many entities match $filter, as plain text. */
  private async count(c: Call<Context>, set: StoreCollection, parent?: Row): Promise<ServiceResponse> {
    negotiateRaw(header(c.request, 'accept'), formatOption(c.rawQuery), 'text/plain');
    const plan = this.countPlan(c, set, parent);
    return {
      status: 200,
      headers: { 'content-type': 'text/plain;charset=utf-8', 'odata-version': '4.0' },
      body: String(await plan.read.run(reading(c))),
    };
  }

  /**
   * A property of one entity (Protocol §11.2.6): `{"@odata.context":…,"value":…}`, or its raw value with `/$value`
   * (§11.2.6.1); 204 when it is null.
   */
  private async property(
    c: Call<Context>,
    method: string,
    set: StoreCollection,
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
    const row = await c.store.get(set, key, reading(c));
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

  private set(name: string): StoreCollection {
    const set = this.model.sets.has(name) ? this.collections.get(name) : undefined;
    if (set === undefined) {
      const near = suggest(name, this.setNames);
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
  private key(set: StoreCollection, predicate: KeyPredicate, fixed: Row = {}): Row {
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

  private async read(
    c: Call<Context>,
    set: StoreCollection,
    parent?: Row,
    contextPath = set.name,
  ): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    const full = format.metadata === 'full';
    // `Prefer: odata.maxpagesize=n`: pages of at most n entities, and never more than the service's own page size
    const preferred = preferredPageSize(c.request);
    const pageSize = preferred === undefined ? this.pageSize : Math.min(preferred, this.pageSize);
    // a next link's $skiptoken: the rows after the order values of the page before (keyset paging)
    const token = skipTokenOf(c.rawQuery);
    const plan =
      token === undefined
        ? this.readPlan(c, set, parent, full, pageSize)
        : this.keysetPlan(c, set, parent, full, pageSize, token);
    const result = await plan.read.run(reading(c));
    const raw = result.rows;
    const count = plan.count === undefined ? result.count : await plan.count();
    // the page's entities' related entities, when $expand asks for them (the rows came decoded)
    const expanded =
      plan.expand === undefined
        ? undefined
        : await this.expansions(c, raw.slice(0, Math.min(raw.length, plan.pageTop)) as Row[], plan.expand);
    // full metadata: each entity's control information, from its key (read beside the selection), then its members
    const write =
      (expanded !== undefined || full) && plan.transient !== true
        ? (row: unknown): string =>
            this.entityBody(c, format, set, row as Row, plan.select, contextPath, expanded ?? [])
        : format.metadata === 'none'
          ? format.ieee754Compatible
            ? plan.writeNoneCompatible
            : plan.writeNone
          : format.ieee754Compatible
            ? plan.writeCompatible
            : plan.write;
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
    if (more) {
      // after the last entity written, by its order values (keyset); by $skip where the order has no such values
      const last = raw[written - 1];
      const values =
        plan.order === undefined || last === undefined
          ? undefined
          : orderValues(plan.order, plan.read.also?.(last) ?? (last as Row));
      const from =
        values === undefined
          ? `$skip=${plan.skip + written}`
          : `$skiptoken=${this.skipTokens.sign(this.tokenScope(c, set, parent), values)}`;
      const link = nextLink(c, from, remaining);
      body += `,"@odata.nextLink":${JSON.stringify(link)}`;
    }
    const headers = this.jsonHeaders(format);
    // (a maximum: honoured by any smaller page too; the client sends it again with each next link)
    if (preferred !== undefined) headers['preference-applied'] = `odata.maxpagesize=${preferred}`;
    return { status: 200, headers, body: `${body}}` };
  }

  /**
   * What a collection read needs before it touches the data: the options parsed and bound, the SQL of the page (one
   * row more than the page, to know whether a next link is due) and of the count, and the entity writers. Kept per
   * site, collection, parent and query string: a repeated query skips parsing, binding and SQL generation; and per
   * query shape (plan-cache.ts), so that a query with other `$filter` literals does too where the plan allows.
   */
  private readPlan(
    c: Call<Context>,
    set: StoreCollection,
    parent: Row | undefined,
    full: boolean,
    pageSize: number,
  ): ReadPlan {
    // a shape only where the store can take other literal values into a read it prepared (not full metadata, which
    // reads through the store's plain read)
    const shaped = !full && c.store.prepareRead !== undefined;
    const where = `${this.where(c, set, parent)}${full ? 'full' : ''}${pageSize === this.pageSize ? '' : ` ${pageSize}`}\n`;
    return this.plan(this.plans, c, where, shaped, (options) =>
      this.makeReadPlan(c, set, parent, full, pageSize, options),
    );
  }

  /**
   * The plan of a page after a `$skiptoken` (keyset paging): the plan of the query without the token, kept by its
   * exact query string (never by shape: its bound query holds the literals it was made with), and a read of the rows
   * after the token's order values, made for the request (they are in its SQL).
   */
  private keysetPlan(
    c: Call<Context>,
    set: StoreCollection,
    parent: Row | undefined,
    full: boolean,
    pageSize: number,
    token: string,
  ): ReadPlan {
    const rawQuery = withoutOptions(c.rawQuery, ['skiptoken']);
    const values = this.skipTokens.verify(this.tokenScope(c, set, parent), token);
    const where = `${this.where(c, set, parent)}${full ? 'full' : ''} ${pageSize}\n${rawQuery}`;
    let plan = this.keysetPlans.get(where);
    if (plan === undefined) {
      plan = this.makeReadPlan({ ...c, rawQuery }, set, parent, full, pageSize, parseQuery(rawQuery));
      if (this.keysetPlans.size >= (this.options.planCacheSize ?? 1000)) {
        const oldest = this.keysetPlans.keys().next();
        if (oldest.done !== true) this.keysetPlans.delete(oldest.value);
      }
      if ((this.options.planCacheSize ?? 1000) > 0) this.keysetPlans.set(where, plan);
    } else {
      // (least recently used first out)
      this.keysetPlans.delete(where);
      this.keysetPlans.set(where, plan);
    }
    const { order, keyset } = plan;
    if (order === undefined || keyset === undefined)
      throw httpError('InvalidSkipToken', 'This query pages by $skip: it takes no $skiptoken', '$skiptoken');
    // the count is of the whole query, not of the rows after the token
    let count: (() => Promise<number>) | undefined;
    if (keyset.page.count) {
      const counted = this.countPlan({ ...c, rawQuery }, set, parent).read;
      count = () => counted.run(reading(c));
    }
    const read = this.afterRead(keyset.page, afterLevels(order, values), keyset.prepare, plan.read);
    return { ...plan, read, ...(count === undefined ? {} : { count }) };
  }

  /** What a read plan is made of (readPlan, and keysetPlan's pages after a token). */
  private makeReadPlan(
    c: Call<Context>,
    set: StoreCollection,
    parent: Row | undefined,
    full: boolean,
    pageSize: number,
    options: QueryOptions,
  ): ReadPlan {
    const bound = validateQuery(options, set.entityType, this.limits);
    const top = bound.top;
    const pageTop = top === undefined || top > pageSize ? pageSize : top;
    const page: BoundQuery = { ...bound, top: pageTop === top ? pageTop : pageTop + 1 };
    if (bound.apply !== undefined) {
      // transient instances: no id, no ETag, pages continued by $skip; the context URL names what they hold
      const read = applyPreparedRead(
        c.store,
        set,
        page,
        parent,
        this.limits.maxApplyRows ?? defaultLimits.maxApplyRows,
      );
      const write = read.writer({ ieee754Compatible: false });
      const writeCompatible = read.writer({ ieee754Compatible: true });
      const reshaped = bound.apply.output !== bound.apply.input;
      return {
        read,
        select: bound.select,
        top,
        skip: bound.skip ?? 0,
        pageTop,
        selected: reshaped
          ? `(${[
              ...(bound.selectNavigation ?? []).filter((n) => bound.apply!.nested?.includes(n)).map(nestedSelection),
              ...bound.select.map((p) => p.name),
            ].join(',')})`
          : selectSuffix(options.select !== undefined, bound),
        transient: true,
        write,
        writeCompatible,
        writeNone: write,
        writeNoneCompatible: writeCompatible,
      };
    }
    const order = keysetOrder(bound);
    const expand = bound.expand;
    const type = set.entityType;
    // beside the selection: the ETag's properties, and the order's (the last entity's values make the next link)
    const also = [...new Set([...type.concurrency, ...(order ?? []).map((o) => o.property)])];
    // full metadata needs each row's key for its id, and $expand the foreign keys of what it expands: they are read
    // beside the selection, and rows come decoded
    const prepare = (query: BoundQuery): PreparedRead =>
      bound.compute !== undefined
        ? computedPreparedRead(c.store, set, query, parent, { also })
        : expand !== undefined
          ? defaultPreparedRead(
              c.store,
              set,
              {
                ...query,
                select: selectForExpand(
                  query,
                  also.map((p) => p.name),
                ),
              },
              parent,
            )
          : full
            ? defaultPreparedRead(c.store, set, { ...query, select: withKey(type, bound.select, also) }, parent)
            : prepareRead(c.store, set, query, parent, { also });
    const read = prepare(page);
    // on the fast path the ETag comes from the concurrency values read beside the selection (the decoded paths
    // write it from the row); odata.metadata=none leaves it out, as all control information but count and next link
    const tagged = (write: (row: unknown) => string): ((row: unknown) => string) =>
      type.concurrency.length === 0 || read.also === undefined
        ? write
        : (row) => {
            const members = write(row);
            const tag = `"@odata.etag":${etagJson(type, read.also!(row))!}`;
            return members === '' ? tag : `${tag},${members}`;
          };
    const plain = read.writer({ ieee754Compatible: false });
    const compatible = read.writer({ ieee754Compatible: true });
    return {
      read,
      select: bound.select,
      top,
      skip: bound.skip ?? 0,
      pageTop,
      selected: selectSuffix(options.select !== undefined, bound),
      ...(expand === undefined ? {} : { expand }),
      ...(order === undefined ? {} : { order, keyset: { page, prepare } }),
      write: tagged(plain),
      writeCompatible: tagged(compatible),
      writeNone: plain,
      writeNoneCompatible: compatible,
    };
  }

  /**
   * The read of a page after a skip token: its levels (afterLevels) one after the other, each a read of the query's
   * filter and that level's condition, for as many rows as the page still needs (a `$skip` sent beside the token
   * skips rows after it). All have the columns of the first: its writers write them all.
   */
  private afterRead(
    page: BoundQuery,
    levels: readonly BoundExpr[],
    prepare: (query: BoundQuery) => PreparedRead,
    columns: PreparedRead,
  ): PreparedRead {
    const skip = page.skip ?? 0;
    const wanted = skip + (page.top ?? Infinity);
    const level = (condition: BoundExpr, top: number): BoundQuery => {
      const { skip: _skip, top: _top, ...rest } = page;
      return {
        ...rest,
        count: false,
        ...(top === Infinity ? {} : { top }),
        filter: page.filter === undefined ? condition : andOf(page.filter, condition),
      };
    };
    return {
      run: async (options) => {
        const rows: unknown[] = [];
        for (let i = 0; i < levels.length && rows.length < wanted; i++)
          rows.push(...(await prepare(level(levels[i]!, wanted - rows.length)).run(options)).rows);
        return { rows: rows.slice(skip, wanted) };
      },
      // every level reads the columns of the plan's own read: its writers and `also` serve them
      writer: (options) => columns.writer(options),
      ...(columns.also === undefined ? {} : { also: columns.also }),
    };
  }

  /**
   * What a skip token is bound to: the service root (the tenant), the collection, the parent and the query's options
   * but the paging ones. A token of another query, resource or tenant does not verify.
   */
  private tokenScope(c: Call<Context>, set: StoreCollection, parent: Row | undefined): string {
    const query = withoutOptions(c.rawQuery, ['skip', 'top', 'skiptoken']);
    return `${c.root}\n${set.name}\n${parent === undefined ? '' : JSON.stringify(parent)}\n${query}`;
  }

  /** What `/$count` runs, kept as read plans are (by query string, and by shape where the store prepares counts). */
  private countPlan(c: Call<Context>, set: StoreCollection, parent: Row | undefined): CountPlan {
    const { store } = c;
    return this.plan(this.counts, c, this.where(c, set, parent), store.prepareCount !== undefined, (options) => {
      const bound = validateQuery(options, set.entityType, this.limits);
      if (bound.apply !== undefined)
        return {
          read: applyPreparedCount(store, set, bound, parent, this.limits.maxApplyRows ?? defaultLimits.maxApplyRows),
        };
      const read: PreparedCount = store.prepareCount?.(set, bound, parent) ?? {
        run: (options) => store.count(set, bound, readingUnder(options, parent)),
      };
      return { read };
    });
  }

  /** The part of a plan's key before the query: the store, the collection and the parent. */
  private where(c: Call<Context>, set: StoreCollection, parent: Row | undefined): string {
    return `${this.storeId(c.store)}\n${set.name}\n${parent === undefined ? '' : JSON.stringify(parent)}\n`;
  }

  /**
   * The plan of the request's query from `cache`: by its query string; else, when `shaped`, by its shape with its
   * own literal values; else made by `make` from the parsed options (the shape's literals lifted in them, so that what
   * binding and translating decide from their values is recorded) and kept for both.
   */
  private plan<Plan extends { readonly read: Rebindable }>(
    cache: PlanCache<Plan>,
    c: Call<Context>,
    where: string,
    shaped: boolean,
    make: (options: QueryOptions) => Plan,
  ): Plan {
    const cacheKey = `${where}${c.rawQuery}`;
    const cached = cache.find(cacheKey);
    if (cached !== undefined) return cached;
    const shape = shaped ? queryShape(c.rawQuery) : undefined;
    const shapeKey = shape === undefined ? '' : `${where}${shape.key}`;
    if (shape !== undefined) {
      const ofShape = cache.findShape(cacheKey, shapeKey, shape);
      if (ofShape !== undefined) return ofShape;
    }
    cache.missed();
    const parsed = parseQuery(c.rawQuery);
    const lifting = new Lifting();
    const lifted = shape === undefined ? undefined : liftLiterals(parsed, shape, lifting);
    const plan = make(lifted ?? parsed);
    cache.keep(
      cacheKey,
      plan,
      shape === undefined || lifted === undefined ? undefined : { key: shapeKey, shape, lifting },
    );
    return plan;
  }

  /** One entity; `contextSet` names its entity set (or, contained, its parent's navigation) in the context URL. */
  private async readOne(
    c: Call<Context>,
    set: StoreCollection,
    key: Row,
    contextSet: string,
  ): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    // one entity: $select and $expand apply; the options that shape a collection do not (without options: every
    // property)
    const query = c.rawQuery === '' ? { select: readableProperties(set.entityType) } : this.entityQuery(c, set);
    const row = await c.store.get(set, key, reading(c));
    if (row === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    // If-None-Match with the ETag the client holds: it has this version already (RFC 9110 §13.1.2)
    const etag = etagOf(set.entityType, row);
    const noneMatch = header(c.request, 'if-none-match');
    if (etag !== undefined && noneMatch !== undefined && etagMatches(noneMatch, etag))
      return { status: 304, headers: { etag, 'odata-version': '4.0' } };
    const expanded = query.expand === undefined ? undefined : await this.expansions(c, [row], query.expand);
    // $compute: the selected computed properties beside the entity's own
    const computed = selectedComputed(query);
    const shown = computed === undefined ? row : withComputed(computed)(row);
    return this.entityResponse(c, format, set, shown, 200, query, contextSet, expanded);
  }

  /** What a single entity's query options ask: `$select`, `$expand` and `$compute` (the others shape collections). */
  private entityQuery(c: Call<Context>, set: StoreCollection): EntityQuery {
    const {
      filter: _filter,
      orderBy: _orderBy,
      top: _top,
      skip: _skip,
      search: _search,
      ...options
    } = parseQuery(c.rawQuery);
    const { select, expand, selectNavigation, compute } = validateQuery(options, set.entityType, this.limits);
    return {
      select,
      ...(expand === undefined ? {} : { expand }),
      ...(selectNavigation === undefined ? {} : { selectNavigation }),
      ...(compute === undefined ? {} : { compute }),
    };
  }

  /** The related entities `$expand` asks for, of the entities read (src/service/expand.ts). */
  private expansions(
    c: Call<Context>,
    rows: readonly Row[],
    expand: readonly BoundExpand[],
  ): Promise<ExpandedNavigation[]> {
    return readExpansions(c.store, this.model, rows, expand, {
      signal: c.request.signal,
      maxRows: this.limits.maxExpandRows ?? defaultLimits.maxExpandRows,
    });
  }

  /**
   * An entity's members: full metadata's control information, the selected properties, then each expanded
   * navigation (its `@odata.count` first, when asked) with the related entities written the same way.
   */
  private entityBody(
    c: Call<Context>,
    format: JsonFormat,
    set: StoreCollection,
    row: Row,
    select: readonly Property[],
    contextPath: string,
    expanded: readonly ExpandedNavigation[],
    members?: ExpandedNavigation['members'],
  ): string {
    let body = format.metadata === 'full' ? this.controlInformation(c, set, row, contextPath) : '';
    const etag = format.metadata === 'none' ? undefined : etagOf(set.entityType, row);
    if (etag !== undefined) body += `${body === '' ? '' : ','}"@odata.etag":${JSON.stringify(etag)}`;
    if (select.length > 0)
      body += `${body === '' ? '' : ','}${members === undefined ? entityMembers(select, row, format) : members(row, format)}`;
    // (an entity's own address only where a contained expansion is addressed under it)
    let path: string | undefined;
    for (const e of expanded) {
      const { navigation, query, ref } = e.expand;
      const found = e.related.get(row);
      const rows = found?.rows ?? [];
      // a contained entity is addressed under its parent; any other under its own entity set
      const childPath =
        navigation.contained === true
          ? `${(path ??= this.entityPath(set, row, contextPath))}/${navigation.name}`
          : e.target.name;
      const entity = (related: Row): string =>
        ref
          ? `{"@odata.id":${JSON.stringify(`${c.base}/${this.entityPath(e.target, related, childPath)}`)}}`
          : `{${this.entityBody(c, format, e.target, related, query.select, childPath, e.nested, e.members)}}`;
      if (body !== '') body += ',';
      if (e.expand.countOnly === true) {
        // `Nav/$count`: the count alone (an Int64: a string under IEEE754Compatible=true)
        const count = found?.count ?? 0;
        body += `"${navigation.name}@odata.count":${format.ieee754Compatible ? `"${count}"` : count}`;
        continue;
      }
      if (!navigation.collection) {
        body += `"${navigation.name}":${rows.length === 0 ? 'null' : entity(rows[0]!)}`;
        continue;
      }
      if (query.count) {
        const count = found?.count ?? 0;
        // an Int64: a string under IEEE754Compatible=true (JSON Format §4.5.1)
        body += `"${navigation.name}@odata.count":${format.ieee754Compatible ? `"${count}"` : count},`;
      }
      body += `"${navigation.name}":[`;
      for (let i = 0; i < rows.length; i++) body += `${i === 0 ? '' : ','}${entity(rows[i]!)}`;
      body += ']';
    }
    return body;
  }

  /** An entity's address under the service root: under its entity set, or under its parent's navigation (contained). */
  private entityPath(set: StoreCollection, row: Row, contextPath: string): string {
    const key = describeKey(keyOf(set, row), true, set.entityType);
    return `${this.model.sets.has(set.name) ? set.name : contextPath}(${key})`;
  }

  private storeId(store: Store): number {
    let id = this.storeIds.get(store);
    if (id === undefined) this.storeIds.set(store, (id = nextStoreId++));
    return id;
  }

  private entityResponse(
    c: Call<Context>,
    format: JsonFormat,
    set: StoreCollection,
    row: Row,
    status: number,
    query: EntityQuery = { select: readableProperties(set.entityType) },
    contextSet = set.name,
    expanded?: readonly ExpandedNavigation[],
  ): ServiceResponse {
    const { select, expand } = query;
    const selected = contextSelectList({
      ...query,
      select: select.length === readableProperties(set.entityType).length ? undefined : select,
    });
    const parts: string[] = [];
    if (format.metadata !== 'none')
      parts.push(`"@odata.context":${JSON.stringify(`${c.base}/$metadata#${contextSet}${selected}/$entity`)}`);
    const members = this.entityBody(c, format, set, row, select, contextSet, expanded ?? []);
    if (members !== '') parts.push(members);
    const headers = this.jsonHeaders(format);
    const etag = etagOf(set.entityType, row);
    if (etag !== undefined) headers['etag'] = etag;
    return { status, headers, body: `{${parts.join(',')}}` };
  }

  /**
   * What full metadata adds to an entity (JSON Format §4.6): its type, its id (the canonical URL: under its entity
   * set, or under its parent's navigation when contained), the edit link of an updatable entity or else the read
   * link, and the link of each navigation.
   */
  private controlInformation(c: Call<Context>, set: StoreCollection, row: Row, contextPath: string): string {
    const type = set.entityType;
    const id = `${c.base}/${this.entityPath(set, row, contextPath)}`;
    const link = capabilities(this.model, set).updatable ? 'editLink' : 'readLink';
    let out = `"@odata.type":${JSON.stringify(`#${this.model.namespace}.${type.name}`)},"@odata.id":${JSON.stringify(id)},"@odata.${link}":${JSON.stringify(id)}`;
    for (const navigation of type.navigation.values())
      out += `,${JSON.stringify(`${navigation.name}@odata.navigationLink`)}:${JSON.stringify(`${id}/${navigation.name}`)}`;
    return out;
  }

  // ── writes ─────────────────────────────────────────────────────────────────

  private bodyOptions(c: Call<Context>): BodyOptions {
    return this.options.bodyOptions?.(c.context) ?? {};
  }

  private readBody(c: Call<Context>): unknown {
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

  /**
   * POST of an entity set, or of a navigation (`related`: the values the related entity fixes, as the foreign key of
   * `PurchaseOrders('PO-1')/Lines`): 201 with the entity and its Location.
   */
  private async create(c: Call<Context>, set: StoreCollection, related?: Row): Promise<ServiceResponse> {
    // negotiated before anything is written: a 406 must not follow a committed write
    const format = this.jsonFormat(c);
    const body = this.readBody(c);
    const sent = checkCreateBody(
      set.entityType,
      related === undefined ? body : relatedBody(set.entityType, body, related),
      this.bodyOptions(c),
    );
    checkRules(set.entityType.rules, sent);
    const handler = this.options.create?.[set.name];
    const stored = await c.store.transaction((tx) =>
      handler !== undefined
        ? handler({ collection: set, sent, context: c.context, tx })
        : insertRow(tx, this.model, set, sent, (row) =>
            this.options.prepareWrite?.({ collection: set, row, context: c.context, tx }),
          ),
    );
    const location = `${c.base}/${set.name}(${describeKey(keyOf(set, stored), true, set.entityType)})`;
    const wanted = preferredReturn(c.request);
    if (wanted === 'minimal') {
      // Protocol §11.4.2: 204 with the new entity's address in Location and OData-EntityId
      const etag = etagOf(set.entityType, stored);
      return {
        status: 204,
        headers: {
          'odata-version': '4.0',
          'preference-applied': 'return=minimal',
          location,
          'odata-entityid': location,
          ...(etag === undefined ? {} : { etag }),
        },
      };
    }
    const response = this.entityResponse(c, format, set, stored, 201);
    response.headers['location'] = location;
    if (wanted === 'representation') response.headers['preference-applied'] = 'return=representation';
    return response;
  }

  /** PATCH merges the body into the entity; PUT (`replace`) sets every property it may, the ones it omits to their default or null. */
  private async update(
    c: Call<Context>,
    set: StoreCollection,
    pathKey: Row | undefined,
    replace = false,
  ): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    const { key, changes } = checkUpdateBody(
      set.entityType,
      this.readBody(c),
      pathKey === undefined ? {} : { fromPath: pathKey },
      this.bodyOptions(c),
    );
    const stored = await c.store.transaction(async (tx) => {
      // a PATCH writes the merged row: concurrent PATCHes (and actions) of one entity take turns, so that none loses
      // the other's fields
      await tx.lock(entityLock(set, key));
      const existing = await tx.get(set, key);
      if (existing === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
      this.precondition(c, set, key, existing);
      const row: Row = replace ? replacement(set.entityType, existing, changes) : { ...existing, ...changes };
      checkRules(set.entityType.rules, row);
      await this.options.prepareWrite?.({ collection: set, row, changes, context: c.context, tx });
      touchModified(set.entityType, row, new Date().toISOString());
      await tx.update(set, row);
      return row;
    });
    const wanted = preferredReturn(c.request);
    if (wanted === 'minimal') {
      const headers: Record<string, string> = { 'odata-version': '4.0', 'preference-applied': 'return=minimal' };
      // the new ETag: the client's next write of this entity sends it
      const etag = etagOf(set.entityType, stored);
      if (etag !== undefined) headers['etag'] = etag;
      return { status: 204, headers };
    }
    const response = this.entityResponse(c, format, set, stored, 200);
    // (the representation is the default answer; asked for, the answer says it applied the preference)
    if (wanted === 'representation') response.headers['preference-applied'] = 'return=representation';
    return response;
  }

  /** Whether a write of `set`'s entities has a precondition to check (an ETag, and If-Match, If-None-Match or the option). */
  private checksPreconditions(c: Call<Context>, set: StoreCollection): boolean {
    return (
      set.entityType.concurrency.length > 0 &&
      (this.options.requireIfMatch === true ||
        header(c.request, 'if-match') !== undefined ||
        header(c.request, 'if-none-match') !== undefined)
    );
  }

  /**
   * A write's preconditions on the entity as stored (read in the write's transaction, under its lock): If-Match must
   * name its ETag (412), If-None-Match must not (`*`: the entity must not exist; 412), and with `requireIfMatch` a
   * write without If-Match is a 428.
   */
  private precondition(c: Call<Context>, set: StoreCollection, key: Row, existing: Row): void {
    const etag = etagOf(set.entityType, existing);
    if (etag === undefined) return;
    const match = header(c.request, 'if-match');
    const noneMatch = header(c.request, 'if-none-match');
    const described = `${set.entityType.name} ${describeKey(key)}`;
    if (match !== undefined && !etagMatches(match, etag))
      throw httpError(
        'PreconditionFailed',
        `${described} has changed since it was read (its ETag is ${etag}); read it again`,
        'If-Match',
      );
    if (noneMatch !== undefined && etagMatches(noneMatch, etag))
      throw httpError(
        'PreconditionFailed',
        `${described} exists with the ETag ${etag} (If-None-Match)`,
        'If-None-Match',
      );
    if (match === undefined && this.options.requireIfMatch === true)
      throw httpError(
        'PreconditionRequired',
        `Send If-Match with the ETag of ${described} (from @odata.etag or the ETag header), or *`,
        'If-Match',
      );
  }

  /** DELETE of an entity: 204, or 404 when there is none. */
  private async remove(c: Call<Context>, set: StoreCollection, key: Row): Promise<ServiceResponse> {
    const removed = await c.store.transaction(async (tx) => {
      await tx.lock(entityLock(set, key));
      if (this.checksPreconditions(c, set)) {
        const existing = await tx.get(set, key);
        if (existing === undefined) return false;
        this.precondition(c, set, key, existing);
      }
      return tx.delete(set, key);
    });
    if (!removed) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
    return { status: 204, headers: { 'odata-version': '4.0' } };
  }

  // ── actions ────────────────────────────────────────────────────────────────

  /** An action, bound to one entity (`target`) or unbound; its handler runs in a transaction. */
  private async action(
    c: Call<Context>,
    action: ActionDefinition,
    target: { readonly set: StoreCollection; readonly key: Row } | undefined,
  ): Promise<ServiceResponse> {
    const bare = this.options.actionResults === 'bare';
    const format = bare ? undefined : this.jsonFormat(c);
    if (bare) negotiateRaw(header(c.request, 'accept'), formatOption(c.rawQuery), 'application/json');
    const bound = target === undefined ? undefined : this.options.actions?.[action.name];
    const unbound = target === undefined ? this.options.actionImports?.[action.name] : undefined;
    if (bound === undefined && unbound === undefined)
      throw httpError('NotImplemented', `The action ${action.name} is not implemented by this service`);
    const parameters = checkActionBody(action, this.readBody(c), this.bodyOptions(c));
    const result = await c.store.transaction(async (tx) => {
      if (target === undefined) return unbound!({ action, parameters, context: c.context, tx });
      // one write at a time per entity: an action and a PATCH of the same entity do not race
      const { set, key } = target;
      await tx.lock(entityLock(set, key));
      const entity = await tx.get(set, key);
      if (entity === undefined) throw httpError('NotFound', `No ${set.entityType.name} ${describeKey(key)}`);
      this.precondition(c, set, key, entity);
      return bound!({ action, collection: set, entity, parameters, context: c.context, tx });
    });
    if (format === undefined) {
      const body = JSON.stringify(result ?? null);
      return { status: 200, headers: { 'content-type': 'application/json', 'odata-version': '4.0' }, body };
    }
    return this.valueResponse(c, format, action.returnType, result);
  }

  /**
   * A function (`GET /F(a=1)`, `GET Set(key)/NS.F()`): its parameters are literals in the path, typed by its
   * definition; its handler reads (no transaction) and answers with a value of its return type.
   */
  private async callFunction(
    c: Call<Context>,
    fn: FunctionDefinition,
    call: KeyPredicate | undefined,
    target: { readonly set: StoreCollection; readonly key: Row } | undefined,
  ): Promise<ServiceResponse> {
    const format = this.jsonFormat(c);
    if (call === undefined)
      throw httpError(
        'InvalidSyntax',
        `${fn.name} is a function: call it with its parameters in parentheses, as ${fn.name}(...)`,
      );
    const parameters = functionParameters(fn, call);
    const handler = this.options.functions?.[fn.name];
    if (handler === undefined)
      throw httpError('NotImplemented', `The function ${fn.name} is not implemented by this service`);
    let entity: Row | undefined;
    if (target !== undefined) {
      entity = await c.store.get(target.set, target.key, reading(c));
      if (entity === undefined)
        throw httpError('NotFound', `No ${target.set.entityType.name} ${describeKey(target.key)}`);
    }
    const result = await handler({
      function: fn,
      parameters,
      context: c.context,
      store: c.store,
      ...(target === undefined ? {} : { collection: target.set, entity: entity! }),
    });
    return this.valueResponse(c, format, fn.returnType, result);
  }

  /** A primitive result as OData JSON: `{"@odata.context":"…$metadata#Edm.Int32","value":…}`. */
  private valueResponse(c: Call<Context>, format: JsonFormat, type: EdmPrimitiveType, value: unknown): ServiceResponse {
    const property: Property = { name: 'value', type, nullable: true, isKey: false };
    const context =
      format.metadata === 'none' ? '' : `"@odata.context":${JSON.stringify(`${c.base}/$metadata#${type}`)},`;
    const json = value === null || value === undefined ? 'null' : propertyValueJson(property, value, format);
    return { status: 200, headers: this.jsonHeaders(format), body: `{${context}"value":${json}}` };
  }

  // ── $batch ─────────────────────────────────────────────────────────────────

  /**
   * `POST $batch` (Protocol §11.7): multipart/mixed or JSON, answered in the same format. Each request is answered as
   * it would be on its own (resolve, credentials and tenancy included); a change set (atomicity group) runs in one
   * transaction of the store and is kept whole or not at all.
   */
  private async batch(c: Call<Context>): Promise<ServiceResponse> {
    const type = (header(c.request, 'content-type') ?? '').trim();
    const body = c.request.body ?? new Uint8Array();
    if (body.length > this.maxBodyBytes)
      throw httpError('PayloadTooLarge', `The body exceeds ${this.maxBodyBytes} bytes`);
    const limits = { maxRequests: this.options.maxBatchRequests ?? 1000 };
    let requests: BatchRequest[];
    const json = /^application\/json\b/i.test(type);
    if (/^multipart\/mixed\b/i.test(type)) requests = readMultipartBatch(type, body, limits);
    else if (json) requests = readJsonBatch(this.readBody(c), limits);
    else
      throw httpError(
        'UnsupportedMediaType',
        `Send a batch as multipart/mixed;boundary=... or as application/json (received ${type === '' ? 'no Content-Type' : type.slice(0, 80)})`,
      );
    // multipart stops at the first failure unless asked to go on; JSON goes on unless asked to stop (JSON Format §19.5)
    const named = preference(c.request, ['odata.continue-on-error', 'continue-on-error']);
    const continueOnError = named === undefined ? json : named === '' || named.toLowerCase() === 'true';
    let internal: unknown;
    const version = negotiateVersion(c.request);
    const run = (request: ResolvedBatchRequest, changes?: ChangeSetPart<Context>): Promise<ServiceResponse> => {
      const part = this.partRequest(c, request);
      return this.answer(part, () => this.route(part, { call: c, ...(changes === undefined ? {} : { changes }) })).then(
        (response) => {
          // a part's unexpected failure goes to the adapter's log with the batch's answer
          if (response.error !== undefined) internal ??= response.error;
          return response;
        },
      );
    };
    const result = await runBatch(
      requests,
      {
        run: (request) => run(request),
        atomically: async (members, work) => {
          // each request's site and credentials are checked before the transaction begins: a check that needs a
          // connection of the store must not wait for one while the transaction holds its own (and the locks the
          // other change sets wait on)
          const found = await Promise.all(
            members.map((member) =>
              this.resolvePart(c, member).then(
                (found) => found,
                (error: unknown) => ({ error }),
              ),
            ),
          );
          return c.store.transaction((tx) =>
            work((request, member) => run(request, { store: changeSetStore(tx), ...found[member]! })),
          );
        },
        errorAnswer: (error) => {
          if (!isODataError(error)) internal ??= error;
          const answer = this.errorResponse(error, c.request.id);
          answer.headers['odata-version'] = version;
          return answer;
        },
      },
      continueOnError,
    );
    const headers: Record<string, string> = { 'odata-version': '4.0' };
    if (named !== undefined) headers['preference-applied'] = `continue-on-error=${continueOnError}`;
    const response: ServiceResponse = json
      ? { status: 200, headers: { ...headers, 'content-type': 'application/json' }, body: writeJsonBatch(result) }
      : (() => {
          const written = writeMultipartBatch(result);
          return { status: 200, headers: { ...headers, 'content-type': written.contentType }, body: written.body };
        })();
    return internal === undefined ? response : { ...response, error: internal };
  }

  /** Where a request of a change set goes, found before the change set's transaction begins. */
  private async resolvePart(
    c: Call<Context>,
    request: BatchRequest,
  ): Promise<{ readonly resolved: Resolved<Context>; readonly pathname: string }> {
    const part = this.partRequest(c, request);
    const { pathname, host } = targetOf(part);
    const resolved = await this.resolveRequest({ request: part, pathname, host });
    if (resolved === undefined) throw httpError('NotFound', `No resource at ${pathname.slice(0, 200)}`);
    if (resolved.store !== c.store) throw oneServiceRoot();
    return { resolved, pathname };
  }

  /**
   * A batch's request as a request of its own: its URL in origin form (a relative one under the batch's service root),
   * the batch's headers (credentials, host) beneath its own, and the batch's connection.
   */
  private partRequest(c: Call<Context>, request: ResolvedBatchRequest): ServiceRequest {
    const url =
      /^https?:\/\//i.test(request.url) || request.url.startsWith('/') ? request.url : `${c.root}/${request.url}`;
    const headers: Record<string, string | readonly string[] | undefined> = {};
    for (const [name, value] of Object.entries(c.request.headers))
      if (!BATCH_OWN_HEADERS.has(name)) headers[name] = value;
    Object.assign(headers, request.headers);
    return {
      method: request.method,
      url,
      headers,
      body: request.body,
      id: c.request.id,
      remoteAddress: c.request.remoteAddress,
      protocol: c.request.protocol,
      signal: c.request.signal,
    };
  }

  // ── responses ──────────────────────────────────────────────────────────────

  /** The JSON format the request accepts (406 when none): `$format` or the Accept header. */
  private jsonFormat(c: Call<Context>): JsonFormat {
    return negotiateJson(header(c.request, 'accept'), formatOption(c.rawQuery), header(c.request, 'content-type'));
  }

  private jsonHeaders(format: JsonFormat): Record<string, string> {
    return { 'content-type': format.contentType, 'odata-version': '4.0' };
  }

  private json(_c: Call<Context>, format: JsonFormat, status: number, body: unknown): ServiceResponse {
    return { status, headers: this.jsonHeaders(format), body: JSON.stringify(body) };
  }
}

interface CountPlan {
  readonly read: PreparedCount;
}

interface ReadPlan {
  readonly read: PreparedRead;
  /** The properties the client selected. */
  readonly select: readonly Property[];
  readonly top: number | undefined;
  readonly skip: number;
  readonly pageTop: number;
  /** `(A,B)` after the context URL's set when $select was given. */
  readonly selected: string;
  /** The navigations `$expand` asks for (then the rows come decoded, with the foreign keys they need). */
  readonly expand?: readonly BoundExpand[];
  /** The query's total order, where next links can continue it by its values (keyset.ts); else they use `$skip`. */
  readonly order?: readonly OrderItem[];
  /** A page after a skip token: the count of the whole query (the page's read does not count). */
  readonly count?: () => Promise<number>;
  /** With `order`: the page's query and how to prepare a read of it with another filter (a page after a token). */
  readonly keyset?: { readonly page: BoundQuery; readonly prepare: (query: BoundQuery) => PreparedRead };
  readonly write: (row: unknown) => string;
  readonly writeCompatible: (row: unknown) => string;
  /** The same without control information (odata.metadata=none: no @odata.etag). */
  readonly writeNone: (row: unknown) => string;
  readonly writeNoneCompatible: (row: unknown) => string;
  /** The instances are made by `$apply`: no entity ids, read or edit links, or ETags. */
  readonly transient?: true;
}

/** A request of a change set: the transaction's store, and where the request goes (or why it cannot). */
type ChangeSetPart<Context> = { readonly store: Store } & (
  { readonly resolved: Resolved<Context>; readonly pathname: string } | { readonly error: unknown }
);

function oneServiceRoot(): ODataError {
  return httpError(
    'InvalidBatch',
    'A change set is one transaction: its requests address the service root of the batch',
  );
}

/**
 * A request's target: in origin form, the host it names (an absolute-form target, RFC 9112 §3.2.2, names the host
 * itself: its authority replaces the Host header), its path and its query string.
 */
function targetOf(request: ServiceRequest): {
  readonly url: string;
  readonly host: string | undefined;
  readonly pathname: string;
  readonly rawQuery: string;
} {
  const absolute = ABSOLUTE_FORM.exec(request.url);
  const url = absolute === null ? request.url : request.url.slice(absolute[0].length) || '/';
  const q = url.indexOf('?');
  return {
    url,
    host: absolute === null ? header(request, 'host') : absolute[1],
    pathname: q < 0 ? url : url.slice(0, q),
    rawQuery: q < 0 ? '' : url.slice(q + 1),
  };
}

/** Headers of a batch request that describe the batch itself, not each of its requests. */
const BATCH_OWN_HEADERS = new Set([
  'content-type',
  'content-length',
  'content-encoding',
  'transfer-encoding',
  'accept',
  'prefer',
  'if-match',
  'if-none-match',
  'odata-version',
  'expect',
]);

/**
 * The store a change set's requests see: its transaction. Reads do not belong in a change set (the batch readers
 * refuse a GET in one); an entity the change set wrote is found by the requests after it.
 */
function changeSetStore(tx: StoreTransaction): Store {
  const refuse = (): never => {
    throw httpError('InvalidBatch', 'A change set holds only changes and actions: send reads outside it');
  };
  return {
    read: refuse,
    count: refuse,
    get: (c, key) => tx.get(c, key),
    transaction: (work) => work(tx),
  };
}

export type ODataVersion = '4.0' | '4.01';

/**
 * The version of the answer (Protocol §8.2.6, §8.2.7): the highest the service speaks (4.01) not above the request's
 * OData-MaxVersion; a request written in a version the service does not speak (OData-Version), or allowing only
 * versions below 4.0, is a 400.
 */
function negotiateVersion(request: ServiceRequest): ODataVersion {
  const sent = header(request, 'odata-version')?.trim();
  if (sent !== undefined && sent !== '4.0' && sent !== '4.01')
    throw httpError(
      'UnsupportedVersion',
      `OData-Version ${JSON.stringify(sent.slice(0, 20))} is not a version this service speaks: send 4.0 or 4.01`,
      'OData-Version',
    );
  const max = header(request, 'odata-maxversion')?.trim();
  if (max === undefined) return '4.01';
  const match = /^(\d{1,3})\.(\d{1,3})$/.exec(max);
  if (match === null)
    throw httpError(
      'UnsupportedVersion',
      `OData-MaxVersion ${JSON.stringify(max.slice(0, 20))} is not a version (4.0, 4.01)`,
      'OData-MaxVersion',
    );
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major < 4)
    throw httpError(
      'UnsupportedVersion',
      `OData-MaxVersion ${max} allows only versions this service does not speak: it answers in 4.0 or 4.01`,
      'OData-MaxVersion',
    );
  return major > 4 || minor >= 1 ? '4.01' : '4.0';
}

/** One request on its way through the service. */
interface Call<Context> {
  readonly store: Store;
  /** What `resolve` found for the hooks. */
  readonly context: Context;
  /** The absolute service root (`http://host/north/ODataApi/v1`). */
  readonly base: string;
  /** The service root's path (`/north/ODataApi/v1`): a batch's relative request URLs are under it. */
  readonly root: string;
  /** The resource's path after the root, as sent, without a trailing slash. */
  readonly resource: string;
  /** The request target in origin form (an absolute-form target without its scheme and authority). */
  readonly url: string;
  readonly rawQuery: string;
  readonly request: ServiceRequest;
  /** A request of a batch (which cannot hold another batch). */
  readonly inBatch: boolean;
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

/** What a single entity's answer is written from: the query options that apply to one entity. */
type EntityQuery = Pick<BoundQuery, 'select' | 'expand' | 'selectNavigation' | 'compute'>;

/** What a context URL's select list is written from: `select` undefined where every property is selected. */
type Selection = Pick<BoundQuery, 'expand' | 'selectNavigation'> & { readonly select: readonly Property[] | undefined };

function selectSuffix(selected: boolean, bound: BoundQuery): string {
  return contextSelectList({ ...bound, select: selected ? bound.select : undefined });
}

/**
 * The context URL's select list (Protocol §10.9, 4.01): the selected properties when `$select` was given (`*` when it
 * selects all of them beside navigations), the navigations it names, and each expanded navigation with its own list
 * in parentheses, empty when it selects everything and expands nothing (`(Name,Lines())`); nothing when neither
 * `$select` nor `$expand` is given.
 */
function contextSelectList(selection: Selection): string {
  const { select, expand = [], selectNavigation = [] } = selection;
  const items = select === undefined ? [] : select.map((p) => p.name);
  if (select === undefined && selectNavigation.length > 0) items.push('*');
  for (const n of selectNavigation) if (!expand.some((e) => e.navigation === n)) items.push(n.name);
  for (const e of expand) {
    // (`Nav/$count` adds an annotation of the entity, not a property)
    if (e.countOnly === true) continue;
    const all = e.query.select.length === readableProperties(e.query.entityType).length;
    const nested = contextSelectList({ ...e.query, select: all || e.ref ? undefined : e.query.select });
    items.push(e.ref ? `${e.navigation.name}/$ref` : `${e.navigation.name}${nested === '' ? '()' : nested}`);
  }
  return items.length === 0 ? '' : `(${items.join(',')})`;
}

/**
 * The next link: the request's resource and query string, its paging options replaced by where the next page starts
 * (`$skiptoken=…` after the last entity's order values, or `$skip=n`) and the `$top` still due, as an absolute URL.
 */
function nextLink<Context>(c: Call<Context>, from: string, remaining: number | undefined): string {
  const kept = withoutOptions(c.rawQuery, ['skip', 'top', 'skiptoken'])
    .split('&')
    .filter((pair) => pair !== '');
  kept.push(from);
  if (remaining !== undefined) kept.push(`$top=${remaining}`);
  // the resource as the client addressed it, under the base (which names a tenant even when the host did)
  return `${c.base}${c.resource}?${kept.join('&')}`;
}

/** The query string without the named system options (`skip` drops `$skip`, `%24skip` and `skip`, not `$skiptoken`). */
function withoutOptions(rawQuery: string, names: readonly string[]): string {
  const pattern = new RegExp(`^(?:%24|\\$)?(?:${names.join('|')})=`, 'i');
  return rawQuery
    .split('&')
    .filter((pair) => !pattern.test(pair))
    .join('&');
}

/** The `$skiptoken` of a query string (percent-decoded), if it has one. */
function skipTokenOf(rawQuery: string): string | undefined {
  for (const pair of rawQuery.split('&')) {
    const match = /^(?:%24|\$)skiptoken=(.*)$/i.exec(pair);
    if (match === null) continue;
    try {
      return decodeURIComponent(match[1]!);
    } catch {
      return match[1]!;
    }
  }
  return undefined;
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

function keyOf(set: StoreCollection, row: Row): Row {
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

function noResource<Context>(c: Call<Context>): ODataError {
  const q = c.url.indexOf('?');
  return httpError('NotFound', `No resource at ${(q < 0 ? c.url : c.url.slice(0, q)).slice(0, 200)}`);
}

function refUnsupported(): ODataError {
  return httpError('NotImplemented', 'Entity references ($ref) are not offered by this service yet');
}

function pick(row: Row, properties: readonly Property[]): Row {
  return Object.fromEntries(properties.map((p) => [p.name, row[p.name]]));
}

/** What stops a read early: the client leaving (the backend's budget applies either way). */
let nextStoreId = 1;

/** The selected properties, the key and the ETag's properties, in declaration order. */
function withKey(type: EntityType, select: readonly Property[], also: readonly Property[] = []): Property[] {
  return readableProperties(type).filter(
    (p) => select.includes(p) || type.key.includes(p) || type.concurrency.includes(p) || also.includes(p),
  );
}

/** A store's prepared read, or the service's own over `read` and the decoded rows' JSON writer. */
function prepareRead(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent?: Row,
  options: PrepareOptions = {},
): PreparedRead {
  return store.prepareRead !== undefined
    ? store.prepareRead(set, query, parent, options)
    : defaultPreparedRead(store, set, query, parent, options);
}

/** A read over the store's `read`: decoded rows, written by the JSON writer of decoded values. */
function defaultPreparedRead(
  store: Store,
  set: StoreCollection,
  query: BoundQuery,
  parent?: Row,
  options: PrepareOptions = {},
): PreparedRead {
  const beside = readingAlso(query, options);
  return {
    run: (options) => store.read(set, beside.query, readingUnder(options, parent)),
    writer: (options) => (row) => entityMembers(query.select, row as Row, options),
    ...(beside.also === undefined ? {} : { also: beside.also }),
  };
}

/**
 * A create body sent through a navigation, with the values the related entity fixes (the foreign key) filled in; a
 * body that gives one of them another value is a 400 naming it.
 */
function relatedBody(entityType: EntityType, body: unknown, related: Row): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const filled: Row = { ...(body as Row) };
  for (const [name, value] of Object.entries(related)) {
    const property = entityType.properties.get(name)!;
    if (name in filled && linkValueText(property, filled[name]) !== linkValueText(property, value))
      throw httpError(
        'InvalidBody',
        `${name} is ${JSON.stringify(String(value))} for an entity created through this navigation; the body gives ${JSON.stringify(filled[name])}`,
        name,
      );
    filled[name] = typeof value === 'bigint' ? String(value) : value;
  }
  return filled;
}

/**
 * The row a PUT leaves (Protocol §11.4.4: a replace): the key, computed and immutable properties as stored, each other
 * property as sent, or else its fixed default, or null; one that can be none of these is the client's 400.
 */
function replacement(entityType: EntityType, existing: Row, changes: Row): Row {
  const row: Row = { ...existing };
  const missing: string[] = [];
  for (const property of entityType.properties.values()) {
    const name = property.name;
    if (property.isKey || property.computed === true || property.immutable === true) continue;
    if (name in changes) row[name] = changes[name];
    else if (fixedDefault(property) !== undefined) row[name] = fixedDefault(property);
    else if (property.nullable) row[name] = null;
    else missing.push(name);
  }
  if (missing.length > 0) {
    throw httpError(
      'InvalidBody',
      `A PUT replaces the whole ${entityType.name}: send ${missing.join(', ')} (required, no default)`,
      missing[0],
    );
  }
  return row;
}

/**
 * A function's parameters from its call (`F(Price=10,Title='x')`): each named once, typed by its definition (an
 * integer literal may stand for an Int64, Decimal or Double; a decimal one for a Double), the non-nullable ones
 * required. A mistake is a 400 naming the parameter.
 */
function functionParameters(fn: FunctionDefinition, call: KeyPredicate): Row {
  if (call.kind === 'single' && Object.keys(fn.parameters).length !== 1)
    throw httpError('InvalidSyntax', `Name the parameters of ${fn.name}: ${fn.name}(Name=value,...)`);
  const values = call.kind === 'single' ? new Map([[Object.keys(fn.parameters)[0]!, call.value]]) : call.values;
  const row: Row = {};
  for (const [name, literal] of values) {
    const definition = fn.parameters[name];
    if (definition === undefined) {
      const near = suggest(name, Object.keys(fn.parameters));
      throw httpError(
        'InvalidSyntax',
        `${fn.name} has no parameter ${name}${near === undefined ? '' : `; did you mean ${near}?`}`,
        name,
      );
    }
    if (literal.type === 'null') {
      if (definition.nullable === false)
        throw httpError('InvalidLiteral', `${name} of ${fn.name} cannot be null`, name);
      row[name] = null;
      continue;
    }
    const promotes: Readonly<Record<string, readonly string[]>> = {
      'Edm.Int64': ['Edm.Int32'],
      'Edm.Decimal': ['Edm.Int32', 'Edm.Int64'],
      'Edm.Double': ['Edm.Int32', 'Edm.Int64', 'Edm.Decimal'],
    };
    if (literal.type !== definition.type && !(promotes[definition.type] ?? []).includes(literal.type)) {
      throw httpError(
        'TypeMismatch',
        `${name} of ${fn.name} is ${definition.type}; the call gives ${literal.type}`,
        name,
      );
    }
    const value = 'value' in literal ? literal.value : null;
    row[name] =
      typeof value === 'bigint' || definition.type === 'Edm.Decimal' || definition.type === 'Edm.Int64'
        ? String(value)
        : definition.type === 'Edm.Double'
          ? Number(value)
          : value;
  }
  for (const [name, definition] of Object.entries(fn.parameters)) {
    if (!(name in row)) {
      if (definition.nullable === false)
        throw httpError('InvalidSyntax', `${fn.name} needs its parameter ${name} (${definition.type})`, name);
      row[name] = null;
    }
  }
  return row;
}

/** `Prefer: return=minimal` (Protocol §8.2.8.7): the client wants no representation of what it wrote. */
/**
 * The value of a preference of the `Prefer` header (RFC 7240: preferences separated by `,`, each `name[=value]` with
 * `;` parameters, names case-insensitive, values maybe quoted) by any of its `names`; '' for one without a value,
 * undefined when the request has none of them.
 */
function preference(request: ServiceRequest, names: readonly string[]): string | undefined {
  for (const item of (header(request, 'prefer') ?? '').split(',')) {
    const [token = ''] = item.split(';');
    const eq = token.indexOf('=');
    const name = (eq < 0 ? token : token.slice(0, eq)).trim().toLowerCase();
    if (names.includes(name))
      return eq < 0
        ? ''
        : token
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1');
  }
  return undefined;
}

/**
 * `Prefer: odata.maxpagesize=n` (or `maxpagesize=n`, OData 4.01), a positive integer; undefined when absent or not
 * one (a preference the service cannot read is ignored, as preferences are).
 */
function preferredPageSize(request: ServiceRequest): number | undefined {
  const value = preference(request, ['odata.maxpagesize', 'maxpagesize']);
  if (value === undefined || !/^\d{1,15}$/.test(value)) return undefined;
  const size = Number(value);
  return size >= 1 ? size : undefined;
}

/** `Prefer: return=minimal` or `return=representation` (Protocol §8.2.8.7), on the writes that answer an entity. */
function preferredReturn(request: ServiceRequest): 'minimal' | 'representation' | undefined {
  const value = preference(request, ['return'])?.toLowerCase();
  return value === 'minimal' || value === 'representation' ? value : undefined;
}

/** The lock a write of one entity holds for its transaction. */
function entityLock(set: StoreCollection, key: Row): string {
  return `${set.name}:${JSON.stringify(key)}`;
}

function reading<Context>(c: Call<Context>): ReadOptions {
  return new SignalOf(c.request);
}
