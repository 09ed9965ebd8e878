// The WHATWG fetch adapter: `(Request) => Promise<Response>`, as Hono, Next.js route handlers, Bun.serve and
// Deno.serve take it. Nothing but the platform's Request, Response and Headers.
import { randomUUID } from 'node:crypto';
import { ODataError } from '../errors.js';
import type { HttpService, ServiceResponse } from './service.js';

/** A fetch handler serving `service`; the request's URL is its target (its host names the service's links). */
export function fetchHandler(service: HttpService): (request: Request) => Promise<Response> {
  return async (request) => {
    const id = randomUUID();
    const url = new URL(request.url);
    const target = `${url.pathname}${url.search}`;
    if (service.refuses(target)) return toResponse(service.shutdownResponse(id), request.method);
    const tooLarge = (): Response =>
      toResponse(
        service.errorResponse(new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`), id),
        request.method,
      );
    if (Number(request.headers.get('content-length')) > service.maxBodyBytes) return tooLarge();
    const body = await readBody(request, service.maxBodyBytes);
    if (body === 'too large') return tooLarge();
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    headers['host'] ??= url.host;
    const response = await service.handle({
      method: request.method,
      url: target,
      headers,
      body,
      id,
      protocol: url.protocol === 'https:' ? 'https' : 'http',
      signal: request.signal,
    });
    if (response.error !== undefined) console.error(`${id} ${request.method} ${target.slice(0, 200)}:`, response.error);
    return toResponse(response, request.method);
  };
}

/** The body's bytes, read no further than `limit`. */
async function readBody(request: Request, limit: number): Promise<Uint8Array | 'too large' | undefined> {
  if (request.body === null) return undefined;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      return 'too large';
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

function toResponse(response: ServiceResponse, method: string): Response {
  const empty = method === 'HEAD' || response.status === 204 || response.status === 304;
  return new Response(empty ? null : (response.body ?? null), { status: response.status, headers: response.headers });
}
