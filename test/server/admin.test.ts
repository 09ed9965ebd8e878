// Bulk loading: import (JSON and CSV, validated like a POST, all or nothing) and seed, on SQLite and PostgreSQL.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminError, importRecords, parseCsv, parseRecords, seedSite } from '../../src/server/admin.js';
import { demoRows } from '../../src/server/demo.js';
import { WorkOrder, entitySetNames } from '../../src/server/model.js';
import { collection, plantTables } from '../../src/server/collections.js';
import { startServer, storages, type RunningServer } from './harness.js';

const kinds = await storages();

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, and CRLF', () => {
    expect(parseCsv('A,B\r\n"x, y","say ""hi""\nthere"\r\n1,\n')).toEqual([
      { A: 'x, y', B: 'say "hi"\nthere' },
      { A: '1', B: '' },
    ]);
    expect(() => parseCsv('A,B\n1\n')).toThrow(/record 2 has 1 fields/);
    expect(() => parseCsv('A\n"open\n')).toThrow(/inside a quoted field/);
  });

  it('types CSV values by the property: numbers, Booleans, empty as null', () => {
    const [row] = parseRecords('WorkOrderID,Priority,Description,TargetDate\nWO-9,2,Pump,\n', 'csv', WorkOrder);
    expect(row).toEqual({ WorkOrderID: 'WO-9', Priority: 2, Description: 'Pump', TargetDate: null });
  });
});

