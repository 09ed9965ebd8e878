// $expand benchmark: a page of 100 purchase orders with their lines (`PurchaseOrders?$orderby=PONumber&$top=100&
// $skip=N&$expand=Lines`) from 10,000 orders and 100,000 lines in SQLite, side by side over HTTP with the same answer
// written by hand (a bare Fastify route: the page, then its lines in one statement, nested in JavaScript) and with
// SAP CAP (@sap/cds with @cap-js/sqlite, bench/cap/expand.cds) on the same rows.
//
// 1. One site (`loadDemoSite` for the site and its key, then its purchase orders replaced by EXPAND_BENCH_ORDERS
//    generated orders of 10 lines each) in a data directory of its own, as the reference server keeps it.
// 2. Three servers, each in a process of its own (bench/expand/server.ts), on 127.0.0.1: ours (API_KEY header,
//    pageSize 100), bare (no authentication) and CAP (no authentication, its own SQLite file with the same rows).
// 3. Before timing, every server is asked the same pages and must answer the same orders and lines (ours against the
//    bare route: else the run stops; CAP's differences are reported).
// 4. autocannon in this process: EXPAND_BENCH_CONNECTIONS connections (default 8), EXPAND_BENCH_SECONDS per run
//    (default 10) after a warm-up, EXPAND_BENCH_ROUNDS rounds (default 3) with the servers' order rotating; every
//    request a different page (skip 0, 100, ... in a scrambled order). Per run: req/s, p50 and p99 latency, and the
//    server's CPU time per request (process.cpuUsage() of its process, read over IPC). Then one request at a time:
//    the median latency of EXPAND_BENCH_SINGLE requests (default 300).
// Results are printed and written as markdown to bench/results/expand.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import autocannon from 'autocannon';

import type { ExpandServerConfig } from './expand/server.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { describeMachine, formatInt, formatSig, markdownTable, positiveNumber, writeResults } from './util.js';

type ServerModule = typeof import('../src/server/index.js');
type ServiceModule = typeof import('../src/service/index.js');
type Row = Record<string, unknown>;
type Kind = 'ours' | 'bare' | 'cap';

const SITE = 'bench';
const PAGE = 100;
const LINES_PER_ORDER = 10;
const ORDERS = positiveNumber('EXPAND_BENCH_ORDERS', 10_000);
const SECONDS = positiveNumber('EXPAND_BENCH_SECONDS', 10);
const ROUNDS = Math.round(positiveNumber('EXPAND_BENCH_ROUNDS', 3));
const CONNECTIONS = Math.round(positiveNumber('EXPAND_BENCH_CONNECTIONS', 8));
const SINGLE = Math.round(positiveNumber('EXPAND_BENCH_SINGLE', 300));
const WARMUP_SECONDS = 3;
const KINDS: readonly Kind[] = ['ours', 'bare', 'cap'];
const NAMES: Record<Kind, string> = { ours: 'ours', bare: 'hand-written SQL', cap: 'CAP' };
const SERVER_SCRIPT = fileURLToPath(new URL('./expand/server.ts', import.meta.url));

// ── Data ────────────────────────────────────────────────────────────────────

const pad = (n: number, digits: number): string => String(n).padStart(digits, '0');

