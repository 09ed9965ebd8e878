// loadDemoSite on real storage: a first start killed between creating the demo site and committing its records must
// not leave the site empty for good (found by the crash test).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteBackend } from '../../src/server/backend.js';
import { loadDemoSite } from '../../src/server/demo-site.js';
import { collection } from '../../src/server/collections.js';

const dir = mkdtempSync(join(tmpdir(), 'odata-demo-site-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadDemoSite', () => {
  it('fills a demo site that exists without records, and leaves a filled one alone', async () => {
    const backend = await openSqliteBackend(dir);
    try {
      // what a kill after createSite and before the records' commit leaves behind
      await backend.directory.createSite('demo');
      const store = await backend.store('demo');
      expect(await store.hasRows(collection('Accounts'))).toBe(false);
      const first = await loadDemoSite(backend, 'demo', { rows: 200 });
      expect(first.created).toBe(true);
      const count = async (): Promise<number> =>
        Number((await store.driver.all('SELECT count(*) AS "n" FROM "Accounts"'))[0]?.['n']);
      const accounts = await count();
      expect(accounts).toBeGreaterThan(0);
      const again = await loadDemoSite(backend, 'demo', { rows: 200 });
      expect(again.created).toBe(false);
      expect(await count()).toBe(accounts);
      expect(again.key).not.toBe(first.key);
    } finally {
      await backend.close();
    }
  });
});
