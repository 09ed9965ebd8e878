// $apply benchmark (OData Data Aggregation): grouped sums and counts over every purchase-order line, side by side over
// HTTP with the same answer written by hand (a bare Fastify route: one GROUP BY statement on better-sqlite3, the JSON
// written by hand) and with SAP CAP (@sap/cds with @cap-js/sqlite, bench/cap/bench.cds) on the same rows.
//
// 1. One site (`loadDemoSite` for the site and its key, then its purchase orders replaced by APPLY_BENCH_ORDERS
//    generated orders of 10 lines each, 1,000,000 lines by default: `generate` of the $expand benchmark, the lines'
//    Account spread over 40 accounts so that there is something to group by) in a data directory of its own, as the
//    reference server keeps it, inserted in transactions of LOAD_CHUNK rows, timed.
// 2. Three servers, each in a process of its own (bench/apply/server.ts), on 127.0.0.1: ours (API_KEY header,
//    pageSize 1000: every grouped answer is one page), bare (no authentication) and CAP (no authentication, its own
//    SQLite file with the same rows, generated in its process and inserted through CAP, timed).
// 3. Three shapes: `groupby((Status,Account),aggregate(ExtendedPrice with sum as Spend,$count as Lines))` over every
//    line (120 groups), the same after `filter(DueDate ge 2025-09-01)` (about 15% of the lines; WHERE in the bare
//    route), and `aggregate(ExtendedPrice with sum as Spend,ExtendedPrice with average as Average,$count as Lines)`
//    (one row; the average exact at 20 places: SUM and COUNT, then BigInt division rounded half away from zero).
// 4. Before timing, every server is asked every shape: ours and the bare route must answer the same groups with the
//    same values, digit for digit (else the run stops); CAP's differences (inexact binary sums, other forms) are
//    reported.
// 5. autocannon in this process, per shape: APPLY_BENCH_CONNECTIONS connections (default 2: every request scans
//    every line), APPLY_BENCH_SECONDS per run (default 10) after a warm-up of APPLY_BENCH_WARMUP_SECONDS (default 3),
//    APPLY_BENCH_ROUNDS rounds (default 3) with the servers' order rotating. Per run: req/s, p50 and p99 latency, and
//    the server's CPU time per request (process.cpuUsage() of its process, every thread, read over IPC). Then one
//    request at a time: the median latency of APPLY_BENCH_SINGLE requests (default 20).
// Results are printed and written as markdown to bench/results/apply.md. For a quick check:
// `APPLY_BENCH_ORDERS=2000 APPLY_BENCH_SECONDS=2 APPLY_BENCH_ROUNDS=1 npm run bench -- apply`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import type { ApplyServerConfig } from './apply/server.js';
import { generate } from './expand.bench.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { describeMachine, formatInt, formatSig, markdownTable, positiveNumber, writeResults } from './util.js';

type ServerModule = typeof import('../src/server/index.js');
type ServiceModule = typeof import('../src/service/index.js');
type Row = Record<string, unknown>;
type Kind = 'ours' | 'bare' | 'cap';

const SITE = 'bench';
const LINES_PER_ORDER = 10;
const ORDERS = Math.round(positiveNumber('APPLY_BENCH_ORDERS', 100_000));
const SECONDS = positiveNumber('APPLY_BENCH_SECONDS', 10);
const ROUNDS = Math.round(positiveNumber('APPLY_BENCH_ROUNDS', 3));
const CONNECTIONS = Math.round(positiveNumber('APPLY_BENCH_CONNECTIONS', 2));
const SINGLE = Math.round(positiveNumber('APPLY_BENCH_SINGLE', 20));
const WARMUP_SECONDS = positiveNumber('APPLY_BENCH_WARMUP_SECONDS', 3);
/** Rows per transaction while loading the site. */
const LOAD_CHUNK = 100_000;
/** Accounts the lines are spread over (the generator gives every line the same one). */
const ACCOUNTS = 40;
const KINDS: readonly Kind[] = ['ours', 'bare', 'cap'];
const NAMES: Record<Kind, string> = { ours: 'ours', bare: 'hand-written SQL', cap: 'CAP' };
const SERVER_SCRIPT = fileURLToPath(new URL('./apply/server.ts', import.meta.url));