describe.each(kinds)('import and seed on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    s = await startServer(storage);
    await s.backend.directory.createSite(`empty-${s.site}`);
  }, 60_000);
  afterAll(async () => s?.close());
  const count = async (set: string): Promise<number> => {
    const response = await fetch(`${s.root}/${set}?$count=true&$top=0`, { headers: { API_KEY: s.key } });
    return ((await response.json()) as { '@odata.count': number })['@odata.count'];
  };

  it('imports work orders and their labor, and keeps the hour sums', async () => {
    const before = await count('WorkOrders');
    await importRecords(s.backend, s.site, 'WorkOrders', [
      {
        WorkOrderID: 'WO-IMP-1',
        Description: 'Imported pump check',
        Status: 'APPR',
        Priority: 2,
        RequestedDate: '2024-05-01T08:00:00Z',
        ActualHours: 99,
      },
    ]);
    await importRecords(s.backend, s.site, 'ActualLabor', [
      { WorkOrderID: 'WO-IMP-1', PeopleID: 'P1', Craft: 'MECH', Hours: '1.5', StartDate: '2024-05-01T09:00:00Z' },
      {
        WorkOrderID: 'WO-IMP-1',
        PeopleID: 'P2',
        Craft: 'ELEC',
        Hours: 2,
        OTHours: '0.25',
        StartDate: '2024-05-01T10:00:00Z',
      },
    ]);
    await importRecords(s.backend, s.site, 'Comments', [
      { WorkOrderID: 'WO-IMP-1', Comment: 'from the old system', Username: 'imp' },
    ]);
    expect(await count('WorkOrders')).toBe(before + 1);
    const wo = (await (
      await fetch(`${s.root}/WorkOrders('WO-IMP-1')`, { headers: { API_KEY: s.key } })
    ).json()) as Record<string, unknown>;
    expect([wo['ActualHours'], wo['ActualOTHours'], wo['IsOpen']]).toEqual([3.5, 0.25, true]);
  });

  it('writes nothing when one record is wrong, and names it', async () => {
    const before = await count('PurchaseOrders');
    await expect(
      importRecords(s.backend, s.site, 'PurchaseOrders', [
        { VendorID: 'V-IMP' },
        { VendorID: 'V-IMP', Status: 'Lost' },
      ]),
    ).rejects.toThrow(/Record 2 \(Status\)/);
    expect(await count('PurchaseOrders')).toBe(before);
    await expect(
      importRecords(s.backend, s.site, 'ActualLabor', [
        { WorkOrderID: 'WO-NOPE', PeopleID: 'P', Craft: 'C', Hours: 1, StartDate: '2024-01-01T00:00:00Z' },
      ]),
    ).rejects.toThrow(AdminError);
  });

  it('refuses a __proto__ member of an imported record as an unknown field, on every target', async () => {
    // as read from a file: JSON.parse (and the body reader) make `__proto__` an own member, not the prototype
    const records = parseRecords(
      '[{"WorkOrderID":"WO-PROTO","Description":"x","RequestedDate":"2024-01-01T00:00:00Z","__proto__":{"Priority":1}}]',
      'json',
    );
    await expect(importRecords(s.backend, s.site, 'WorkOrders', records)).rejects.toThrow(/__proto__/);
    const labor = parseRecords(
      '[{"WorkOrderID":"WO-PROTO","PeopleID":"P","Craft":"C","Hours":1,"StartDate":"2024-01-01T00:00:00Z","__proto__":{}}]',
      'json',
    );
    await expect(importRecords(s.backend, s.site, 'ActualLabor', labor)).rejects.toThrow(AdminError);
    expect(({} as Record<string, unknown>)['Priority']).toBeUndefined();
  });

  it('seeds an empty site with generated records, and refuses a site with records', async () => {
    const empty = `empty-${s.site}`;
    const total = await seedSite(s.backend, empty, { rows: 200 });
    expect(total).toBeGreaterThan(200);
    const { key } = await s.backend.directory.createKey(empty);
    const response = await fetch(`${s.origin}/${empty}/ODataApi/v1/POLineItems?$count=true&$top=0`, {
      headers: { API_KEY: key },
    });
    expect(((await response.json()) as { '@odata.count': number })['@odata.count']).toBeGreaterThan(0);
    await expect(seedSite(s.backend, empty, { rows: 10 })).rejects.toThrow(/has records already/);
  });

  it('seeds every generated record through multi-row inserts, exactly as generated', async () => {
    // 1,200 parts: full batches of 500 and a short last one
    const site = `batched-${s.site}`;
    await s.backend.directory.createSite(site);
    const options = { rows: 1200, seed: 11 };
    const total = await seedSite(s.backend, site, options);
    const store = await s.backend.store(site);
    let expected = 0;
    for (const [source, target] of [
      ['Parts', 'Parts'],
      ['POLineItems', 'POLineItems'],
      ['Comments', 'WorkOrderComment'],
      ['MeterHistory', 'MeterReadingHistory'],
    ] as const) {
      const generated = [...demoRows(source, options)];
      const c = collection(target);
      const [first, last] = [generated[0]!, generated[generated.length - 1]!];
      const keyOf = (row: Record<string, unknown>) =>
        Object.fromEntries([...(c.parentKey ?? []), ...c.entityType.key.map((p) => p.name)].map((k) => [k, row[k]]));
      for (const row of [first, last]) {
        const stored = await store.get(c, keyOf(row));
        expect(
          stored === undefined ? undefined : JSON.stringify(Object.keys(row).map((k) => [k, normal(stored[k])])),
        ).toBe(JSON.stringify(Object.keys(row).map((k) => [k, normal(row[k])])));
      }
      const [{ n }] = (await store.driver.all(
        `SELECT count(*) AS n FROM "${plantTables[c.name] ?? c.name}"${storage === 'postgres' ? ` WHERE site = '${site}'` : ''}`,
      )) as [{ n: unknown }];
      expect(Number(n)).toBe(generated.length);
    }
    for (const name of [...entitySetNames, 'Comments', 'ActualLabor', 'MeterHistory'] as const)
      expected += [...demoRows(name, options)].length;
    expect(total).toBe(expected);
  });

  it('writes nothing when one generated record cannot be stored', async () => {
    const site = `clash-${s.site}`;
    await s.backend.directory.createSite(site);
    const store = await s.backend.store(site);
    const options = { rows: 1200, seed: 11 };
    // a part with the key of the 700th generated one: the second batch of Parts fails
    const clash = [...demoRows('Parts', options)][699]!;
    await store.transaction((tx) => tx.insert(collection('Parts'), clash));
    await expect(seedSite(s.backend, site, options)).rejects.toThrow();
    expect(await store.hasRows(collection('Accounts'))).toBe(false);
    const [{ n }] = (await store.driver.all(
      `SELECT count(*) AS n FROM "Parts"${storage === 'postgres' ? ` WHERE site = '${site}'` : ''}`,
    )) as [{ n: unknown }];
    expect(Number(n)).toBe(1);
  });
});

/** A stored or generated value in one comparable form: decimals and numbers as numbers, the rest as text. */
function normal(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'bigint') return Number(value);
  if (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  return value;
}

describe('odata-engine import (the command)', () => {
  const data = mkdtempSync(join(tmpdir(), 'odata-import-'));
  const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
  const run = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', cli, ...args, '--data', data], {
      encoding: 'utf8',
      timeout: 60_000,
    });
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('loads a CSV file into a set, and fails whole on a bad record', () => {
    expect(run('sites', 'create', 'plant').status).toBe(0);
    const good = join(data, 'accounts.csv');
    writeFileSync(good, 'Account,Description,IsActive\n5100-200,"Tools, small",true\n5100-300,,false\n');
    const imported = run('import', 'plant', 'Accounts', good);
    expect(imported.stdout).toContain('Imported 2 records into Accounts of plant');
    const bad = join(data, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify([
        { Account: '5100-400', IsActive: true },
        { Account: '5100-500', IsActive: 'yes' },
      ]),
    );
    const failed = run('import', 'plant', 'Accounts', bad);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/Record 2 \(IsActive\)/);
    expect(run('seed', 'plant', '--rows', '10').stderr).toMatch(/has records already/);
  }, 120_000);
});
