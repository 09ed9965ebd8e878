// Every store the service ships, plus the tests' own tiny one, opened empty or with rows for a model: memory arrays,
// SQLite (a temporary file), PostgreSQL (a schema of its own) and MariaDB/MySQL (a database of its own) when the
// servers answer. Under CI=true both servers are required.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { Model, Row } from '../../src/model/schema.js';
import { MemoryStore } from '../../src/service/memory-store.js';
import { createODataService, type ODataService, type ODataServiceOptions } from '../../src/service/service.js';
import { openMysql } from '../../src/service/mysql.js';
import { openPostgres } from '../../src/service/postgres.js';
import { openSqlite } from '../../src/service/sqlite.js';
import type { SqlDriver } from '../../src/service/sql/driver.js';
import { openSqlStore, type SqlStore } from '../../src/service/sql/sql-store.js';
import { collectionsOf, type Store } from '../../src/service/store.js';
import { tinyStore } from './tiny-store.js';

const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL = 'mysql://root@127.0.0.1:3306';

export interface OpenStore {
  readonly store: Store;
  close(): Promise<void>;
}

export type StoreFactory = (model: Model, rows: Record<string, Row[]>) => Promise<OpenStore>;

async function reachable(name: string, connect: () => Promise<void>): Promise<boolean> {
  try {
    await connect();
    return true;
  } catch (error) {
    if (process.env.CI === 'true') throw new Error(`CI=true requires ${name}: ${String(error)}`);
    console.warn(`${name} unreachable (${String(error)}): its store is left out`);
    return false;
  }
}

async function loaded(store: SqlStore, model: Model, rows: Record<string, Row[]>): Promise<SqlStore> {
  await store.transaction(async (tx) => {
    for (const [name, list] of Object.entries(rows))
      for (let i = 0; i < list.length; i += 100)
        await tx.insertMany(collectionsOf(model).get(name)!, list.slice(i, i + 100));
  });
  return store;
}

const unique = (): string => `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;

/**
 * The stores this machine offers, by name. `sql` wraps the SQL stores' drivers (a test counts their statements);
 * `sqlOnly` leaves out the stores without SQL.
 */
export async function storeFactories(
  options: { readonly sql?: (driver: SqlDriver) => SqlDriver; readonly sqlOnly?: boolean } = {},
): Promise<Record<string, StoreFactory>> {
  const sql = options.sql ?? ((driver: SqlDriver) => driver);
  const factories: Record<string, StoreFactory> = {
    ...(options.sqlOnly === true
      ? {}
      : {
          memory: async (model: Model, rows: Record<string, Row[]>): Promise<OpenStore> => ({
            store: new MemoryStore(model, Object.fromEntries(Object.entries(rows).map(([n, list]) => [n, [...list]]))),
            close: async () => undefined,
          }),
          // a store of the tests' own, on the Store contract alone
          tiny: async (model: Model, rows: Record<string, Row[]>): Promise<OpenStore> => ({
            store: tinyStore(model, rows),
            close: async () => undefined,
          }),
        }),
    sqlite: async (model, rows) => {
      const dir = mkdtempSync(join(tmpdir(), 'odata-store-'));
      const store = await loaded(await openSqlStore(sql(openSqlite(join(dir, 'store.db'))), { model }), model, rows);
      return {
        store,
        close: async () => {
          await store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
  const postgres = async (): Promise<void> => {
    const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 2000 });
    await client.connect();
    await client.end();
  };
  if (await reachable('PostgreSQL on 127.0.0.1:5432', postgres)) {
    factories['postgres'] = async (model, rows) => {
      const schema = `odata_store_${unique()}`;
      const admin = new pg.Client({ connectionString: POSTGRES });
      await admin.connect();
      await admin.query(`CREATE SCHEMA "${schema}"`);
      const url = `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const store = await loaded(await openSqlStore(sql(openPostgres(url, { max: 3 })), { model }), model, rows);
      return {
        store,
        close: async () => {
          await store.close();
          await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
          await admin.end();
        },
      };
    };
  }
  const mariadb = async (): Promise<void> => (await mysql.createConnection({ uri: MYSQL, connectTimeout: 2000 })).end();
  if (await reachable('MariaDB/MySQL on 127.0.0.1:3306', mariadb)) {
    factories['mysql'] = async (model, rows) => {
      const database = `odata_store_${unique()}`;
      const admin = await mysql.createConnection({ uri: MYSQL });
      await admin.query(`CREATE DATABASE \`${database}\``);
      const store = await loaded(
        await openSqlStore(sql(openMysql(`${MYSQL}/${database}`, { max: 3 })), { model }),
        model,
        rows,
      );
      return {
        store,
        close: async () => {
          await store.close();
          await admin.query(`DROP DATABASE \`${database}\``);
          await admin.end();
        },
      };
    };
  }
  return factories;
}

