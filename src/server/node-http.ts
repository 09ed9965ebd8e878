// The node:http adapter: the same service on a plain Node server, proving the core needs no framework.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { ODataError } from '../errors.js';
import type { ODataService } from './service.js';

export function createNodeServer(service: ODataService): Server {
  return createServer((request, response) => {
    const id = randomUUID();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > service.maxBodyBytes) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const answer = service.refuses(request.url ?? '/')
        ? Promise.resolve(service.shutdownResponse(id))
        : tooLarge
          ? Promise.resolve(
              service.errorResponse(
                new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`),
                id,
              ),
            )
          : service.handle({
              method: request.method ?? 'GET',
              url: request.url ?? '/',
              headers: request.headers,
              body: Buffer.concat(chunks),
              id,
              remoteAddress: request.socket.remoteAddress,
            });
      void answer.then((r) => {
        if (r.error !== undefined)
          console.error(`${id} ${request.method} ${(request.url ?? '').slice(0, 200)}:`, r.error);
        response.writeHead(r.status, r.headers);
        response.end(r.body ?? '');
      });
    });
  });
}
