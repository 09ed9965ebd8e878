// `odata-engine serve --demo` and the admin commands as real processes: the README's quick start, measured.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
const data = mkdtempSync(join(tmpdir(), 'odata-serve-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));

function admin(args: string[], input?: string) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args, '--data', data], {
    encoding: 'utf8',
    timeout: 60_000,
    ...(input === undefined ? {} : { input }),
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('odata-engine serve --demo', () => {
  it('starts, prints a key and a curl line, and the printed request answers with data', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve', '--demo', '--port', '0', '--data', data], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      const line = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no curl line in 60 s:\n${output}`)), 60_000);
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /curl -H 'API_KEY: ([^']+)' "([^"]+)"/.exec(output);
          if (match !== null) {
            clearTimeout(timer);
            resolve(`${match[1]}\n${match[2]}`);
          }
        });
        child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
      });
      const [key, printed] = line.split('\n') as [string, string];
      // the URL as the shell would pass it: \$ is a $
      const response = await fetch(printed.replace(/\\\$/g, '$'), { headers: { API_KEY: key } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { value: { Priority: number }[] };
      expect(body.value.length).toBeGreaterThan(0);
      expect(body.value.every((w) => w.Priority <= 2)).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
  }, 90_000);
});

describe('odata-engine sites, keys and users', () => {
  it('creates and lists sites, makes, lists and revokes keys, and creates users from stdin', () => {
    expect(admin(['sites', 'create', 'east', '--time-zone', 'America/Chicago']).stdout).toContain('Created site east');
    expect(admin(['sites', 'create', 'Bad Name']).status).toBe(1);
    expect(admin(['sites', 'list']).stdout).toMatch(/east\tAmerica\/Chicago/);
    const made = admin(['keys', 'create', 'east', '--label', 'ci']);
    const id = /Key (k[0-9a-f]+)/.exec(made.stdout)?.[1];
    expect(id).toBeDefined();
    expect(admin(['keys', 'list', 'east']).stdout).toMatch(new RegExp(`${id}\\tactive`));
    expect(admin(['keys', 'revoke', 'east', id!]).status).toBe(0);
    expect(admin(['keys', 'list', 'east']).stdout).toMatch(new RegExp(`${id}\\trevoked`));
    expect(admin(['users', 'create', 'east', 'kim'], 'a long enough password\n').stdout).toContain('Created user kim');
    expect(admin(['users', 'create', 'east', 'lee'], 'short\n').status).toBe(1);
  }, 120_000);
});
