// Support for the hostile-input tests (hostile.property.test.ts, injection-http.test.ts): a raw HTTP/1.1 client over
// node:net (any bytes on the wire: invalid UTF-8, NUL, odd methods, duplicate headers, broken framing), the checks
// every answer must pass (no 5xx, no internals, OData JSON errors), and snapshots of every table of the server's
// databases, read directly through the drivers, to show that a request changed nothing.
import { createHash } from 'node:crypto';
import net from 'node:net';
import type { SqlDriver } from '../../src/service/sql/driver.js';
import type { RunningServer } from './harness.js';

// ── the raw client ───────────────────────────────────────────────────────────

export interface RawAnswer {
  readonly status: number;
  /** Header names in lower case, every value of a repeated header. */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
}

export interface Exchange {
  /** The final answer (interim 1xx answers skipped); undefined when none could be read. */
  readonly answer: RawAnswer | undefined;
  /** Every byte that came back. */
  readonly raw: Buffer;
  readonly timedOut: boolean;
  readonly ms: number;
}

export interface ExchangeOptions {
  /** End our side of the connection once the bytes are written (a body shorter than its Content-Length). */
  readonly halfClose?: boolean;
  /** The request was HEAD: the answer has no body whatever its Content-Length says. */
  readonly head?: boolean;
  readonly timeoutMs?: number;
}

type Parsed = { readonly answer: RawAnswer; readonly complete: boolean } | 'incomplete' | 'invalid';

function decodeChunked(buffer: Buffer, start: number): Buffer | 'incomplete' | 'invalid' {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const lineEnd = buffer.indexOf('\r\n', at);
    if (lineEnd < 0) return 'incomplete';
    const size = Number.parseInt(buffer.subarray(at, lineEnd).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size) || size < 0) return 'invalid';
    if (size === 0) return Buffer.concat(parts);
    if (buffer.length < lineEnd + 2 + size + 2) return 'incomplete';
    parts.push(buffer.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

/** Reads the first final answer in `buffer` (skipping 1xx answers). */
export function parseAnswer(buffer: Buffer, head: boolean): Parsed {
  let offset = 0;
  for (;;) {
    const end = buffer.indexOf('\r\n\r\n', offset);
    if (end < 0) return 'incomplete';
    const lines = buffer.subarray(offset, end).toString('latin1').split('\r\n');
    const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]!);
    if (match === null) return 'invalid';
    const status = Number(match[1]);
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) return 'invalid';
      const name = line.slice(0, colon).trim().toLowerCase();
      headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
    }
    const start = end + 4;
    if (status >= 100 && status < 200) {
      offset = start;
      continue;
    }
    if (head || status === 204 || status === 304)
      return { answer: { status, headers, body: Buffer.alloc(0) }, complete: true };
    if (/chunked/i.test((headers.get('transfer-encoding') ?? []).join(','))) {
      const body = decodeChunked(buffer, start);
      return typeof body === 'string' ? body : { answer: { status, headers, body }, complete: true };
    }
    const length = headers.get('content-length');
    if (length !== undefined) {
      const n = Number(length[0]);
      if (!Number.isSafeInteger(n) || n < 0) return 'invalid';
      if (buffer.length - start < n) return 'incomplete';
      return { answer: { status, headers, body: buffer.subarray(start, start + n) }, complete: true };
    }
    // no framing: the body runs to the end of the connection
    return { answer: { status, headers, body: buffer.subarray(start) }, complete: false };
  }
}

/** Sends `bytes` on a new connection and reads the answer (until it is complete or the server closes). */
export function exchange(port: number, bytes: Buffer, options: ExchangeOptions = {}): Promise<Exchange> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let timedOut = false;
    let done = false;
    const socket = net.connect({ port, host: '127.0.0.1' });
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks);
      const parsed = parseAnswer(raw, options.head === true);
      resolve({
        answer: typeof parsed === 'string' ? undefined : parsed.answer,
        raw,
        timedOut,
        ms: performance.now() - started,
      });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, options.timeoutMs ?? 20_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const parsed = parseAnswer(Buffer.concat(chunks), options.head === true);
      if (typeof parsed !== 'string' && parsed.complete) finish();
    });
    // a server that answers before reading the whole body may reset the connection under our write: keep what came
    socket.on('error', () => finish());
    socket.on('close', () => finish());
    socket.write(bytes, () => {
      if (options.halfClose === true) socket.end();
    });
  });
}

