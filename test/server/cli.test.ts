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
    expect(stdout).toContain('SQL (sqlite):\nSELECT');
    expect(stdout).toContain('WHERE ((t0."Status" = $1::text) AND (t0."Priority" <= $2::int4))');
    expect(stdout).toContain('SQL (mysql):\nSELECT');
  });

  it('says which dialect does not translate a construct', () => {
    const { status, stdout } = run('explain', 'Accounts', "$filter=matchesPattern(Account,'^1')");
    expect(status).toBe(0);
    expect(stdout).toContain('SQL (sqlite):\nSELECT');
    expect(stdout).toMatch(
      /SQL \(postgres\): not translated \(HTTP 501\): matchesPattern is not supported by the postgres SQL dialect/,
    );
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
