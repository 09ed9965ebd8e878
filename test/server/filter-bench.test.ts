// `odata-engine bench` (issue 19): the function checks every backend's rows against the memory backend's before it
// times them (a wrong hand-written predicate is reported, not timed), runs on the real database servers, and the
// command reads a user's model, a CSV file, filters and predicates from files, prints the tables and writes the chart.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defineEntityType, defineModel } from '../../src/index.js';
import {
  filterBenchSvg,
  formatFilterBench,
  generatedFilters,
  generatedRows,
  runFilterBench,
} from '../../src/server/filter-bench.js';
import { plantDataModel } from '../../src/server/model.js';
import { storages } from './harness.js';

const kinds = await storages({ mysql: true });
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL = 'mysql://root@127.0.0.1:3306';

const readingProperties = {
  Id: { type: 'Edm.Int32' },
  Meter: { type: 'Edm.String', maxLength: 20, nullable: false },
  Value: { type: 'Edm.Decimal', precision: 12, scale: 2 },
  At: { type: 'Edm.DateTimeOffset', nullable: false },
} as const;
const Reading = defineEntityType({ name: 'Reading', key: ['Id'], properties: readingProperties });
const model = defineModel({ namespace: 'Bench', entitySets: { Readings: { type: Reading } } });
const rows = Array.from({ length: 400 }, (_, n) => ({
  Id: n + 1,
  Meter: `M-${n % 7}`,
  Value: n % 11 === 0 ? null : ((n * 37) % 1000) / 4 + '',
  At: new Date(Date.UTC(2026, 0, 1) + n * 3_600_000).toISOString(),
}));

describe('runFilterBench', () => {
  it('times the backends that keep the memory backend rows, and reports the ones that do not', async () => {
    const result = await runFilterBench({
      model,
      set: 'Readings',
      rows,
      // MariaDB's PCRE2 would backtrack without bound on this pattern: its dialect refuses it (501)
      filters: ["Meter eq 'M-3' and Value gt 100", 'not (Value lt 50)', "matchesPattern(Meter,'^(1|1?)+$')"],
      ...(kinds.includes('postgres') ? { postgresUrl: POSTGRES } : {}),
      ...(kinds.includes('mysql') ? { mysqlUrl: MYSQL } : {}),
      predicates: {
        "Meter eq 'M-3' and Value gt 100": (row) => row['Meter'] === 'M-3' && Number(row['Value']) > 100,
        // wrong on purpose: a null Value is dropped by `lt` and so kept by `not`; Number(null) is 0
        'not (Value lt 50)': (row) => !(Number(row['Value']) < 50),
        "matchesPattern(Meter,'^(1|1?)+$')": (row) => /^(1|1?)+$/u.test(String(row['Meter'])),
      },
      rounds: 2,
      roundMs: 5,
    });
    expect(result.backends).toEqual(['memory', ...kinds, 'predicate']);
    expect(result.skipped).toEqual({});
    const [first, second, third] = result.entries;
    expect(first!.matched).toBe(
      rows.filter((r) => r.Meter === 'M-3' && r.Value !== null && Number(r.Value) > 100).length,
    );
    for (const backend of result.backends) {
      expect(first!.timings[backend]!.rounds).toHaveLength(2);
      expect(first!.timings[backend]!.median).toBeGreaterThan(0);
    }
    expect(second!.timings.predicate).toBeUndefined();
    expect(second!.problems.predicate).toMatch(/rows where the memory backend keeps \d+; without \(Id=\d+\)/);
    for (const backend of ['memory', ...kinds] as const) expect(second!.timings[backend]).toBeDefined();
    expect(result.disagreement).toBe(true);
    expect(third!.matched).toBe(0);
    if (kinds.includes('mysql')) {
      expect(third!.problems.mysql).toMatch(/^refused \(501\): matchesPattern with a /);
      expect(third!.timings.mysql).toBeUndefined();
    }
    expect(third!.timings.sqlite).toBeDefined();
    const text = formatFilterBench(result);
    expect(text).toContain("| Meter eq 'M-3' and Value gt 100");
    expect(text).toContain('**geometric mean**');
    expect(text).toMatch(/Not timed:\n- not \(Value lt 50\): hand-written \d+ rows/);
    const svg = filterBenchSvg(result);
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('not timed');
  }, 120_000);

  it('times other implementations beside, even where their rows differ, and leaves SQLite out when asked', async () => {
    const filters = ["Meter eq 'M-3'", 'not (Value lt 50)', 'Value gt 100'];
    const result = await runFilterBench({
      model,
      set: 'Readings',
      rows,
      filters,
      sqlite: false,
      others: {
        // a peer's semantics: a null Value compares as 0 (JavaScript's `<` on null), so `not` drops it
        'js-coercing': (filter) => {
          if (filter === "Meter eq 'M-3'") return (row) => row['Meter'] === 'M-3';
          if (filter === 'not (Value lt 50)') return (row) => !((row['Value'] as number | null)! < 50);
          throw new Error(`no gt in this one: ${filter}`);
        },
      },
      rounds: 2,
      roundMs: 5,
    });
    expect(result.backends).toEqual(['memory', 'js-coercing']);
    const [eq, not, gt] = result.entries;
    expect(eq!.timings['js-coercing']).toBeDefined();
    expect(eq!.problems).toEqual({});
    // timed all the same, and the difference said
    expect(not!.timings['js-coercing']).toBeDefined();
    expect(not!.problems['js-coercing']).toMatch(/rows where the memory backend keeps/);
    expect(gt!.timings['js-coercing']).toBeUndefined();
    expect(gt!.problems['js-coercing']).toMatch(/cannot run it: no gt in this one/);
    const text = formatFilterBench(result);
    expect(text).toContain('js-coercing rows/s');
    expect(text).toMatch(/not \(Value lt 50\) \|.*†/);
    expect(filterBenchSvg(result)).toContain('>js-coercing</text>');
    await expect(
      runFilterBench({ model, set: 'Readings', rows, filters, sqlite: false, others: { memory: () => () => true } }),
    ).rejects.toThrow(/memory names a backend/);
  });

  it('skips a server it cannot reach, and says so', async () => {
    const result = await runFilterBench({
      model,
      set: 'Readings',
      rows,
      filters: ['Value gt 1'],
      postgresUrl: 'postgres://postgres@127.0.0.1:1/none',
      rounds: 1,
      roundMs: 1,
    });
    expect(result.backends).toEqual(['memory', 'sqlite']);
    expect(result.skipped.postgres).toMatch(/^postgres:\/\/postgres@127.0.0.1:1\/none: .*ECONNREFUSED/);
    expect(formatFilterBench(result)).toMatch(/Skipped \(not reachable\):\n- PostgreSQL: /);
    expect(result.disagreement).toBe(false);
  }, 60_000);

  it('generates rows with distinct keys and filters that keep some rows and drop others', () => {
    const type = plantDataModel.entitySets.get('POLineItems')!;
    const generated = generatedRows(type, 300, 5);
    expect(new Set(generated.map((r) => r['PONumber'])).size).toBe(300);
    const filters = generatedFilters(type, generated, 6, 5);
    expect(filters).toHaveLength(6);
    expect(generatedRows(type, 300, 5)).toEqual(generated);
  });
});

