// $batch (Protocol §11.7, JSON Format §19): a batch body read into its requests, the requests run in order (a change
// set or atomicity group as one transaction), and the answers written back in the format the batch came in:
// multipart/mixed (OData 4.0, what UI5 and most clients send) or JSON (4.01).
//
// The multipart reader is written here rather than taken from a library: the parsers on npm (busboy, dicer,
// multipart-parser) read multipart/form-data uploads, not multipart/mixed parts that each hold an HTTP message, the
// body is already in memory and bounded by maxBodyBytes, and RFC 2046's framing is a few lines.
import { STATUS_CODES } from 'node:http';
import { randomUUID } from 'node:crypto';
import { ODataError } from '../errors.js';

/** One request of a batch, as read from either format. */
export interface BatchRequest {
  /** Its request identifier: the multipart `Content-ID`, or the JSON `id`. */
  readonly id: string | undefined;
  readonly method: string;
  /** As written: absolute, an absolute path, relative to the service root, or `$id/...` (a preceding request's entity). */
  readonly url: string;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | undefined;
  /** The change set (multipart) or atomicity group (JSON) it belongs to: all of its requests succeed, or none. */
  readonly group: string | undefined;
  /** The requests and groups (JSON) that must have succeeded for this one to run; a failed one makes it a 424. */
  readonly dependsOn: readonly string[];
  /** A JSON request's `if` condition (4.01), which this service does not evaluate: such a request fails with 424. */
  readonly condition?: unknown;
}

/** The answer to one request of a batch (a ServiceResponse). */
export interface BatchAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
}

export interface BatchLimits {
  /** Most requests in one batch, change sets' requests included. */
  readonly maxRequests: number;
}

/** A request ready to run: its `$id` reference replaced by the URL of that request's entity, an ETag reference by its ETag. */
export interface ResolvedBatchRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Uint8Array | undefined;
}

/** How the service runs the requests of a batch. */
export interface BatchRunner {
  /** Runs one request on its own; never throws (a failure is an error answer). */
  run(request: ResolvedBatchRequest): Promise<BatchAnswer>;
  /**
   * Runs `work` in one transaction, in which `run` runs each request of the change set `members` (by its index among
   * them): the transaction commits when `work` resolves and rolls back when it throws.
   */
  atomically<T>(
    members: readonly BatchRequest[],
    work: (run: (request: ResolvedBatchRequest, member: number) => Promise<BatchAnswer>) => Promise<T>,
  ): Promise<T>;
  /** The error answer for a failure outside any one request (a commit that failed). */
  errorAnswer(error: unknown): BatchAnswer;
}

/** What came of one request: its answer, and for a change set that failed, whether it was this request that failed. */
export interface BatchOutcome {
  readonly request: BatchRequest;
  readonly answer: BatchAnswer;
}

/** What came of a batch: the outcomes in request order, the requests not run (processing stopped) left out. */
export interface BatchResult {
  readonly outcomes: readonly BatchOutcome[];
  /** Per change set that failed: the request whose failure failed it (its answer stands for the whole set). */
  readonly failedGroups: ReadonlyMap<string, BatchOutcome>;
}

function invalid(message: string, target?: string): ODataError {
  return new ODataError('InvalidBatch', message, target === undefined ? {} : { target });
}

// ── multipart/mixed ──────────────────────────────────────────────────────────

const CR = 0x0d;
const LF = 0x0a;
const DASH = 0x2d;

/** The `boundary` parameter of a multipart Content-Type (RFC 2046 §5.1.1: 1 to 70 characters, maybe quoted). */
export function multipartBoundary(contentType: string, what: string): string {
  const match = /;\s*boundary\s*=\s*(?:"([^"]{1,70})"|([^\s;",]{1,70}))/i.exec(contentType);
  const boundary = match?.[1] ?? match?.[2];
  if (boundary === undefined)
    throw invalid(`${what} is multipart/mixed without a boundary parameter: send multipart/mixed;boundary=...`);
  return boundary;
}

