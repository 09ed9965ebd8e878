// The built package finds its SQLite reader (dist/sqlite-worker.js) from the ESM and the CommonJS bundles and from
// the built CLI: tsup builds the sources into a directory of its own (inside node_modules/.cache, so that the
// bundles resolve their dependencies as dist/ does), and real processes read through threads and processes there.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import config from '../../tsup.config.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const out = join(root, 'node_modules', '.cache', `odata-engine-build-${randomBytes(4).toString('hex')}`);
const data = mkdtempSync(join(tmpdir(), 'odata-built-'));

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  const options = Array.isArray(config) ? config[0] : config;
  await build({ ...options, outDir: out, dts: false, sourcemap: false, silent: true });
}, 120_000);
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(out, { recursive: true, force: true });
  rmSync(data, { recursive: true, force: true });
});

/** A script against the built server bundle: a site, a read through the readers, a read stopped at its budget. */
const script = (load: string, isolation: string, dir: string): string => `
  ${load}
  (async () => {
    const backend = await server.openSqliteBackend(${JSON.stringify(dir)}, { readerIsolation: '${isolation}', queryTimeoutMs: 500 });
    await backend.directory.createSite('built');
    const store = await backend.store('built');
    const rows = await store.driver.all('SELECT count(*) AS n FROM "Accounts"');
    let stopped;
    try {
      await store.driver.all("WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100000000) SELECT count(*) AS n FROM c WHERE odata_lower('X' || n) <> 'y'");
    } catch (error) {
      stopped = error.code;
    }
    await backend.close();
    console.log(JSON.stringify({ rows: rows.map((r) => String(r.n)), stopped }));
  })();`;

describe('the built package', () => {
  it('has the reader beside the bundles', () => {
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['sqlite-worker.js', 'server.js', 'server.cjs', 'cli.js']));
  });

  it.each([
    [
      'ESM',
      'threads',
      'thread',
      `import * as server from ${JSON.stringify(join(out, 'server.js'))};`,
      ['--input-type=module'],
    ],
    ['CommonJS', 'threads', 'thread', `const server = require(${JSON.stringify(join(out, 'server.cjs'))});`, []],
    [
      'ESM',
      'processes',
      'process',
      `import * as server from ${JSON.stringify(join(out, 'server.js'))};`,
      ['--input-type=module'],
    ],
    ['CommonJS', 'processes', 'process', `const server = require(${JSON.stringify(join(out, 'server.cjs'))});`, []],
  ])('reads through its %s bundle on reader %s, and stops a read at its budget', (_, __, isolation, load, flags) => {
    const dir = join(data, `${isolation}-${flags.length}`);
    const result = spawnSync(process.execPath, [...flags, '-e', script(load, isolation, dir)], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ rows: ['0'], stopped: 'QueryTimeout' });
  });

  it('serves reads from its CLI, and stops on SIGTERM with exit code 0', async () => {
    const child = spawn(
      process.execPath,
      [join(out, 'cli.js'), 'serve', '--port', '0', '--data', join(data, 'cli'), '--demo', '--log-level', 'warn'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const started = await new Promise<RegExpExecArray>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const found = /curl -H 'API_KEY: ([^']+)' "(http:\/\/[^/]+)\//.exec(output);
        if (found !== null) resolve(found);
      });
      void exit.then((code) => reject(new Error(`exited with ${code}:\n${output}`)));
    });
    const [, key, origin] = started as unknown as [string, string, string];
    const answer = await fetch(`${origin}/demo/ODataApi/v1/WorkOrders?$filter=Priority%20le%202&$count=true&$top=3`, {
      headers: { API_KEY: key },
    });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { '@odata.count': number; value: unknown[] };
    expect(body.value).toHaveLength(3);
    expect(body['@odata.count']).toBeGreaterThan(3);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