/** A request in bytes: the request line, the headers in order (values as latin1), a blank line and the body. */
export function requestBytes(
  method: string,
  target: string,
  headers: readonly (readonly [string, string])[],
  body: Buffer = Buffer.alloc(0),
  version = 'HTTP/1.1',
): Buffer {
  const head = [`${method} ${target} ${version}`, ...headers.map(([name, value]) => `${name}: ${value}`)].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]);
}

/** A well-formed request with `Connection: close`, Content-Length when there is a body, and the given headers. */
export function simpleRequest(
  port: number,
  method: string,
  target: string,
  headers: Readonly<Record<string, string>>,
  body?: string | Buffer,
): Buffer {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return requestBytes(
    method,
    target,
    [
      ['Host', `127.0.0.1:${port}`],
      ['Connection', 'close'],
      ...Object.entries(headers),
      ...(bytes === undefined ? [] : [['Content-Length', String(bytes.length)] as const]),
    ],
    bytes,
  );
}

// ── what every answer must be ────────────────────────────────────────────────

/**
 * Text that must never reach a client unless the client sent it: stack frames, file paths of the server, names of
 * JavaScript errors and messages of the engine, and database error texts (a sign that input reached the SQL).
 */
export const LEAKS: readonly RegExp[] = [
  /\n\s*at \S/,
  /\bat (?:async )?[\w$.<>]+ \((?:file:|node:|\/)/,
  /\bat (?:file:|node:|\/)\S+:\d+:\d+/,
  /\/work\//,
  /node_modules/,
  /file:\/\//,
  /node:internal/,
  /\.(?:ts|js|mjs|cjs):\d+(?::\d+)?/,
  /\b(?:TypeError|RangeError|ReferenceError|SyntaxError|URIError|EvalError|AggregateError|FastifyError)\b/,
  /\bError: /,
  /Maximum call stack/,
  /Cannot read propert/,
  /is not a function/,
  /is not iterable/,
  /\[object Object\]/,
  /SQLITE_/,
  /sqlite3?_/i,
  /better-sqlite/i,
  /syntax error/i,
  /unrecognized token/i,
  /no such (?:table|column|function)/i,
  /near "/,
  /\brelation "/,
  /\bcolumn "[^"]*" (?:does not exist|of relation)/,
  /violates (?:not-null|unique|check|foreign key)/,
  /duplicate key value/,
  /invalid input syntax/,
  /out of range for type/,
  /unterminated quoted/,
  /\bpg_/,
  /ECONNRESET|EPIPE|ECONNREFUSED/,
];

/** The leaks in `text` that are not quotes of what the client sent (`sent`: the request in every form it was read). */
export function leaksIn(text: string, sent: readonly string[]): string[] {
  const found: string[] = [];
  for (const pattern of LEAKS) {
    const match = pattern.exec(text);
    if (match === null) continue;
    if (sent.some((s) => s.includes(match[0]))) continue;
    found.push(
      `${String(pattern)} matched ${JSON.stringify(text.slice(Math.max(0, match.index - 60), match.index + 80))}`,
    );
  }
  return found;
}

/** The forms a request's text may be quoted in: as bytes (latin1), as UTF-8, and percent-decoded. */
export function sentForms(bytes: Buffer): string[] {
  const latin1 = bytes.toString('latin1');
  const forms = [latin1, bytes.toString('utf8')];
  try {
    forms.push(decodeURIComponent(latin1));
  } catch {
    forms.push(latin1.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))));
  }
  return forms;
}

/**
 * Why an answer is not clean: a 5xx (but a 501 NotImplemented, OData's answer for a valid option the service does not
 * support, documented in docs/errors.md), a status outside 2xx and 4xx, internals in the body, an error that is not OData JSON
 * (`{"error":{"code","message",...}}` with a JSON content type), a 401 without WWW-Authenticate, a 405 without Allow,
 * or a JSON success that does not parse.
 */