/** Where a delimiter line `--boundary` starts at or after `from`: at the start of a line, followed by `--`, blanks or a line end. */
function delimiterAt(bytes: Buffer, delimiter: Buffer, from: number): number {
  for (let at = bytes.indexOf(delimiter, from); at >= 0; at = bytes.indexOf(delimiter, at + 1)) {
    if (at > 0 && bytes[at - 1] !== LF) continue;
    const next = bytes[at + delimiter.length];
    if (next === undefined || next === DASH || next === CR || next === LF || next === 0x20 || next === 0x09) return at;
  }
  return -1;
}

/** The body parts of a multipart body (RFC 2046 §5.1.1): preamble and epilogue dropped, CRLF or LF line ends. */
function multipartParts(bytes: Buffer, boundary: string, what: string): Buffer[] {
  const delimiter = Buffer.from(`--${boundary}`, 'latin1');
  const parts: Buffer[] = [];
  let at = delimiterAt(bytes, delimiter, 0);
  if (at < 0) throw invalid(`${what} holds no line --${boundary}: the body does not match its boundary`);
  for (;;) {
    const after = at + delimiter.length;
    if (bytes[after] === DASH && bytes[after + 1] === DASH) return parts;
    const lineEnd = bytes.indexOf(LF, after);
    if (lineEnd < 0) break;
    const start = lineEnd + 1;
    const next = delimiterAt(bytes, delimiter, start);
    if (next < 0) break;
    // the line break before a delimiter belongs to the delimiter
    let end = next;
    if (end > start && bytes[end - 1] === LF) end--;
    if (end > start && bytes[end - 1] === CR) end--;
    parts.push(bytes.subarray(start, end));
    at = next;
  }
  throw invalid(`${what} ends without its closing line --${boundary}--`);
}

/** Splits a message into its header lines and its body at the first empty line (CRLF or LF). */
function headAndBody(message: Buffer): { readonly lines: string[]; readonly body: Buffer } {
  let end = -1;
  let bodyStart = message.length;
  if (message[0] === LF) return { lines: [], body: message.subarray(1) };
  if (message[0] === CR && message[1] === LF) return { lines: [], body: message.subarray(2) };
  for (let i = message.indexOf(LF); i >= 0; i = message.indexOf(LF, i + 1)) {
    if (message[i + 1] === LF) {
      end = i;
      bodyStart = i + 2;
      break;
    }
    if (message[i + 1] === CR && message[i + 2] === LF) {
      end = i;
      bodyStart = i + 3;
      break;
    }
  }
  if (end > 0 && message[end - 1] === CR) end--;
  const head = message.subarray(0, end < 0 ? message.length : end).toString('latin1');
  const lines: string[] = [];
  for (const line of head.split(/\r?\n/)) {
    // an obsolete folded line continues the one before it
    if (/^[ \t]/.test(line) && lines.length > 0) lines[lines.length - 1] += ` ${line.trim()}`;
    else if (line !== '') lines.push(line);
  }
  return { lines, body: message.subarray(bodyStart) };
}

function headerMap(lines: readonly string[], what: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0)
      throw invalid(`${what} has a header line that is not Name: value (${JSON.stringify(line.slice(0, 60))})`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  return headers;
}

/** `METHOD URL [HTTP/1.1]`; a URL with raw blanks (which it should have percent-encoded) is taken whole. */
const REQUEST_LINE = /^([A-Za-z]+)[ \t]+(.+?)(?:[ \t]+HTTP\/1\.[01])?[ \t]*$/;