describe('odata-engine bench', () => {
  const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
  // by its path: the command runs in a temporary folder, where `tsx` alone would not resolve
  const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
  const dir = mkdtempSync(join(tmpdir(), 'odata-bench-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', tsx, cli, 'bench', ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      cwd: dir,
    });

  it('benchmarks a user model over a CSV file with filters and predicates from files', () => {
    const source = fileURLToPath(new URL('../../src/index.ts', import.meta.url));
    writeFileSync(
      join(dir, 'model.mts'),
      `import { defineEntityType, defineModel } from ${JSON.stringify(source)};
const Reading = defineEntityType({ name: 'Reading', key: ['Id'], properties: ${JSON.stringify(readingProperties)} });
export default defineModel({ namespace: 'Bench', entitySets: { Readings: { type: Reading } } });
`,
    );
    writeFileSync(
      join(dir, 'readings.csv'),
      ['Id,Meter,Value,At', ...rows.map((r) => `${r.Id},${r.Meter},${r.Value ?? ''},${r.At}`)].join('\n'),
    );
    writeFileSync(join(dir, 'filters.txt'), "# meters\nMeter eq 'M-3'\n\nValue ge 100.5\n");
    writeFileSync(
      join(dir, 'predicates.mjs'),
      `export default {
  "Meter eq 'M-3'": (row) => row.Meter === 'M-3',
  'Value ge 100.5': (row) => row.Value !== null && Number(row.Value) >= 100.5,
};
`,
    );
    const result = run(
      'Readings',
      "Meter in ('M-1','M-2')",
      '--model',
      'model.mts',
      '--data',
      'readings.csv',
      '--filters',
      'filters.txt',
      '--predicates',
      'predicates.mjs',
      '--rounds',
      '1',
      '--round-ms',
      '5',
      '--postgres',
      'off',
      '--mysql',
      'off',
      '--svg',
      'chart.svg',
    );
    // standard error is no terminal: each progress bar's last line only
    expect(result.stderr).toMatch(/^loading SQLite \[#+\] 100% 400\/400\nfilters \[#+\] 100% 3\/3\n$/);
    // a filter without a predicate is reported, but it is no disagreement
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('400 rows of Readings');
    expect(result.stdout).toMatch(/\| filter +\| +kept \| memory rows\/s \| SQLite rows\/s \| hand-written rows\/s \|/);
    expect(result.stdout).toMatch(/\| Meter eq 'M-3' +\| +57 \|/);
    expect(result.stdout).toContain("- Meter in ('M-1','M-2'): hand-written no predicate given for this filter");
    expect(result.stdout).toContain('Chart written to chart.svg');
    expect(readFileSync(join(dir, 'chart.svg'), 'utf8')).toContain('Readings: rows evaluated per second, 400 rows');
  }, 120_000);

  it('generates rows and filters for a set of the reference model, and refuses what it cannot use', () => {
    const result = run(
      'Parts',
      '--rows',
      '300',
      '--rounds',
      '1',
      '--round-ms',
      '2',
      '--postgres',
      'off',
      '--mysql',
      'off',
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('300 rows of Parts');
    expect(result.stdout.match(/^\| (?!filter|:-)/gm)?.length).toBeGreaterThanOrEqual(8);
    expect(readFileSync(join(dir, 'odata-bench.svg'), 'utf8')).toContain('<svg');
    const unknown = run('Nothing');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/The model has no entity set Nothing; it has Accounts, /);
    const both = run('Parts', '--rows', '3', '--data', 'x.json');
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('--rows and --data exclude each other');
  }, 120_000);
});
