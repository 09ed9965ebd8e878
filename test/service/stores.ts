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
import { openMysqlStore } from '../../src/service/mysql.js';
import { openPostgresStore } from '../../src/service/postgres.js';
import { openSqliteStore } from '../../src/service/sqlite.js';
import type { SqlStore } from '../../src/service/sql/sql-store.js';
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

/** The stores this machine offers, by name. */
export async function storeFactories(): Promise<Record<string, StoreFactory>> {
  const factories: Record<string, StoreFactory> = {
    memory: async (model, rows) => ({
      store: new MemoryStore(model, Object.fromEntries(Object.entries(rows).map(([n, list]) => [n, [...list]]))),
      close: async () => undefined,
    }),
    // a store of the tests' own, on the Store contract alone
    tiny: async (model, rows) => ({ store: tinyStore(model, rows), close: async () => undefined }),
    sqlite: async (model, rows) => {
      const dir = mkdtempSync(join(tmpdir(), 'odata-store-'));
      const store = await loaded(await openSqliteStore(join(dir, 'store.db'), { model }), model, rows);
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
      const store = await loaded(await openPostgresStore(url, { model, driver: { max: 3 } }), model, rows);
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
        await openMysqlStore(`${MYSQL}/${database}`, { model, driver: { max: 3 } }),
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
