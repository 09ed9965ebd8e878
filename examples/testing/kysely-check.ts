// The Kysely adapter (kysely-parts.ts) checked against the oracle: every query option, the operators and functions
// the adapter supports. Run by test/testing/examples.test.ts under vitest and by node-test.ts under node:test.
import { checkAgainstOracle, type CheckReport } from '../../src/testing/index.js';
import { createParts, openParts, queryParts, replaceParts } from './kysely-parts.js';
import { Part, partOf } from './parts.js';

export async function checkKyselyParts(): Promise<CheckReport> {
  const db = openParts();
  await createParts(db);
  try {
    return await checkAgainstOracle(
      { load: (rows) => replaceParts(db, rows.map(partOf)), run: (query) => queryParts(db, query.text) },
      {
        entityType: Part,
        include: ['$filter', '$orderby', '$select', '$top', '$skip', '$count'],
        operators: ['eq', 'ne', 'gt', 'ge', 'lt', 'le', 'and', 'or', 'in'],
        functions: ['contains', 'startswith'],
      },
    );
  } finally {
    await db.destroy();
  }
}
