// The node:http adapter: the same service on a plain Node server, proving the core needs no framework.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { ODataError } from '../errors.js';
import { checkContinue, clientGone, discardBody } from './http-body.js';
import type { ODataService, ServiceResponse } from './service.js';

export function createNodeServer(service: ODataService): Server {
  const server = createServer((request, response) => {
    const id = randomUUID();
    const signal = clientGone(response);
    const reply = (r: ServiceResponse): void => {
      if (r.error !== undefined)
        console.error(`${id} ${request.method} ${(request.url ?? '').slice(0, 200)}:`, r.error);
      response.writeHead(r.status, r.headers);
      response.end(r.body ?? '');
    };
    const tooLarge = (): ServiceResponse =>
      service.errorResponse(new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`), id);
    if (service.refuses(request.url ?? '/')) {
      reply(service.shutdownResponse(id));
      discardBody(request, service.maxBodyBytes);
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
    const onEnd = (): void => {
      void service
        .handle({
          method: request.method ?? 'GET',
          url: request.url ?? '/',
          headers: request.headers,
          body: Buffer.concat(chunks),
          id,
          remoteAddress: request.socket.remoteAddress,
          signal,
        })
        .then(reply);
    };
    request.on('data', onData);
    request.on('end', onEnd);
  });
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) =>
    checkContinue(service, request, response, () => server.emit('request', request, response)),
  );
  return server;
}
