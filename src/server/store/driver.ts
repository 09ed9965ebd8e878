// The smallest database surface the site store needs, so that one SQL store serves SQLite and PostgreSQL alike.
import type { SqlDialectName, SqlParam } from '../../backends/sql/index.js';

export type RawRow = Record<string, unknown>;

/** Statements run inside one transaction: all of them land, or none does. */
export interface SqlSession {
  all(sql: string, params?: readonly SqlParam[]): Promise<RawRow[]>;
  run(sql: string, params?: readonly SqlParam[]): Promise<number>;
}

export interface SqlDriver extends SqlSession {
  readonly dialect: SqlDialectName;
  /** Runs `work` in a transaction (serializable where the database offers it cheaply); rolls back on a throw. */
  transaction<T>(work: (session: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** SQLSTATE / SQLite codes that mean "a row with this key exists". */
export function isDuplicateKey(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}
