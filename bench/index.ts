// Runs the benchmark files in sequence: `npm run bench`, or `npm run bench -- parse` for a subset.
import { describeMachine } from './util.js';

interface BenchFile {
  readonly name: string;
  readonly load: () => Promise<{ run: () => Promise<void> }>;
}

/** Benchmark files, run in this order. Add new ones here (for example validate.bench.ts). */
const benchFiles: readonly BenchFile[] = [
  { name: 'parse', load: () => import('./parse.bench.js') },
  { name: 'validate', load: () => import('./validate.bench.js') },
  { name: 'memory', load: () => import('./memory.bench.js') },
  { name: 'sql', load: () => import('./sql.bench.js') },
  { name: 'body', load: () => import('./body.bench.js') },
  { name: 'regex', load: () => import('./regex.bench.js') },
  { name: 'http', load: () => import('./http.bench.js') },
  { name: 'expand', load: () => import('./expand.bench.js') },
  { name: 'load', load: () => import('./load.bench.js') },
  { name: 'paging', load: () => import('./paging.bench.js') },
  { name: 'apply', load: () => import('./apply.bench.js') },
];

const wanted = process.argv.slice(2);
const selected = wanted.length === 0 ? benchFiles : benchFiles.filter((b) => wanted.includes(b.name));
if (selected.length === 0) {
  console.error(`No benchmark named ${wanted.join(', ')}; known: ${benchFiles.map((b) => b.name).join(', ')}`);
  process.exit(1);
}

console.log(`Machine: ${describeMachine()}`);

for (const file of selected) {
  console.log(`\n══ ${file.name}.bench.ts ══\n`);
  const module = await file.load();
  await module.run();
}