/** An `application/http` part: the HTTP request it holds (request line, headers, body). */
function httpRequestOf(
  part: Buffer,
  what: string,
  mime: Readonly<Record<string, string>>,
  group: string | undefined,
): BatchRequest {
  const { body: message } = headAndBody(part);
  const { lines, body } = headAndBody(message);
  const [requestLine, ...headerLines] = lines;
  const match = requestLine === undefined ? null : REQUEST_LINE.exec(requestLine);
  if (match === null)
    throw invalid(
      `${what} holds no request line: write METHOD URL HTTP/1.1 (found ${JSON.stringify((requestLine ?? '').slice(0, 60))})`,
    );
  const headers = headerMap(headerLines, what);
  let content: Buffer | undefined = body;
  const length = headers['content-length'];
  if (length !== undefined) {
    if (!/^\d{1,12}$/.test(length)) throw invalid(`${what} has a Content-Length that is not a number`);
    if (Number(length) > body.length)
      throw invalid(`${what} says Content-Length ${length} but holds ${body.length} bytes`);
    content = body.subarray(0, Number(length));
  }
  if (content.length === 0 || content.every((b) => b === CR || b === LF || b === 0x20 || b === 0x09))
    content = undefined;
  // (a Content-ID may come with the MIME part's headers, as OData says, or with the request's, as some clients send it)
  const id = mime['content-id'] ?? headers['content-id'];
  return {
    id,
    method: match[1]!.toUpperCase(),
    url: match[2]!.replace(/[ \t]/g, (blank) => encodeURIComponent(blank)),
    headers,
    body: content,
    group,
    dependsOn: [],
  };
}

/** The requests of a multipart/mixed batch body, change sets' requests marked with their change set. */
export function readMultipartBatch(contentType: string, body: Uint8Array, limits: BatchLimits): BatchRequest[] {
  const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  const requests: BatchRequest[] = [];
  const ids = new Set<string>();
  const add = (request: BatchRequest, what: string): void => {
    if (requests.length >= limits.maxRequests)
      throw new ODataError(
        'LimitExceeded',
        `The batch holds more than ${limits.maxRequests} requests (maxBatchRequests)`,
      );
    if (request.id !== undefined) {
      if (ids.has(request.id)) throw invalid(`${what} repeats the Content-ID ${JSON.stringify(request.id)}`);
      ids.add(request.id);
    }
    requests.push(request);
  };
  const parts = multipartParts(bytes, multipartBoundary(contentType, 'The batch'), 'The batch body');
  parts.forEach((part, index) => {
    const what = `Part ${index + 1} of the batch`;
    const { lines } = headAndBody(part);
    const mime = headerMap(lines, what);
    const type = (mime['content-type'] ?? '').toLowerCase();
    if (type.startsWith('application/http')) {
      add(httpRequestOf(part, what, mime, undefined), what);
      return;
    }
    if (!type.startsWith('multipart/mixed'))
      throw invalid(
        `${what} is ${type === '' ? 'without a Content-Type' : type}: a part is application/http (a request) or multipart/mixed (a change set)`,
      );
    const group = `changeset${index + 1}`;
    const changes = multipartParts(
      headAndBody(part).body,
      multipartBoundary(mime['content-type']!, `The change set in ${what.toLowerCase()}`),
      `The change set in ${what.toLowerCase()}`,
    );
    if (changes.length === 0) throw invalid(`The change set in ${what.toLowerCase()} holds no request`);
    changes.forEach((change, n) => {
      const inner = `Request ${n + 1} of the change set in ${what.toLowerCase()}`;
      const innerMime = headerMap(headAndBody(change).lines, inner);
      const innerType = (innerMime['content-type'] ?? '').toLowerCase();
      if (!innerType.startsWith('application/http'))
        throw invalid(
          `${inner} is ${innerType === '' ? 'without a Content-Type' : innerType}: a change set holds application/http requests (change sets do not nest)`,
        );
      const request = httpRequestOf(change, inner, innerMime, group);
      if (request.method === 'GET')
        throw invalid(
          `${inner} is a GET: a change set holds only changes (POST, PATCH, PUT, DELETE) and actions; send reads outside it`,
        );
      add(request, inner);
    });
  });
  return requests;
}

