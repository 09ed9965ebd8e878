// The kit against the project's own reference server (issue 19): the plant service over real HTTP on every storage,
// its demo site's records read once and then queried with generated $filter, $orderby, $select, $top, $skip, $count
// and $apply pipelines through odataRunner (the server's own paging followed), each answer compared with the oracle's over the same
// rows: no difference. The server cannot be written freely (its rules fill and check fields), so the rows are fixed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plantDataModel } from '../../src/server/model.js';
import { checkAgainstOracle, odataRunner, readAllRows } from '../../src/testing/index.js';
import { startServer, storages, type RunningServer } from '../server/harness.js';

const kinds = await storages({ mysql: true });

describe.each(kinds)('checkAgainstOracle against the reference server on %s', (storage) => {
  let s: RunningServer;
  beforeAll(async () => {
    // a small page: answers come in several pages, and the runner follows the next links
    s = await startServer(storage, { pageSize: 25 });
  }, 60_000);
  afterAll(async () => s?.close());

  for (const set of ['Parts', 'POLineItems', 'WorkOrders']) {
    it(`finds no difference on ${set}`, async () => {
      const target = { url: `${s.root}/${set}`, headers: { API_KEY: s.key } };
      const rows = await readAllRows(target);
      expect(rows.length).toBeGreaterThan(20);
      const report = await checkAgainstOracle(odataRunner(target), {
        entityType: plantDataModel.entitySets.get(set)!,
        rows,
        include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'],
      });
      expect(report.queries).toBeGreaterThan(600);
    }, 180_000);

    it(`finds no difference in $apply pipelines on ${set}`, async () => {
      // groupings and aggregations the storage makes with GROUP BY where it can, and the service in memory elsewhere
      const target = { url: `${s.root}/${set}`, headers: { API_KEY: s.key } };
      const rows = await readAllRows(target);
      const report = await checkAgainstOracle(odataRunner(target), {
        entityType: plantDataModel.entitySets.get(set)!,
        rows,
        include: ['$apply', '$orderby', '$top', '$skip', '$count'],
        numRuns: 30,
      });
      expect(report.queries).toBeGreaterThan(150);
    }, 180_000);
  }
});
