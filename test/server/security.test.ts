// The server's hardening, on a real port with real sockets and real storage: security headers and a request id on
// every kind of answer (raw parser errors included), the id in error bodies and in the logs, no secret in any log line
// or body, rate limits, timeouts against slow clients, authentication that takes the same time whether the
// credentials are right or wrong, and the health probes.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresBackend, openSqliteBackend, type Backend } from '../../src/server/backend.js';
import { createServer, type CreateServerOptions } from '../../src/service/fastify.js';
import {
  createPlantService,
  type PlantService,
  type PlantServiceOptions as ServiceOptions,
} from '../../src/server/plant-service.js';
import type { DirectoryOptions } from '../../src/server/tenancy.js';
import { startServer, storages, type RunningServer } from './harness.js';
import { exchange, open, reader, sleep, type RawOutcome } from './raw-http.js';

const kinds = await storages();

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

/** One answer as seen by the client, from fetch or a raw socket. */
interface Answer {
  readonly label: string;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

async function answer(label: string, response: Response): Promise<Answer> {
  return { label, status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

function rawAnswer(label: string, outcome: RawOutcome): Answer {
  if (outcome.kind !== 'response') throw new Error(`${label}: the connection closed without an answer`);
  return { label, ...outcome.response };
}

/** The security headers and a request id; for an error, an OData JSON body whose RequestId detail is that id. */
function expectHardened(a: Answer, body: 'odata' | 'probe' = 'odata'): void {
  for (const [name, value] of Object.entries(SECURITY_HEADERS))
    expect(a.headers[name], `${a.label}: ${name}`).toBe(value);
  const id = a.headers['x-request-id'];
  expect(id, `${a.label}: x-request-id`).toMatch(/^[\w.:-]{1,128}$/);
  if (body === 'probe') {
    expect(a.headers['content-type'], `${a.label}: content-type`).toMatch(/^application\/json/);
    expect(typeof (JSON.parse(a.body) as { status: unknown }).status).toBe('string');
  } else if (a.status >= 400) {
    expect(a.headers['content-type'], `${a.label}: content-type`).toMatch(/^application\/json/);
    const error = (JSON.parse(a.body) as { error: { code: string; details?: { code: string; message: string }[] } })
      .error;
    expect(typeof error.code, `${a.label}: error.code`).toBe('string');
    expect(
      error.details?.filter((d) => d.code === 'RequestId').map((d) => d.message),
      `${a.label}: the RequestId detail`,
    ).toEqual([id]);
  }
}

const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A storage of its own (an empty SQLite directory, or a fresh PostgreSQL schema) with a site, a key and a user. */
async function openStorage(
  storage: 'sqlite' | 'postgres',
  options: DirectoryOptions = {},
): Promise<{
  backend: Backend;
  site: string;
  key: string;
  user: { name: string; password: string };
  drop(): Promise<void>;
}> {
  let backend: Backend;
  let cleanup: () => Promise<void>;
  if (storage === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'odata-sec-'));
    backend = await openSqliteBackend(dir, options);
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const schema = `odata_sec_${process.pid}_${randomBytes(3).toString('hex')}`;
    const admin = new pg.Client({ connectionString: POSTGRES });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    backend = await openPostgresBackend(`${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, {
      max: 3,
      ...options,
    });
    cleanup = async () => {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    };
  }
  const site = `sec-${randomBytes(3).toString('hex')}`;
  await backend.directory.createSite(site);
  const { key } = await backend.directory.createKey(site);
  const user = { name: 'auditor', password: 'a long right password' };
  await backend.directory.createUser(site, user.name, user.password);
  let dropped = false;
  return {
    backend,
    site,
    key,
    user,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await backend.close().catch(() => undefined);
      await cleanup();
    },
  };
}

interface Served {
  readonly app: FastifyInstance;
  readonly service: PlantService;
  readonly port: number;
  readonly origin: string;
}

/** Another app with options of its own, on a backend; closed by the caller's `closeAll`. */
function serving(): {
  serve(
    backend: Backend,
    service?: Omit<ServiceOptions, 'backend'>,
    server?: Omit<CreateServerOptions, 'service'>,
  ): Promise<Served>;
  closeAll(): Promise<void>;
} {
  const apps: FastifyInstance[] = [];
  return {
    serve: async (backend, serviceOptions = {}, serverOptions = {}) => {
      const service = createPlantService({ backend, ...serviceOptions });
      const app = createServer({ service, ...serverOptions });
      apps.push(app);
      await app.listen({ port: 0, host: '127.0.0.1' });
      const port = (app.server.address() as AddressInfo).port;
      return { app, service, port, origin: `http://127.0.0.1:${port}` };
    },
    closeAll: async () => {
      for (const app of apps.splice(0)) await app.close();
    },
  };
}

describe.each(kinds)('server hardening on %s', (storage) => {
  let s: RunningServer;
  const apps = serving();
  beforeAll(async () => {
    s = await startServer(storage);
  }, 60_000);
  afterAll(async () => {
    await apps.closeAll();
    await s?.close();
  });

  it('puts the security headers and a request id on every kind of answer, and the id in every error body', async () => {
    const small = await apps.serve(s.backend, { maxBodyBytes: 4096 });
    const limited = await apps.serve(s.backend, { rateLimit: { perSecond: 1, burst: 1 } });
    const root = `${small.origin}/${s.site}/ODataApi/v1`;
    const auth = { API_KEY: s.key };
    const json = { ...auth, 'content-type': 'application/json' };
    const answers: Answer[] = [];
    const add = async (label: string, expected: number, response: Promise<Response>): Promise<Answer> => {
      const a = await answer(label, await response);
      expect(a.status, `${label}: ${a.body.slice(0, 300)}`).toBe(expected);
      answers.push(a);
      return a;
    };

    await add('collection', 200, fetch(`${root}/Accounts?$top=2`, { headers: auth }));
    await add('service document', 200, fetch(`${root}/`, { headers: auth }));
    await add('$metadata', 200, fetch(`${root}/$metadata`, { headers: auth }));
    await add('$count', 200, fetch(`${root}/Accounts/$count`, { headers: auth }));
    const created = await add(
      'create',
      201,
      fetch(`${root}/PurchaseOrders`, { method: 'POST', headers: json, body: JSON.stringify({ VendorID: 'V-SEC' }) }),
    );
    const po = String((JSON.parse(created.body) as { PONumber: string }).PONumber);
    await add('entity', 200, fetch(`${root}/PurchaseOrders('${po}')`, { headers: auth }));
    await add(
      'update, return=minimal',
      204,
      fetch(`${root}/PurchaseOrders('${po}')`, {
        method: 'PATCH',
        headers: { ...json, prefer: 'return=minimal' },
        body: JSON.stringify({ Buyer: 'kim' }),
      }),
    );
    await add(
      'bad $filter',
      400,
      fetch(`${root}/Accounts?$filter=${encodeURIComponent('Nope eq 1')}`, { headers: auth }),
    );
    await add(
      'bad JSON',
      400,
      fetch(`${root}/PurchaseOrders`, { method: 'POST', headers: json, body: '{"VendorID":' }),
    );
    await add('bad percent-encoding', 400, fetch(`${root}/%zz`, { headers: auth }));
    await add('no credentials', 401, fetch(`${root}/Accounts`));
    await add('wrong key', 401, fetch(`${root}/Accounts`, { headers: { API_KEY: `${s.key}x` } }));
    await add('unknown set', 404, fetch(`${root}/Acounts`, { headers: auth }));
    await add('unknown site', 404, fetch(`${small.origin}/no-such-site/ODataApi/v1/Accounts`, { headers: auth }));
    await add('unknown method', 404, fetch(`${root}/Accounts`, { method: 'PROPFIND', headers: auth }));
    await add('method not allowed', 405, fetch(`${root}/Accounts`, { method: 'DELETE', headers: auth }));
    await add(
      'body too large',
      413,
      fetch(`${root}/PurchaseOrders`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ VendorID: 'V', Notes: 'x'.repeat(5000) }),
      }),
    );
    await add(
      'not JSON',
      415,
      fetch(`${root}/PurchaseOrders`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/plain' },
        body: 'hi',
      }),
    );
    const limitedRoot = `${limited.origin}/${s.site}/ODataApi/v1`;
    await add('within the rate', 200, fetch(`${limitedRoot}/Accounts?$top=1`, { headers: auth }));
    const tooMany = await add('over the rate', 429, fetch(`${limitedRoot}/Accounts?$top=1`, { headers: auth }));
    expect(Number(tooMany.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await add('/health', 200, fetch(`${small.origin}/health`));
    await add('/ready', 200, fetch(`${small.origin}/ready`));
    // what Node's HTTP parser refuses never reaches Fastify's routes: answered in OData JSON all the same
    const malformed = rawAnswer('malformed request line', await exchange(small.port, 'GARBAGE / HTTP/9.9\r\n\r\n'));
    expect(malformed.status).toBe(400);
    expect(malformed.headers['connection']).toBe('close');
    answers.push(malformed);
    const huge = rawAnswer(
      '20 KB header',
      await exchange(
        small.port,
        `GET /${s.site}/ODataApi/v1/Accounts HTTP/1.1\r\nHost: x\r\nAPI_KEY: ${s.key}\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`,
      ),
    );
    expect(huge.status).toBe(431);
    expect(JSON.parse(huge.body)).toMatchObject({ error: { code: 'HeadersTooLarge' } });
    answers.push(huge);

    for (const a of answers) expectHardened(a);
    // each answer has an id of its own
    expect(new Set(answers.map((a) => a.headers['x-request-id'])).size).toBe(answers.length);
  });