export function answerProblems(answer: RawAnswer, sent: readonly string[], head: boolean): string[] {
  const problems: string[] = [];
  const { status } = answer;
  const text = answer.body.toString('utf8');
  const contentType = (answer.headers.get('content-type') ?? []).join(', ');
  let json: unknown;
  let parsed = false;
  try {
    json = JSON.parse(text);
    parsed = true;
  } catch {
    parsed = false;
  }
  const error = parsed && typeof json === 'object' && json !== null ? (json as { error?: unknown }).error : undefined;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  // (a HEAD answer has no body to tell: its GET says NotImplemented, or the GET's check fails)
  const notImplemented = status === 501 && (code === 'NotImplemented' || head);
  if (status >= 500 && !notImplemented) problems.push(`status ${status}`);
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 600)))
    problems.push(`status ${status} is neither a success nor an error`);
  problems.push(...leaksIn(text, sent));
  for (const [name, values] of answer.headers)
    problems.push(...leaksIn(values.join(', '), sent).map((leak) => `header ${name}: ${leak}`));
  if (status >= 400) {
    if (status === 401 && !(answer.headers.get('www-authenticate')?.[0] ?? '').startsWith('Basic '))
      problems.push('a 401 without WWW-Authenticate: Basic');
    if (status === 405 && answer.headers.get('allow') === undefined) problems.push('a 405 without Allow');
    if (!head) {
      if (answer.headers.get('content-type')?.length !== 1 || !/^application\/json(?:;|$)/i.test(contentType))
        problems.push(`an error with content-type ${JSON.stringify(contentType)}`);
      if (!parsed) problems.push('an error body that is not JSON');
      else {
        const keys = typeof json === 'object' && json !== null && !Array.isArray(json) ? Object.keys(json) : [];
        const e = error as Record<string, unknown> | undefined;
        if (keys.length !== 1 || keys[0] !== 'error' || typeof e !== 'object' || e === null || Array.isArray(e))
          problems.push('an error body that is not {"error":{...}}');
        else {
          if (typeof e['code'] !== 'string' || e['code'] === '') problems.push('an error without a code');
          if (typeof e['message'] !== 'string') problems.push('an error without a message');
          if ('target' in e && typeof e['target'] !== 'string') problems.push('an error target that is not text');
          const details = e['details'];
          if (
            details !== undefined &&
            (!Array.isArray(details) ||
              !details.every(
                (d) =>
                  typeof d === 'object' &&
                  d !== null &&
                  typeof (d as Record<string, unknown>)['code'] === 'string' &&
                  typeof (d as Record<string, unknown>)['message'] === 'string',
              ))
          )
            problems.push('error details that are not [{code, message}]');
        }
      }
    }
  } else if (!head && /json/i.test(contentType) && !parsed) {
    problems.push('a JSON success whose body does not parse');
  }
  return problems;
}

/** A short printable account of an answer (or of what came back instead). */
export function describeExchange(result: Exchange): string {
  if (result.answer === undefined)
    return `no answer${result.timedOut ? ' (timed out)' : ''} after ${Math.round(result.ms)} ms; received ${JSON.stringify(result.raw.toString('latin1').slice(0, 300))}`;
  const { status, headers, body } = result.answer;
  const type = (headers.get('content-type') ?? []).join(', ');
  return `${status} [${type}] ${JSON.stringify(body.toString('utf8').slice(0, 600))}`;
}

// ── snapshots of the databases ───────────────────────────────────────────────

/** Table (prefixed with its database) → its rows as canonical text, sorted. */
export type Snapshot = ReadonlyMap<string, readonly string[]>;

interface Database {
  readonly label: string;
  readonly driver: SqlDriver;
}

function isDriver(value: unknown): value is SqlDriver {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as SqlDriver).all === 'function' &&
    typeof (value as SqlDriver).dialect === 'string'
  );
}

/**
 * Every database behind a test server: the directory's (sites, keys, users; reached through its private driver, as
 * only a test may) and each site's (one SQLite file per site; on PostgreSQL one database holds everything).
 */
