// The Fastify adapter: every route of the service on one wildcard handler that carries bytes to ODataService.
// `createServer` builds an app (logging, request ids, timeouts, graceful shutdown); `odataPlugin` mounts the same
// routes in an app of your own.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import Fastify, {
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyServerOptions,
} from 'fastify';
import { ODataError } from '../errors.js';
import { checkContinue, discardBody, NodeRequest } from './http-body.js';
import type { HttpService, ServiceResponse } from './service.js';

export interface OdataPluginOptions {
  readonly service: HttpService;
}

/** The service's bodies are written already: Fastify must not re-serialize them or rewrite their Content-Type. */
const asWritten = (payload: unknown): string => payload as string;

function send(reply: FastifyReply, response: ServiceResponse): void {
  if (response.error !== undefined) reply.request.log.error({ err: response.error }, 'request failed');
  // (with a serializer of its own a reply keeps its Content-Type as given: Fastify would otherwise append
  // `; charset=utf-8` to every JSON type, a parameter the client did not ask for)
  void reply
    .code(response.status)
    .headers(response.headers)
    .serializer(asWritten)
    .send(response.body ?? '');
}

/** Mounts the service on every path of the app (or of the prefix it is registered under). */
export const odataPlugin: FastifyPluginAsync<OdataPluginOptions> = async (app, { service }) => {
  // the service decides about media types (415) itself: take every body as bytes
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: service.maxBodyBytes }, (_request, body, done) =>
    done(null, body),
  );
  // once shutdown has begun, a request that arrives is refused before its body is read; one received earlier is
  // answered. The probes still answer for themselves (/health 200, /ready 503).
  app.addHook('onRequest', (request, reply, done) => {
    if (service.refuses(request.url)) send(reply, service.shutdownResponse(request.id));
    else if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      // HTTP/1.1 requires Host (RFC 9112 §3.2)
      send(
        reply,
        service.errorResponse(new ODataError('InvalidRequest', 'The request has no Host header'), request.id),
      );
    } else done();
  });
  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status === 413) discardBody(request.raw, service.maxBodyBytes);
    const odata =
      status === 413
        ? new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`)
        : status === 400
          ? new ODataError('InvalidBody', 'The request could not be read')
          : status === 408
            ? new ODataError('RequestTimeout', 'The request body did not arrive in time')
            : status === 415
              ? new ODataError('UnsupportedMediaType', 'The Content-Type header is not a media type')
              : status >= 400 && status < 500
                ? new ODataError('InvalidRequest', 'The request could not be read')
                : error;
    request.log[status >= 500 ? 'error' : 'info']({ err: error }, 'request refused before the service');
    send(reply, service.errorResponse(odata, request.id));
  });
  app.setNotFoundHandler((request, reply) => {
    send(
      reply,
      service.errorResponse(
        new ODataError('NotFound', `No resource at ${request.url.split('?')[0]!.slice(0, 200)}`),
        request.id,
      ),
    );
  });
  app.route({
    method: ['GET', 'HEAD', 'POST', 'PATCH', 'PUT', 'DELETE', 'OPTIONS'],
    url: '/*',
    handler: async (request, reply) => {
      const response = await service.handle(
        new NodeRequest(
          request.method,
          absoluteTargets.get(request.raw) ?? request.raw.url ?? request.url,
          request.headers,
          Buffer.isBuffer(request.body) ? request.body : undefined,
          request.id,
          request.ip,
          undefined,
          reply.raw,
        ),
      );
      send(reply, response);
      return reply;
    },
  });
};

export interface ServerTimeouts {
  /** The request line and headers must arrive within this (default 10 s); slow senders get 408 and are closed. */
  readonly headersMs?: number;
  /** The whole request, body included, must arrive within this (default 60 s: 16 MiB at about 2 Mbit/s). */
  readonly requestMs?: number;
  /** An idle keep-alive connection is closed after this (default 5 s). */
  readonly keepAliveMs?: number;
}

export interface CreateServerOptions {
  readonly service: HttpService;
  /** Fastify's logger (pino): false (default), true, or pino options such as `{ level: 'info' }`. */
  readonly logger?: FastifyServerOptions['logger'];
  readonly timeouts?: ServerTimeouts;
}

/**
 * Requests whose target came in absolute form (`GET http://host/north/... HTTP/1.1`, RFC 9112 §3.2.2): routed by their
 * path, answered from the whole target (its authority, not the Host header, names the host).
 */
const absoluteTargets = new WeakMap<IncomingMessage, string>();

/** The request being received on each connection, with its id: a timeout while its body arrives answers that id. */
const receiving = new WeakMap<Socket, { readonly request: IncomingMessage; readonly id: string }>();
/** The response last begun on each connection: a parser error after a complete request waits for its answer. */
const answering = new WeakMap<Socket | Duplex, ServerResponse>();