  it('echoes a plain x-request-id and replaces a hostile one; the error body carries the same id', async () => {
    const root = s.root;
    const echo = async (sent: string): Promise<{ header: string; detail: string | undefined }> => {
      const response = await fetch(`${root}/Acounts`, { headers: { API_KEY: s.key, 'x-request-id': sent } });
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: { details?: { code: string; message: string }[] } };
      return {
        header: response.headers.get('x-request-id') ?? '',
        detail: body.error.details?.find((d) => d.code === 'RequestId')?.message,
      };
    };
    for (const plain of ['trace-42', 'svc.a:b_c-1', 'a'.repeat(128)]) {
      expect(await echo(plain)).toEqual({ header: plain, detail: plain });
    }
    for (const hostile of [
      'a'.repeat(129),
      'x'.repeat(500),
      '<script>alert(1)</script>',
      'a b',
      'id%0d%0aSet-Cookie:x=1',
    ]) {
      const { header, detail } = await echo(hostile);
      expect(header, hostile).toMatch(UUID);
      expect(detail).toBe(header);
    }
    // two ids (Node joins them with a comma) are not one plain id
    const twice = rawAnswer(
      'two ids',
      await exchange(
        Number(new URL(s.origin).port),
        `GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: one\r\nX-Request-Id: two\r\nConnection: close\r\n\r\n`,
      ),
    );
    expect(twice.headers['x-request-id']).toMatch(UUID);
    // a newline inside the value never reaches the service: the parser refuses the request, under a new id
    for (const text of [
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\ndef\r\n\r\n`,
      `GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\rdef\r\n\r\n`,
    ]) {
      const refused = rawAnswer('newline in the id', await exchange(Number(new URL(s.origin).port), text));
      expect(refused.status).toBe(400);
      expect(refused.headers['x-request-id']).toMatch(UUID);
      expectHardened(refused);
    }
  });

  it('logs every request under its id, the id of every error body included, and never a secret', async () => {
    const lines: string[] = [];
    const stream = { write: (line: string) => void lines.push(line) };
    // the default serializers, and one that logs the request headers (redaction must hide the credentials there)
    const plain = await apps.serve(s.backend, { maxBodyBytes: 4096 }, { logger: { level: 'info', stream } });
    const verbose = await apps.serve(
      s.backend,
      {},
      {
        logger: {
          level: 'info',
          stream,
          serializers: { req: (req) => ({ method: req.method, url: req.url, headers: req.headers }) },
        },
      },
    );
    const keyId = s.key.slice(0, s.key.indexOf('.'));
    const secret = s.key.slice(s.key.indexOf('.') + 1);
    const wrongSecret = randomBytes(24).toString('base64url');
    const wrongPassword = 'not the password at all';
    const ghostKey = `k${randomBytes(6).toString('hex')}.${randomBytes(24).toString('base64url')}`;
    const secrets = [
      s.key,
      secret,
      wrongSecret,
      ghostKey,
      s.user.password,
      wrongPassword,
      Buffer.from(`${s.user.name}:${s.user.password}`).toString('base64'),
      Buffer.from(`${s.user.name}:${wrongPassword}`).toString('base64'),
      Buffer.from(`ghost:${wrongPassword}`).toString('base64'),
    ];
    const answers: Answer[] = [];
    for (const served of [plain, verbose]) {
      const root = `${served.origin}/${s.site}/ODataApi/v1`;
      const requests: [string, number, string, RequestInit][] = [
        ['right key', 200, '/Accounts?$top=1', { headers: { API_KEY: s.key } }],
        ['wrong secret', 401, '/Accounts?$top=1', { headers: { API_KEY: `${keyId}.${wrongSecret}` } }],
        ['unknown key', 401, '/Accounts?$top=1', { headers: { API_KEY: ghostKey } }],
        [
          'right password',
          200,
          '/Accounts?$top=1',
          { headers: { authorization: basic(s.user.name, s.user.password) } },
        ],
        ['wrong password', 401, '/Accounts?$top=1', { headers: { authorization: basic(s.user.name, wrongPassword) } }],
        ['unknown user', 401, '/Accounts?$top=1', { headers: { authorization: basic('ghost', wrongPassword) } }],
        ['unknown set', 404, '/Acounts', { headers: { API_KEY: s.key } }],
        [
          'bad filter',
          400,
          `/Accounts?$filter=${encodeURIComponent("Account eq 'x' and")}`,
          { headers: { API_KEY: s.key } },
        ],
        [
          'create',
          201,
          '/PurchaseOrders',
          {
            method: 'POST',
            headers: { authorization: basic(s.user.name, s.user.password), 'content-type': 'application/json' },
            body: JSON.stringify({ VendorID: 'V-LOG' }),
          },
        ],
        [
          'not JSON',
          415,
          '/PurchaseOrders',
          { method: 'POST', headers: { API_KEY: s.key, 'content-type': 'text/plain' }, body: 'x' },
        ],
      ];
      if (served === plain)
        requests.push([
          'too large',
          413,
          '/PurchaseOrders',
          {
            method: 'POST',
            headers: { API_KEY: s.key, 'content-type': 'application/json' },
            body: JSON.stringify({ VendorID: 'V', Notes: 'n'.repeat(5000) }),
          },
        ]);
      for (const [label, status, path, init] of requests) {
        const a = await answer(label, await fetch(`${root}${path}`, init));
        expect(a.status, `${label}: ${a.body.slice(0, 200)}`).toBe(status);
        answers.push(a);
      }
      // refused by the HTTP parser, with credentials in the refused bytes
      answers.push(
        rawAnswer(
          'headers too large',
          await exchange(
            served.port,
            `GET /${s.site}/ODataApi/v1/Accounts HTTP/1.1\r\nHost: x\r\nAPI_KEY: ${s.key}\r\nAuthorization: ${basic(s.user.name, s.user.password)}\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`,
          ),
        ),
        rawAnswer(
          'malformed header',
          await exchange(
            served.port,
            `GET /${s.site}/ODataApi/v1/Accounts HTTP/1.1\r\nHost: x\r\nAPI_KEY: ${s.key}\r\nAuthorization: ${basic(s.user.name, s.user.password)}\r\nBroken header\r\n\r\n`,
          ),
        ),
      );
    }
    await sleep(50);
    const log = lines.join('');
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const concernsRequest = (e: Record<string, unknown>): boolean =>
      'req' in e || 'res' in e || 'err' in e || 'responseTime' in e || /request/i.test(String(e['msg']));
    expect(entries.filter(concernsRequest).length).toBeGreaterThan(answers.length);
    for (const e of entries) {
      if (concernsRequest(e)) expect(typeof e['reqId'], JSON.stringify(e)).toBe('string');
      else expect(String(e['msg'])).toMatch(/^Server listening at /);
    }
    const logged = new Set(entries.map((e) => e['reqId']));
    for (const a of answers) {
      expectHardened(a);
      if (a.status >= 400) expect(logged.has(a.headers['x-request-id']), `${a.label}: its id is in the log`).toBe(true);
    }
    // the verbose serializer shows headers, with the credential ones redacted
    expect(log).toContain('"api_key":"[Redacted]"');
    expect(log).toContain('"authorization":"[Redacted]"');
    for (const secretText of secrets) {
      expect(log.includes(secretText), `a secret in the log: ${secretText}`).toBe(false);
      for (const a of answers) {
        expect(a.body.includes(secretText), `a secret in the body of ${a.label}`).toBe(false);
        expect(JSON.stringify(a.headers).includes(secretText), `a secret in the headers of ${a.label}`).toBe(false);
      }
    }
  });

  it('limits requests per credential (429, Retry-After, TooManyRequests) and failed sign-ins per address', async () => {
    const limited = await apps.serve(s.backend, { rateLimit: { perSecond: 5, burst: 5 } });
    const url = `${limited.origin}/${s.site}/ODataApi/v1/Accounts?$top=1`;
    // the credential is verified once beforehand: the burst measures the limiter, not scrypt
    expect(await s.backend.directory.authenticate(s.site, s.key, undefined)).toBeDefined();
    const burst = await Promise.all(Array.from({ length: 5 }, () => fetch(url, { headers: { API_KEY: s.key } })));
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const sixth = await answer('sixth', await fetch(url, { headers: { API_KEY: s.key } }));
    expect(sixth.status).toBe(429);
    const retryAfter = Number(sixth.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(sixth.body)).toMatchObject({ error: { code: 'TooManyRequests' } });
    expectHardened(sixth);
    // another site's key has its own bucket
    const other = await fetch(`${limited.origin}/${s.otherSite}/ODataApi/v1/Accounts?$top=1`, {
      headers: { API_KEY: s.otherKey },
    });
    expect(other.status).toBe(200);
    await sleep(retryAfter * 1000);
    expect((await fetch(url, { headers: { API_KEY: s.key } })).status).toBe(200);

    // failed sign-ins from one address: the burst of them costs a check each, then 429 before any further check
    const directory = s.backend.directory;
    const authenticate = directory.authenticate;
    let checks = 0;
    directory.authenticate = async (...args) => {
      checks++;
      return authenticate.apply(directory, args);
    };
    const keyId = s.key.slice(0, s.key.indexOf('.'));
    const guessKey = (): string => `${keyId}.${randomBytes(24).toString('base64url')}`;
    try {
      const guarded = await apps.serve(s.backend, { rateLimit: { perSecond: 5, burst: 5 } });
      const accounts = `${guarded.origin}/${s.site}/ODataApi/v1/Accounts?$top=1`;
      // one wrong key, its failure remembered beforehand, so that five failures take far less than the 200 ms in
      // which a token flows back
      const wrong = guessKey();
      expect(await directory.authenticate(s.site, wrong, undefined)).toBeUndefined();
      checks = 0;
      const failures: number[] = [];
      for (let i = 0; i < 5; i++) failures.push((await fetch(accounts, { headers: { API_KEY: wrong } })).status);
      expect(failures).toEqual([401, 401, 401, 401, 401]);
      expect(checks).toBe(5);
      // a new guess (it would cost a scrypt) is refused unchecked, and so is a right key from that address
      const blocked = await answer('blocked guess', await fetch(accounts, { headers: { API_KEY: guessKey() } }));
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(JSON.parse(blocked.body)).toMatchObject({ error: { code: 'TooManyRequests' } });
      expectHardened(blocked);
      expect((await fetch(accounts, { headers: { API_KEY: s.key } })).status).toBe(429);
      expect(checks).toBe(5);
      await sleep(Number(blocked.headers['retry-after']) * 1000);
      expect((await fetch(accounts, { headers: { API_KEY: s.key } })).status).toBe(200);
      expect(checks).toBe(6);

      // guesses sent at once are no way around it: beyond the burst they are refused before they are checked
      const parallel = await apps.serve(s.backend, { rateLimit: { perSecond: 5, burst: 5 } });
      checks = 0;
      const statuses = (
        await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${parallel.origin}/${s.site}/ODataApi/v1/Accounts?$top=1`, { headers: { API_KEY: guessKey() } }),
          ),
        )
      ).map((r) => r.status);
      const refusedAtOnce = statuses.filter((status) => status === 429).length;
      console.log(`${storage}: 20 guesses at once: ${checks} checked, ${refusedAtOnce} refused with 429`);
      expect(statuses.filter((status) => status === 401).length).toBe(checks);
      // five tokens, and at most one more if the twenty took over 200 ms to arrive
      expect(checks).toBeLessThanOrEqual(6);
      expect(refusedAtOnce).toBe(20 - checks);
    } finally {
      directory.authenticate = authenticate;
    }
  });

  it('answers /health always, /ready unless shutting down or without its database', async () => {
    const health = await answer('/health', await fetch(`${s.origin}/health`));
    expect([health.status, JSON.parse(health.body)]).toEqual([200, { status: 'ok' }]);
    expectHardened(health, 'probe');
    expect((await fetch(`${s.origin}/ready`)).status).toBe(200);

    const draining = await apps.serve(s.backend);
    expect((await fetch(`${draining.origin}/ready`)).status).toBe(200);
    draining.service.beginShutdown();
    const ready = await answer('/ready while shutting down', await fetch(`${draining.origin}/ready`));
    expect([ready.status, JSON.parse(ready.body)]).toEqual([503, { status: 'shutting down' }]);
    expectHardened(ready, 'probe');
    expect((await fetch(`${draining.origin}/health`)).status).toBe(200);
    const refused = await answer(
      'a request while shutting down',
      await fetch(`${draining.origin}/${s.site}/ODataApi/v1/Accounts`, { headers: { API_KEY: s.key } }),
    );
    expect(refused.status).toBe(503);
    expect(refused.headers['connection']).toBe('close');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { code: 'ServiceUnavailable' } });
    expectHardened(refused);

    // a database that goes away
    const own = await openStorage(storage);
    try {
      const served = await apps.serve(own.backend);
      expect((await fetch(`${served.origin}/ready`)).status).toBe(200);
      await own.backend.close();
      const gone = await answer('/ready without a database', await fetch(`${served.origin}/ready`));
      expect([gone.status, JSON.parse(gone.body)]).toEqual([503, { status: 'database unreachable' }]);
      expectHardened(gone, 'probe');
      expect((await fetch(`${served.origin}/health`)).status).toBe(200);
    } finally {
      await own.drop();
    }
  });
});

