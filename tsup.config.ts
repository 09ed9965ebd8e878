import { defineConfig } from 'tsup';

// One bundle per public entry point; the subpaths keep database drivers and
// fastify out of the core's dependency tree.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    memory: 'src/backends/memory/index.ts',
    sql: 'src/backends/sql/index.ts',
    server: 'src/server/index.ts',
    cli: 'src/server/cli.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
});
