// The demo site: generated records in every set (demo.ts), loaded once into an empty site in one transaction.
import type { Backend } from './backend.js';
import { demoData, type DemoOptions } from './demo.js';
import { collection, type ContainedName } from './collections.js';
import type { EntitySetName } from './model.js';

/**
 * Creates `site` with demo data unless it exists with records; returns a new API key for it either way. A site that
 * exists without records (a first start killed between creating the site and committing its records) is filled.
 */
export async function loadDemoSite(
  backend: Backend,
  site = 'demo',
  options: DemoOptions = {},
): Promise<{ key: string; created: boolean }> {
  let created = false;
  if ((await backend.directory.site(site)) === undefined) await backend.directory.createSite(site);
  const store = await backend.store(site);
  if (!(await store.hasRows(collection('Accounts')))) {
    const data = demoData(options);
    const tables: [EntitySetName | ContainedName, readonly Record<string, unknown>[]][] = [
      ...(Object.entries(data.sets) as [EntitySetName, readonly Record<string, unknown>[]][]),
      ['WorkOrderComment', data.comments],
      ['ActualLabor', data.labor],
      ['MeterReadingHistory', data.meterHistory],
    ];
    await store.transaction(async (tx) => {
      for (const [name, rows] of tables) {
        const c = collection(name);
        const size = store.batchRows(c);
        for (let i = 0; i < rows.length; i += size) await tx.insertMany(c, rows.slice(i, i + size));
      }
    });
    created = true;
  }
  const { key } = await backend.directory.createKey(site, 'demo');
  return { key, created };
}
