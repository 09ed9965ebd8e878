// The reference service: the plant application on the OData service of odata-engine/service. What is the plant's
// own comes in through the service's options: a site per request (`/<site>/ODataApi/v1/...`, or the host's first
// label), API-key and Basic credentials with rate limits, the computed fields and meter readings of MODEL.md, the
// work-order actions, the key-in-body PATCH of the interface, and the `/health` and `/ready` probes.
import { ODataError } from '../errors.js';
import { decodeSegments } from '../service/paths.js';
import { RateLimiter, type RateLimit } from '../service/rate-limit.js';
import { modifiedTime, touchModified } from '../service/writes.js';
import {
  createODataService,
  header,
  type ODataService,
  type ODataServiceOptions,
  type Resolved,
  type ResolveRequest,
} from '../service/service.js';
import type { Backend } from './backend.js';
import { collection } from './collections.js';
import { plantDataModel, WorkOrder } from './model.js';
import type { Credential, Site } from './tenancy.js';
import { addComment, removeLabor } from './work-orders.js';
import { computeFields, recordMeterReading } from './writes.js';

export interface PlantServiceOptions extends Pick<
  ODataServiceOptions<PlantContext>,
  | 'pageSize'
  | 'planCacheSize'
  | 'maxPageBytes'
  | 'maxBodyBytes'
  | 'limits'
  | 'publicUrl'
  | 'onInternalError'
  | 'maxBatchRequests'
  | 'requireIfMatch'
  | 'skipTokenSecret'
> {
  readonly backend: Backend;
  /** Also accept the site as the first label of the host name (`north.odata.example.com/ODataApi/v1/...`). */
  readonly siteFromHost?: boolean;
  /** Requests per second per credential, and failed sign-ins per second per client address (default: no limit). */
  readonly rateLimit?: RateLimit;
}

/** What the plant's hooks know of a request: its site, and who is asking. */
export interface PlantContext {
  readonly site: Site;
  readonly credential: Credential;
}

/** The path of a site's service root after the site: `/<site>/ODataApi/v1`. */
const API_ROOT = ['ODataApi', 'v1'];

export type PlantService = ODataService<PlantContext>;

export function createPlantService(options: PlantServiceOptions): PlantService {
  const { backend, siteFromHost, rateLimit, ...service } = options;
  const limiter = rateLimit === undefined ? undefined : new RateLimiter(rateLimit);
  return createODataService<PlantContext>({
    ...service,
    model: plantDataModel,
    resolve: (request) => resolveSite(request, backend, limiter, siteFromHost === true),
    probes: { readiness: () => backend.readiness() },
    bodyOptions: ({ site }) => ({ timeZone: site.timeZone, offsetlessInstants: ['ReadingDate'] }),
    prepareWrite: ({ collection: c, row, changes, context }) => computeFields(c, row, context.credential, changes),
    create: { MeterReadings: ({ sent, tx }) => recordMeterReading(tx, sent) },
    actions: {
      AddComment: async ({ entity, parameters, tx }) => {
        // the comment's CreatedDate and the work order's LastModifiedDate are one time
        const now = modifiedTime(entity['LastModifiedDate'], new Date().toISOString());
        await addComment(tx, entity['WorkOrderID'], parameters, now);
        const workOrder = { ...entity };
        touchModified(WorkOrder, workOrder, now);
        await tx.update(collection('WorkOrders'), workOrder);
        return true;
      },
      RemoveActualLabor: async ({ entity, parameters, tx }) => {
        const workOrder = { ...entity };
        await removeLabor(tx, workOrder, parameters);
        touchModified(WorkOrder, workOrder, new Date().toISOString());
        await tx.update(collection('WorkOrders'), workOrder);
        return true;
      },
    },
    // the interface's answer is the JSON Boolean itself, not OData's {"value":true} wrapper (MODEL.md "Actions")
    actionResults: 'bare',
    keyInBodyUpdate: true,
  });
}

/** The site and the raw resource path of `/<site>/ODataApi/v1/<resource>`; no resource when the path is not one. */
function splitSitePath(pathname: string): { site: string; resource: string | undefined } {
  const raw = pathname.split('/');
  const segments = decodeSegments(pathname);
  const site = segments[1] ?? '';
  if (segments[2] !== API_ROOT[0] || segments[3] !== API_ROOT[1]) return { site, resource: undefined };
  return { site, resource: raw.length > 4 ? `/${raw.slice(4).join('/')}` : '' };
}

/**
 * The site (404 when there is none), then the credentials (401), each under its rate limit (429): a credential check
 * holds a token of the client address while it runs and keeps it when the credentials are not valid, so an address
 * that keeps failing waits before its next check costs a hash, however many it sends at once.
 */
async function resolveSite(
  { request, pathname, host }: ResolveRequest,
  backend: Backend,
  limiter: RateLimiter | undefined,
  siteFromHost: boolean,
): Promise<Resolved<PlantContext>> {
  let { site: siteName, resource } = splitSitePath(pathname);
  if (resource === undefined && siteFromHost) {
    // north.odata.example.com/ODataApi/v1/...: the site is the host's first label
    const label = (host ?? '').split(':')[0]!.split('.')[0]!;
    const again = splitSitePath(`/${label}${pathname}`);
    if (again.resource !== undefined) ({ site: siteName, resource } = again);
  }
  const site = await backend.directory.site(siteName);
  if (site === undefined) throw new ODataError('NotFound', `No site ${JSON.stringify(siteName.slice(0, 63))}`);
  const address = `address\n${request.remoteAddress ?? ''}`;
  limit(limiter, address);
  let credential: Credential | undefined;
  try {
    credential = await backend.directory.authenticate(
      site.name,
      header(request, 'api_key'),
      header(request, 'authorization'),
    );
  } catch (error) {
    limiter?.refund(address);
    throw error;
  }
  if (credential !== undefined) limiter?.refund(address);
  else {
    const sent = header(request, 'api_key') !== undefined || header(request, 'authorization') !== undefined;
    throw new ODataError(
      'Unauthorized',
      sent ? 'The credentials are not valid for this site' : 'Send an API_KEY header or HTTP Basic credentials',
    );
  }
  limit(limiter, `${credential.site}\n${credential.kind}\n${credential.name}`);
  if (resource === undefined)
    throw new ODataError('NotFound', `No resource at ${pathname}; the service root is /${site.name}/ODataApi/v1`);
  return {
    store: await backend.store(site.name),
    context: { site, credential },
    root: `/${site.name}/ODataApi/v1`,
    resource,
  };
}

/** Spends a token of `key`; 429 when it has none left. */
function limit(limiter: RateLimiter | undefined, key: string): void {
  if (limiter === undefined) return;
  const wait = limiter.take(key);
  if (wait === 0) return;
  const seconds = Math.max(1, Math.ceil(wait));
  throw Object.assign(
    new ODataError(
      'TooManyRequests',
      `Rate limit of ${limiter.perSecond} requests per second exceeded; retry after ${seconds} s`,
    ),
    { retryAfter: seconds },
  );
}
