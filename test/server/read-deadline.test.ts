// SQLite reads with the emitter's deadline checks (SqlOptions.deadlineChecks, written into every read of a
// collection): a quick one runs on the server's thread, where it costs less than a reader's round trip; one that is
// not done within `inlineReadMs` is stopped by its own row check and runs on a reader with the whole budget; there,
// a statement in SQLite's own code stops at the budget by itself, so its reader is neither terminated nor left stuck.
// Real files, real reader threads, real statements.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ODataError } from '../../src/errors.js';
import { openSqliteBackend } from '../../src/server/backend.js';
import { loadDemoSite } from '../../src/server/demo-site.js';
import { collection } from '../../src/server/collections.js';
import { openSqlite } from '../../src/service/sql/sqlite.js';
import { SqliteReadPool } from '../../src/service/sql/sqlite-pool.js';
import { parseQuery } from '../../src/syntax/query-string.js';
import { validateQuery } from '../../src/validate/bind.js';
import { watchEventLoop } from './harness.js';

/** A statement with the row check that runs in SQLite's own code for minutes unless stopped. */
const HEAVY =
  'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE odata_deadline() AND n < 2000000000) SELECT count(*) AS n FROM c';
/** The same without the check: only terminating its thread stops it (and not inside the step). */
const HEAVY_UNCHECKED =
  'WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3000000) SELECT count(*) AS n FROM c';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'odata-deadline-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A data directory with the demo site `north` (sites/north.db). */
async function demoSite(): Promise<string> {
  const dir = tempDir();
  const backend = await openSqliteBackend(dir, { readerThreads: 0 });
  await loadDemoSite(backend, 'north');
  await backend.close();
  return dir;
}

async function timed<T>(work: Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = performance.now();
  try {
    return { ms: performance.now() - started, value: await work };
  } catch (error) {
    return { ms: performance.now() - started, error };
  }
}

