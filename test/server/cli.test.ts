// The odata-engine command, run as a real process.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
const tsxLoader = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

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
    // MariaDB's PCRE2 would backtrack without bound on this pattern; SQLite and PostgreSQL translate it
    const { status, stdout } = run('explain', 'Accounts', "$filter=matchesPattern(Account,'^(1|1?)+$')");
    expect(status).toBe(0);
    expect(stdout).toContain('SQL (sqlite):\nSELECT');
    expect(stdout).toContain('SQL (postgres):\nSELECT');
    expect(stdout).toMatch(/SQL \(mysql\): not translated \(HTTP 501\): .+ is not supported by the mysql SQL dialect/);
  });

  it("shows the GROUP BY of $apply's grouping, and says when it runs in memory", () => {
    const grouped = run(
      'explain',
      'POLineItems',
      '$apply=filter(QuantityOrdered gt 0)/groupby((PONumber),aggregate(ExtendedPrice with sum as Spend))/top(3)',
    );
    expect(grouped.status).toBe(0);
    expect(grouped.stdout).toContain('Canonical: $apply=filter(QuantityOrdered gt 0)/groupby((PONumber),aggregate(');
    for (const dialect of ['sqlite', 'postgres', 'mysql']) {
      const statement = grouped.stdout.split(`SQL of $apply (${dialect}):\n`)[1]?.split('\n')[0] ?? '';
      expect(statement).toMatch(/^SELECT \* FROM \(SELECT t0\..PONumber. AS .k0., SUM\(t0\..ExtendedPrice.\) AS .a0. /);
      expect(statement).toContain('GROUP BY 1');
    }
    // SQLite's SUM fails past 64 bits: the statement it runs again then
    expect(grouped.stdout).toContain('odata_sum(t0."ExtendedPrice")');
    expect(grouped.stdout).toContain('then in memory: 1 transformation(s) after the grouping');
    const filtered = run(
      'explain',
      'POLineItems',
      '$apply=groupby((PONumber),filter(UnitPrice gt 5)/aggregate($count as N))',
    );
    expect(filtered.stdout).toContain('every transformation of $apply runs in memory');
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

describe('odata-engine --help and mistakes', () => {
  function runIn(cwd: string, ...args: string[]) {
    // from another directory `--import tsx` would not resolve: name the loader by its path
    const result = spawnSync(process.execPath, ['--import', tsxLoader, cli, ...args], {
      encoding: 'utf8',
      timeout: 60_000,
      cwd,
    });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  it.each(['serve', 'sites', 'keys', 'users', 'import', 'seed', 'explain'])(
    '%s --help prints its usage, exits 0 and touches nothing (no ./data, no server)',
    (command) => {
      const dir = mkdtempSync(join(tmpdir(), 'odata-cli-'));
      try {
        const { status, stdout } = runIn(dir, command, '--help');
        expect(status).toBe(0);
        expect(stdout).toContain(`odata-engine ${command}`);
        expect(readdirSync(dir)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('refuses an unknown flag, a flag without its value and an unknown command, with exit code 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'odata-cli-'));
    try {
      const unknown = runIn(dir, 'serve', '--prot', '8080');
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain('odata-engine serve has no option --prot');
      const missing = runIn(dir, 'sites', 'list', '--data');
      expect(missing.status).toBe(2);
      expect(missing.stderr).toContain('--data needs a value');
      expect(runIn(dir, 'serv').status).toBe(2);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the overview for --help and help', () => {
    const { status, stdout } = run('--help');
    expect(status).toBe(0);
    for (const command of ['serve', 'sites', 'keys', 'users', 'import', 'seed', 'explain'])
      expect(stdout).toContain(`odata-engine ${command}`);
    expect(run('help', 'seed').stdout).toContain('--rows N');
  });
});
