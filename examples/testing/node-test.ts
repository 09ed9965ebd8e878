// checkAgainstOracle under Node's own test runner (no vitest or jest): `node --import tsx --test
// examples/testing/node-test.ts`. It only needs a promise that rejects on a difference, which any runner reports.
import { test } from 'node:test';
import { checkAgainstOracle } from '../../src/testing/index.js';
import { createParts, openParts, queryParts, replaceParts } from './kysely-parts.js';
import { Part, partOf } from './parts.js';

test('the Kysely adapter agrees with the oracle', async () => {
  const db = openParts();
  await createParts(db);
  try {
    const report = await checkAgainstOracle(
      { load: (rows) => replaceParts(db, rows.map(partOf)), run: (query) => queryParts(db, query.text) },
      {
        entityType: Part,
        operators: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'in'],
        functions: ['contains', 'startswith'],
      },
    );
    console.log(`${report.runs} runs, ${report.queries} queries, seed ${report.seed}`);
  } finally {
    await db.destroy();
  }
});
