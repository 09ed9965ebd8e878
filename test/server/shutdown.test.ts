// `odata-engine serve` stopped with SIGTERM as a real process: new connections are refused (or answered 503), the
// request in flight is answered, the database is closed cleanly, the process exits 0, and a restart on the same data
// sees what the last request wrote. SQLite files, and the PostgreSQL server in a schema of its own.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { storages } from './harness.js';
import { exchange, open, reader, sleep, type RawOutcome } from './raw-http.js';

const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
const kinds = await storages();
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

interface Serving {
  readonly child: ChildProcessWithoutNullStreams;
  readonly port: number;
  readonly key: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Its JSON log lines so far. */
  log(): Record<string, unknown>[];
  /** Resolves when a log line satisfies `test` (rejects after `timeoutMs`). */
  logged(test: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** The exit code and signal, when the process has exited. */
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

async function serve(where: string[]): Promise<Serving> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', cli, 'serve', '--port', '0', ...where, '--demo', '--log-level', 'info', '--rate-limit', '0'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  running.push(child);
  let output = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const wake of waiters) wake();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const log = (): Record<string, unknown>[] =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const until = <T>(find: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = find();
        if (found === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no ${what} in ${timeoutMs} ms:\n${output}`));
      }, timeoutMs);
      waiters.add(check);
      void exit.then(() => setTimeout(check, 0));
      check();
    });
  const started = await until(
    () => /curl -H 'API_KEY: ([^']+)' "http:\/\/127\.0\.0\.1:(\d+)\//.exec(output) ?? undefined,
    'curl line',
    30_000,
  );
  return {
    child,
    port: Number(started[2]),
    key: started[1]!,
    output: () => output,
    log,
    logged: (test, timeoutMs = 10_000) => until(() => log().find(test), 'such log line', timeoutMs),
    exit,
  };
}

/**
 * New connections during the drain, one every 20 ms until one is refused: each is refused (ECONNREFUSED), answered 503
 * in OData JSON and closed, or (caught in the moment the listening socket closes: accepted, then closed as idle, or
 * reset in the backlog) closed unanswered. The outcomes, in order.
 */
async function refusedAfterSignal(port: number, key: string): Promise<string[]> {
  const outcomes: string[] = [];
  for (let attempt = 0; attempt < 100; attempt++) {
    let outcome: RawOutcome;
    try {
      outcome = await exchange(
        port,
        `GET /demo/ODataApi/v1/Accounts?$top=1 HTTP/1.1\r\nHost: x\r\nAPI_KEY: ${key}\r\n\r\n`,
        5_000,
      );
    } catch (error) {
      const code = (error as { code?: string }).code ?? String(error);
      expect(['ECONNREFUSED', 'ECONNRESET']).toContain(code);
      outcomes.push(code);
      if (code === 'ECONNREFUSED') return outcomes;
      await sleep(20);
      continue;
    }
    if (outcome.kind === 'closed') outcomes.push('closed unanswered');
    else {
      expect(outcome.response.status).toBe(503);
      expect(outcome.response.headers['connection']).toBe('close');
      expect(JSON.parse(outcome.response.body)).toMatchObject({ error: { code: 'ServiceUnavailable' } });
      outcomes.push('503');
    }
    await sleep(20);
  }
  throw new Error(`new connections were still accepted 2 s after the signal: ${outcomes.join(', ')}`);
}

describe.each(kinds)('SIGTERM on %s', (storage) => {
  let where: string[];
  let cleanup: () => Promise<void> = async () => undefined;
  let dir = '';
  afterAll(async () => cleanup());

  it('drains: refuses new work, answers the request in flight, closes the database, exits 0; a restart sees the write', async () => {
    if (storage === 'sqlite') {
      dir = mkdtempSync(join(tmpdir(), 'odata-shutdown-'));
      where = ['--data', dir];
      cleanup = async () => rmSync(dir, { recursive: true, force: true });
    } else {
      const schema = `odata_shutdown_${process.pid}_${randomBytes(3).toString('hex')}`;
      const admin = new pg.Client({ connectionString: POSTGRES });
      await admin.connect();
      await admin.query(`CREATE SCHEMA "${schema}"`);
      where = ['--database-url', `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`];
      cleanup = async () => {
        await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
        await admin.end();
      };
    }
    const first = await serve(where);
    const { port, key } = first;
    const head = (method: string, path: string, extra = ''): string =>
      `${method} /demo/ODataApi/v1${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAPI_KEY: ${key}\r\n${extra}\r\n`;

    // a keep-alive connection, used once and left open
    const idle = await open(port);
    const readIdle = reader(idle);
    idle.write(head('GET', '/Accounts?$top=1'));
    const used = await readIdle();
    expect(used.kind === 'response' && used.response.status).toBe(200);

    // a create whose body has only half arrived when the signal comes
    const body = JSON.stringify({ VendorID: 'V-DRAIN', Notes: 'written while the server shut down' });
    const inFlight = await open(port);
    const readInFlight = reader(inFlight);
    inFlight.write(
      head(
        'POST',
        '/PurchaseOrders',
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: in-flight-1\r\n`,
      ) + body.slice(0, 10),
    );
    await first.logged((l) => l['reqId'] === 'in-flight-1' && l['msg'] === 'incoming request');

    const signalled = performance.now();
    first.child.kill('SIGTERM');
    await first.logged((l) => l['msg'] === 'shutting down: draining requests' && l['signal'] === 'SIGTERM');
    // new work is refused
    const newConnections = await refusedAfterSignal(port, key);
    // the idle keep-alive connection is closed, or its next request answered 503 and closed
    let keepAlive = 'closed';
    if (!idle.destroyed) {
      idle.write(head('GET', '/Accounts?$top=1'));
      const next = await readIdle(5_000);
      if (next.kind === 'response') {
        keepAlive = `${next.response.status}`;
        expect(next.response.status).toBe(503);
        expect(next.response.headers['connection']).toBe('close');
        expect(JSON.parse(next.response.body)).toMatchObject({ error: { code: 'ServiceUnavailable' } });
      }
    }
    // the request in flight is answered, and its connection closed
    await sleep(100);
    expect(first.child.exitCode).toBeNull();
    inFlight.write(body.slice(10));
    const answered = await readInFlight(10_000);
    expect(answered.kind).toBe('response');
    if (answered.kind !== 'response') throw new Error('unreachable');
    expect(answered.response.status, answered.response.body).toBe(201);
    expect(answered.response.headers['connection']).toBe('close');
    const created = JSON.parse(answered.response.body) as { PONumber: string; VendorID: string };
    expect(created.VendorID).toBe('V-DRAIN');
    expect((await readInFlight(5_000)).kind).toBe('closed');

    const { code, signal } = await Promise.race([
      first.exit,
      sleep(10_000).then(() => {
        throw new Error(`serve did not exit in 10 s after the last answer:\n${first.output()}`);
      }),
    ]);
    const exitedMs = performance.now() - signalled;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const messages = first.log().map((l) => l['msg']);
    expect(messages).toContain('shutting down: draining requests');
    expect(messages).toContain('stopped: connections and database closed');
    expect(messages.indexOf('stopped: connections and database closed')).toBeGreaterThan(
      messages.indexOf('shutting down: draining requests'),
    );
    expect(
      first
        .log()
        .some(
          (l) =>
            l['reqId'] === 'in-flight-1' &&
            l['msg'] === 'request completed' &&
            (l['res'] as { statusCode?: number } | undefined)?.statusCode === 201,
        ),
    ).toBe(true);
    expect(first.log().filter((l) => Number(l['level']) >= 50)).toEqual([]);
    console.log(
      `${storage}: after SIGTERM new connections got ${newConnections.join(', ')}, the idle keep-alive one was ${keepAlive}; ` +
        `the request in flight got ${answered.response.status}; exit ${code} ${Math.round(exitedMs)} ms after the signal`,
    );

    if (storage === 'sqlite') {
      // closed cleanly: the write-ahead logs were checkpointed and removed, and the files are sound
      for (const file of ['control.db', join('sites', 'demo.db')]) {
        expect(existsSync(join(dir, `${file}-wal`)), `${file}-wal`).toBe(false);
        const db = new Database(join(dir, file), { readonly: true });
        try {
          expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        } finally {
          db.close();
        }
      }
    }

    // a restart on the same data sees the record written during the drain
    const second = await serve(where);
    try {
      const read = await fetch(
        `http://127.0.0.1:${second.port}/demo/ODataApi/v1/PurchaseOrders('${created.PONumber}')`,
        { headers: { API_KEY: second.key } },
      );
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ PONumber: created.PONumber, VendorID: 'V-DRAIN' });
    } finally {
      second.child.kill('SIGTERM');
      expect(await second.exit).toEqual({ code: 0, signal: null });
    }
  }, 90_000);
});
