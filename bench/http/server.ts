// One server of the HTTP benchmark in a process of its own (started by bench/http.bench.ts with child_process.fork),
// so that its CPU time can be read alone: `ours` (the reference server from dist/server.js), `bare` (a Fastify app
// with one hand-written query per shape) or `cap` (SAP CAP serving bench/cap/bench.cds). It listens on 127.0.0.1,
// port 0, says `ready` with its port, and answers the parent's requests over IPC (ParentMessage in shared.ts).
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import Fastify from 'fastify';

import { startCap as startCapModel, type CapDb, type PreparedStatement } from '../cap/start.js';
import { cpuWhenFinished, track } from '../finished-requests.js';

import {
  CAP_ENTITY,
  CAP_TABLE,
  PG_POOL,
  PAGE_ROWS,
  postgresBare,
  sqliteBare,
  type BareQueries,
  type ChildMessage,
  type CpuReading,
  type ParentMessage,
  type Row,
  type ServerConfig,
} from './shared.js';

type ServerModule = typeof import('../../src/server/index.js');

const config = JSON.parse(process.env['HTTP_BENCH_SERVER'] ?? 'null') as ServerConfig | null;
if (config === null || process.send === undefined) {
  console.error('bench/http/server.ts is started by bench/http.bench.ts (fork with HTTP_BENCH_SERVER)');
  process.exit(2);
}
const send = (message: ChildMessage): void => void process.send!(message);

// ── The three servers ───────────────────────────────────────────────────────

interface Started {
  readonly server: Server;
  readonly label: string;
  readonly close: () => Promise<void>;
  readonly ops?: Partial<Record<ParentMessage['op'], (message: ParentMessage) => Promise<unknown>>>;
}

async function startOurs(c: ServerConfig): Promise<Started> {
  const server = (await import('../../dist/server.js' as string)) as ServerModule;
  const backend =
    c.storage === 'sqlite'
      ? await server.openSqliteBackend(c.dataDir!)
      : await server.openPostgresBackend(c.url!, { max: PG_POOL });
  const service = server.createPlantService({ backend, pageSize: PAGE_ROWS });
  const app = server.createServer({ service });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    server: app.server,
    label: `createServer + createPlantService({ pageSize: ${PAGE_ROWS} })`,
    close: async () => {
      await app.close();
      await backend.close();
    },
  };
}

async function startBare(c: ServerConfig): Promise<Started> {
  const queries: BareQueries = c.storage === 'sqlite' ? sqliteBare(c.file!) : postgresBare(c.url!);
  const app = Fastify({ logger: false });
  const json = (rows: unknown): string => JSON.stringify(rows);
  app.get('/bare/filter', async (request, reply) => {
    const { price } = request.query as { price: string };
    void reply.header('content-type', 'application/json; charset=utf-8');
    return json({ value: await queries.filter(price) });
  });
  app.get('/bare/key', async (request, reply) => {
    const { po, line } = request.query as { po: string; line: string };
    const row = await queries.key(po, Number(line));
    if (row === undefined) return reply.code(404).send();
    void reply.header('content-type', 'application/json; charset=utf-8');
    return json(row);
  });
  app.get('/bare/page', async (_request, reply) => {
    void reply.header('content-type', 'application/json; charset=utf-8');
    return json({ value: await queries.page() });
  });
  app.get('/bare/scan', async (_request, reply) => {
    void reply.header('content-type', 'application/json; charset=utf-8');
    return json({ value: await queries.scan() });
  });
  app.get('/bare/count', async (_request, reply) => {
    void reply.header('content-type', 'text/plain; charset=utf-8');
    return String(await queries.count());
  });
  track(app.server);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    server: app.server,
    label: 'Fastify, one route per shape',
    close: async () => {
      await app.close();
      await queries.close();
    },
  };
}