/** The answers of a batch as a multipart/mixed body: change sets as nested multiparts, a failed one as its error. */
export function writeMultipartBatch(result: BatchResult): { readonly contentType: string; readonly body: Buffer } {
  const boundary = `batchresponse_${randomUUID()}`;
  const chunks: Buffer[] = [];
  const text = (s: string): void => {
    chunks.push(Buffer.from(s, 'utf8'));
  };
  const part = (answer: BatchAnswer, id: string | undefined): void => {
    text(`Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n`);
    if (id !== undefined) text(`Content-ID: ${id}\r\n`);
    text('\r\n');
    chunks.push(httpResponseBytes(answer));
    text('\r\n');
  };
  const { outcomes, failedGroups } = result;
  for (let i = 0; i < outcomes.length;) {
    const { request } = outcomes[i]!;
    text(`--${boundary}\r\n`);
    const group = request.group;
    if (group === undefined) {
      part(outcomes[i]!.answer, request.id);
      i++;
      continue;
    }
    let end = i;
    while (end < outcomes.length && outcomes[end]!.request.group === group) end++;
    const failed = failedGroups.get(group);
    if (failed !== undefined) {
      // a change set that failed answers once, with the error of the request that failed it (Protocol §11.7.7.3)
      part(failed.answer, failed.request.id);
    } else {
      const inner = `changesetresponse_${randomUUID()}`;
      text(`Content-Type: multipart/mixed; boundary=${inner}\r\n\r\n`);
      for (let j = i; j < end; j++) {
        text(`--${inner}\r\n`);
        part(outcomes[j]!.answer, outcomes[j]!.request.id);
      }
      text(`--${inner}--\r\n`);
    }
    i = end;
  }
  text(`--${boundary}--\r\n`);
  return { contentType: `multipart/mixed; boundary=${boundary}`, body: Buffer.concat(chunks) };
}

/** The headers of an answer that belong to the batch as a whole, not repeated in each part. */
const OUTER_HEADERS = new Set([
  'x-content-type-options',
  'x-frame-options',
  'content-security-policy',
  'referrer-policy',
  'cross-origin-resource-policy',
  'cache-control',
  'x-request-id',
  'connection',
]);

/** A header name as HTTP/1.1 messages usually spell it (`odata-version` → `OData-Version`): some clients compare exactly. */
function headerName(name: string): string {
  const known = SPELLINGS[name];
  if (known !== undefined) return known;
  return name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => `${dash}${letter.toUpperCase()}`);
}

const SPELLINGS: Readonly<Record<string, string>> = {
  'odata-version': 'OData-Version',
  'odata-entityid': 'OData-EntityId',
  etag: 'ETag',
  'www-authenticate': 'WWW-Authenticate',
};

function httpResponseBytes(answer: BatchAnswer): Buffer {
  const body = answer.body === undefined ? Buffer.alloc(0) : Buffer.from(answer.body as Uint8Array | string);
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}\r\n`;
  for (const [name, value] of Object.entries(answer.headers))
    if (!OUTER_HEADERS.has(name)) head += `${headerName(name)}: ${value}\r\n`;
  if (body.length > 0) head += `Content-Length: ${body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'utf8'), body]);
}

// ── JSON (4.01) ──────────────────────────────────────────────────────────────

/** `request-id` of the ABNF: unreserved characters. */
const REQUEST_ID = /^[A-Za-z0-9\-._~]{1,128}$/;
const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE']);