// ── Data and shapes ─────────────────────────────────────────────────────────

export type ShapeId = 'grouped' | 'filtered' | 'total';

/** The leading filter of the second shape: about 15% of the lines are due on or after it. */
export const FILTER_DATE = '2025-09-01';

interface Shape {
  readonly id: ShapeId;
  readonly title: string;
  readonly apply: string;
}

const GROUPED = 'groupby((Status,Account),aggregate(ExtendedPrice with sum as Spend,$count as Lines))';
const SHAPES: readonly Shape[] = [
  { id: 'grouped', title: 'groupby Status, Account: sum, count', apply: GROUPED },
  {
    id: 'filtered',
    title: `filter(DueDate ge ${FILTER_DATE}), then the same`,
    apply: `filter(DueDate ge ${FILTER_DATE})/${GROUPED}`,
  },
  {
    id: 'total',
    title: 'aggregate: sum, average, count',
    apply: 'aggregate(ExtendedPrice with sum as Spend,ExtendedPrice with average as Average,$count as Lines)',
  },
];

/**
 * The $expand benchmark's orders and lines (`generate`), each line's Account one of ACCOUNTS (`5100-200` …
 * `5490-200`), spread over statuses and orders alike. Deterministic: the CAP server makes the same rows in its process.
 */
export function applyLines(orders: number): { orders: Row[]; lines: Row[] } {
  const data = generate(orders);
  data.lines.forEach((line, i) => {
    const order = Math.floor(i / LINES_PER_ORDER);
    line['Account'] = `${5100 + ((order * 7 + (i % LINES_PER_ORDER) * 3) % ACCOUNTS) * 10}-200`;
  });
  return data;
}

// ── Servers ─────────────────────────────────────────────────────────────────

type Child = ServerProcess<Kind>;

const startChild = (config: ApplyServerConfig): Promise<Child> =>
  startServerProcess(SERVER_SCRIPT, 'APPLY_BENCH_SERVER', config);

// ── Requests and answers ────────────────────────────────────────────────────

function pathOf(kind: Kind, shape: Shape): string {
  if (kind === 'bare') return `/bare/apply/${shape.id}`;
  const query = `POLineItems?%24apply=${encodeURIComponent(shape.apply)}`;
  if (kind === 'cap') return `/odata/v4/bench/${query}`;
  return `/${SITE}/ODataApi/v1/${query}`;
}

/** A JSON number's text in canonical form: no trailing zeros after the point, no lone point, no minus zero. */
function numberText(text: string): string {
  if (/[eE]/.test(text)) return `${text} (exponent)`;
  let out = text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
  out = out.replace(/^(-?)0+(?=\d)/, '$1');
  return out === '-0' ? '0' : out;
}

/**
 * The groups of an answer, each as a map of its members (annotations left out) to comparable text: numbers as their
 * exact canonical digits (the JSON text, not a double), strings quoted (a decimal sent as a string stays apart).
 */
function groupsOf(text: string): Map<string, string>[] {
  // every number outside a string turned into a marked string first, so that JSON.parse keeps its digits
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (m) =>
    m.startsWith('"') ? m : `"\\u0000${m}"`,
  );
  const body = JSON.parse(marked) as { value?: Row[] };
  if (!Array.isArray(body.value)) throw new Error(`no value array in ${text.slice(0, 300)}`);
  return body.value.map((group) => {
    const members = new Map<string, string>();
    for (const [k, v] of Object.entries(group).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (k.includes('@')) continue;
      members.set(k, typeof v === 'string' && v.startsWith('\u0000') ? numberText(v.slice(1)) : JSON.stringify(v));
    }
    return members;
  });
}