/** Orders and lines with every field filled the way the demo site fills them (decimals as text, instants in UTC). */
export function generate(orders: number): { orders: Row[]; lines: Row[] } {
  const statuses = ['Draft', 'Issued', 'PartiallyReceived', 'Received', 'Closed'];
  const lineStatuses = ['Open', 'PartiallyReceived', 'Received'];
  const orderRows: Row[] = [];
  const lineRows: Row[] = [];
  for (let i = 1; i <= orders; i++) {
    const day = new Date(Date.UTC(2024, 0, 1) + (i % 700) * 86_400_000 + (i % 1440) * 60_000);
    const PONumber = `PO-${pad(i, 6)}`;
    orderRows.push({
      PONumber,
      VendorID: `V-${pad(i % 97, 4)}`,
      VendorName: `Vendor ${i % 97} Supply Co.`,
      Status: statuses[i % statuses.length],
      OrderDate: day.toISOString(),
      ExpectedDeliveryDate: new Date(day.getTime() + 21 * 86_400_000).toISOString().slice(0, 10),
      Buyer: ['SOKAFOR', 'EANDERSON', 'MLI'][i % 3],
      ShipTo: `Warehouse ${'ABC'[i % 3]} - Door ${i % 9}`,
      PaymentTerms: i % 2 === 0 ? 'Net 30' : 'Net 45',
      Currency: 'USD',
      FreightAmount: i % 4 === 0 ? null : `${(i % 300) + 0.25}`,
      TaxAmount: `${((i * 37) % 9000) / 100}`,
      PRNumber: null,
      BlanketPONumber: null,
      Account: '5600-200',
      Notes: i % 5 === 0 ? `Deliver before ${day.toISOString().slice(0, 10)}` : null,
      CreatedDate: day.toISOString(),
      LastModifiedDate: new Date(day.getTime() + 3_600_000).toISOString(),
    });
    for (let n = 1; n <= LINES_PER_ORDER; n++) {
      const quantity = ((i + n) % 40) + 1;
      const price = (((i * 7 + n * 13) % 90_000) + 1) / 100;
      lineRows.push({
        PONumber,
        LineNumber: n,
        PartID: `P-${pad(10_000 + ((i * n) % 500), 5)}`,
        Description: `Part ${(i * n) % 500}, bearing housing size ${n}`,
        QuantityOrdered: `${quantity}`,
        QuantityReceived: `${n % 3 === 0 ? quantity : 0}`,
        UnitOfMeasure: 'EA',
        UnitPrice: `${price}`,
        ExtendedPrice: (Math.round(quantity * price * 100) / 100).toFixed(2),
        IsTaxable: n % 2 === 0,
        Account: '5600-200',
        WorkOrderID: n % 4 === 0 ? `WO-${pad(i % 900, 6)}` : null,
        DueDate: new Date(day.getTime() + (14 + n) * 86_400_000).toISOString().slice(0, 10),
        Status: lineStatuses[(i + n) % lineStatuses.length],
        CreatedDate: day.toISOString(),
        LastModifiedDate: new Date(day.getTime() + 3_600_000).toISOString(),
      });
    }
  }
  return { orders: orderRows, lines: lineRows };
}

// ── Servers ─────────────────────────────────────────────────────────────────

type Child = ServerProcess<Kind>;

const startChild = (config: ExpandServerConfig): Promise<Child> =>
  startServerProcess(SERVER_SCRIPT, 'EXPAND_BENCH_SERVER', config);

// ── Requests ────────────────────────────────────────────────────────────────

/** The n-th request's page: every page of the orders, in a scrambled order (7919 is prime to the page count). */
function skipOf(n: number): number {
  const pages = Math.max(1, Math.floor(ORDERS / PAGE));
  return ((n * 7919) % pages) * PAGE;
}

function pathOf(kind: Kind, n: number): string {
  const skip = skipOf(n);
  const odata = `PurchaseOrders?$orderby=PONumber&$top=${PAGE}&$skip=${skip}&$expand=Lines`.replace(/\$/g, '%24');
  if (kind === 'bare') return `/bare/orders?skip=${skip}`;
  if (kind === 'cap') return `/odata/v4/expand/${odata}`;
  return `/${SITE}/ODataApi/v1/${odata}`;
}