/** The requests of a JSON batch body (`{"requests":[...]}`), each checked; a mistake is a 400 naming its member. */
export function readJsonBatch(value: unknown, limits: BatchLimits): BatchRequest[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Array.isArray((value as Row)['requests']))
    throw invalid('A JSON batch is an object with a member requests, an array of request objects', 'requests');
  const list = (value as Row)['requests'] as unknown[];
  if (list.length > limits.maxRequests)
    throw new ODataError(
      'LimitExceeded',
      `The batch holds more than ${limits.maxRequests} requests (maxBatchRequests)`,
    );
  const ids = new Set<string>();
  const groups = new Set<string>();
  const requests: BatchRequest[] = [];
  list.forEach((item, index) => {
    const at = `requests[${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw invalid(`${at} is not a request object`, at);
    const r = item as Row;
    const id = r['id'];
    if (typeof id !== 'string' || !REQUEST_ID.test(id))
      throw invalid(`${at}.id must be a string of letters, digits and -._~ (the request's identifier)`, `${at}.id`);
    if (ids.has(id) || groups.has(id)) throw invalid(`${at}.id ${JSON.stringify(id)} is taken already`, `${at}.id`);
    const method = r['method'];
    if (typeof method !== 'string' || !METHODS.has(method.toUpperCase()))
      throw invalid(`${at}.method must be one of get, post, patch, put, delete`, `${at}.method`);
    const url = r['url'];
    if (typeof url !== 'string' || url === '') throw invalid(`${at}.url must be the request's URL`, `${at}.url`);
    const headers: Record<string, string> = {};
    const sent = r['headers'] ?? {};
    if (typeof sent !== 'object' || sent === null || Array.isArray(sent))
      throw invalid(`${at}.headers must be an object of header names and string values`, `${at}.headers`);
    for (const [name, v] of Object.entries(sent as Row)) {
      if (typeof v !== 'string') throw invalid(`${at}.headers.${name} must be a string`, `${at}.headers.${name}`);
      headers[name.toLowerCase()] = v;
    }
    const group = r['atomicityGroup'];
    if (group !== undefined) {
      if (typeof group !== 'string' || !REQUEST_ID.test(group))
        throw invalid(`${at}.atomicityGroup must be a string of letters, digits and -._~`, `${at}.atomicityGroup`);
      if (ids.has(group))
        throw invalid(`${at}.atomicityGroup ${JSON.stringify(group)} is a request's id`, `${at}.atomicityGroup`);
      const previous = requests[requests.length - 1];
      if (groups.has(group) && previous?.group !== group)
        throw invalid(
          `The requests of the atomicity group ${JSON.stringify(group)} must be adjacent`,
          `${at}.atomicityGroup`,
        );
      if (method.toUpperCase() === 'GET')
        throw invalid(`${at} is a GET: an atomicity group holds only changes and actions`, `${at}.method`);
    }
    const dependsOn = r['dependsOn'] ?? [];
    if (!Array.isArray(dependsOn) || dependsOn.some((d) => typeof d !== 'string'))
      throw invalid(`${at}.dependsOn must be an array of request ids and atomicity groups`, `${at}.dependsOn`);
    for (const d of dependsOn as string[])
      if (!ids.has(d) && !groups.has(d))
        throw invalid(
          `${at}.dependsOn names ${JSON.stringify(d)}, which is no preceding request or atomicity group`,
          `${at}.dependsOn`,
        );
    const method_ = method.toUpperCase();
    const body = r['body'];
    if (body !== undefined && body !== null && (method_ === 'GET' || method_ === 'DELETE'))
      throw invalid(`${at} is a ${method_}: it has no body`, `${at}.body`);
    requests.push({
      id,
      method: method_,
      url,
      headers:
        body === undefined || body === null || 'content-type' in headers
          ? headers
          : { ...headers, 'content-type': 'application/json' },
      body:
        body === undefined || body === null ? undefined : jsonBodyBytes(body, headers['content-type'], `${at}.body`),
      group: group as string | undefined,
      dependsOn: dependsOn as string[],
      ...(r['if'] === undefined ? {} : { condition: r['if'] }),
    });
    ids.add(id);
    if (group !== undefined) groups.add(group as string);
  });
  return requests;
}

type Row = Record<string, unknown>;

