// What the HTTP benchmark's parent (bench/http.bench.ts) and its server processes (bench/http/server.ts) share: the
// shapes of request, the URLs each server answers them at, and the bare route's hand-written queries.
import Database from 'better-sqlite3';
import pg from 'pg';

export type Storage = 'sqlite' | 'postgres';
export type ServerKind = 'ours' | 'bare' | 'cap';

export const SITE = 'bench';
export const TABLE = 'POLineItems';
/** Rows of the filtered shapes' page. */
export const TOP = 20;
/** Rows of the page shape; the reference server is started with this page size (its default is 100). */
export const PAGE_ROWS = 1000;
/** The fixed URL's price, and the unindexed scans' quantity. */
export const FIXED_PRICE = '100';
export const SCAN_QUANTITY = '90';
/** Connections of every PostgreSQL pool: the reference server's default (openPostgresBackend), the bare route's, CAP's. */
export const PG_POOL = 10;
/** SQLite keeps Decimal(18,4) and Decimal(12,2) as INTEGERs scaled by 10^4 and 10^2 (createTableSql). */
export const SQLITE_MONEY_SCALE = 10_000;
export const SQLITE_QUANTITY_SCALE = 100;
/** CAP's service path (bench/cap/bench.cds). */
export const CAP_ROOT = '/odata/v4/bench';
/** CAP's name for the entity, and its table. */
export const CAP_ENTITY = 'BenchService.POLineItems';
export const CAP_TABLE = 'BenchService_POLineItems';

export const COLUMNS = [
  'PONumber',
  'LineNumber',
  'PartID',
  'Description',
  'QuantityOrdered',
  'QuantityReceived',
  'UnitOfMeasure',
  'UnitPrice',
  'ExtendedPrice',
  'IsTaxable',
  'Account',
  'WorkOrderID',
  'DueDate',
  'Status',
  'CreatedDate',
  'LastModifiedDate',
] as const;

export type Row = Record<string, unknown>;

// ── Shapes ──────────────────────────────────────────────────────────────────

export const SHAPE_NAMES = ['filter-new', 'filter-fixed', 'key', 'page', 'scan', 'count'] as const;
export type ShapeName = (typeof SHAPE_NAMES)[number];

/**
 * The price of the n-th request of `filter-new`: 50.0000 to 149.9999 by steps of 0.0001 in a scrambled order, so that
 * no literal comes back within 1,000,000 requests (7919 is prime to 10^6).
 */
export function newPrice(n: number): string {
  const v = (n * 7919) % 1_000_000;
  return `${50 + Math.floor(v / 10_000)}.${String(v % 10_000).padStart(4, '0')}`;
}

export interface LineKey {
  readonly po: string;
  readonly line: number;
}

/** One request of a shape: its path and query on each server (percent-encoded as a client sends it). */
export interface Target {
  /** After the service root (`/<site>/ODataApi/v1` for ours, CAP_ROOT for CAP). */
  readonly odata: string;
  /** On the bare server, from its root. */
  readonly bare: string;
}