describe('slow clients', () => {
  let s: RunningServer;
  const apps = serving();
  beforeAll(async () => {
    s = await startServer('sqlite');
  }, 60_000);
  afterAll(async () => {
    await apps.closeAll();
    await s?.close();
  });

  /** Sends `head`, then `text` a byte every `everyMs`; resolves with the outcome and the ms since connecting. */
  async function trickle(port: number, head: string, text: string, everyMs: number) {
    const socket = await open(port);
    const started = performance.now();
    const read = reader(socket);
    socket.write(head);
    let i = 0;
    const timer = setInterval(() => {
      if (i < text.length && !socket.destroyed && socket.writable) socket.write(text[i++]!);
    }, everyMs);
    try {
      const outcome = await read(15_000);
      return { outcome, ms: performance.now() - started };
    } finally {
      clearInterval(timer);
      socket.destroy();
    }
  }

  const expectTimedOut = (outcome: RawOutcome): void => {
    if (outcome.kind === 'closed') return;
    expect(outcome.response.status).toBe(408);
    expect(JSON.parse(outcome.response.body)).toMatchObject({ error: { code: 'RequestTimeout' } });
    expectHardened({ label: '408', ...outcome.response });
  };

  it('cuts off slow headers and slow bodies, and answers others meanwhile', async () => {
    const headersMs = 1000;
    const requestMs = 2000;
    const lines: string[] = [];
    const served = await apps.serve(
      s.backend,
      {},
      {
        timeouts: { headersMs, requestMs },
        logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } },
      },
    );
    const slowHeaders = `X-Slow: ${'s'.repeat(200)}\r\n\r\n`;
    const get = `GET /health HTTP/1.1\r\nHost: x\r\n`;
    // 20 slow-loris connections, plus one measured alone, plus a body that trickles after complete headers
    const loris = Array.from({ length: 20 }, () => trickle(served.port, get, slowHeaders, 200));
    const measured = trickle(served.port, get, slowHeaders, 200);
    const body = trickle(
      served.port,
      `POST /${s.site}/ODataApi/v1/PurchaseOrders HTTP/1.1\r\nHost: x\r\nAPI_KEY: ${s.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nX-Request-Id: trickled-body-1\r\n\r\n`,
      ' '.repeat(1000),
      200,
    );
    // meanwhile a normal client is answered, every 100 ms until the slow ones are cut off
    const latencies: number[] = [];
    let done = false;
    const all = Promise.all([...loris, measured, body]).finally(() => (done = true));
    await sleep(300);
    while (!done) {
      const started = performance.now();
      const response = await fetch(`${s.root.replace(s.origin, served.origin)}/Accounts?$top=1`, {
        headers: { API_KEY: s.key },
      });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      latencies.push(performance.now() - started);
      await sleep(100);
    }
    const outcomes = await all;
    const headerCut = await measured;
    const bodyCut = await body;
    for (const { outcome } of outcomes) expectTimedOut(outcome);
    // each 408 is logged under the id it answers; the body that stopped arriving keeps the id of its request
    const logged = new Set(lines.map((line) => (JSON.parse(line) as { reqId?: string }).reqId));
    for (const { outcome } of outcomes)
      if (outcome.kind === 'response') expect(logged.has(outcome.response.headers['x-request-id'])).toBe(true);
    if (bodyCut.outcome.kind === 'response')
      expect(bodyCut.outcome.response.headers['x-request-id']).toBe('trickled-body-1');
    const lorisMs = (await Promise.all(loris)).map((l) => l.ms);
    console.log(
      `slow headers cut off after ${Math.round(headerCut.ms)} ms (headersMs ${headersMs}); 20 slow-loris sockets after ` +
        `${Math.round(Math.min(...lorisMs))}-${Math.round(Math.max(...lorisMs))} ms; a trickled body after ` +
        `${Math.round(bodyCut.ms)} ms (requestMs ${requestMs}); ${latencies.length} normal requests meanwhile, median ` +
        `${median(latencies).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`,
    );
    expect(headerCut.ms).toBeGreaterThanOrEqual(headersMs - 50);
    expect(headerCut.ms).toBeLessThan(headersMs + 2000);
    for (const ms of lorisMs) expect(ms).toBeLessThan(headersMs + 2000);
    expect(bodyCut.ms).toBeGreaterThanOrEqual(requestMs - 50);
    expect(bodyCut.ms).toBeLessThan(requestMs + 2000);
    expect(latencies.length).toBeGreaterThanOrEqual(5);
    // generous: the point is that the slow sockets do not hold the server, not a latency figure
    expect(Math.max(...latencies)).toBeLessThan(1000);
  });
});

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** One GET on a keep-alive agent: the status and the milliseconds from sending to the last byte. */
function timedGet(agent: Agent, url: string, headers: Record<string, string>): Promise<{ status: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = httpRequest(url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

function shuffled<T>(values: readonly T[]): T[] {
  const copy = [...values];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe.each(kinds)('authentication timing on %s', (storage) => {
  // the medians of all kinds of credentials within this ratio of each other (plus an absolute slack for the warm
  // regime, where the whole request takes well under a millisecond and scheduling noise is of the same size)
  const RATIO = 1.5;
  const WARM_SLACK_MS = 1;
  const within = (medians: readonly number[], slackMs: number): boolean =>
    Math.max(...medians) <= Math.min(...medians) * RATIO + slackMs;

  interface Regime {
    readonly own: Awaited<ReturnType<typeof openStorage>>;
    readonly served: Served;
  }
  const regimes: Partial<Record<'warm' | 'cold', Regime>> = {};
  const apps = serving();
  beforeAll(async () => {
    for (const [name, cacheMs] of [
      ['warm', 60_000],
      ['cold', 0],
    ] as const) {
      const own = await openStorage(storage, { credentialCacheMs: cacheMs });
      regimes[name] = { own, served: await apps.serve(own.backend) };
    }
  }, 60_000);
  afterAll(async () => {
    await apps.closeAll();
    for (const regime of Object.values(regimes)) await regime.own.drop();
  });

  /** Interleaved rounds, each in a new random order; the medians by kind (ms), after one unmeasured round. */
  async function measure(
    regime: Regime,
    rounds: number,
    skip: readonly string[] = [],
  ): Promise<Record<string, number>> {
    const { own, served } = regime;
    const keyId = own.key.slice(0, own.key.indexOf('.'));
    const presented: Record<string, { headers: Record<string, string>; status: number }> = {
      'right key': { headers: { API_KEY: own.key }, status: 404 },
      'wrong secret of a real key': {
        headers: { API_KEY: `${keyId}.${randomBytes(24).toString('base64url')}` },
        status: 401,
      },
      'unknown key id': {
        headers: { API_KEY: `k${randomBytes(6).toString('hex')}.${randomBytes(24).toString('base64url')}` },
        status: 401,
      },
      'right password': { headers: { authorization: basic(own.user.name, own.user.password) }, status: 404 },
      'wrong password': { headers: { authorization: basic(own.user.name, 'a long wrong password') }, status: 401 },
      'unknown user': { headers: { authorization: basic('nobody', 'a long wrong password') }, status: 401 },
    };
    for (const kind of skip) delete presented[kind];
    // the site without a resource: authenticated it is a 404 at once, otherwise a 401; nothing else to do either way
    const url = `${served.origin}/${own.site}/ODataApi`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(presented).map((k) => [k, []]));
    try {
      for (let round = -1; round < rounds; round++) {
        for (const kind of shuffled(Object.keys(presented))) {
          const { headers, status } = presented[kind]!;
          const result = await timedGet(agent, url, headers);
          expect(result.status, kind).toBe(status);
          if (round >= 0) samples[kind]!.push(result.ms);
        }
      }
    } finally {
      agent.destroy();
    }
    return Object.fromEntries(Object.entries(samples).map(([kind, ms]) => [kind, median(ms)]));
  }

  it('takes the same time for right and wrong keys and passwords, warm and cold', async () => {
    const warm = await measure(regimes.warm!, 200);
    // (cold, a right password costs what a right key does: the same scrypt after the same kind of lookup)
    const cold = await measure(regimes.cold!, 30, ['right password']);
    const show = (medians: Record<string, number>) =>
      Object.entries(medians)
        .map(([kind, ms]) => `${kind} ${ms.toFixed(2)}`)
        .join(', ');
    console.log(`${storage} authentication medians (ms), warm (200 each): ${show(warm)}`);
    console.log(`${storage} authentication medians (ms), cold (30 each): ${show(cold)}`);
    expect(within(Object.values(warm), WARM_SLACK_MS), `warm: ${show(warm)}`).toBe(true);
    expect(within(Object.values(cold), 0), `cold: ${show(cold)}`).toBe(true);
    // every cold presentation paid a scrypt, and the check above tells that apart: a wrong credential that was not
    // remembered (cold) next to a right one that was (warm) fails it
    const coldFastest = Math.min(...Object.values(cold));
    expect(coldFastest).toBeGreaterThan(5);
    expect(within([warm['right key']!, cold['wrong secret of a real key']!], WARM_SLACK_MS)).toBe(false);
    expect(within([warm['right password']!, cold['unknown user']!], WARM_SLACK_MS)).toBe(false);
    expect(within([warm['right key']!, cold['right key']!], WARM_SLACK_MS)).toBe(false);
  }, 30_000);
});