/** A JSON batch request's body as bytes: JSON for JSON media types, the string for `text/*`, base64url otherwise. */
function jsonBodyBytes(body: unknown, contentType: string | undefined, target: string): Uint8Array {
  const type = (contentType ?? 'application/json').toLowerCase();
  if (/^application\/(?:[\w.+-]+\+)?json\b/.test(type)) return Buffer.from(JSON.stringify(body), 'utf8');
  if (typeof body !== 'string')
    throw invalid(`${target} of a ${type} request is a string (text, or base64url for other media types)`, target);
  if (type.startsWith('text/')) return Buffer.from(body, 'utf8');
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(body)) throw invalid(`${target} is not base64url`, target);
  return Buffer.from(body, 'base64url');
}

/** The answers of a batch as a JSON batch response (`{"responses":[...]}`). */
export function writeJsonBatch(result: BatchResult): string {
  const responses: string[] = [];
  for (const { request, answer: shown } of result.outcomes) {
    let member = `{"id":${JSON.stringify(request.id)}`;
    if (request.group !== undefined) member += `,"atomicityGroup":${JSON.stringify(request.group)}`;
    member += `,"status":${shown.status}`;
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(shown.headers)) if (!OUTER_HEADERS.has(name)) headers[name] = value;
    member += `,"headers":${JSON.stringify(headers)}`;
    if (shown.body !== undefined && shown.body.length > 0) member += `,"body":${jsonBodyOf(shown)}`;
    responses.push(`${member}}`);
  }
  return `{"responses":[${responses.join(',')}]}`;
}

/** A response body inside a JSON batch response: JSON as is, text as a string, other bytes as base64url. */
function jsonBodyOf(answer: BatchAnswer): string {
  const type = (answer.headers['content-type'] ?? '').toLowerCase();
  const body = answer.body!;
  if (typeof body === 'string') return /^application\/(?:[\w.+-]+\+)?json\b/.test(type) ? body : JSON.stringify(body);
  return JSON.stringify(Buffer.from(body).toString('base64url'));
}

// ── running a batch ──────────────────────────────────────────────────────────

/** Top-level system resources: a `$name` first segment that is one of them is not a reference to a request. */
const SYSTEM_RESOURCES = new Set(['$batch', '$crossjoin', '$all', '$entity', '$root', '$id', '$metadata']);

/** A change set's request failed: the transaction rolls back. */
class GroupFailed extends Error {
  constructor(readonly outcome: BatchOutcome) {
    super('A request of the change set failed');
  }
}

/**
 * Runs a batch's requests in order: a change set or atomicity group in one transaction (all or nothing), a request
 * whose dependency failed as a 424 without running it. Without `continueOnError` processing stops after the first
 * failure (the multipart default); with it every request runs (the JSON default).
 */
