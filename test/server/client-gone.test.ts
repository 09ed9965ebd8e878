// A client that leaves before its answer: both adapters abort the request's signal, and the service hands that signal
// to the store's reads (which stop the statement: a PostgreSQL cancel, a SQLite reader replaced; tested in
// read-budget.test.ts). Real HTTP, a real server, the store's read observed.
import { once } from 'node:events';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Backend } from '../../src/server/backend.js';
import { createServer } from '../../src/service/fastify.js';
import { createNodeServer } from '../../src/service/node-http.js';
import { createPlantService } from '../../src/server/plant-service.js';
import type { HttpService } from '../../src/service/service.js';
import type { SqlStore } from '../../src/service/sql/sql-store.js';
import { startServer, type RunningServer } from './harness.js';

/** The backend, with every read of the store held until its signal aborts (then it rejects as a stopped read would). */
function holdingReads(backend: Backend, seen: AbortSignal[]): Backend {
  return {
    ...backend,
    directory: backend.directory,
    store: async (site) => {
      const store = await backend.store(site);
      return new Proxy(store, {
        get(target, name, receiver) {
          if (name !== 'runRead') return Reflect.get(target, name, receiver) as unknown;
          return (_statements: unknown, options?: { signal?: AbortSignal }) =>
            new Promise((_resolve, reject) => {
              const signal = options?.signal;
              if (signal === undefined) return reject(new Error('the service passed no signal'));
              seen.push(signal);
              signal.addEventListener('abort', () => reject(signal.reason), { once: true });
            });
        },
      }) as SqlStore;
    },
  };
}

/** Sends a GET and destroys the connection once the server has begun the read. */
async function leaveEarly(port: number, path: string, key: string, seen: AbortSignal[]): Promise<AbortSignal> {
  const before = seen.length;
  const req = request({ port, host: '127.0.0.1', path, headers: { API_KEY: key } });
  req.on('error', () => undefined);
  req.end();
  const deadline = Date.now() + 10_000;
  while (seen.length === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const signal = seen[before]!;
  expect(signal.aborted).toBe(false);
  req.destroy();
  return signal;
}

describe('a client that leaves before its answer', () => {
  let s: RunningServer;
  const seen: AbortSignal[] = [];
  const ports: Record<string, number> = {};
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    s = await startServer('sqlite');
    const service = createPlantService({ backend: holdingReads(s.backend, seen) });
    const fastify = createServer({ service });
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    ports['Fastify'] = (fastify.server.address() as AddressInfo).port;
    closers.push(() => fastify.close());
    const plain = createNodeServer(service);
    plain.listen(0, '127.0.0.1');
    await once(plain, 'listening');
    ports['node:http'] = (plain.address() as AddressInfo).port;
    closers.push(() => new Promise<void>((resolve) => plain.close(() => resolve())));
  }, 60_000);
  afterAll(async () => {
    for (const close of closers) await close();
    await s?.close();
  });

  it.each(['Fastify', 'node:http'])('%s aborts the read it was running for it', async (adapter) => {
    const signal = await leaveEarly(ports[adapter]!, `/${s.site}/ODataApi/v1/Parts?$top=5`, s.key, seen);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the signal did not abort within 2 s')), 2_000);
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    expect(signal.aborted).toBe(true);
  });

  it.each(['Fastify', 'node:http'])(
    '%s: a signal first read after the client left is aborted already',
    async (adapter) => {
      // the adapters make the signal on first use; one made late must still say the client is gone
      let arrived!: () => void;
      const arrival = new Promise<void>((resolve) => (arrived = resolve));
      let left!: () => void;
      const leaving = new Promise<void>((resolve) => (left = resolve));
      const read: AbortSignal[] = [];
      const stub: HttpService = {
        maxBodyBytes: 1024,
        handle: async (request) => {
          arrived();
          await leaving;
          read.push(request.signal!);
          return { status: 204, headers: {} };
        },
        errorResponse: () => ({ status: 500, headers: {} }),
        refuses: () => false,
        shutdownResponse: () => ({ status: 503, headers: {} }),
        beginShutdown: () => undefined,
      };
      const app = adapter === 'Fastify' ? createServer({ service: stub }) : undefined;
      const server = app?.server ?? createNodeServer(stub);
      if (app !== undefined) await app.listen({ port: 0, host: '127.0.0.1' });
      else {
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
      }
      try {
        const req = request({ port: (server.address() as AddressInfo).port, host: '127.0.0.1', path: '/x' });
        req.on('error', () => undefined);
        req.end();
        await arrival;
        req.destroy();
        // the server has seen the connection close once a new request on it would fail: give it a moment
        await new Promise((r) => setTimeout(r, 100));
        left();
        while (read.length === 0) await new Promise((r) => setTimeout(r, 10));
        expect(read[0]!.aborted).toBe(true);
        expect(String(read[0]!.reason)).toMatch(/client closed the connection/);
      } finally {
        if (app !== undefined) await app.close();
        else await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  );

  it('does not abort the signal of an answer that was delivered', async () => {
    const service = createPlantService({ backend: s.backend });
    const signals: AbortSignal[] = [];
    const original = service.handle.bind(service);
    service.handle = (r) => {
      if (r.signal !== undefined) signals.push(r.signal);
      return original(r);
    };
    const app = createServer({ service });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const port = (app.server.address() as AddressInfo).port;
      const response = await fetch(`http://127.0.0.1:${port}/${s.site}/ODataApi/v1/Parts?$top=1`, {
        headers: { API_KEY: s.key },
      });
      expect(response.status).toBe(200);
      await response.text();
      expect(signals).toHaveLength(1);
      expect(signals[0]!.aborted).toBe(false);
    } finally {
      await app.close();
    }
  });
});
