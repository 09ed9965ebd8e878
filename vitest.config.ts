import { defineConfig } from 'vitest/config';

/**
 * Files whose assertions bound a time (a read budget, a deadline, a statement cut off, a drain, a rate window, a
 * process killed mid-write): project `timed`, run after the rest. `npm test` runs it one file at a time
 * (`--no-file-parallelism`: this vitest takes the worker count for a whole run, not per project), so that no other
 * file's load moves their clocks.
 */
const TIMED = [
  'test/server/crash.test.ts',
  'test/server/read-budget.test.ts',
  'test/server/read-budget-build.test.ts',
  'test/server/read-deadline.test.ts',
  'test/server/client-gone.test.ts',
  'test/server/shutdown.test.ts',
  'test/server/security.test.ts',
  'test/server/budget.property.test.ts',
  'test/backends/sql/deadline.test.ts',
  'test/backends/sql/limits.test.ts',
];

const shared = { testTimeout: 60_000 };

export default defineConfig({
  test: {
    // Property tests print their seed on failure; keep the report readable.
    reporters: ['default'],
    // the machine this runs on has two cores: one file per core
    maxWorkers: 2,
    projects: [
      {
        // Every other file: independent (each opens its own SQLite files, PostgreSQL schemas and MariaDB databases,
        // named by process), so they share the machine's cores.
        test: {
          ...shared,
          name: 'parallel',
          include: ['test/**/*.test.ts'],
          exclude: TIMED,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...shared,
          name: 'timed',
          include: TIMED,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
