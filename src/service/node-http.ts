// The node:http adapter: the service on a plain Node server, or as a request listener (`(req, res)`) inside one of
// your own, and the Express middleware, which is the same listener (Express's request and response are Node's).
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ODataError } from '../errors.js';
import { checkContinue, discardBody, NodeRequest } from './http-body.js';
import type { HttpService, ServiceResponse } from './service.js';

/**
 * A request listener serving `service`. `url` picks the request target it sees (default `request.url`); Express
 * middleware passes `originalUrl`, so that links keep the path it is mounted under.
 */
export function nodeListener(
  service: HttpService,
  url: (request: IncomingMessage) => string = (request) => request.url ?? '/',
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const id = randomUUID();
    const target = url(request);
    // made before the body is read, so that a client leaving while it arrives aborts the signal
    const serviceRequest = new NodeRequest(
      request.method ?? 'GET',
      target,
      request.headers,
      undefined,
      id,
      request.socket.remoteAddress,
      'encrypted' in request.socket && request.socket.encrypted === true ? 'https' : 'http',
      response,
    );
    const reply = (r: ServiceResponse): void => {
      if (r.error !== undefined) console.error(`${id} ${request.method} ${target.slice(0, 200)}:`, r.error);
      response.writeHead(r.status, r.headers);
      response.end(r.body ?? '');
    };
    const tooLarge = (): ServiceResponse =>
      service.errorResponse(new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`), id);
    if (service.refuses(target)) {
      reply(service.shutdownResponse(id));
      discardBody(request, service.maxBodyBytes);
      return;
    }
    const handle = (body: Uint8Array): void => {
      serviceRequest.body = body;
      void service.handle(serviceRequest).then(reply);
    };
    // a body a framework read already (Express with a raw body parser) is taken as it is
    const parsed = (request as { body?: unknown }).body;
    if (parsed instanceof Uint8Array) {
      if (parsed.length > service.maxBodyBytes) reply(tooLarge());
      else handle(parsed);
      return;
    }
    // a body announced larger than the limit is answered at once; its bytes are read and dropped (bounded)
    if (Number(request.headers['content-length']) > service.maxBodyBytes) {
      reply(tooLarge());
      discardBody(request, service.maxBodyBytes);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= service.maxBodyBytes) {
        chunks.push(chunk);
        return;
      }
      request.off('data', onData);
      request.off('end', onEnd);
      reply(tooLarge());
      discardBody(request, service.maxBodyBytes);
    };
    const onEnd = (): void => handle(Buffer.concat(chunks));
    request.on('data', onData);
    request.on('end', onEnd);
  };
}

/** A node:http server answering every request with `service`. */
export function createNodeServer(service: HttpService): Server {
  const server = createServer(nodeListener(service));
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    checkContinue(service, request, response, () => server.emit('request', request, response)),
  );
  return server;
}

/**
 * Express (4 and 5) middleware: `app.use('/odata', odataMiddleware(service))`, with the service's `basePath` set to
 * the same path. It answers every request that reaches it; Express itself is not imported.
 */
export function odataMiddleware(
  service: HttpService,
): (request: IncomingMessage, response: ServerResponse, next?: (error?: unknown) => void) => void {
  return nodeListener(service, (request) => (request as { originalUrl?: string }).originalUrl ?? request.url ?? '/');
}
