// `$filter` parser benchmark: our Chevrotain parser against two peer parsers, side by side.
//
// 1. Verifies (outside timing) that every parser accepts every corpus input; our parser must accept
//    all of them, an input a peer rejects is dropped for all parsers with a note.
// 2. Parses per second for each corpus class.
// 3. Linearity: time per parse of or-chains of growing length.
// Results are printed and written as markdown to bench/results/parse.md.
import { pathToFileURL } from 'node:url';

import { Bench, type Task } from 'tinybench';

import { corpus, orChain, type CorpusClass } from './corpus.js';
import {
  describeMachine,
  errorText,
  formatInt,
  formatSig,
  markdownTable,
  meanLatencyMs,
  relativeMargin,
  writeResults,
} from './util.js';

// ── Parsers under test ──────────────────────────────────────────────────────

interface ParserUnderTest {
  readonly name: string;
  /** How the parser is called, for the markdown. */
  readonly entry: string;
  /** Parses one `$filter` value; throws on a syntax error. This is what gets timed. */
  readonly parse: (text: string) => unknown;
  /** Extra acceptance check outside timing (the peers must have consumed the whole input). */
  readonly accepts?: (result: unknown, text: string) => string | undefined;
}

/** Peers return a token covering the consumed input: anything short of the whole text is a rejection. */
function wholeInputToken(result: unknown, text: string): string | undefined {
  const token = result as { raw?: unknown; next?: unknown } | null | undefined;
  if (token === null || token === undefined) return 'returned no syntax tree';
  if (token.next !== text.length || token.raw !== text) {
    return `parsed only a prefix (up to position ${String(token.next)} of ${text.length})`;
  }
  return undefined;
}

interface LoadedParser extends ParserUnderTest {
  /** Time to import the parser's module (ours builds its Chevrotain grammar at import). */
  readonly loadMs: number;
}

async function timedImport<M>(load: () => Promise<M>): Promise<{ module: M; ms: number }> {
  const started = performance.now();
  const module = await load();
  return { module, ms: performance.now() - started };
}

/** Imports the three parsers (timed, since module load is part of a parser's cold start). */
async function loadParsers(): Promise<{ ours: LoadedParser; peers: LoadedParser[] }> {
  const oursModule = await timedImport(
    () => import('../dist/index.js' as string) as Promise<typeof import('../src/index.js')>,
  );
  const { parseFilter } = oursModule.module;
  const v4Module = await timedImport(() => import('odata-v4-parser'));
  const v4Filter = v4Module.module.filter;
  const odataModule = await timedImport(() => import('@odata/parser'));
  const odataParser = odataModule.module.defaultParser;
  return {
    ours: { name: 'ours', entry: 'parseFilter(text)', parse: (text) => parseFilter(text), loadMs: oursModule.ms },
    peers: [
      // `filter` here is the real parser entry (boolCommonExpr).
      {
        name: 'odata-v4-parser',
        entry: 'filter(text)',
        parse: (text) => v4Filter(text),
        accepts: wholeInputToken,
        loadMs: v4Module.ms,
      },
      // NB: @odata/parser's top-level `filter` export is its query *builder* (ODataFilter.New), not the
      // parser: it accepts any string and returns an ODataFilter object. The parser is `defaultParser.filter`.
      {
        name: '@odata/parser',
        entry: 'defaultParser.filter(text)',
        parse: (text) => odataParser.filter(text),
        accepts: wholeInputToken,
        loadMs: odataModule.ms,
      },
    ],
  };
}

let ours: LoadedParser;
let peers: readonly LoadedParser[];
let parsers: readonly LoadedParser[];

/** Keeps results observable so the parse calls cannot be optimised away. */
let sink: unknown;

// ── Verification ────────────────────────────────────────────────────────────

function tryParse(parser: ParserUnderTest, text: string): string | undefined {
  let result: unknown;
  try {
    result = parser.parse(text);
  } catch (error) {
    return errorText(error);
  }
  return parser.accepts?.(result, text);
}

function verifyCorpus(classes: readonly CorpusClass[]): { classes: CorpusClass[]; notes: string[] } {
  const ourFailures: string[] = [];
  for (const cls of classes) {
    for (const item of cls.items) {
      const problem = tryParse(ours, item);
      if (problem !== undefined) ourFailures.push(`  [${cls.name}] ${JSON.stringify(item)}\n    → ${problem}`);
    }
  }
  if (ourFailures.length > 0) {
    throw new Error(
      `Our parser (parseFilter) rejected ${ourFailures.length} corpus input(s); fix the parser or the corpus:\n${ourFailures.join('\n')}`,
    );
  }

  const notes: string[] = [];
  const kept: CorpusClass[] = [];
  for (const cls of classes) {
    const items: string[] = [];
    for (const item of cls.items) {
      const rejections = peers.flatMap((peer) => {
        const problem = tryParse(peer, item);
        return problem === undefined ? [] : [`${peer.name}: ${problem}`];
      });
      if (rejections.length === 0) items.push(item);
      else {
        notes.push(
          `Dropped from the corpus for all parsers: [${cls.name}] ${JSON.stringify(item)}, rejected by ${rejections.join('; ')}`,
        );
      }
    }
    if (items.length > 0) kept.push({ name: cls.name, items });
    else notes.push(`Class "${cls.name}" has no inputs left after dropping; left out of the table.`);
  }
  return { classes: kept, notes };
}

