// A running reference server for tests: a real port, real storage (an SQLite data directory, or the PostgreSQL
// server in a schema of its own), a site with demo data and credentials. Under CI=true PostgreSQL is required.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import {
  openPostgresBackend,
  openSqliteBackend,
  type Backend,
  type PostgresBackendOptions,
  type SqliteBackendOptions,
} from '../../src/server/backend.js';
import { loadDemoSite } from '../../src/server/demo-site.js';
import { createServer } from '../../src/service/fastify.js';
import { createPlantService, type PlantServiceOptions as ServiceOptions } from '../../src/server/plant-service.js';

export interface RunningServer {
  readonly label: string;
  readonly backend: Backend;
  readonly app: FastifyInstance;
  /** `http://127.0.0.1:PORT` */
  readonly origin: string;
  readonly site: string;
  readonly key: string;
  /** A second site with its own key, for isolation checks. */
  readonly otherSite: string;
  readonly otherKey: string;
  readonly user: { readonly name: string; readonly password: string };
  /** The service root of `site`. */
  readonly root: string;
  close(): Promise<void>;
}

const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (error) {
    if (process.env.CI === 'true')
      throw new Error(`CI=true requires the PostgreSQL server on 127.0.0.1:5432: ${String(error)}`);
    console.warn(`PostgreSQL server unreachable (${String(error)}): its server tests are skipped`);
    return false;
  }
}

/** The storages this machine offers for server tests: SQLite always, the PostgreSQL server when reachable. */
export async function storages(): Promise<('sqlite' | 'postgres')[]> {
  return (await postgresReachable()) ? ['sqlite', 'postgres'] : ['sqlite'];
}

export async function startServer(
  storage: 'sqlite' | 'postgres',
  options: Omit<ServiceOptions, 'backend'> = {},
  /** Options of the backend (budgets, pool size, reader threads); PostgreSQL's pool has 5 connections unless set. */
  backendOptions: SqliteBackendOptions & PostgresBackendOptions = {},
): Promise<RunningServer> {
  const suffix = randomBytes(3).toString('hex');
  let backend: Backend;
  let cleanup: () => Promise<void>;
  if (storage === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'odata-engine-'));
    backend = await openSqliteBackend(dir, backendOptions);
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const schema = `odata_srv_${process.pid}_${suffix}`;
    const admin = new pg.Client({ connectionString: POSTGRES });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"`);
    backend = await openPostgresBackend(`${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, {
      max: 5,
      ...backendOptions,
    });
    cleanup = async () => {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    };
  }
  const site = `north-${suffix}`;
  const otherSite = `south-${suffix}`;
  const { key } = await loadDemoSite(backend, site);
  const { key: otherKey } = await loadDemoSite(backend, otherSite, { seed: 7 });
  const user = { name: 'planner', password: 'correct horse battery' };
  await backend.directory.createUser(site, user.name, user.password);
  const service = createPlantService({ backend, ...options });
  const app = createServer({ service });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const origin = `http://127.0.0.1:${port}`;
  return {
    label: storage === 'sqlite' ? 'SQLite' : 'PostgreSQL',
    backend,
    app,
    origin,
    site,
    key,
    otherSite,
    otherKey,
    user,
    root: `${origin}/${site}/ODataApi/v1`,
    close: async () => {
      await app.close();
      await backend.close();
      await cleanup();
    },
  };
}

/** Watches how late the event loop is for a timer of `intervalMs`: `stop()` gives the worst delay seen, in ms. */
export function watchEventLoop(intervalMs = 10): { stop(): number } {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - intervalMs);
    last = now;
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      return worst;
    },
  };
}
