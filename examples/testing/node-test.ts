// checkAgainstOracle under Node's own test runner (no vitest or jest): `node --import tsx --test
// examples/testing/node-test.ts`. It only needs a promise that rejects on a difference, which any runner reports.
import { test } from 'node:test';
import { checkKyselyParts } from './kysely-check.js';

test('the Kysely adapter agrees with the oracle', async () => {
  const report = await checkKyselyParts();
  console.log(`${report.runs} runs, ${report.queries} queries, seed ${report.seed}`);
});
