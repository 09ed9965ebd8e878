// Started by read-budget.test.ts as a process of its own: opens the PostgreSQL driver, starts a long statement marked
// with a comment, and waits to be killed (the test checks that the server stops the statement once this is gone).
import { openPostgres } from '../../src/service/sql/postgres.js';

const [url, marker, budget] = process.argv.slice(2) as [string, string, string];
const driver = openPostgres(url, { max: 1, queryTimeoutMs: Number(budget) });
// the connection is open, with its session settings applied before this statement
await driver.all('SELECT 1');
driver
  .all(`/* ${marker} */ SELECT count(*) AS n FROM generate_series(1, 100000) AS a, generate_series(1, 100000) AS b`)
  .catch(() => undefined);
process.stdout.write('started\n');
setInterval(() => undefined, 1 << 30);
