// The testing examples of docs/testing.md, checked by the kit as the docs say: a hand-written Express endpoint over
// HTTP (examples/testing/express-parts.ts) and a Kysely adapter on SQLite (examples/testing/kysely-parts.ts), each
// with the operators and functions it supports. Both agree with the oracle on every query of the default run count;
// the Kysely check also runs under Node's own test runner (examples/testing/node-test.ts).
import { spawnSync } from 'node:child_process';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkAgainstOracle, odataRunner } from '../../src/testing/index.js';
import { partsApp } from '../../examples/testing/express-parts.js';
import { checkKyselyParts } from '../../examples/testing/kysely-check.js';
import { Part, partOf, type PartRow } from '../../examples/testing/parts.js';

const everyOption = ['$filter', '$orderby', '$select', '$top', '$skip', '$count'] as const;

describe('the testing examples', () => {
  const parts: PartRow[] = [];
  let server: Server | undefined;
  afterAll(() => new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve()))));

  it('a hand-written Express endpoint agrees with the oracle', async () => {
    server = partsApp(parts).listen(0, '127.0.0.1');
    await new Promise((resolve) => server!.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/odata/Parts`;
    const report = await checkAgainstOracle(
      {
        load: (rows) => void parts.splice(0, parts.length, ...rows.map(partOf)),
        run: odataRunner({ url }),
      },
      {
        entityType: Part,
        include: everyOption,
        operators: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'not', 'in'],
        functions: ['contains', 'startswith', 'endswith', 'tolower', 'toupper', 'length'],
      },
    );
    expect(report.queries).toBeGreaterThan(500);
  }, 120_000);

  it('a Kysely adapter on SQLite agrees with the oracle', async () => {
    const report = await checkKyselyParts();
    expect(report.queries).toBeGreaterThan(500);
  }, 120_000);

  it('runs under node:test as well (examples/testing/node-test.ts)', () => {
    const file = fileURLToPath(new URL('../../examples/testing/node-test.ts', import.meta.url));
    const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
    const result = spawnSync(process.execPath, ['--import', tsx, '--test', file], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/100 runs, \d+ queries, seed -?\d+/);
    expect(result.stdout).toMatch(/# pass 1\n# fail 0/);
  }, 120_000);
});
