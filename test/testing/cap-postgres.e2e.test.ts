// The kit against SAP CAP on PostgreSQL (cap-suite.ts), in a schema of its own on the server; outside CI, skipped
// when the server is unreachable (PGlite cannot serve CAP's driver).
import { describe } from 'vitest';
import { capSuite, postgresReachable } from './cap-suite.js';

const reachable = await postgresReachable();
describe.skipIf(!reachable)(
  reachable ? 'on the PostgreSQL server' : 'skipped: the PostgreSQL server on 127.0.0.1:5432 is unreachable',
  () => capSuite('postgres'),
);
