// One server of the $apply benchmark in a process of its own (started by bench/apply.bench.ts with fork), so that its
// CPU time can be read alone: `ours` (the reference server from dist/server.js), `bare` (Fastify routes running
// hand-written GROUP BY statements on better-sqlite3 and writing the JSON themselves) or `cap` (SAP CAP serving
// bench/cap/bench.cds, its POLineItems filled with the same rows). It listens on 127.0.0.1, port 0, says `ready` with
// its port, and answers `cpu` over IPC.
import type { Server } from 'node:http';

import Database from 'better-sqlite3';
import Fastify from 'fastify';

import { applyLines, FILTER_DATE, type ShapeId } from '../apply.bench.js';
import { startCap as startCapModel } from '../cap/start.js';
import { answerParent, track } from '../finished-requests.js';

type ServerModule = typeof import('../../src/server/index.js');

/** What the parent sends in APPLY_BENCH_SERVER. */
export interface ApplyServerConfig {
  readonly kind: 'ours' | 'bare' | 'cap';
  /** ours: the data directory. */
  readonly dataDir?: string;
  /** bare: the site's SQLite file; cap: a file of its own. */
  readonly file?: string;
  /** cap: how many orders to generate lines for (the same rows as the site's: `applyLines(orders)`). */
  readonly orders?: number;
}

/** Groups well under this: a grouped answer is one page. */
export const PAGE_SIZE = 1000;

const config = JSON.parse(process.env['APPLY_BENCH_SERVER'] ?? 'null') as ApplyServerConfig | null;
if (config === null || process.send === undefined) {
  console.error('bench/apply/server.ts is started by bench/apply.bench.ts (fork with APPLY_BENCH_SERVER)');
  process.exit(2);
}

async function startOurs(c: ApplyServerConfig): Promise<{ server: Server; label: string }> {
  const server = (await import('../../dist/server.js' as string)) as ServerModule;
  const backend = await server.openSqliteBackend(c.dataDir!);
  const service = server.createPlantService({ backend, pageSize: PAGE_SIZE });
  const app = server.createServer({ service });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { server: app.server, label: `createServer + createPlantService({ pageSize: ${PAGE_SIZE} })` };
}

// ── The hand-written answers ────────────────────────────────────────────────

/** ExtendedPrice is Decimal(18,4): SQLite keeps it as the integer value × 10^4. */
const SCALE = 4;
/** Places of an average: the exact quotient rounded half away from zero there. */
const AVERAGE_PLACES = 20;

/** A scaled integer as decimal text without trailing zeros: 1234500n at scale 4 → "123.45". */
function decimalText(scaled: bigint, scale: number): string {
  const negative = scaled < 0n;
  const digits = (negative ? -scaled : scaled).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  const text = fraction === '' ? whole : `${whole}.${fraction}`;
  return negative && text !== '0' ? `-${text}` : text;
}

/** sum / 10^scale / count, exact, rounded half away from zero at AVERAGE_PLACES, as decimal text. */
function averageText(sum: bigint, count: bigint): string {
  const negative = sum < 0n;
  const numerator = (negative ? -sum : sum) * 10n ** BigInt(AVERAGE_PLACES - SCALE);
  let quotient = numerator / count;
  if ((numerator % count) * 2n >= count) quotient += 1n;
  return decimalText(negative ? -quotient : quotient, AVERAGE_PLACES);
}

/** A bigint from SQLite (safe integers on), or null. */
function big(value: unknown): bigint | null {
  return value === null ? null : (value as bigint);
}

/**
 * The same answers written by hand: one GROUP BY statement per shape, prepared once, sums of the scaled integers read
 * as bigints (safeIntegers) and written as exact decimal text straight into the JSON, the average as SUM ÷ COUNT in
 * BigInt arithmetic.
 */
async function startBare(c: ApplyServerConfig): Promise<{ server: Server; label: string }> {
  const db = new Database(c.file!, { readonly: true });
  const grouped = (where: string): Database.Statement =>
    db
      .prepare(
        `SELECT "Status", "Account", SUM("ExtendedPrice") AS "Spend", COUNT(*) AS "Lines" FROM "POLineItems"${where} GROUP BY "Status", "Account" ORDER BY "Status", "Account"`,
      )
      .raw(true)
      .safeIntegers(true);
  const all = grouped('');
  const filtered = grouped(` WHERE "DueDate" >= ?`);
  const total = db
    .prepare(`SELECT SUM("ExtendedPrice"), COUNT("ExtendedPrice"), COUNT(*) FROM "POLineItems"`)
    .raw(true)
    .safeIntegers(true);
  const groups = (rows: unknown[][]): string => {
    const parts: string[] = [];
    for (const [status, account, spend, lines] of rows) {
      const sum = big(spend);
      parts.push(
        `{"Status":${JSON.stringify(status)},"Account":${JSON.stringify(account)},"Spend":${sum === null ? 'null' : decimalText(sum, SCALE)},"Lines":${String(lines)}}`,
      );
    }
    return parts.join(',');
  };
  const bodies: Record<ShapeId, () => string> = {
    grouped: () => groups(all.all() as unknown[][]),
    filtered: () => groups(filtered.all(FILTER_DATE) as unknown[][]),
    total: () => {
      const [spend, values, lines] = total.get() as [unknown, bigint, bigint];
      const sum = big(spend);
      const spendText = sum === null ? 'null' : decimalText(sum, SCALE);
      const averageValue = sum === null || values === 0n ? 'null' : averageText(sum, values);
      return `{"Spend":${spendText},"Average":${averageValue},"Lines":${String(lines)}}`;
    },
  };
  const app = Fastify({ logger: false });
  app.get('/bare/apply/:shape', async (request, reply) => {
    const body = bodies[(request.params as { shape: ShapeId }).shape];
    if (body === undefined) return reply.code(404).send();
    void reply.header('content-type', 'application/json; charset=utf-8');
    return `{"@odata.context":"$metadata#POLineItems","value":[${body()}]}`;
  });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { server: app.server, label: 'Fastify, a prepared GROUP BY per shape, JSON written by hand' };
}

async function startCap(c: ApplyServerConfig): Promise<{ server: Server; label: string }> {
  // @cap-js/sqlite's default pool: one connection
  const { cds, db, listen } = await startCapModel('bench.cds', {
    kind: 'sqlite',
    impl: '@cap-js/sqlite',
    credentials: { url: c.file },
    pool: { max: 1 },
  });
  const started = performance.now();
  let lines: Record<string, unknown>[] | undefined = applyLines(c.orders!).lines;
  await cds.tx(async (tx) => {
    for (let i = 0; i < lines!.length; i += 5000)
      await tx.run(cds.ql.INSERT.into('BenchService.POLineItems').entries(lines!.slice(i, i + 5000)));
  });
  const count = lines.length;
  lines = undefined;
  await db.run('ANALYZE');
  const loadMs = performance.now() - started;
  const server = await listen();
  track(server);
  return {
    server,
    label: `@sap/cds ${cds.version}, express, @cap-js/sqlite; ${count.toLocaleString('en-US')} lines loaded through CAP in ${(loadMs / 1000).toFixed(1)} s`,
  };
}

const started =
  config.kind === 'ours'
    ? await startOurs(config)
    : config.kind === 'bare'
      ? await startBare(config)
      : await startCap(config);

answerParent(started.server, started.label);