export async function databasesOf(s: RunningServer, sites: readonly string[]): Promise<Database[]> {
  const databases: Database[] = [];
  const control: unknown = Reflect.get(s.backend.directory, 'driver');
  if (!isDriver(control)) throw new Error('the directory no longer keeps its driver in `driver`: update databasesOf');
  databases.push({ label: 'directory', driver: control });
  for (const site of sites) {
    const driver = (await s.backend.store(site)).driver;
    if (!databases.some((d) => d.driver === driver)) databases.push({ label: site, driver });
  }
  // one database for everything (PostgreSQL)
  return databases.length === 1 ? [{ label: 'database', driver: control }] : databases;
}

function canonical(value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Uint8Array) return `0x${Buffer.from(value).toString('hex')}`;
  if (value instanceof Date) return `date:${value.toISOString()}`;
  return value;
}

async function tableNames(driver: SqlDriver): Promise<string[]> {
  const rows =
    driver.dialect === 'postgres'
      ? await driver.all(
          `SELECT table_name AS "name" FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1`,
        )
      : // the data's tables: not the full-text index's (its FTS5 table, their shadow tables and its table of keys,
        // `<table>_search_rows`), which change with the rows they index
        await driver.all(
          `SELECT "name" FROM pragma_table_list WHERE "schema" = 'main' AND "type" = 'table' AND "name" <> 'sqlite_schema' AND "name" NOT IN (SELECT "name" || '_rows' FROM pragma_table_list WHERE "type" = 'virtual') ORDER BY 1`,
        );
  return rows.map((r) => String(r['name']));
}

/** Every row of every table of every database, read directly. */
export async function snapshot(databases: readonly Database[]): Promise<Snapshot> {
  const result = new Map<string, string[]>();
  for (const { label, driver } of databases) {
    for (const table of await tableNames(driver)) {
      const rows = await driver.all(`SELECT * FROM "${table.replace(/"/g, '""')}"`);
      result.set(
        `${label}.${table}`,
        rows
          .map((row) =>
            JSON.stringify(
              Object.keys(row)
                .sort()
                .map((k) => [k, canonical(row[k])]),
            ),
          )
          .sort(),
      );
    }
  }
  return result;
}

/** A digest of a snapshot (for reports). */
export function digest(s: Snapshot): string {
  const hash = createHash('sha256');
  for (const [table, rows] of [...s].sort(([a], [b]) => a.localeCompare(b)))
    hash.update(`${table}\n${rows.join('\n')}\n`);
  return hash.digest('hex').slice(0, 16);
}

export function rowCount(s: Snapshot): number {
  let n = 0;
  for (const rows of s.values()) n += rows.length;
  return n;
}

/** The differences between two snapshots, readable (empty when they are equal). */
export function snapshotDiff(before: Snapshot, after: Snapshot, limit = 4): string[] {
  const out: string[] = [];
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(table);
    const b = after.get(table);
    if (a === undefined) {
      out.push(`table ${table} appeared (${b!.length} rows)`);
      continue;
    }
    if (b === undefined) {
      out.push(`table ${table} disappeared (had ${a.length} rows)`);
      continue;
    }
    const inA = new Set(a);
    const inB = new Set(b);
    const gone = a.filter((r) => !inB.has(r));
    const added = b.filter((r) => !inA.has(r));
    if (gone.length === 0 && added.length === 0 && a.length === b.length) continue;
    out.push(`table ${table}: ${a.length} → ${b.length} rows`);
    for (const r of gone.slice(0, limit)) out.push(`  - ${r.slice(0, 400)}`);
    for (const r of added.slice(0, limit)) out.push(`  + ${r.slice(0, 400)}`);
  }
  return out;
}

// ── the process ──────────────────────────────────────────────────────────────

const PROTOTYPES: readonly [string, object][] = [
  ['Object.prototype', Object.prototype],
  ['Array.prototype', Array.prototype],
  ['Function.prototype', Function.prototype],
  ['String.prototype', String.prototype],
];

/** The own property names of the built-in prototypes (a polluted one gains a name). */
export function prototypeNames(): Record<string, string[]> {
  return Object.fromEntries(PROTOTYPES.map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()]));
}

/** Names that a pollution would make every object inherit. */
export function inheritedPollution(): string[] {
  const probe: Record<string, unknown> = {};
  return ['polluted', 'isAdmin', 'injected', 'x', 'toJSON', 'then'].filter((name) => name in probe);
}