function encode(text: string): string {
  return text.replace(/ /g, '%20').replace(/'/g, '%27');
}

const filterText = (price: string): string =>
  `${TABLE}?$filter=UnitPrice gt ${price} and Status eq 'Open'&$orderby=DueDate desc&$top=${TOP}`;
const scanFilter = `QuantityOrdered gt ${SCAN_QUANTITY}`;

/** The query of each shape as written in the results (the first request, for the varying ones). */
export function shapeText(shape: ShapeName, keys: readonly LineKey[]): string {
  switch (shape) {
    case 'filter-new':
      return filterText(newPrice(0));
    case 'filter-fixed':
      return filterText(FIXED_PRICE);
    case 'key': {
      const k = keys[0]!;
      return `${TABLE}(PONumber='${k.po}',LineNumber=${k.line})`;
    }
    case 'page':
      return `${TABLE}?$orderby=PONumber,LineNumber&$top=${PAGE_ROWS}`;
    case 'scan':
      return `${TABLE}?$filter=${scanFilter}&$orderby=ExtendedPrice desc&$top=${TOP}`;
    case 'count':
      return `${TABLE}/$count?$filter=${scanFilter}`;
  }
}

/** How the requests of a shape vary. */
export function shapeNote(shape: ShapeName): string {
  switch (shape) {
    case 'filter-new':
      return 'a new price literal on every request (50.0000 to 149.9999, none repeated within 1,000,000 requests)';
    case 'filter-fixed':
      return 'one fixed URL';
    case 'key':
      return 'a different real key on every request (every key of the site, shuffled)';
    case 'page':
      return 'one fixed URL, 1,000 entities';
    case 'scan':
      return 'one fixed URL; neither column is indexed: a full scan and a sort';
    case 'count':
      return 'one fixed URL; a full scan';
  }
}

/** The n-th request of a shape. */
export function target(shape: ShapeName, n: number, keys: readonly LineKey[]): Target {
  switch (shape) {
    case 'filter-new':
    case 'filter-fixed': {
      const price = shape === 'filter-new' ? newPrice(n) : FIXED_PRICE;
      return { odata: encode(filterText(price)), bare: `/bare/filter?price=${price}` };
    }
    case 'key': {
      const k = keys[n % keys.length]!;
      return {
        odata: encode(`${TABLE}(PONumber='${k.po}',LineNumber=${k.line})`),
        bare: `/bare/key?po=${encodeURIComponent(k.po)}&line=${k.line}`,
      };
    }
    case 'page':
      return { odata: encode(shapeText('page', keys)), bare: '/bare/page' };
    case 'scan':
      return { odata: encode(shapeText('scan', keys)), bare: '/bare/scan' };
    case 'count':
      return { odata: encode(shapeText('count', keys)), bare: '/bare/count' };
  }
}

/** Shapes whose time is the database's: the unindexed scans. */
export function databaseBound(shape: ShapeName): boolean {
  return shape === 'scan' || shape === 'count';
}

// ── The bare route's queries ────────────────────────────────────────────────

export interface Statement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** The hand-written queries, on a connection (SQLite) or pool (PostgreSQL) of their own. */
export interface BareQueries {
  readonly filter: (price: string) => Promise<Row[]>;
  readonly key: (po: string, line: number) => Promise<Row | undefined>;
  readonly page: () => Promise<Row[]>;
  readonly scan: () => Promise<Row[]>;
  readonly count: () => Promise<number>;
  /** The statements of the fixed filter, the page and the scan, with their parameters (for EXPLAIN). */
  readonly statements: { readonly filter: Statement; readonly page: Statement; readonly scan: Statement };
  readonly close: () => Promise<void>;
}

/**
 * SQLite: one better-sqlite3 connection (read only) to the site's file, prepared statements; decimals scaled back in
 * SQL, IsTaxable from 0/1 to a Boolean, so that the JSON holds the same values as ours.
 */
export function sqliteBare(file: string): BareQueries {
  const db = new Database(file, { readonly: true });
  const scaled = (name: string, scale: number): string => `"${name}" / ${scale}.0 AS "${name}"`;
  const select = COLUMNS.map((c) =>
    c === 'UnitPrice' || c === 'ExtendedPrice'
      ? scaled(c, SQLITE_MONEY_SCALE)
      : c === 'QuantityOrdered' || c === 'QuantityReceived'
        ? scaled(c, SQLITE_QUANTITY_SCALE)
        : `"${c}"`,
  ).join(', ');
  const filterSql =
    `SELECT ${select} FROM "${TABLE}" WHERE "UnitPrice" > ? AND "Status" = 'Open' ` +
    `ORDER BY "DueDate" DESC, "PONumber", "LineNumber" LIMIT ${TOP}`;
  const keySql = `SELECT ${select} FROM "${TABLE}" WHERE "PONumber" = ? AND "LineNumber" = ?`;
  const pageSql = `SELECT ${select} FROM "${TABLE}" ORDER BY "PONumber", "LineNumber" LIMIT ${PAGE_ROWS}`;
  const scanQuantity = Number(SCAN_QUANTITY) * SQLITE_QUANTITY_SCALE;
  const scanSql =
    `SELECT ${select} FROM "${TABLE}" WHERE "QuantityOrdered" > ? ` +
    `ORDER BY "ExtendedPrice" DESC, "PONumber", "LineNumber" LIMIT ${TOP}`;
  const countSql = `SELECT count(*) AS n FROM "${TABLE}" WHERE "QuantityOrdered" > ?`;
  const filter = db.prepare(filterSql);
  const key = db.prepare(keySql);
  const page = db.prepare(pageSql);
  const scan = db.prepare(scanSql);
  const count = db.prepare(countSql);
  const booleans = (rows: Row[]): Row[] => {
    for (const r of rows) if (r['IsTaxable'] !== null) r['IsTaxable'] = r['IsTaxable'] === 1;
    return rows;
  };
  const price = (text: string): number => Math.round(Number(text) * SQLITE_MONEY_SCALE);
  return {
    filter: async (p) => booleans(filter.all(price(p)) as Row[]),
    key: async (po, line) => booleans(key.all(po, line) as Row[])[0],
    page: async () => booleans(page.all() as Row[]),
    scan: async () => booleans(scan.all(scanQuantity) as Row[]),
    count: async () => (count.get(scanQuantity) as { n: number }).n,
    statements: {
      filter: { sql: filterSql, params: [price(FIXED_PRICE)] },
      page: { sql: pageSql, params: [] },
      scan: { sql: scanSql, params: [scanQuantity] },
    },
    close: async () => {
      db.close();
    },
  };
}

/** Dates as their text, as the reference server's pool reads them, and numerics as numbers (the JSON ours writes). */
export const pgTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === 1082
      ? (value: string) => value
      : oid === 1700
        ? (value: string) => Number(value)
        : pg.types.getTypeParser(oid, format),
};