/** A request the differential tests send to every store's service. */
export interface SentRequest {
  readonly method: string;
  readonly url: string;
  readonly body?: unknown;
  /** Beside Host and Content-Type (an Accept, say). */
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * One service per store this machine offers, all of one model: a request goes to each, and its answers (status and
 * body text) must be the same everywhere. The statuses seen are counted, so a test can say its writes landed.
 */
export class EveryStore {
  readonly statuses = new Map<string, number>();

  private constructor(
    private readonly model: Model,
    readonly served: readonly { readonly name: string; readonly open: OpenStore; readonly service: ODataService }[],
  ) {}

  static async open(
    model: Model,
    options: Omit<ODataServiceOptions, 'model' | 'store' | 'resolve'> = {},
  ): Promise<EveryStore> {
    const served = [];
    for (const [name, factory] of Object.entries(await storeFactories())) {
      const open = await factory(model, {});
      // one skip-token secret for all, as the instances of one deployment share it: equal next links from equal rows
      served.push({
        name,
        open,
        service: createODataService({ skipTokenSecret: 'every store', ...options, model, store: open.store }),
      });
    }
    return new EveryStore(model, served);
  }

  get names(): string[] {
    return this.served.map((s) => s.name);
  }

  /** Every collection of every store holds exactly `rows` (by collection name) afterwards. */
  async replaceRows(rows: Readonly<Record<string, readonly Row[]>>): Promise<void> {
    const collections = [...collectionsOf(this.model).values()];
    for (const { open } of this.served) {
      await open.store.transaction(async (tx) => {
        for (const c of collections) for (const row of await tx.children(c, {})) await tx.delete(c, row);
        for (const c of collections) for (const row of rows[c.name] ?? []) await tx.insert(c, row);
      });
    }
  }

  /**
   * The answer every store gives `request` (`status body`, each through `normalize`), or an error naming the two
   * stores that differ, the request and `context`. `except`: stores left out of the comparison (asked nothing).
   */
  async same(
    request: SentRequest,
    context = '',
    normalize = (text: string) => text,
    except: readonly string[] = [],
  ): Promise<string> {
    const served = this.served.filter(({ name }) => !except.includes(name));
    const answers = await Promise.all(
      served.map(async ({ service }) => {
        const response = await service.handle({
          method: request.method,
          url: request.url,
          headers: { host: 'test', 'content-type': 'application/json', ...request.headers },
          ...(request.body === undefined ? {} : { body: Buffer.from(JSON.stringify(request.body)) }),
        });
        return normalize(`${response.status} ${typeof response.body === 'string' ? response.body : ''}`);
      }),
    );
    const [first, ...rest] = answers as [string, ...string[]];
    for (const [i, other] of rest.entries()) {
      if (other !== first) {
        const [a, b] = [served[0]!.name, served[i + 1]!.name];
        throw new Error(
          `${b} and ${a} differ on ${request.method} ${request.url} ${JSON.stringify(request.body ?? '')}${context === '' ? '' : `\n${context}`}\n${a}: ${first}\n${b}: ${other}`,
        );
      }
    }
    const key = `${request.method} ${first.slice(0, 3)}`;
    this.statuses.set(key, (this.statuses.get(key) ?? 0) + 1);
    return first;
  }

  /** `GET 200: 12, POST 201: 3, ...` */
  summary(): string {
    return [...this.statuses]
      .sort()
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
  }

  async close(): Promise<void> {
    for (const { open } of this.served) await open.close();
  }
}
