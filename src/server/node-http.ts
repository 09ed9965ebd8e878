// The node:http adapter: the same service on a plain Node server, proving the core needs no framework.
import { createServer, type Server } from 'node:http';
import { ODataError } from '../errors.js';
import type { ODataService } from './service.js';

export function createNodeServer(service: ODataService): Server {
  return createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > service.maxBodyBytes) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const answer = tooLarge
        ? Promise.resolve(
            service.errorResponse(new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`)),
          )
        : service.handle({
            method: request.method ?? 'GET',
            url: request.url ?? '/',
            headers: request.headers,
            body: Buffer.concat(chunks),
          });
      void answer.then((r) => {
        response.writeHead(r.status, r.headers);
        response.end(r.body ?? '');
      });
    });
  });
}