export async function runBatch(
  requests: readonly BatchRequest[],
  runner: BatchRunner,
  continueOnError: boolean,
): Promise<BatchResult> {
  const outcomes: BatchOutcome[] = [];
  const failedGroups = new Map<string, BatchOutcome>();
  /** By request id: the URL of its entity and its ETag, when it succeeded. */
  const done = new Map<string, { readonly ok: boolean; readonly entity?: string; readonly etag?: string }>();
  const record = (request: BatchRequest, resolved: ResolvedBatchRequest | undefined, answer: BatchAnswer): void => {
    if (request.id === undefined) return;
    const ok = answer.status < 400;
    const entity = answer.headers['location'] ?? answer.headers['odata-entityid'] ?? resolved?.url.split('?')[0];
    const etag = answer.headers['etag'];
    done.set(request.id, {
      ok,
      ...(ok && entity !== undefined ? { entity } : {}),
      ...(ok && etag !== undefined ? { etag } : {}),
    });
  };
  /** Why a request cannot run: a dependency that failed, or a condition (`if`) the service does not evaluate. */
  const dependencyFailed = (request: BatchRequest): string | undefined => {
    // (JSON Format §19.1: a service that does not support `if` fails the request with 424)
    if (request.condition !== undefined) return 'Not run: this service does not evaluate the if member of a request';
    const failed = request.dependsOn.find((d) => done.get(d)?.ok === false || failedGroups.has(d));
    return failed === undefined ? undefined : `Not run: it depends on ${failed}, which failed`;
  };
  const resolve = (request: BatchRequest): ResolvedBatchRequest => {
    let url = request.url;
    const reference = /^\$([^/?]+)/.exec(url);
    if (reference !== null && !SYSTEM_RESOURCES.has(`$${reference[1]}`)) {
      const target = done.get(reference[1]!);
      if (target?.entity === undefined)
        throw invalid(
          `${request.id === undefined ? 'A request' : `Request ${request.id}`} refers to $${reference[1]}, which names no preceding request that answered an entity`,
        );
      url = `${target.entity}${url.slice(reference[0].length)}`;
    }
    const headers = { ...request.headers };
    for (const name of ['if-match', 'if-none-match']) {
      const ref = /^\$([A-Za-z0-9\-._~]+)$/.exec(headers[name] ?? '');
      const etag = ref === null ? undefined : done.get(ref[1]!)?.etag;
      if (etag !== undefined) headers[name] = etag;
    }
    return { method: request.method, url, headers, body: request.body };
  };
  const failedDependency = (on: string): BatchAnswer => runner.errorAnswer(new ODataError('FailedDependency', on));
  const runOne = async (
    request: BatchRequest,
    run: (request: ResolvedBatchRequest) => Promise<BatchAnswer>,
  ): Promise<BatchAnswer> => {
    let resolved: ResolvedBatchRequest;
    try {
      resolved = resolve(request);
    } catch (error) {
      const answer = runner.errorAnswer(error);
      record(request, undefined, answer);
      return answer;
    }
    const answer = await run(resolved);
    record(request, resolved, answer);
    return answer;
  };

  for (let i = 0; i < requests.length;) {
    const request = requests[i]!;
    const group = request.group;
    if (group === undefined) {
      const on = dependencyFailed(request);
      const answer = on === undefined ? await runOne(request, (r) => runner.run(r)) : failedDependency(on);
      if (on !== undefined) record(request, undefined, answer);
      outcomes.push({ request, answer });
      i++;
      if (answer.status >= 400 && !continueOnError) break;
      continue;
    }
    let end = i;
    while (end < requests.length && requests[end]!.group === group) end++;
    const members = requests.slice(i, end);
    i = end;
    // (a dependency on a member of the group has not run yet: it fails the group only when it fails inside it)
    const on = members.map((m) => dependencyFailed(m)).find((d) => d !== undefined);
    if (on !== undefined) {
      const answer = failedDependency(on);
      for (const member of members) {
        record(member, undefined, answer);
        outcomes.push({ request: member, answer });
      }
      failedGroups.set(group, { request: members[0]!, answer });
      if (!continueOnError) break;
      continue;
    }
    const answers: BatchOutcome[] = [];
    try {
      await runner.atomically(members, async (run) => {
        for (const [index, member] of members.entries()) {
          const answer = await runOne(member, (request) => run(request, index));
          const outcome = { request: member, answer };
          answers.push(outcome);
          if (answer.status >= 400) throw new GroupFailed(outcome);
        }
      });
    } catch (error) {
      // the request that failed, or (all succeeded) the commit
      const failed =
        error instanceof GroupFailed
          ? error.outcome
          : { request: members[members.length - 1]!, answer: runner.errorAnswer(error) };
      failedGroups.set(group, failed);
      // every other request of the group failed with it: none of its changes stayed
      const rolledBack = runner.errorAnswer(
        new ODataError(
          'FailedDependency',
          `Not applied: request ${failed.request.id ?? '(without an id)'} of the same change set failed, and the change set was rolled back`,
        ),
      );
      for (const member of members) {
        if (member.id !== undefined) done.set(member.id, { ok: false });
        outcomes.push({ request: member, answer: member === failed.request ? failed.answer : rolledBack });
      }
      if (!continueOnError) break;
      continue;
    }
    outcomes.push(...answers);
  }
  return { outcomes, failedGroups };
}
