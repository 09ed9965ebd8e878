// One server of the $expand benchmark in a process of its own (started by bench/expand.bench.ts with fork), so that
// its CPU time can be read alone: `ours` (the reference server from dist/server.js), `bare` (a Fastify route running
// two hand-written statements and nesting the lines itself) or `cap` (SAP CAP serving bench/cap/expand.cds). It
// listens on 127.0.0.1, port 0, says `ready` with its port, and answers `cpu` over IPC.
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';

import Database from 'better-sqlite3';
import Fastify from 'fastify';

import { startCap as startCapModel } from '../cap/start.js';
import { answerParent, track } from '../finished-requests.js';

type ServerModule = typeof import('../../src/server/index.js');
type Row = Record<string, unknown>;

/** What the parent sends in EXPAND_BENCH_SERVER. */
export interface ExpandServerConfig {
  readonly kind: 'ours' | 'bare' | 'cap';
  /** ours: the data directory; bare: the site's SQLite file; cap: a file of its own. */
  readonly dataDir?: string;
  readonly file?: string;
  /** cap: JSON files of the orders and lines to load. */
  readonly orders?: string;
  readonly lines?: string;
}

export const PAGE = 100;
export const CAP_PATH = '/odata/v4/expand';

const config = JSON.parse(process.env['EXPAND_BENCH_SERVER'] ?? 'null') as ExpandServerConfig | null;
if (config === null || process.send === undefined) {
  console.error('bench/expand/server.ts is started by bench/expand.bench.ts (fork with EXPAND_BENCH_SERVER)');
  process.exit(2);
}

async function startOurs(c: ExpandServerConfig): Promise<{ server: Server; label: string }> {
  const server = (await import('../../dist/server.js' as string)) as ServerModule;
  const backend = await server.openSqliteBackend(c.dataDir!);
  const service = server.createPlantService({ backend, pageSize: PAGE });
  const app = server.createServer({ service });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { server: app.server, label: `createServer + createPlantService({ pageSize: ${PAGE} })` };
}

/**
 * The same answer written by hand: the page of orders, then their lines in one statement (`IN` of the page's
 * numbers), decimals scaled back in SQL (SQLite keeps them as integers scaled by 10^scale), Booleans from 0/1, the
 * lines nested under their order in JavaScript.
 */
async function startBare(c: ExpandServerConfig): Promise<{ server: Server; label: string }> {
  const { plantDataModel } = (await import('../../dist/server.js' as string)) as ServerModule;
  const columns = (set: string): string =>
    [...plantDataModel.entitySets.get(set)!.properties.values()]
      .filter((p) => p.writeOnly !== true)
      .map((p) => (p.type === 'Edm.Decimal' ? `"${p.name}" / ${10 ** (p.scale ?? 0)}.0 AS "${p.name}"` : `"${p.name}"`))
      .join(', ');
  const db = new Database(c.file!, { readonly: true });
  const orders = db.prepare(
    `SELECT ${columns('PurchaseOrders')} FROM "PurchaseOrders" ORDER BY "PONumber" LIMIT ? OFFSET ?`,
  );
  const linesOf = new Map<number, Database.Statement>();
  const lines = (count: number): Database.Statement => {
    let statement = linesOf.get(count);
    if (statement === undefined) {
      const marks = Array.from({ length: count }, () => '?').join(', ');
      statement = db.prepare(
        `SELECT ${columns('POLineItems')} FROM "POLineItems" WHERE "PONumber" IN (${marks}) ORDER BY "PONumber", "LineNumber"`,
      );
      linesOf.set(count, statement);
    }
    return statement;
  };
  const app = Fastify({ logger: false });
  app.get('/bare/orders', async (request, reply) => {
    const skip = Number((request.query as { skip?: string }).skip ?? 0);
    const page = orders.all(PAGE, skip) as Row[];
    const byOrder = new Map<unknown, Row[]>();
    for (const order of page) {
      const list: Row[] = [];
      order['Lines'] = list;
      byOrder.set(order['PONumber'], list);
    }
    if (page.length > 0) {
      for (const line of lines(page.length).all(...page.map((o) => o['PONumber'] as string)) as Row[]) {
        if (line['IsTaxable'] !== null) line['IsTaxable'] = line['IsTaxable'] === 1;
        byOrder.get(line['PONumber'])!.push(line);
      }
    }
    void reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({ value: page });
  });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { server: app.server, label: 'Fastify, two prepared statements, JSON.stringify' };
}

async function startCap(c: ExpandServerConfig): Promise<{ server: Server; label: string }> {
  // @cap-js/sqlite's default pool: one connection
  const { cds, db, listen } = await startCapModel('expand.cds', {
    kind: 'sqlite',
    impl: '@cap-js/sqlite',
    credentials: { url: c.file },
    pool: { max: 1 },
  });
  for (const [entity, file] of [
    ['ExpandService.PurchaseOrders', c.orders!],
    ['ExpandService.POLineItems', c.lines!],
  ] as const) {
    const rows = JSON.parse(readFileSync(file, 'utf8')) as Row[];
    await cds.tx(async (tx) => {
      for (let i = 0; i < rows.length; i += 5000)
        await tx.run(cds.ql.INSERT.into(entity).entries(rows.slice(i, i + 5000)));
    });
  }
  await db.run('ANALYZE');
  const server = await listen();
  track(server);
  return { server, label: `@sap/cds ${cds.version}, express, @cap-js/sqlite` };
}

const started =
  config.kind === 'ours'
    ? await startOurs(config)
    : config.kind === 'bare'
      ? await startBare(config)
      : await startCap(config);

answerParent(started.server, started.label);