// ── Throughput per class ────────────────────────────────────────────────────

const classBenchOptions = { time: 750, warmupTime: 250, warmupIterations: 16, throws: true } as const;

interface ClassRow {
  readonly cls: CorpusClass;
  /** Parses per second, per parser name. */
  readonly opsPerSecond: ReadonlyMap<string, number>;
  readonly rme: ReadonlyMap<string, number>;
}

async function benchClasses(classes: readonly CorpusClass[]): Promise<ClassRow[]> {
  const bench = new Bench({ name: '$filter parse by class', ...classBenchOptions });
  const taskName = (cls: CorpusClass, parser: ParserUnderTest): string => `${cls.name} · ${parser.name}`;
  for (const cls of classes) {
    const items = cls.items;
    for (const parser of parsers) {
      const parse = parser.parse;
      bench.add(taskName(cls, parser), () => {
        for (let i = 0; i < items.length; i++) sink = parse(items[i]!);
      });
    }
  }
  await bench.run();
  return classes.map((cls) => {
    const opsPerSecond = new Map<string, number>();
    const rme = new Map<string, number>();
    for (const parser of parsers) {
      const task = bench.getTask(taskName(cls, parser));
      if (task === undefined) throw new Error(`missing task ${taskName(cls, parser)}`);
      // One iteration parses every item of the class once.
      opsPerSecond.set(parser.name, (cls.items.length * 1000) / meanLatencyMs(task));
      rme.set(parser.name, relativeMargin(task));
    }
    return { cls, opsPerSecond, rme };
  });
}

function classTable(rows: readonly ClassRow[]): string {
  const header = ['class', 'inputs', ...parsers.map((p) => `${p.name} ops/s`), 'ours ÷ faster peer'];
  const body = rows.map(({ cls, opsPerSecond, rme }) => {
    const cell = (name: string): string =>
      `${formatInt(opsPerSecond.get(name)!)} ±${(rme.get(name) ?? Number.NaN).toFixed(1)}%`;
    const fasterPeer = Math.max(...peers.map((p) => opsPerSecond.get(p.name)!));
    const ratio = opsPerSecond.get(ours.name)! / fasterPeer;
    return [cls.name, String(cls.items.length), ...parsers.map((p) => cell(p.name)), `${ratio.toFixed(2)}×`];
  });
  return markdownTable(header, body);
}

// ── Linearity ───────────────────────────────────────────────────────────────

export const linearitySizes = [50, 200, 800, 3200] as const;
/** A parser whose probe + measurement for one size takes longer than this is not run on larger sizes. */
const sizeBudgetMs = 2000;
const linearityBenchOptions = {
  time: 500,
  iterations: 3,
  warmupTime: 100,
  warmupIterations: 2,
  throws: true,
} as const;

type LinearityCell =
  | { readonly kind: 'measured'; readonly usPerParse: number; readonly singleShot: boolean }
  | { readonly kind: 'failed' }
  | { readonly kind: 'skipped' };

async function benchLinearity(notes: string[]): Promise<Map<number, Map<string, LinearityCell>>> {
  const table = new Map<number, Map<string, LinearityCell>>();
  const skipped = new Set<string>();
  for (const terms of linearitySizes) {
    const text = orChain(terms);
    const row = new Map<string, LinearityCell>();
    table.set(terms, row);
    for (const parser of parsers) {
      if (skipped.has(parser.name)) {
        row.set(parser.name, { kind: 'skipped' });
        continue;
      }
      // Probe once, outside the measurement: checks acceptance and how long one parse takes.
      const started = performance.now();
      const problem = tryParse(parser, text);
      const probeMs = performance.now() - started;
      if (problem !== undefined) {
        row.set(parser.name, { kind: 'failed' });
        skipped.add(parser.name);
        notes.push(`${parser.name} fails on the ${terms}-term or chain (${problem}); larger sizes skipped.`);
        continue;
      }
      if (probeMs > sizeBudgetMs) {
        row.set(parser.name, { kind: 'measured', usPerParse: probeMs * 1000, singleShot: true });
        skipped.add(parser.name);
        notes.push(
          `${parser.name}: one parse of the ${terms}-term or chain took ${(probeMs / 1000).toFixed(1)} s (single run, not benchmarked); larger sizes skipped.`,
        );
        continue;
      }
      const bench = new Bench({ name: `or chain ${terms} · ${parser.name}`, ...linearityBenchOptions });
      const parse = parser.parse;
      bench.add(parser.name, () => {
        sink = parse(text);
      });
      await bench.run();
      const totalMs = performance.now() - started;
      const task = bench.getTask(parser.name)!;
      row.set(parser.name, { kind: 'measured', usPerParse: meanLatencyMs(task) * 1000, singleShot: false });
      if (totalMs > sizeBudgetMs && terms !== linearitySizes[linearitySizes.length - 1]) {
        skipped.add(parser.name);
        notes.push(
          `${parser.name} took ${(totalMs / 1000).toFixed(1)} s in total for the ${terms}-term or chain; larger sizes skipped.`,
        );
      }
    }
  }
  return table;
}

