import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    // Property tests print their seed on failure; keep the report readable.
    reporters: ['default'],
  },
});