const groupText = (group: ReadonlyMap<string, string>): string =>
  `{${[...group].map(([k, v]) => `${k}:${v}`).join(',')}}`;

interface Answer {
  readonly groups: Map<string, string>[];
  readonly bytes: number;
  readonly nextLink: boolean;
}

async function ask(child: Child, shape: Shape, key: string): Promise<Answer> {
  const response = await fetch(`${child.origin}${pathOf(child.kind, shape)}`, { headers: { API_KEY: key } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${child.kind}, ${shape.id}: ${response.status} ${text.slice(0, 500)}`);
  return { groups: groupsOf(text), bytes: Buffer.byteLength(text), nextLink: text.includes('@odata.nextLink') };
}

/** How CAP's answer differs from the hand-written one: lines to report (none when it is the same). */
function capDifferences(cap: Answer, bare: Answer): string[] {
  const notes: string[] = [];
  if (cap.groups.length !== bare.groups.length)
    notes.push(`${cap.groups.length} groups, the hand-written route ${bare.groups.length}`);
  const key = (g: ReadonlyMap<string, string>): string =>
    [...g].filter(([k]) => k === 'Status' || k === 'Account').join('|');
  const bareByKey = new Map(bare.groups.map((g) => [key(g), g]));
  if (cap.groups.map(key).join('\n') !== bare.groups.map(key).join('\n') && cap.groups.length === bare.groups.length)
    notes.push('the groups in another order');
  const members = new Map<string, { differ: number; example: string }>();
  for (const group of cap.groups) {
    const other = bareByKey.get(key(group));
    if (other === undefined) {
      notes.push(`a group the hand-written route does not have: ${groupText(group)}`);
      continue;
    }
    for (const name of new Set([...group.keys(), ...other.keys()])) {
      const a = group.get(name);
      const b = other.get(name);
      if (a === b) continue;
      const seen = members.get(name) ?? {
        differ: 0,
        example: `${a ?? '(missing)'} where exact is ${b ?? '(missing)'}`,
      };
      seen.differ++;
      members.set(name, seen);
    }
  }
  for (const [name, { differ, example }] of members)
    notes.push(`${name} differs in ${differ} of ${cap.groups.length} groups, e.g. ${example}`);
  return notes;
}

// ── Timing ──────────────────────────────────────────────────────────────────

interface Run {
  readonly kind: Kind;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuUs: number;
  readonly errors: number;
}

async function timed(child: Child, shape: Shape, key: string, seconds: number): Promise<Run> {
  const before = await child.cpu();
  const result = await autocannon({
    url: `${child.origin}${pathOf(child.kind, shape)}`,
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 60,
    headers: { API_KEY: key },
  });
  const after = await child.cpu();
  const requests = after.finished - before.finished;
  return {
    kind: child.kind,
    requests,
    // answers over the run's seconds: at a few requests a second, autocannon's mean of per-second counts is coarse
    perSecond: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: requests === 0 ? NaN : (after.cpuUs - before.cpuUs) / requests,
    errors: result.errors + result.non2xx,
  };
}

async function oneAtATime(child: Child, shape: Shape, key: string): Promise<number> {
  const times: number[] = [];
  for (let n = 0; n < SINGLE; n++) {
    const started = performance.now();
    const response = await fetch(`${child.origin}${pathOf(child.kind, shape)}`, { headers: { API_KEY: key } });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${child.kind}, ${shape.id}: ${response.status} one at a time`);
    times.push(performance.now() - started);
  }
  return median(times);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function range(values: readonly number[], format: (n: number) => string): string {
  if (values.length === 1) return format(values[0]!);
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

/** The command that reproduces this run: the knobs set in the environment, then the npm script. */
function command(): string {
  const knobs = [
    'APPLY_BENCH_ORDERS',
    'APPLY_BENCH_SECONDS',
    'APPLY_BENCH_ROUNDS',
    'APPLY_BENCH_CONNECTIONS',
    'APPLY_BENCH_SINGLE',
    'APPLY_BENCH_WARMUP_SECONDS',
  ]
    .filter((name) => (process.env[name] ?? '') !== '')
    .map((name) => `${name}=${process.env[name]!} `);
  return `${knobs.join('')}npm run bench -- apply`;
}

// ── Main ────────────────────────────────────────────────────────────────────

interface ShapeResult {
  readonly shape: Shape;
  readonly runs: Run[][];
  readonly single: Record<Kind, number>;
  readonly bytes: Record<Kind, number>;
  readonly groups: number;
}

export async function run(): Promise<void> {
  const startedAt = performance.now();
  const server = (await import('../dist/server.js' as string)) as ServerModule;
  const service = (await import('../dist/service.js' as string)) as ServiceModule;
  const dir = mkdtempSync(join(tmpdir(), 'odata-apply-bench-'));
  const children: Child[] = [];
  try {
    const backend = await server.openSqliteBackend(dir);
    const { key } = await server.loadDemoSite(backend, SITE, { rows: 500 });
    const store = await backend.store(SITE);
    const generateStarted = performance.now();
    let data: { orders: Row[]; lines: Row[] } | undefined = applyLines(ORDERS);
    const generateMs = performance.now() - generateStarted;
    const lineCount = data.lines.length;
    const orderCount = data.orders.length;
    const collections = service.collectionsOf(server.plantDataModel);
    for (const table of ['POAttachments', 'POLineItems', 'PurchaseOrders'])
      await store.driver.run(`DELETE FROM "${table}"`);
    const loadStarted = performance.now();
    for (const [name, rows] of [
      ['PurchaseOrders', data.orders],
      ['POLineItems', data.lines],
    ] as const) {
      const c = collections.get(name)!;
      const size = store.batchRows(c);
      for (let from = 0; from < rows.length; from += LOAD_CHUNK) {
        await store.transaction(async (tx) => {
          const to = Math.min(rows.length, from + LOAD_CHUNK);
          for (let i = from; i < to; i += size) await tx.insertMany(c, rows.slice(i, Math.min(to, i + size)));
        });
      }
    }
    const insertMs = performance.now() - loadStarted;
    await store.driver.run('ANALYZE');
    const loadMs = performance.now() - loadStarted;
    data = undefined;
    console.log(
      `SQLite: ${formatInt(orderCount)} orders, ${formatInt(lineCount)} lines generated in ${formatInt(generateMs)} ms, inserted in ${formatInt(insertMs)} ms (transactions of ${formatInt(LOAD_CHUNK)} rows), ${formatInt(loadMs)} ms with ANALYZE`,
    );
    await backend.close();
    const file = join(dir, 'sites', `${SITE}.db`);
    children.push(await startChild({ kind: 'ours', dataDir: dir }));
    children.push(await startChild({ kind: 'bare', file }));
    const capStarted = performance.now();
    children.push(await startChild({ kind: 'cap', file: join(dir, 'cap.db'), orders: ORDERS }));
    const capStartMs = performance.now() - capStarted;
    for (const c of children) console.log(`  ${NAMES[c.kind]} started (${c.label}) at ${c.origin}`);
    console.log(`  CAP's process ready in ${formatInt(capStartMs)} ms (generating and inserting its rows)`);

    // the same answers first
    const capNotes = new Map<ShapeId, string[]>();
    const answered = new Map<ShapeId, { bytes: Record<Kind, number>; groups: number }>();
    for (const shape of SHAPES) {
      const [ours, bare, cap] = (await Promise.all(children.map((c) => ask(c, shape, key)))) as [
        Answer,
        Answer,
        Answer,
      ];
      if (ours.nextLink) throw new Error(`${shape.id}: ours answered a next link; the groups should fit one page`);
      const oursText = ours.groups.map(groupText);
      const bareText = bare.groups.map(groupText);
      if (oursText.length !== bareText.length || oursText.some((g, i) => g !== bareText[i])) {
        const at = oursText.findIndex((g, i) => g !== bareText[i]);
        throw new Error(
          `${shape.id}: ours and the bare route differ (${oursText.length} and ${bareText.length} groups; first difference at ${at})\n` +
            `  ours: ${oursText[at] ?? '(none)'}\n  bare: ${bareText[at] ?? '(none)'}`,
        );
      }
      if (shape.id !== 'total' && (ours.groups.length < 2 || ours.groups.length > 200))
        throw new Error(`${shape.id}: ${ours.groups.length} groups; expected tens to about a hundred`);
      const notes = capDifferences(cap, bare);
      capNotes.set(shape.id, notes);
      answered.set(shape.id, {
        bytes: { ours: ours.bytes, bare: bare.bytes, cap: cap.bytes },
        groups: ours.groups.length,
      });
      console.log(
        `  ${shape.id}: ours and the hand-written route answer the same ${ours.groups.length} group(s), e.g. ${oursText[0]}`,
      );
      console.log(notes.length === 0 ? '    CAP: the same' : `    CAP differs: ${notes.join('; ')}`);
    }

    const results: ShapeResult[] = [];
    for (const shape of SHAPES) {
      console.log(`  ${shape.id} (${shape.apply}): warm-up ${WARMUP_SECONDS} s each …`);
      for (const c of children) await timed(c, shape, key, WARMUP_SECONDS);
      const runs: Run[][] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const order = [...children.slice(round % 3), ...children.slice(0, round % 3)];
        const roundRuns: Run[] = [];
        for (const c of order) {
          const r = await timed(c, shape, key, SECONDS);
          roundRuns.push(r);
          console.log(
            `    round ${round + 1} ${NAMES[c.kind].padEnd(16)} ${formatSig(r.perSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${formatSig(r.cpuUs / 1000)} ms CPU/request (${r.requests} requests)${r.errors > 0 ? `, ${r.errors} errors` : ''}`,
          );
        }
        runs.push(roundRuns);
      }
      const single: Record<Kind, number> = { ours: 0, bare: 0, cap: 0 };
      for (const c of children) single[c.kind] = await oneAtATime(c, shape, key);
      console.log(
        `    one at a time (median of ${SINGLE}): ${KINDS.map((k) => `${NAMES[k]} ${single[k].toFixed(1)} ms`).join(', ')}`,
      );
      const { bytes, groups } = answered.get(shape.id)!;
      results.push({ shape, runs, single, bytes, groups });
    }

    const x = (n: number): string => `${n.toFixed(2)}×`;
    const ms = (us: number): string => formatSig(us / 1000);
    const of = (r: ShapeResult, kind: Kind, pick: (run: Run) => number): number[] =>
      r.runs.map((round) => pick(round.find((run) => run.kind === kind)!));
    const ratio = (r: ShapeResult, other: Kind, pick: (run: Run) => number): number[] =>
      r.runs.map(
        (round) => pick(round.find((run) => run.kind === 'ours')!) / pick(round.find((run) => run.kind === other)!),
      );
    const table = markdownTable(
      ['shape', 'server', 'req/s', 'p50 ms', 'p99 ms', 'CPU ms/request', 'one at a time, ms', 'body bytes'],
      results.flatMap((r) =>
        KINDS.map((k) => [
          k === 'ours' ? `${r.shape.id} (${r.groups} group${r.groups === 1 ? '' : 's'})` : '',
          NAMES[k],
          range(
            of(r, k, (run) => run.perSecond),
            formatSig,
          ),
          range(
            of(r, k, (run) => run.p50),
            formatSig,
          ),
          range(
            of(r, k, (run) => run.p99),
            formatSig,
          ),
          range(
            of(r, k, (run) => run.cpuUs),
            ms,
          ),
          r.single[k].toFixed(1),
          formatInt(r.bytes[k]),
        ]),
      ),
      ['left', 'left', 'right', 'right', 'right', 'right', 'right', 'right'],
    );
    const against = (r: ShapeResult, other: 'bare' | 'cap'): string[] => [
      other === 'bare' ? r.shape.id : '',
      NAMES[other],
      x(r.single.ours / r.single[other]),
      range(
        ratio(r, other, (run) => run.p50),
        x,
      ),
      range(
        ratio(r, other, (run) => run.cpuUs),
        x,
      ),
      range(
        ratio(r, other, (run) => run.perSecond),
        x,
      ),
      other === 'bare'
        ? r.single.ours / r.single.bare <= 1.2
          ? 'within 1.2×: met'
          : 'within 1.2×: missed'
        : r.single.ours < r.single.cap
          ? 'faster: met'
          : 'faster: missed',
    ];
    const ratios = markdownTable(
      [
        'shape',
        'ours against',
        'one-at-a-time latency ratio',
        'p50 ratio',
        'CPU per request ratio',
        'req/s ratio',
        'goal (latency)',
      ],
      results.flatMap((r) => [against(r, 'bare'), against(r, 'cap')]),
      ['left', 'left', 'right', 'right', 'right', 'right', 'left'],
    );
    const capLines = SHAPES.map((shape) => {
      const notes = capNotes.get(shape.id)!;
      return `- ${shape.id}: ${notes.length === 0 ? 'the same values as the hand-written route' : notes.join('; ')}.`;
    });
    const totalS = (performance.now() - startedAt) / 1000;
    const md = [
      `# $apply: grouped sums and counts over ${lineCount === 1_000_000 ? 'a million' : formatInt(lineCount)} purchase-order lines`,
      '',
      `Run of ${new Date().toISOString().slice(0, 10)} (\`${command()}\`, ${Math.round(totalS)} s in all).`,
      `Machine: ${describeMachine()}.`,
      '',
      `${formatInt(lineCount)} POLineItems (${formatInt(orderCount)} orders × ${LINES_PER_ORDER} lines, the $expand benchmark's \`generate\`, each line's`,
      `Account one of ${ACCOUNTS}) in one site's SQLite file, generated in ${formatInt(generateMs)} ms and inserted by the store in ${formatInt(insertMs)} ms`,
      `(transactions of ${formatInt(LOAD_CHUNK)} rows; ${formatInt(loadMs)} ms with ANALYZE). Every request reads every line. Shapes (\`GET POLineItems?$apply=…\`):`,
      '',
      ...SHAPES.map((s) => `- **${s.id}**: \`${s.apply}\``),
      '',
      '**ours**: the reference server (`createServer` + `createPlantService`, API_KEY header, `pageSize: 1000`; the',
      'filter and the grouping pushed into one GROUP BY statement, run on a reader thread). **hand-written SQL**: a bare',
      'Fastify route with the same GROUP BY (and ORDER BY) prepared once on better-sqlite3 on the same file, sums read',
      'as bigints and written as exact decimal text into JSON built by hand, the average as SUM ÷ COUNT in BigInt',
      'arithmetic rounded half away from zero at 20 places, no authentication. **CAP**: ' +
        `${children.find((c) => c.kind === 'cap')?.label ?? 'CAP'}, serving \`bench/cap/bench.cds\` from a SQLite file`,
      'of its own with the same rows, no authentication. Each server in a process of its own; autocannon in the parent,',
      `${CONNECTIONS} connections, ${SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up, ${ROUNDS} round(s) with the servers' order rotating.`,
      'Ours and the hand-written route were checked to answer the same groups with the same values, digit for digit,',
      'first. What CAP answers:',
      '',
      ...capLines,
      '',
      "Each cell: the median of the rounds and (min–max). CPU ms/request: the server process's CPU time (every",
      `thread) over the run ÷ the requests it finished. One at a time: the median latency of ${SINGLE} sequential requests.`,
      '',
      table,
      '',
      'Ratios are ours ÷ the other (below 1× is better for latency and CPU, above 1× for req/s).',
      '',
      ratios,
      '',
    ].join('\n');
    console.log(`\n${table}\n\n${ratios}\n\n${capLines.join('\n')}`);
    await writeResults('apply', md);
  } finally {
    for (const c of children) c.process.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const c of children) c.process.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
