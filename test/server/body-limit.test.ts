// Bodies over the size limit, on both adapters (Fastify and node:http), over real sockets: every client gets its 413
// in OData JSON and none sees its writes fail (EPIPE, ECONNRESET) before it can read it; `Expect: 100-continue`
// gets the 413 before the body is sent; the rest of a refused body is read and dropped up to a bound, and then the
// connection is closed without harming the server.
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/service/fastify.js';
import { createNodeServer } from '../../src/service/node-http.js';
import { createPlantService } from '../../src/server/plant-service.js';
import { startServer, type RunningServer } from './harness.js';

const LIMIT = 256 * 1024;

interface Outcome {
  readonly status?: number;
  readonly code?: string;
  readonly error?: string;
  /** Whether the client was told to continue (and so sent its body). */
  readonly continued: boolean;
}

function post(port: number, path: string, key: string, body: Buffer, options: { expect?: boolean; chunked?: boolean }) {
  return new Promise<Outcome>((resolve) => {
    let continued = false;
    const req = request(
      {
        port,
        host: '127.0.0.1',
        method: 'POST',
        path,
        headers: {
          API_KEY: key,
          'content-type': 'application/json',
          ...(options.chunked === true ? {} : { 'content-length': body.length }),
          ...(options.expect === true ? { expect: '100-continue' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error: { code: string } }).error.code;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode!, ...(code === undefined ? {} : { code }), continued });
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message, continued }));
    // a write still queued when the server closes fails on the socket too: that is the outcome above, not a crash
    req.on('socket', (socket) => socket.on('error', () => undefined));
    if (options.expect === true) {
      req.on('continue', () => {
        continued = true;
        req.end(body);
      });
    } else if (options.chunked === true) {
      // in pieces, so the server sees the limit crossed while the body still arrives
      for (let i = 0; i < body.length; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(body);
  });
}

describe('request bodies over the limit', () => {
  let s: RunningServer;
  const servers: { name: string; port: number; close: () => Promise<void> }[] = [];
  beforeAll(async () => {
    s = await startServer('sqlite');
    const fastify = createServer({ service: createPlantService({ backend: s.backend, maxBodyBytes: LIMIT }) });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    servers.push({
      name: 'Fastify',
      port: (fastify.server.address() as AddressInfo).port,
      close: () => fastify.close(),
    });
    const plain: Server = createNodeServer(createPlantService({ backend: s.backend, maxBodyBytes: LIMIT }));
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    servers.push({
      name: 'node:http',
      port: (plain.address() as AddressInfo).port,
      close: () => new Promise((resolve) => plain.close(() => resolve())),
    });
  }, 60_000);
  afterAll(async () => {
    for (const server of servers) await server.close();
    await s?.close();
  });

  it.each(['Fastify', 'node:http'])(
    '%s: 40 concurrent oversized bodies all get their 413, none a failed write; Expect gets it before sending',
    async (name) => {
      const { port } = servers.find((x) => x.name === name)!;
      const body = Buffer.alloc(3 * LIMIT, 0x20);
      const path = `/${s.site}/ODataApi/v1/PurchaseRequests`;
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          post(port, path, s.key, body, { expect: i % 3 === 0, chunked: i % 3 === 1 }),
        ),
      );
      expect(outcomes.filter((o) => o.error !== undefined)).toEqual([]);
      expect(outcomes.every((o) => o.status === 413 && o.code === 'PayloadTooLarge')).toBe(true);
      // the clients that asked first were refused without sending their bodies
      expect(outcomes.filter((_, i) => i % 3 === 0).every((o) => !o.continued)).toBe(true);
    },
    60_000,
  );

  it.each(['Fastify', 'node:http'])(
    '%s: a body within the limit sent with Expect: 100-continue is served',
    async (name) => {
      const { port } = servers.find((x) => x.name === name)!;
      const outcome = await post(
        port,
        `/${s.site}/ODataApi/v1/PurchaseRequests`,
        s.key,
        Buffer.from(JSON.stringify({ RequestedBy: 'expect-test' })),
        { expect: true },
      );
      expect(outcome).toMatchObject({ status: 201, continued: true });
    },
  );

  it.each(['Fastify', 'node:http'])(
    '%s: stops reading a refused body past its bound, and keeps serving',
    async (name) => {
      const { port } = servers.find((x) => x.name === name)!;
      // far beyond 4 × the limit: the server closes the connection once the bound is read
      const outcome = await post(
        port,
        `/${s.site}/ODataApi/v1/PurchaseRequests`,
        s.key,
        Buffer.alloc(40 * LIMIT, 0x20),
        {
          chunked: true,
        },
      );
      expect(outcome.status === 413 || outcome.error !== undefined).toBe(true);
      const after = await fetch(`http://127.0.0.1:${port}/${s.site}/ODataApi/v1/Accounts?$top=1`, {
        headers: { API_KEY: s.key },
      });
      expect(after.status).toBe(200);
    },
    60_000,
  );
});
