// SAP CAP as the benchmarks run it (bench/http/server.ts, bench/expand/server.ts): a model file of this folder served
// by express on 127.0.0.1, port 0, quiet (CAP logs every request at level info), without authentication (the `dummy`
// strategy: every request is privileged, as the bare routes), on the database the caller configures.
import type { Server } from 'node:http';
import { dirname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

type Row = Record<string, unknown>;

/** What the benchmarks use of @sap/cds (it ships no types). */
export interface Cds {
  root: string;
  env: { requires: Record<string, unknown>; log: { levels: Record<string, string> } };
  version: string;
  model: unknown;
  db: CapDb;
  log(id: string, level: string): unknown;
  load(file: string): Promise<unknown>;
  compile: { for: { nodejs(csn: unknown): unknown } };
  connect: { to(name: string): Promise<CapDb> };
  deploy(csn: unknown): { to(db: CapDb): Promise<unknown> };
  serve(what: string): { from(model: unknown): { in(app: unknown): Promise<unknown> } };
  ql: {
    INSERT: { into(entity: string): { entries(rows: readonly Row[]): unknown } };
    DELETE: { from(entity: string): unknown };
  };
  tx<T>(fn: (tx: CapDb) => Promise<T>): Promise<T>;
}

export interface PreparedStatement {
  [method: string]: (...args: unknown[]) => unknown;
}

export interface CapDb {
  run(query: unknown, values?: unknown): Promise<unknown>;
  prepare: (this: CapDb, sql: string) => PreparedStatement | Promise<PreparedStatement>;
  hasResults?: (sql: string) => boolean;
  disconnect(): Promise<void>;
}

export interface StartedCap {
  readonly cds: Cds;
  readonly db: CapDb;
  /** Listening on 127.0.0.1 once `listen` resolves. */
  listen(): Promise<Server>;
}

/**
 * Loads `model` (a file of bench/cap/, or an absolute path: the tests' models), deploys it to the database `db` configures (`cds.env.requires.db`) and
 * mounts its services in an express app; `load` runs before the app listens (rows to insert, indexes to add).
 */
export async function startCap(
  model: string,
  db: Record<string, unknown>,
  /** `silent` for tests that send requests CAP refuses (it logs each 400 with its stack at level error). */
  logLevel: 'warn' | 'silent' = 'warn',
): Promise<StartedCap> {
  const { default: cds } = (await import('@sap/cds' as string)) as { default: Cds };
  const file = isAbsolute(model) ? model : fileURLToPath(new URL(model, import.meta.url));
  cds.root = dirname(file);
  for (const id of ['cds', 'odata', 'db', 'sql', 'serve', 'server', 'deploy', 'app', 'error']) cds.log(id, logLevel);
  cds.env.log.levels = new Proxy({}, { get: () => logLevel });
  cds.env.requires['auth'] = { kind: 'dummy' };
  cds.env.requires['db'] = db;
  const csn = await cds.load(file);
  cds.model = cds.compile.for.nodejs(csn);
  const connected = await cds.connect.to('db');
  await cds.deploy(csn).to(connected);
  return {
    cds,
    db: connected,
    listen: async () => {
      const { default: express } = await import('express');
      const app = express();
      await cds.serve('all').from(cds.model).in(app);
      const server = app.listen(0, '127.0.0.1');
      await new Promise<void>((resolve, reject) => {
        server.once('listening', resolve);
        server.once('error', reject);
      });
      return server;
    },
  };
}