/** An answer written straight to a socket (for what never reaches a route), then the connection closed. */
function writeRaw(socket: Socket | Duplex, response: ServiceResponse, extra: Record<string, string> = {}): void {
  if (!socket.destroyed && socket.writable) {
    const body = response.body ?? '';
    const head = Object.entries({
      ...response.headers,
      ...extra,
      'content-length': String(Buffer.byteLength(body)),
      connection: 'close',
    })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}\r\n${head}\r\n${body}`);
  }
  // close once the answer is flushed (destroying at once could drop it)
  if ('destroySoon' in socket) socket.destroySoon();
  else socket.end();
}

/** A request id from the client (`x-request-id`) when it is short and plain, a new UUID otherwise. */
function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  const id = typeof sent === 'string' && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
  receiving.set(request.socket, { request, id });
  return id;
}

/** Secrets are never logged: the credential headers are removed from any request that reaches a log line. */
export const redactedHeaders = ['req.headers.authorization', 'req.headers.api_key', 'req.headers.cookie'] as const;

/**
 * A Fastify app serving the reference service (listen on it, or `inject` requests in tests). Closing it (`close()`)
 * refuses new requests with 503, answers those already received, then closes the connections; the caller closes the
 * backend after.
 */
export function createServer(options: CreateServerOptions): FastifyInstance {
  const { service } = options;
  const headersMs = options.timeouts?.headersMs ?? 10_000;
  const requestMs = Math.max(options.timeouts?.requestMs ?? 60_000, headersMs);
  const logger: FastifyServerOptions['logger'] =
    typeof options.logger === 'object' && options.logger !== null
      ? { redact: [...redactedHeaders], ...options.logger }
      : (options.logger ?? false);
  const app = Fastify({
    logger,
    genReqId: requestId,
    // timeouts are checked every second, so a stalled client is cut off close to its deadline
    // (a missing Host header is refused in the OData format below, not with Node's empty 400)
    http: { headersTimeout: headersMs, connectionsCheckingInterval: 1000, requireHostHeader: false },
    requestTimeout: requestMs,
    keepAliveTimeout: options.timeouts?.keepAliveMs ?? 5_000,
    return503OnClosing: false,
    rewriteUrl: (request) => {
      const url = request.url ?? '/';
      const authority = /^https?:\/\/[^/?#]*/i.exec(url);
      if (authority === null) return url;
      absoluteTargets.set(request, url);
      return url.slice(authority[0].length) || '/';
    },
    // errors Fastify finds before any route (a malformed percent-encoding in the path) answer in the OData format
    frameworkErrors: (error, request, reply) => {
      const odata =
        error.code === 'FST_ERR_BAD_URL'
          ? new ODataError('InvalidEncoding', 'The path is not valid percent-encoding')
          : new ODataError('InvalidRequest', 'The request could not be read');
      send(reply as FastifyReply, service.errorResponse(odata, request.id));
    },
    // what Node's HTTP parser refuses (bad request lines, too many header bytes, timeouts) also answers in OData JSON
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const odata =
        error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? new ODataError('RequestTimeout', 'The request did not arrive in time')
          : error.code === 'HPE_HEADER_OVERFLOW'
            ? new ODataError('HeadersTooLarge', 'The request headers are too large')
            : new ODataError('InvalidRequest', 'The request could not be read as HTTP/1.1');
      // a request whose body was still arriving keeps its id (its log lines carry it); anything else gets a new one
      const current = receiving.get(socket);
      const id = current !== undefined && !current.request.complete ? current.id : randomUUID();
      // the error itself is not logged: it carries the raw request bytes (credential headers included)
      app.log.info({ reqId: id, code: error.code, statusCode: odata.status }, 'request refused by the HTTP parser');
      const response = service.errorResponse(odata, id);
      // bad bytes after a complete request (pipelined): that request is answered first, in order, then this
      const inFlight = answering.get(socket);
      if (inFlight !== undefined && !inFlight.writableFinished && inFlight.req.complete) {
        const later = (): void => writeRaw(socket, response);
        inFlight.once('finish', later);
        inFlight.once('close', later);
        return;
      }
      writeRaw(socket, response);
    },
    bodyLimit: service.maxBodyBytes,
    // site names and keys are case-sensitive, and $metadata must not be taken apart
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  });
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) =>
    answering.set(request.socket, response),
  );
  // CONNECT (a proxy tunnel) and an Expect other than 100-continue never reach a route: answered here, in OData JSON
  app.server.on('connect', (_request: IncomingMessage, socket: Duplex) =>
    writeRaw(
      socket,
      service.errorResponse(new ODataError('MethodNotAllowed', 'CONNECT is not allowed here'), randomUUID()),
      { allow: 'GET, HEAD, POST, PATCH' },
    ),
  );
  app.server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    checkContinue(service, request, response, () => app.server.emit('request', request, response)),
  );
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const answer = service.errorResponse(
      new ODataError('ExpectationFailed', 'Only Expect: 100-continue is understood'),
      randomUUID(),
    );
    response.writeHead(answer.status, { ...answer.headers, connection: 'close' }).end(answer.body);
    request.resume();
  });
  app.addHook('preClose', (done) => {
    service.beginShutdown();
    done();
  });
  void app.register(odataPlugin, { service });
  return app;
}
