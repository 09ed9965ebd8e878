// A running reference server for tests: a real port, real storage (an SQLite data directory, the PostgreSQL server in
// a schema of its own, or the MariaDB/MySQL server in a database of its own), a site with demo data and credentials.
// Under CI=true PostgreSQL is required, and MariaDB too where a suite asks for it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import {
  openMysqlBackend,
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
const MYSQL = 'mysql://root@127.0.0.1:3306';

export type Storage = 'sqlite' | 'postgres' | 'mysql';

async function mysqlReachable(): Promise<boolean> {
  try {
    const connection = await mysql.createConnection({ uri: MYSQL, connectTimeout: 2000 });
    await connection.end();
    return true;
  } catch (error) {
    if (process.env.CI === 'true')
      throw new Error(`CI=true requires the MariaDB/MySQL server on 127.0.0.1:3306: ${String(error)}`);
    console.warn(`MariaDB/MySQL server unreachable (${String(error)}): its server tests are skipped`);
    return false;
  }
}

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

/**
 * The storages this machine offers for server tests: SQLite always, the PostgreSQL server when reachable, and with
 * `mysql` the MariaDB/MySQL server when reachable (the end-to-end suites).
 */
export async function storages(): Promise<Exclude<Storage, 'mysql'>[]>;
export async function storages(options: { readonly mysql: true }): Promise<Storage[]>;
export async function storages(options: { readonly mysql?: boolean } = {}): Promise<Storage[]> {
  const kinds: Storage[] = ['sqlite'];
  if (await postgresReachable()) kinds.push('postgres');
  if (options.mysql === true && (await mysqlReachable())) kinds.push('mysql');
  return kinds;
}

export async function startServer(
  storage: Storage,
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
  } else if (storage === 'mysql') {
    const database = `odata_srv_${process.pid}_${suffix}`;
    const admin = await mysql.createConnection({ uri: MYSQL });
    await admin.query(`CREATE DATABASE \`${database}\``);
    backend = await openMysqlBackend(`${MYSQL}/${database}`, { max: 5, ...backendOptions });
    cleanup = async () => {
      await admin.query(`DROP DATABASE \`${database}\``);
      await admin.end();
    };
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
    label: { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB/MySQL' }[storage],
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
