// PostgreSQL through a pg pool: one database for every site (a `site` column leads every key), each transaction on
// its own pooled client.
import pg from 'pg';
import type { RawRow, SqlDriver, SqlSession } from './driver.js';

// Dates as their text: pg's default parser makes a local-midnight Date of a `date` column.
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 1082 ? (value: string) => value : pg.types.getTypeParser(oid, format),
};

export function openPostgres(connectionString: string, options: { max?: number } = {}): SqlDriver {
  const pool = new pg.Pool({ connectionString, max: options.max ?? 10, types });
  const on = (client: pg.Pool | pg.PoolClient): SqlSession => ({
    all: async (sql, params = []) => (await client.query(sql, params as unknown[])).rows as RawRow[],
    run: async (sql, params = []) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
  });
  return {
    dialect: 'postgres',
    ...on(pool),
    transaction: async <T>(work: (s: SqlSession) => Promise<T>): Promise<T> => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work(on(client));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    close: async () => pool.end(),
  };
}