async function startCap(c: ServerConfig): Promise<Started> {
  const postgres = c.storage === 'postgres';
  const pgUrl = postgres ? new URL(c.url!) : undefined;
  const { cds, db, listen } = await startCapModel(
    'bench.cds',
    postgres
      ? {
          kind: 'postgres',
          impl: '@cap-js/postgres',
          dialect: 'postgres',
          credentials: {
            host: pgUrl!.hostname,
            port: Number(pgUrl!.port || 5432),
            user: decodeURIComponent(pgUrl!.username),
            password: decodeURIComponent(pgUrl!.password),
            database: pgUrl!.pathname.slice(1),
            schema: c.capSchema,
          },
          // @cap-js/postgres's defaults: a pool of 10, as ours
          pool: { min: 0, max: PG_POOL, testOnBorrow: true, acquireTimeoutMillis: 1000, destroyTimeoutMillis: 1000 },
        }
      : // @cap-js/sqlite's default pool: one connection
        { kind: 'sqlite', impl: '@cap-js/sqlite', credentials: { url: c.file }, pool: { max: 1 } },
  );
  const server = await listen();
  track(server);

  // the statements CAP runs while `capture` is on (for EXPLAIN)
  let captured: { sql: string; args: unknown[] }[] | undefined;
  const prepare = db.prepare;
  const wrap = (sql: string, statement: PreparedStatement): PreparedStatement => {
    for (const method of ['all', 'get', 'stream']) {
      const original = statement[method];
      if (typeof original !== 'function') continue;
      statement[method] = (...args: unknown[]) => {
        captured?.push({ sql, args });
        return original.apply(statement, args);
      };
    }
    return statement;
  };
  const capturing = function (this: CapDb, sql: string): PreparedStatement | Promise<PreparedStatement> {
    const statement = prepare.call(this, sql);
    return statement instanceof Promise ? statement.then((s) => wrap(sql, s)) : wrap(sql, statement);
  };

  return {
    server,
    label: `@sap/cds ${cds.version}, express, ${postgres ? '@cap-js/postgres' : '@cap-js/sqlite'}`,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.disconnect();
    },
    ops: {
      load: async (message) => {
        if (message.op !== 'load') return undefined;
        const rows = JSON.parse(readFileSync(message.file, 'utf8')) as Row[];
        await cds.tx(async (tx) => {
          for (let i = 0; i < rows.length; i += 5000)
            await tx.run(cds.ql.INSERT.into(CAP_ENTITY).entries(rows.slice(i, i + 5000)));
        });
        for (const sql of message.indexes) await db.run(sql);
        await db.run(postgres ? `ANALYZE ${CAP_TABLE}` : 'ANALYZE');
        return rows.length;
      },
      capture: async (message) => {
        if (message.op !== 'capture') return undefined;
        if (message.on) {
          captured = [];
          db.prepare = capturing;
        } else {
          db.prepare = prepare;
        }
        return undefined;
      },
      explain: async () => {
        const last = captured?.filter((s) => /^\s*select/i.test(s.sql)).at(-1);
        captured = undefined;
        db.prepare = prepare;
        if (last === undefined) return undefined;
        const values = Array.isArray(last.args[0]) ? last.args[0] : last.args;
        const explain = postgres ? `EXPLAIN (COSTS OFF) ${last.sql}` : `EXPLAIN QUERY PLAN ${last.sql}`;
        // CAP runs plain SQL that does not start with SELECT as a statement without rows: say it has some
        db.hasResults = () => true;
        let plan: Row[];
        try {
          plan = (await db.run(explain, values)) as Row[];
        } finally {
          delete db.hasResults;
        }
        return {
          sql: last.sql,
          plan: plan.map((r) => String(r['QUERY PLAN'] ?? r['detail'] ?? JSON.stringify(r))),
        };
      },
    },
  };
}

// ── Main ────────────────────────────────────────────────────────────────────

const started =
  config.kind === 'ours'
    ? await startOurs(config)
    : config.kind === 'bare'
      ? await startBare(config)
      : await startCap(config);

process.on('message', (message: ParentMessage) => {
  const answer = async (): Promise<unknown> => {
    switch (message.op) {
      case 'cpu':
        return cpuWhenFinished();
      case 'close':
        await started.close();
        return undefined;
      default: {
        const op = started.ops?.[message.op];
        if (op === undefined) throw new Error(`The ${config.kind} server does not know ${message.op}`);
        return op(message);
      }
    }
  };
  answer().then(
    (result) => send({ op: 'answer', id: message.id, result }),
    (error: unknown) =>
      send({
        op: 'failed',
        id: message.id,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      }),
  );
});

// the parent disconnects once it is done with this server (or is gone)
process.on('disconnect', () => process.exit(0));

send({ op: 'ready', port: (started.server.address() as AddressInfo).port, label: started.label });