/** An order with its lines as comparable text: members sorted, numbers as numbers, annotations left out. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Row)
      .filter(([k]) => !k.includes('@'))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${k}:${canonical(k.endsWith('Date') && typeof v === 'string' ? v.replace(/\.000Z$|Z$/, '') : v)}`).join(',')}}`;
  }
  return typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) ? String(Number(value)) : JSON.stringify(value);
}

async function page(child: Child, n: number, key: string): Promise<{ orders: string[]; bytes: number }> {
  const response = await fetch(`${child.origin}${pathOf(child.kind, n)}`, { headers: { API_KEY: key } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${child.kind}: ${response.status} ${text.slice(0, 300)}`);
  const body = JSON.parse(text) as { value: Row[] };
  return { orders: body.value.map(canonical), bytes: Buffer.byteLength(text) };
}

interface Run {
  readonly kind: Kind;
  readonly requests: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpuUs: number;
  readonly errors: number;
}

async function timed(child: Child, key: string, seconds: number): Promise<Run> {
  let n = 0;
  const before = await child.cpu();
  const result = await autocannon({
    url: child.origin,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { API_KEY: key },
    requests: [{ setupRequest: (request) => ({ ...request, path: pathOf(child.kind, n++) }) }],
  });
  const after = await child.cpu();
  const requests = after.finished - before.finished;
  return {
    kind: child.kind,
    requests,
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUs: requests === 0 ? NaN : (after.cpuUs - before.cpuUs) / requests,
    errors: result.errors + result.non2xx,
  };
}

async function oneAtATime(child: Child, key: string): Promise<number> {
  const times: number[] = [];
  for (let n = 0; n < SINGLE; n++) {
    const started = performance.now();
    const response = await fetch(`${child.origin}${pathOf(child.kind, n)}`, { headers: { API_KEY: key } });
    await response.arrayBuffer();
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
  return `${format(median(values))} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}

// ── Main ────────────────────────────────────────────────────────────────────

export async function run(): Promise<void> {
  const startedAt = performance.now();
  const server = (await import('../dist/server.js' as string)) as ServerModule;
  const service = (await import('../dist/service.js' as string)) as ServiceModule;
  const dir = mkdtempSync(join(tmpdir(), 'odata-expand-bench-'));
  const children: Child[] = [];
  try {
    const backend = await server.openSqliteBackend(dir);
    const { key } = await server.loadDemoSite(backend, SITE, { rows: 500 });
    const store = await backend.store(SITE);
    const data = generate(ORDERS);
    const collections = service.collectionsOf(server.plantDataModel);
    for (const table of ['POAttachments', 'POLineItems', 'PurchaseOrders'])
      await store.driver.run(`DELETE FROM "${table}"`);
    const loadStarted = performance.now();
    await store.transaction(async (tx) => {
      for (const [name, rows] of [
        ['PurchaseOrders', data.orders],
        ['POLineItems', data.lines],
      ] as const) {
        const c = collections.get(name)!;
        const size = store.batchRows(c);
        for (let i = 0; i < rows.length; i += size) await tx.insertMany(c, rows.slice(i, i + size));
      }
    });
    await store.driver.run('ANALYZE');
    console.log(
      `SQLite: ${formatInt(data.orders.length)} orders, ${formatInt(data.lines.length)} lines in ${formatInt(performance.now() - loadStarted)} ms`,
    );
    await backend.close();
    const orders = join(dir, 'orders.json');
    const lines = join(dir, 'lines.json');
    writeFileSync(orders, JSON.stringify(data.orders));
    writeFileSync(lines, JSON.stringify(data.lines));
    const file = join(dir, 'sites', `${SITE}.db`);
    children.push(await startChild({ kind: 'ours', dataDir: dir }));
    children.push(await startChild({ kind: 'bare', file }));
    children.push(await startChild({ kind: 'cap', file: join(dir, 'cap.db'), orders, lines }));
    for (const c of children) console.log(`  ${NAMES[c.kind]} started (${c.label}) at ${c.origin}`);

    // the same answers first
    let bytes: Record<Kind, number> = { ours: 0, bare: 0, cap: 0 };
    const capDiffers: string[] = [];
    for (let n = 0; n < 5; n++) {
      const answers = await Promise.all(children.map((c) => page(c, n, key)));
      const [ours, bare, cap] = answers as [(typeof answers)[0], (typeof answers)[0], (typeof answers)[0]];
      if (ours.orders.length !== PAGE) throw new Error(`ours answered ${ours.orders.length} orders, not ${PAGE}`);
      for (let i = 0; i < PAGE; i++) {
        if (ours.orders[i] !== bare.orders[i])
          throw new Error(
            `page ${n}, order ${i}: ours and the bare route differ\n${ours.orders[i]}\n${bare.orders[i]}`,
          );
        if (cap.orders[i] !== bare.orders[i] && capDiffers.length < 3)
          capDiffers.push(`${cap.orders[i]!.slice(0, 400)}`);
      }
      bytes = { ours: ours.bytes, bare: bare.bytes, cap: cap.bytes };
    }
    console.log(
      `  the same ${PAGE} orders with ${PAGE * LINES_PER_ORDER} lines from ours and the bare route (5 pages)`,
    );
    if (capDiffers.length > 0) console.log(`  CAP's answers differ in form, e.g. ${capDiffers[0]}`);

    console.log(`  warm-up: ${WARMUP_SECONDS} s each …`);
    for (const c of children) await timed(c, key, WARMUP_SECONDS);
    const runs: Run[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...children.slice(round % 3), ...children.slice(0, round % 3)];
      const results: Run[] = [];
      for (const c of order) {
        const r = await timed(c, key, SECONDS);
        results.push(r);
        console.log(
          `    round ${round + 1} ${NAMES[c.kind].padEnd(16)} ${formatInt(r.perSecond)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, ${formatSig(r.cpuUs)} µs CPU/request${r.errors > 0 ? `, ${r.errors} errors` : ''}`,
        );
      }
      runs.push(results);
    }
    const single: Record<Kind, number> = { ours: 0, bare: 0, cap: 0 };
    for (const c of children) single[c.kind] = await oneAtATime(c, key);
    console.log(
      `  one at a time (median of ${SINGLE}): ${KINDS.map((k) => `${NAMES[k]} ${single[k].toFixed(2)} ms`).join(', ')}`,
    );

    const of = (kind: Kind, pick: (r: Run) => number): number[] =>
      runs.map((round) => pick(round.find((r) => r.kind === kind)!));
    const ratio = (other: Kind, pick: (r: Run) => number): number[] =>
      runs.map((round) => pick(round.find((r) => r.kind === 'ours')!) / pick(round.find((r) => r.kind === other)!));
    const x = (n: number): string => `${n.toFixed(2)}×`;
    const table = markdownTable(
      ['server', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/request', 'one at a time, ms', 'body bytes'],
      KINDS.map((k) => [
        `${NAMES[k]}`,
        range(
          of(k, (r) => r.perSecond),
          formatInt,
        ),
        range(
          of(k, (r) => r.p50),
          formatSig,
        ),
        range(
          of(k, (r) => r.p99),
          formatSig,
        ),
        range(
          of(k, (r) => r.cpuUs),
          formatSig,
        ),
        single[k].toFixed(2),
        formatInt(bytes[k]),
      ]),
      ['left', 'right', 'right', 'right', 'right', 'right', 'right'],
    );
    /** A row of ours against another server: the ratios of req/s, CPU per request and single-request latency. */
    const against = (other: 'bare' | 'cap', goal: string): string[] => [
      NAMES[other],
      range(
        ratio(other, (r) => r.perSecond),
        x,
      ),
      range(
        ratio(other, (r) => r.cpuUs),
        x,
      ),
      x(single.ours / single[other]),
      goal,
    ];
    const ratios = markdownTable(
      ['ours against', 'req/s ratio', 'CPU per request ratio', 'one-at-a-time latency ratio', 'goal'],
      [against('bare', 'within 1.5× (latency and CPU ≤ 1.5×)'), against('cap', 'faster (req/s ratio > 1)')],
      ['left', 'right', 'right', 'right', 'left'],
    );
    const totalS = (performance.now() - startedAt) / 1000;
    const md = [
      '# $expand: a page of orders with their lines',
      '',
      `Run of ${new Date().toISOString().slice(0, 10)} (\`npm run bench -- expand\`, ${Math.round(totalS)} s in all).`,
      `Machine: ${describeMachine()}.`,
      '',
      `\`GET PurchaseOrders?$orderby=PONumber&$top=${PAGE}&$skip=N&$expand=Lines\`: ${PAGE} orders with their ${PAGE * LINES_PER_ORDER} lines, from`,
      `${formatInt(data.orders.length)} orders and ${formatInt(data.lines.length)} lines in SQLite (every request another page, N scrambled`,
      'over all of them). **ours**: the reference server (`createServer` + `createPlantService`, API_KEY header,',
      '`pageSize: 100`): the page, then the lines of its orders in one statement. **hand-written SQL**: a bare Fastify',
      'route with the same two statements prepared once, the lines nested under their orders in JavaScript,',
      '`JSON.stringify`, no authentication. **CAP**: ' +
        `${children.find((c) => c.kind === 'cap')?.label ?? 'CAP'} serving \`bench/cap/expand.cds\` from a SQLite file of its own with the same rows,`,
      'no authentication. Each server in a process of its own; autocannon in the parent, ' +
        `${CONNECTIONS} connections, ${SECONDS} s per run after a ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds with the servers' order rotating.`,
      'Ours and the hand-written route were checked to answer the same orders and lines on five pages first' +
        `${capDiffers.length > 0 ? '; CAP answers the same rows in its own number and date forms' : ', and CAP too'}.`,
      '',
      "Each cell: the median of the rounds and (min–max). CPU µs/request: the server process's CPU time (every",
      'thread) over the run ÷ the requests it finished. One at a time: the median latency of ' +
        `${SINGLE} sequential requests.`,
      '',
      table,
      '',
      ratios,
      '',
    ].join('\n');
    console.log(`\n${table}\n\n${ratios}`);
    await writeResults('expand', md);
  } finally {
    for (const c of children) c.process.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const c of children) c.process.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
