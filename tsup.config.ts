import { defineConfig } from 'tsup';

// One bundle per public entry point; the subpaths keep database drivers and
// fastify out of the core's dependency tree.
export default defineConfig({
  entry: {
    index: 'src/index.ts',
    memory: 'src/backends/memory/index.ts',
    sql: 'src/backends/sql/index.ts',
    service: 'src/service/index.ts',
    'service-fastify': 'src/service/fastify.ts',
    'service-node': 'src/service/node-http.ts',
    'service-fetch': 'src/service/fetch.ts',
    'service-sqlite': 'src/service/sqlite.ts',
    'service-postgres': 'src/service/postgres.ts',
    'service-mysql': 'src/service/mysql.ts',
    // the testing kit: fast-check is its peer dependency, loaded only by this entry
    testing: 'src/testing/index.ts',
    // `odata-engine bench` as a library (it loads the testing kit, hence fast-check, and the drivers on demand)
    bench: 'src/server/filter-bench.ts',
    server: 'src/server/index.ts',
    cli: 'src/server/cli.ts',
    // the SQLite reader: started by file name (`new URL('./sqlite-worker.js', import.meta.url)` from the chunk that
    // holds sqlite-pool.ts, in dist/ beside it; tsup turns import.meta.url into the chunk's own URL in CommonJS)
    'sqlite-worker': 'src/service/sql/sqlite-worker.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
});