function linearityTable(table: ReadonlyMap<number, ReadonlyMap<string, LinearityCell>>): string {
  const header = ['terms', ...parsers.flatMap((p) => [`${p.name} µs/parse`, `${p.name} µs/term`])];
  const body = [...table].map(([terms, row]) => [
    String(terms),
    ...parsers.flatMap((p) => {
      const cell = row.get(p.name);
      if (cell === undefined || cell.kind === 'skipped') return ['skipped', '–'];
      if (cell.kind === 'failed') return ['fails', '–'];
      const mark = cell.singleShot ? ' (1 run)' : '';
      return [`${formatSig(cell.usPerParse)}${mark}`, formatSig(cell.usPerParse / terms)];
    }),
  ]);
  return markdownTable(header, body);
}

// ── Entry point ─────────────────────────────────────────────────────────────

export async function run(): Promise<void> {
  const startedAt = performance.now();
  const loaded = await loadParsers();
  ours = loaded.ours;
  peers = loaded.peers;
  parsers = [ours, ...peers];

  // Cold start, before anything else runs through the parsers: module import and the very first parse.
  const firstInput = corpus[0]?.items[0] ?? 'IsActive eq true';
  const coldRows = parsers.map((parser) => {
    const started = performance.now();
    const problem = tryParse(parser, firstInput);
    const firstParseMs = performance.now() - started;
    return [
      parser.name,
      formatInt(parser.loadMs),
      problem === undefined ? formatSig(firstParseMs) : `fails: ${problem}`,
    ];
  });
  const coldMd = markdownTable(['parser', 'module import ms', 'first parse ms'], coldRows);
  console.log(`Cold start (first parse of ${JSON.stringify(firstInput)}):\n\n${coldMd}\n`);

  const verified = verifyCorpus(corpus);
  const notes = [...verified.notes];
  for (const note of verified.notes) console.log(`note: ${note}`);
  const inputCount = verified.classes.reduce((n, c) => n + c.items.length, 0);
  console.log(
    `Corpus: ${inputCount} inputs in ${verified.classes.length} classes, accepted by all ${parsers.length} parsers.`,
  );

  console.log('\nParses per second by class (higher is better) …');
  const classRows = await benchClasses(verified.classes);
  const classMd = classTable(classRows);
  console.log(`\n${classMd}\n`);

  console.log(`Linearity: or chains of ${linearitySizes.join(', ')} terms …`);
  const linearityNotes: string[] = [];
  const linearity = await benchLinearity(linearityNotes);
  const linearityMd = linearityTable(linearity);
  console.log(`\n${linearityMd}\n`);
  for (const note of linearityNotes) console.log(`note: ${note}`);
  notes.push(...linearityNotes);

  const seconds = (performance.now() - startedAt) / 1000;
  console.log(`\nparse.bench.ts finished in ${seconds.toFixed(1)} s`);

  const markdown = [
    '# `$filter` parser benchmark',
    '',
    `Generated by \`npm run bench\` (bench/parse.bench.ts) on ${new Date().toISOString().slice(0, 10)}.`,
    '',
    `Machine: ${describeMachine()}`,
    '',
    `Parsers: ${parsers.map((p) => `${p.name} (\`${p.entry}\`)`).join(', ')}. ` +
      `Inputs are already percent-decoded; every parser parses the same ${inputCount} inputs ` +
      '(bench/corpus.ts).',
    '',
    '## Parses per second by class',
    '',
    `tinybench, ${classBenchOptions.time} ms per task after ${classBenchOptions.warmupTime} ms warmup; ` +
      'ops/s = inputs in the class ÷ mean time to parse them all once; ± is the relative margin of error. ' +
      'The last column is ours ÷ the faster of the two peers: above 1× ours is faster.',
    '',
    classMd,
    '',
    '## Linearity (or chains)',
    '',
    "`Status eq 'S0' or Status eq 'S1' or …`; mean time per parse and per term. " +
      `A parser that needs more than ${sizeBudgetMs / 1000} s for one size is not run on larger sizes.`,
    '',
    linearityMd,
    '',
    '## Cold start',
    '',
    `Module import time and the first parse of ${JSON.stringify(firstInput)} in a fresh process.`,
    '',
    coldMd,
    '',
    ...(notes.length > 0 ? ['## Notes', '', ...notes.map((n) => `- ${n}`), ''] : []),
  ].join('\n');
  await writeResults('parse', markdown);
  void sink;
}

// Allow `node --import tsx bench/parse.bench.ts` as well as running through bench/index.ts.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await run();
}