describe('SQLite reads with deadline checks', () => {
  it('run on the calling thread when quick, and go to a reader when not, with the whole budget', async () => {
    const dir = await demoSite();
    const pool = new SqliteReadPool({ threads: 1, queryTimeoutMs: 800 });
    cleanups.push(() => pool.close());
    const driver = openSqlite(join(dir, 'sites', 'north.db'), { reads: pool, inlineReadMs: 20 });
    cleanups.push(() => driver.close());
    const toReader = vi.spyOn(pool, 'read');

    // a page of an index read, as the service writes it: on this thread
    const store = await (await openSqliteBackend(dir, { readerThreads: 0 })).store('north');
    const c = collection('POLineItems');
    const statements = store.readStatements(
      c,
      validateQuery(parseQuery('$filter=QuantityOrdered ge 0&$orderby=PONumber,LineNumber&$top=20'), c.entityType),
    );
    await store.driver.close();
    expect(statements.rows.sql).toContain('WHERE ((t0.rowid & 63) <> 0 OR odata_deadline()) AND ');
    const rows = await driver.all(statements.rows.sql, statements.rows.params);
    expect(rows.length).toBe(20);
    expect(toReader).not.toHaveBeenCalled();

    // a statement that would run for minutes: stopped here within the inline try, then stopped by the reader at its
    // budget, which answers 504 and stays alive
    const watch = watchEventLoop(5);
    const heavy = await timed(driver.all(HEAVY));
    const worstLag = watch.stop();
    expect(toReader).toHaveBeenCalledTimes(1);
    expect(heavy.error).toBeInstanceOf(ODataError);
    expect((heavy.error as ODataError).code).toBe('QueryTimeout');
    expect(heavy.ms).toBeGreaterThanOrEqual(800);
    expect(heavy.ms).toBeLessThan(800 + 20 + 500);
    expect(worstLag).toBeLessThan(200); // the inline try is 20 ms; the rest ran on the reader
    expect(pool.state.stopping).toBe(0); // not terminated: it stopped itself
    // the same reader answers at once
    const after = await timed(driver.all('SELECT count(*) AS n FROM "Accounts"'));
    expect(after.error).toBeUndefined();
    expect(after.ms).toBeLessThan(500);
    expect(pool.state.stopping).toBe(0);
  });

  it('go straight to a reader once they were twice too slow to finish inline', async () => {
    const dir = tempDir();
    const pool = new SqliteReadPool({ threads: 1, queryTimeoutMs: 100 });
    cleanups.push(() => pool.close());
    const driver = openSqlite(join(dir, 'x.db'), { reads: pool, inlineReadMs: 10 });
    cleanups.push(() => driver.close());
    const blocked: number[] = [];
    for (let i = 0; i < 4; i++) {
      const started = performance.now();
      const call = driver.all(HEAVY); // the inline try, if any, runs before this returns
      blocked.push(performance.now() - started);
      expect(((await call.catch((e: unknown) => e)) as ODataError).code).toBe('QueryTimeout');
    }
    // tried here twice (the first failure may only have been a cold cache), then sent to the reader at once
    expect(blocked[0]).toBeGreaterThanOrEqual(10);
    expect(blocked[1]).toBeGreaterThanOrEqual(10);
    for (const ms of blocked.slice(2)) expect(ms).toBeLessThan(5);
  });

  it('cost the calling thread at most about 50 ms a second when they fail, however many heavy queries arrive', async () => {
    const dir = tempDir();
    const pool = new SqliteReadPool({ threads: 1, queryTimeoutMs: 30, acquireTimeoutMs: 10_000 });
    cleanups.push(() => pool.close());
    const driver = openSqlite(join(dir, 'x.db'), { reads: pool, inlineReadMs: 10 });
    cleanups.push(() => driver.close());
    const blocked: number[] = [];
    const calls: Promise<unknown>[] = [];
    for (let i = 0; i < 12; i++) {
      const started = performance.now();
      calls.push(driver.all(`/* ${i} */ ${HEAVY}`).catch((e: unknown) => e)); // a new statement each time
      blocked.push(performance.now() - started);
    }
    for (const outcome of await Promise.all(calls)) expect((outcome as ODataError).code).toBe('QueryTimeout');
    const tried = blocked.filter((ms) => ms >= 10).length;
    expect(tried).toBeGreaterThanOrEqual(4);
    expect(tried).toBeLessThanOrEqual(6); // 50 ms of tries of 10 ms, and what refilled meanwhile
  });

  it('never run on the calling thread while a transaction is open on its connection', async () => {
    const dir = await demoSite();
    const pool = new SqliteReadPool({ threads: 1 });
    cleanups.push(() => pool.close());
    const driver = openSqlite(join(dir, 'sites', 'north.db'), { reads: pool });
    cleanups.push(() => driver.close());
    const sql = 'SELECT count(*) AS n FROM "Accounts" WHERE odata_deadline()';
    const [before] = await driver.all(sql);
    let inside: unknown;
    await driver
      .transaction(async (session) => {
        await session.run(`DELETE FROM "Accounts"`);
        // another request's read meanwhile must see the committed rows, not this transaction's
        inside = (await driver.all(sql))[0];
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(inside).toEqual(before);
    expect(Number((before as { n: bigint }).n)).toBeGreaterThan(0);
  });

  it('stop at the budget on the calling thread without readers (504), and leave other statements alone', async () => {
    const dir = tempDir();
    const driver = openSqlite(join(dir, 'x.db'), { queryTimeoutMs: 300 });
    cleanups.push(() => driver.close());
    const heavy = await timed(driver.all(HEAVY));
    expect((heavy.error as ODataError).code).toBe('QueryTimeout');
    expect(heavy.ms).toBeLessThan(300 + 500);
    const [row] = await driver.all(HEAVY_UNCHECKED);
    expect(row!['n']).toBe(3_000_000n);
  });

  it('stop a checked statement on a reader thread at the budget without terminating it; an unchecked one is terminated', async () => {
    const dir = await demoSite();
    const pool = new SqliteReadPool({ threads: 1, queryTimeoutMs: 300 });
    cleanups.push(() => pool.close());
    const file = join(dir, 'sites', 'north.db');
    const checked = await timed(pool.read(file, HEAVY, []));
    expect((checked.error as ODataError).code).toBe('QueryTimeout');
    expect(pool.state.stopping).toBe(0);
    expect(pool.state.idle + pool.state.running).toBe(1);
    const unchecked = await timed(pool.read(file, HEAVY_UNCHECKED.replace('3000000', '2000000000'), []));
    expect((unchecked.error as ODataError).code).toBe('QueryTimeout');
    expect(unchecked.ms).toBeGreaterThanOrEqual(300 + 100); // the grace for statements that stop themselves
    expect(pool.state.stopping).toBe(1); // terminated, still inside SQLite's step
  });
});
