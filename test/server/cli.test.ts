// The odata-engine command, run as a real process.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));

function run(...args: string[]) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('odata-engine explain', () => {
  it('prints the canonical text, the syntax tree and the bound query', () => {
    const { status, stdout } = run('explain', 'WorkOrders', "$filter=Status eq 'APPR' AND Priority le 2&$top=10");
    expect(status).toBe(0);
    expect(stdout).toContain("Canonical: $filter=Status eq 'APPR' and Priority le 2&$top=10");
    expect(stdout).toContain('Bound to WorkOrders (WorkOrder)');
    expect(stdout).toContain('"property": "Priority"');
  });

  it('prints the OData error body and fails for a bad query', () => {
    const { status, stderr } = run('explain', 'Accounts', '$filter=Acount eq 1');
    expect(status).toBe(1);
    expect(stderr).toContain('"code": "UnknownProperty"');
    expect(stderr).toContain("did you mean 'Account'?");
  });

  it('names the entity sets when given an unknown one', () => {
    const { status, stderr } = run('explain', 'Nope', '$top=1');
    expect(status).toBe(2);
    expect(stderr).toContain('Accounts, Parts');
  });
});