/**
 * PostgreSQL: a pool of PG_POOL connections (the reference server's), unnamed parameterised statements (as the
 * reference server sends them), the site's rows of the shared table.
 */
export function postgresBare(url: string): BareQueries {
  const pool = new pg.Pool({ connectionString: url, max: PG_POOL, types: pgTypes });
  const select = COLUMNS.map((c) => `"${c}"`).join(', ');
  const filterSql =
    `SELECT ${select} FROM "${TABLE}" WHERE "site" = $1 AND "UnitPrice" > $2 AND "Status" = 'Open' ` +
    `ORDER BY "DueDate" DESC NULLS LAST, "PONumber", "LineNumber" LIMIT ${TOP}`;
  const keySql = `SELECT ${select} FROM "${TABLE}" WHERE "site" = $1 AND "PONumber" = $2 AND "LineNumber" = $3`;
  const pageSql = `SELECT ${select} FROM "${TABLE}" WHERE "site" = $1 ORDER BY "PONumber", "LineNumber" LIMIT ${PAGE_ROWS}`;
  const scanSql =
    `SELECT ${select} FROM "${TABLE}" WHERE "site" = $1 AND "QuantityOrdered" > $2 ` +
    `ORDER BY "ExtendedPrice" DESC, "PONumber", "LineNumber" LIMIT ${TOP}`;
  const countSql = `SELECT count(*)::int AS n FROM "${TABLE}" WHERE "site" = $1 AND "QuantityOrdered" > $2`;
  const rows = async (sql: string, params: unknown[]): Promise<Row[]> => (await pool.query(sql, params)).rows as Row[];
  return {
    filter: (price) => rows(filterSql, [SITE, price]),
    key: async (po, line) => (await rows(keySql, [SITE, po, line]))[0],
    page: () => rows(pageSql, [SITE]),
    scan: () => rows(scanSql, [SITE, SCAN_QUANTITY]),
    count: async () => Number((await rows(countSql, [SITE, SCAN_QUANTITY]))[0]!['n']),
    statements: {
      filter: { sql: filterSql, params: [SITE, FIXED_PRICE] },
      page: { sql: pageSql, params: [SITE] },
      scan: { sql: scanSql, params: [SITE, SCAN_QUANTITY] },
    },
    close: () => pool.end(),
  };
}

// ── Between the parent and its servers ──────────────────────────────────────

/** How the parent starts a server process (JSON in the environment variable HTTP_BENCH_SERVER). */
export interface ServerConfig {
  readonly kind: ServerKind;
  readonly storage: Storage;
  /** SQLite: the data directory (ours), the site's file (bare), CAP's own file (cap). */
  readonly dataDir?: string;
  readonly file?: string;
  /** PostgreSQL: the connection URL with the schema as search_path (ours, bare); CAP's schema of its own. */
  readonly url?: string;
  readonly capSchema?: string;
}

/** From the parent: a request with its id. */
export type ParentMessage =
  | { readonly id: number; readonly op: 'cpu' }
  | { readonly id: number; readonly op: 'load'; readonly file: string; readonly indexes: readonly string[] }
  | { readonly id: number; readonly op: 'capture'; readonly on: boolean }
  | { readonly id: number; readonly op: 'explain' }
  | { readonly id: number; readonly op: 'close' };

/** CPU time of the server process since it started (all its threads), and the requests it has finished. */
export interface CpuReading {
  readonly userUs: number;
  readonly systemUs: number;
  readonly received: number;
  readonly finished: number;
}

/** From a server: `ready` once it listens, then one answer per request. */
export type ChildMessage =
  | { readonly op: 'ready'; readonly port: number; readonly label: string }
  | { readonly op: 'answer'; readonly id: number; readonly result: unknown }
  | { readonly op: 'failed'; readonly id: number; readonly error: string };
