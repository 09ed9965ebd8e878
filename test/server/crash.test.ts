// Crash durability of the reference server, on SQLite files and on PostgreSQL: `odata-engine serve` runs as a child
// process and takes a concurrent mix of writes (POSTs of purchase requests, orders and their lines, PATCHes, meter
// readings, the AddComment action), is killed with SIGKILL at a random moment, and is started again on the same data,
// round after round. After every restart, for everything sent in any round so far:
// - a write answered 2xx is there, once, with the values it was answered with (a PATCH: the entity it answered, or a
//   later PATCH of the same entity that was killed in flight);
// - a write answered otherwise left nothing (every write here is valid: any such answer is a failure too);
// - a write killed in flight may be there or not, but whole;
// - multi-row operations are all or nothing: a meter's history and its current reading agree (the current one is the
//   latest reading, stamped when that reading was recorded; ReadingIDs are 1..n), a work order's LastModifiedDate is
//   its newest comment's CreatedDate (CommentIDs are 1..n), a line's computed price is its quantity × unit price, and
//   the per-site sequence that numbers purchase requests and orders is never behind a stored number (read directly
//   in the database). (MODEL.md keeps no header totals, so there are none to check.)
// A second test does the same with $batch change sets alone, on storage of its own (see "change sets" below).
// Replay with CRASH_SEED=<the printed seed>: the mix and the kill delays follow it; which requests are in flight at
// the kill still depends on timing. CRASH_ROUNDS and CRASH_BATCH_ROUNDS set the number of kills of each test.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storages } from './harness.js';

const kinds = await storages();
const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
const POSTGRES = 'postgres://postgres@127.0.0.1:5432/test';
const ROUNDS = Number(process.env['CRASH_ROUNDS'] ?? 20);
const SEED = process.env['CRASH_SEED'] === undefined ? randomInt(2 ** 31) : Number(process.env['CRASH_SEED']);
const SITE = 'demo';
/** Meters that only this test writes (new: no history before the first reading). */
const METERS = ['CRM-1', 'CRM-2', 'CRM-3', 'CRM-4'];

type Row = Record<string, unknown>;

/** mulberry32: a small seeded PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ── the server as a child process ──────────────────────────────────────────────

interface Child {
  readonly process: ChildProcess;
  /** `http://127.0.0.1:PORT/demo/ODataApi/v1` */
  readonly root: string;
  readonly key: string | undefined;
  output(): string;
}

const running = new Set<ChildProcess>();

function startServer(storageArgs: readonly string[], demo: boolean): Promise<Child> {
  const env = { ...process.env };
  delete env['DATABASE_URL'];
  const args = ['--import', 'tsx', cli, 'serve', '--port', '0', '--log-level', 'warn', '--rate-limit', '0'];
  args.push('--page-size', '100000', ...storageArgs, ...(demo ? ['--demo'] : []));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the server did not start in 60 s:\n${output}`));
    }, 60_000);
    const look = (): void => {
      const origin = /odata-engine serving on (http:\/\/[^\s/]+)/.exec(output)?.[1];
      const key = /a new API key for it: (\S+)/.exec(output)?.[1];
      if (origin === undefined || (demo && key === undefined)) return;
      clearTimeout(timer);
      child.stdout!.off('data', look);
      resolve({ process: child, root: `${origin}/${SITE}/ODataApi/v1`, key, output: () => output });
    };
    child.stdout!.on('data', look);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before it served:\n${output}`));
    });
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

// ── what was sent, and what came back ─────────────────────────────────────────

type Kind = 'pr' | 'po' | 'prLine' | 'poLine' | 'patch' | 'meter' | 'comment';
const KINDS: readonly Kind[] = ['pr', 'po', 'prLine', 'poLine', 'patch', 'meter', 'comment'];

interface Sent {
  /** `cr-N` for a create or an action, `cp-N` for a PATCH: the value that finds what it wrote. */
  readonly marker: string;
  readonly round: number;
  readonly kind: Kind;
  readonly method: 'POST' | 'PATCH';
  /** Relative to the service root. */
  readonly path: string;
  readonly body: Row;
  readonly minimal: boolean;
  readonly target?: PatchTarget;
  readonly workOrder?: string;
  readonly meter?: string;
  /** ack: answered 2xx; rejected: answered otherwise; lost: no answer (killed in flight). */
  outcome: 'pending' | 'ack' | 'rejected' | 'lost';
  status?: number;
  /** The entity a 2xx answered with (none for 204, or when the body was cut off). */
  answer?: Row;
  error?: string;
}

function describeSent(s: Sent): string {
  const answer =
    s.outcome === 'ack'
      ? `${s.status}`
      : s.outcome === 'rejected'
        ? `${s.status} ${s.error}`
        : `no answer (${s.error})`;
  return `[round ${s.round} ${s.method} ${s.path} ${JSON.stringify(s.body)}${s.minimal ? ' return=minimal' : ''} → ${answer}]`;
}

/** An entity that PATCHes change; at most one PATCH of it is in flight at a time. */
interface PatchTarget {
  readonly set: 'PurchaseRequests' | 'PurchaseOrders' | 'POLineItems';
  readonly key: Row;
  readonly label: string;
  /** The fields every PATCH of it writes. */
  readonly fields: readonly string[];
  /** The whole entity as last observed after a restart. */
  baseline: Row;
  /** The PATCHes sent since the baseline was observed, in the order sent (each after the previous one ended). */
  since: Sent[];
  busy: boolean;
}

interface State {
  readonly sent: Sent[];
  readonly byMarker: Map<string, Sent>;
  readonly prHeaders: string[];
  readonly poHeaders: string[];
  readonly targets: PatchTarget[];
  /** Work orders that get comments, and each as last observed. */
  readonly workOrders: Map<string, Row>;
  counter: number;
}

/** Equal as the service means it: instants as instants (`.000Z` or not), numbers as numbers, the rest exactly. */
function same(a: unknown, b: unknown): boolean {
  const instant = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;
  if (typeof a === 'string' && typeof b === 'string' && instant.test(a) && instant.test(b))
    return Date.parse(a) === Date.parse(b);
  return a === b || (a === undefined && b === null) || (a === null && b === undefined);
}

/** The fields of `expected` (an answered entity or a sent body) that `stored` does not hold. */
function differences(stored: Row, expected: Row): string[] {
  return Object.keys(expected)
    .filter((k) => !k.startsWith('@') && !same(stored[k], expected[k]))
    .map((k) => `${k}: expected ${JSON.stringify(expected[k])}, stored ${JSON.stringify(stored[k])}`);
}

/** q × p rounded half away from zero to 4 places, in units of 0.0001 (q has 2 places, p 4, both ≥ 0). */
function product(q: unknown, p: unknown): number | undefined {
  if (typeof q !== 'number' || typeof p !== 'number') return undefined;
  return Math.floor((Math.round(q * 100) * Math.round(p * 10_000) + 50) / 100);
}

const pathKey = (id: string): string => encodeURIComponent(`'${id.replace(/'/g, "''")}'`);

// ── HTTP ──────────────────────────────────────────────────────────────────────

async function getJson(child: Child, url: string): Promise<{ status: number; body: Row }> {
  const response = await fetch(url.startsWith('http') ? url : `${child.root}/${url}`, {
    headers: { API_KEY: key(child) },
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Row) };
}

/** Every entity of a collection (following next links). */
async function getAll(child: Child, path: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (let url: string | undefined = path; url !== undefined;) {
    const { status, body } = await getJson(child, url);
    if (status !== 200) throw new Error(`GET ${url}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
    rows.push(...(body['value'] as Row[]));
    url = body['@odata.nextLink'] as string | undefined;
  }
  return rows;
}

async function getOne(child: Child, path: string): Promise<Row | undefined> {
  const { status, body } = await getJson(child, path);
  if (status === 404) return undefined;
  if (status !== 200) throw new Error(`GET ${path}: ${status} ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

let apiKey: string | undefined;
const key = (child: Child): string => child.key ?? apiKey!;

async function send(child: Child, s: Sent, killed: () => boolean): Promise<void> {
  try {
    const headers: Record<string, string> = { API_KEY: key(child), 'content-type': 'application/json' };
    if (s.minimal) headers['prefer'] = 'return=minimal';
    const response = await fetch(`${child.root}/${s.path}`, {
      method: s.method,
      headers,
      body: JSON.stringify(s.body),
    });
    s.status = response.status;
    const text = await response.text().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) {
      s.outcome = 'ack';
      try {
        if (text !== undefined && text !== '') s.answer = JSON.parse(text) as Row;
      } catch {
        // a body cut off by the kill: the status was the acknowledgement
      }
    } else {
      s.outcome = 'rejected';
      s.error = (text ?? '').slice(0, 300);
    }
  } catch (error) {
    s.outcome = 'lost';
    const cause = (error as { cause?: unknown }).cause;
    s.error = `${String(error)}${cause === undefined ? '' : `: ${String(cause)}`}`.slice(0, 200);
    if (!killed()) s.error = `before the kill: ${s.error}`;
  }
}

// ── the load ──────────────────────────────────────────────────────────────────

function pick<T>(rng: () => number, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)]!;
}

/** The next request of a worker: a create, a PATCH of a free target, a meter reading or a comment. */
function nextRequest(state: State, rng: () => number, round: number): Sent {
  const n = ++state.counter;
  const marker = `cr-${n}`;
  const quantity = (1 + Math.floor(rng() * 99_999)) / 100;
  const price = Math.floor(rng() * 10_000_000) / 10_000;
  const base = { round, outcome: 'pending' as const, minimal: false };
  const r = rng();
  if (r < 0.12) {
    const body = { Description: marker, RequestedBy: 'CRASH', Priority: 1 + Math.floor(rng() * 5), Notes: `n${n}` };
    return { ...base, marker, kind: 'pr', method: 'POST', path: 'PurchaseRequests', body };
  }
  if (r < 0.22) {
    const body = { VendorID: 'V-0001', VendorName: marker, Notes: marker, FreightAmount: price };
    return { ...base, marker, kind: 'po', method: 'POST', path: 'PurchaseOrders', body };
  }
  if (r < 0.36) {
    const body = {
      PRNumber: pick(rng, state.prHeaders),
      Description: marker,
      Quantity: quantity,
      UnitOfMeasure: 'EA',
      EstimatedUnitCost: price,
    };
    return { ...base, marker, kind: 'prLine', method: 'POST', path: 'PRLineItems', body };
  }
  if (r < 0.48) {
    const body = {
      PONumber: pick(rng, state.poHeaders),
      Description: marker,
      QuantityOrdered: quantity,
      UnitOfMeasure: 'EA',
      UnitPrice: price,
    };
    return { ...base, marker, kind: 'poLine', method: 'POST', path: 'POLineItems', body };
  }
  const free = state.targets.filter((t) => !t.busy);
  if (r < 0.66 && free.length > 0) {
    const target = pick(rng, free);
    const patchMarker = `cp-${n}`;
    const minimal = rng() < 0.3;
    let path: string;
    let body: Row;
    if (target.set === 'PurchaseRequests') {
      // the interface's form: the key in the body
      path = 'PurchaseRequests';
      body = { PRNumber: target.key['PRNumber'], Notes: patchMarker, Priority: 1 + Math.floor(rng() * 5) };
    } else if (target.set === 'PurchaseOrders') {
      path = `PurchaseOrders(${pathKey(String(target.key['PONumber']))})`;
      body = { Notes: patchMarker, Buyer: `b${n}` };
    } else {
      path = `POLineItems(PONumber=${pathKey(String(target.key['PONumber']))},LineNumber=${String(target.key['LineNumber'])})`;
      body = { Description: patchMarker, QuantityOrdered: quantity };
    }
    return { ...base, marker: patchMarker, kind: 'patch', method: 'PATCH', path, body, target, minimal };
  }
  if (r < 0.82) {
    const meter = pick(rng, METERS);
    const body = {
      MeterID: meter,
      Description: marker,
      MeterReading: Math.floor(rng() * 1_000_000) / 100,
      Unit: 'PSI',
      // out of order on purpose: the current reading is the latest ReadingDate, not the last posted
      ReadingDate: new Date(Date.UTC(2024, 0, 1) + Math.floor(rng() * 1_000_000) * 60_000).toISOString(),
      Event: `e${n % 7}`,
    };
    return { ...base, marker, kind: 'meter', method: 'POST', path: 'MeterReadings', body, meter };
  }
  const workOrder = pick(rng, [...state.workOrders.keys()]);
  const path = `WorkOrders(${pathKey(workOrder)})/AddComment`;
  return {
    ...base,
    marker,
    kind: 'comment',
    method: 'POST',
    path,
    body: { Comment: marker, Username: 'crash' },
    workOrder,
  };
}

interface RoundReport {
  readonly concurrency: number;
  readonly delay: number;
  readonly sent: number;
  readonly acked: number;
  readonly lost: number;
}

/** Writes from `concurrency` workers until the server is killed, `delay` ms after the first request. */
async function load(child: Child, state: State, rng: () => number, round: number): Promise<RoundReport> {
  const concurrency = 8 + Math.floor(rng() * 9);
  const delay = rng() < 0.25 ? rng() * 30 : 30 + rng() * 870;
  let killed = false;
  const mine: Sent[] = [];
  const worker = async (): Promise<void> => {
    while (!killed) {
      const s = nextRequest(state, rng, round);
      state.sent.push(s);
      state.byMarker.set(s.marker, s);
      mine.push(s);
      if (s.target !== undefined) {
        s.target.busy = true;
        s.target.since.push(s);
      }
      await send(child, s, () => killed);
      if (s.target !== undefined) s.target.busy = false;
      if (s.outcome === 'ack' && s.answer !== undefined) {
        if (s.kind === 'pr') state.prHeaders.push(String(s.answer['PRNumber']));
        if (s.kind === 'po') state.poHeaders.push(String(s.answer['PONumber']));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((resolve) => setTimeout(resolve, delay));
  killed = true;
  await kill(child.process);
  await Promise.all(workers);
  return {
    concurrency,
    delay: Math.round(delay),
    sent: mine.length,
    acked: mine.filter((s) => s.outcome === 'ack').length,
    lost: mine.filter((s) => s.outcome === 'lost').length,
  };
}

// ── the checks after a restart ────────────────────────────────────────────────

interface Observed {
  readonly sets: Readonly<Record<'PurchaseRequests' | 'PurchaseOrders' | 'PRLineItems' | 'POLineItems', Row[]>>;
  readonly workOrders: Map<string, { workOrder: Row | undefined; comments: Row[] }>;
  /** A meter's history is readable over HTTP only while it has a current reading: the count is read in the database. */
  readonly meters: Map<string, { current: Row | undefined; history: Row[]; stored: number }>;
  /** odata_sequences of the site, read in the database. */
  readonly sequences: Map<string, number>;
}

/** Read-only SQL on the server's data: the site's SQLite file, or the test's PostgreSQL schema. */
interface Direct {
  /** The site's odata_sequences: name → value. */
  sequences(): Promise<Map<string, number>>;
  /** The site's MeterReadingHistory rows per MeterID. */
  historyCounts(): Promise<Map<string, number>>;
}

async function observe(child: Child, state: State, direct: Direct): Promise<Observed> {
  const [prs, pos, prLines, poLines] = await Promise.all(
    ['PurchaseRequests', 'PurchaseOrders', 'PRLineItems', 'POLineItems'].map((set) => getAll(child, set)),
  );
  const workOrders = new Map(
    await Promise.all(
      [...state.workOrders.keys()].map(
        async (id) =>
          [
            id,
            {
              workOrder: await getOne(child, `WorkOrders(${pathKey(id)})`),
              comments: await getAll(child, `WorkOrders(${pathKey(id)})/Comments`),
            },
          ] as const,
      ),
    ),
  );
  const counts = await direct.historyCounts();
  const meters = new Map(
    await Promise.all(
      METERS.map(async (id) => {
        const current = await getOne(child, `MeterReadings(${pathKey(id)})`);
        const history = current === undefined ? [] : await getAll(child, `MeterReadings(${pathKey(id)})/History`);
        return [id, { current, history, stored: counts.get(id) ?? 0 }] as const;
      }),
    ),
  );
  const sets = { PurchaseRequests: prs!, PurchaseOrders: pos!, PRLineItems: prLines!, POLineItems: poLines! };
  return { sets, workOrders, meters, sequences: await direct.sequences() };
}

/** What is wrong with the data, as sentences naming the request; empty when every check holds. */
function check(state: State, seen: Observed): string[] {
  const problems: string[] = [];
  const writtenBy = (marker: unknown, kind: Kind, where: string): Sent | undefined => {
    const s = state.byMarker.get(String(marker));
    if (s === undefined || s.kind !== kind) {
      problems.push(`${where} holds ${String(marker)}, which no ${kind} request sent`);
      return undefined;
    }
    if (s.outcome === 'rejected') problems.push(`${where} holds the write of ${describeSent(s)}, which was refused`);
    return s;
  };
  // every write sent is valid: each is answered 2xx or, killed in flight, not at all
  for (const s of state.sent) {
    if (s.outcome === 'rejected') problems.push(`refused: ${describeSent(s)}`);
    if (s.outcome === 'lost' && s.error?.startsWith('before the kill') === true)
      problems.push(`failed before the kill: ${describeSent(s)}`);
  }

  // creates: once each, with what they were answered
  const creates = [
    { kind: 'pr', set: 'PurchaseRequests', marker: 'Description', key: ['PRNumber'] },
    { kind: 'po', set: 'PurchaseOrders', marker: 'VendorName', key: ['PONumber'] },
    { kind: 'prLine', set: 'PRLineItems', marker: 'Description', key: ['PRNumber', 'LineNumber'] },
    { kind: 'poLine', set: 'POLineItems', marker: 'Description', key: ['PONumber', 'LineNumber'] },
  ] as const;
  for (const c of creates) {
    const rows = seen.sets[c.set];
    const byMarker = new Map<string, Row[]>();
    for (const row of rows) {
      const marker = row[c.marker];
      if (typeof marker !== 'string' || !marker.startsWith('cr-')) continue;
      byMarker.set(marker, [...(byMarker.get(marker) ?? []), row]);
      writtenBy(marker, c.kind, `${c.set} ${c.key.map((k) => String(row[k])).join('/')}`);
    }
    for (const s of state.sent.filter((x) => x.kind === c.kind)) {
      const found = byMarker.get(s.marker) ?? [];
      if (found.length > 1) problems.push(`${c.set} holds ${found.length} records of ${describeSent(s)}`);
      if (s.outcome !== 'ack' && found.length === 0) continue;
      if (found.length === 0) {
        problems.push(`lost: ${describeSent(s)} answered ${JSON.stringify(s.answer ?? null)} but ${c.set} lacks it`);
        continue;
      }
      const row = found[0]!;
      const wrong = differences(row, s.answer ?? s.body);
      if (wrong.length > 0) problems.push(`${c.set}: ${describeSent(s)} is stored otherwise: ${wrong.join('; ')}`);
    }
  }
  // every line of ours has its header and its computed price
  const headers = {
    PRLineItems: new Set(seen.sets.PurchaseRequests.map((r) => r['PRNumber'])),
    POLineItems: new Set(seen.sets.PurchaseOrders.map((r) => r['PONumber'])),
  };
  for (const [set, parent, computed, q, p] of [
    ['PRLineItems', 'PRNumber', 'ExtendedCost', 'Quantity', 'EstimatedUnitCost'],
    ['POLineItems', 'PONumber', 'ExtendedPrice', 'QuantityOrdered', 'UnitPrice'],
  ] as const) {
    for (const row of seen.sets[set]) {
      if (!/^c[rp]-/.test(String(row['Description']))) continue;
      const line = `${set} ${String(row[parent])}/${String(row['LineNumber'])} (${String(row['Description'])})`;
      if (!headers[set].has(row[parent])) problems.push(`${line} has no header`);
      const expected = product(row[q], row[p]);
      if (expected === undefined || Math.round(Number(row[computed]) * 10_000) !== expected)
        problems.push(`${line}: ${computed} ${String(row[computed])} is not ${String(row[q])} × ${String(row[p])}`);
    }
  }

  // PATCHes: each target holds its last acknowledged PATCH, or a later one killed in flight (or, with no acknowledged
  // PATCH since the last restart, what it held then)
  for (const t of state.targets) {
    const set = seen.sets[t.set];
    const row = set.find((r) => Object.entries(t.key).every(([k, v]) => r[k] === v));
    if (row === undefined) {
      problems.push(`${t.label} is gone`);
      continue;
    }
    const lastAck = t.since.map((s) => s.outcome).lastIndexOf('ack');
    const later = t.since.slice(lastAck + 1).filter((s) => s.outcome === 'lost');
    const candidates: { values: Row; sent?: Sent }[] = [
      lastAck < 0 ? { values: t.baseline } : { values: t.since[lastAck]!.body, sent: t.since[lastAck]! },
      ...later.map((s) => ({ values: s.body, sent: s })),
    ];
    const match = candidates.find((c) => t.fields.every((f) => same(row[f], c.values[f])));
    const stored = JSON.stringify(Object.fromEntries(t.fields.map((f) => [f, row[f]])));
    if (match === undefined) {
      problems.push(
        `${t.label} holds ${stored}, which is none of: ${candidates
          .map((c) => (c.sent === undefined ? `as before ${JSON.stringify(t.baseline)}` : describeSent(c.sent)))
          .join(', ')}; PATCHes since the last restart: ${t.since.map(describeSent).join(', ') || 'none'}`,
      );
    } else if (match.sent?.outcome === 'ack' && match.sent.answer !== undefined) {
      const wrong = differences(row, match.sent.answer);
      if (wrong.length > 0) problems.push(`${t.label}: ${describeSent(match.sent)} is stored otherwise: ${wrong}`);
    } else if (match.sent === undefined) {
      const wrong = differences(row, t.baseline);
      if (wrong.length > 0) problems.push(`${t.label} changed with no PATCH to show for it: ${wrong.join('; ')}`);
    }
    if (t.set === 'POLineItems') {
      const expected = product(row['QuantityOrdered'], row['UnitPrice']);
      if (expected === undefined || Math.round(Number(row['ExtendedPrice']) * 10_000) !== expected)
        problems.push(`${t.label}: ExtendedPrice ${String(row['ExtendedPrice'])} is not QuantityOrdered × UnitPrice`);
    }
  }

  // AddComment: the comment and the work order's LastModifiedDate, both or neither
  for (const [id, { workOrder, comments }] of seen.workOrders) {
    const where = `WorkOrders('${id}')`;
    if (workOrder === undefined) {
      problems.push(`${where} is gone`);
      continue;
    }
    const ids = comments.map((c) => Number(c['CommentID'])).sort((a, b) => a - b);
    if (ids.some((n, i) => n !== i + 1)) problems.push(`${where}: CommentIDs are ${ids.join(',')}, not 1..n`);
    const ours = new Map<string, Row[]>();
    for (const c of comments) {
      const marker = String(c['Comment']);
      if (!marker.startsWith('cr-')) continue;
      ours.set(marker, [...(ours.get(marker) ?? []), c]);
      const s = writtenBy(marker, 'comment', `${where}/Comments(${String(c['CommentID'])})`);
      if (s !== undefined && s.workOrder !== id) problems.push(`${describeSent(s)} landed on ${where}`);
    }
    for (const s of state.sent.filter((x) => x.kind === 'comment' && x.workOrder === id)) {
      const found = ours.get(s.marker) ?? [];
      if (found.length > 1) problems.push(`${where} holds ${found.length} comments of ${describeSent(s)}`);
      if (s.outcome === 'ack' && found.length === 0) problems.push(`lost: ${describeSent(s)} but ${where} lacks it`);
    }
    const newest = [...comments].sort((a, b) => Number(b['CommentID']) - Number(a['CommentID']))[0];
    const before = state.workOrders.get(id)!;
    if (newest !== undefined && String(newest['Comment']).startsWith('cr-')) {
      if (!same(workOrder['LastModifiedDate'], newest['CreatedDate']))
        problems.push(
          `half-written AddComment: ${where} was last modified at ${String(workOrder['LastModifiedDate'])}, its ` +
            `newest comment ${String(newest['CommentID'])} (${String(newest['Comment'])}) was created at ${String(newest['CreatedDate'])}`,
        );
    } else if (!same(workOrder['LastModifiedDate'], before['LastModifiedDate'])) {
      problems.push(
        `half-written AddComment: ${where} was modified at ${String(workOrder['LastModifiedDate'])} with no comment of ours`,
      );
    }
    const { LastModifiedDate: _a, ...rest } = before;
    const wrong = differences(workOrder, rest);
    if (wrong.length > 0) problems.push(`${where} changed beyond LastModifiedDate: ${wrong.join('; ')}`);
    state.workOrders.set(id, workOrder);
  }

  // meter readings: the history row and the current reading, both or neither
  for (const [id, { current, history, stored }] of seen.meters) {
    const where = `MeterReadings('${id}')`;
    if (current === undefined && stored > 0)
      problems.push(`half-written reading: ${where} is missing, its history holds ${stored} rows in the database`);
    else if (stored !== history.length)
      problems.push(`${where}/History shows ${history.length} readings, the database holds ${stored}`);
    const rows = [...history].sort((a, b) => Number(a['ReadingID']) - Number(b['ReadingID']));
    if (rows.some((r, i) => Number(r['ReadingID']) !== i + 1))
      problems.push(`${where}/History: ReadingIDs are ${rows.map((r) => r['ReadingID']).join(',')}, not 1..n`);
    const ours = new Map<string, Row[]>();
    for (const r of rows) {
      const marker = String(r['Description']);
      ours.set(marker, [...(ours.get(marker) ?? []), r]);
      const s = writtenBy(marker, 'meter', `${where}/History(${String(r['ReadingID'])})`);
      if (s === undefined) continue;
      if (s.meter !== id) problems.push(`${describeSent(s)} landed on ${where}`);
      const wrong = differences(r, s.body);
      if (wrong.length > 0)
        problems.push(`${where}/History: ${describeSent(s)} is stored otherwise: ${wrong.join('; ')}`);
      if (s.answer !== undefined && !same(r['CreatedDate'], s.answer['LastModifiedDate']))
        problems.push(
          `${where}/History: ${describeSent(s)} was answered ${JSON.stringify(s.answer)}, stored ${JSON.stringify(r)}`,
        );
    }
    for (const s of state.sent.filter((x) => x.kind === 'meter' && x.meter === id)) {
      const found = ours.get(s.marker) ?? [];
      if (found.length > 1) problems.push(`${where}/History holds ${found.length} rows of ${describeSent(s)}`);
      if (s.outcome === 'ack' && found.length === 0)
        problems.push(`lost: ${describeSent(s)} but ${where}/History lacks it`);
    }
    if (rows.length === 0) {
      if (current !== undefined)
        problems.push(`half-written reading: ${where} is ${JSON.stringify(current)} with no history`);
      continue;
    }
    const latest = rows.reduce((a, b) =>
      Date.parse(String(b['ReadingDate'])) >= Date.parse(String(a['ReadingDate'])) ? b : a,
    );
    if (current === undefined) {
      problems.push(`half-written reading: ${where} is missing, its history has ${rows.length} readings`);
      continue;
    }
    const { ReadingID: _id, MeterID: _m, CreatedDate: created, ...fields } = latest;
    const wrong = differences(current, { ...fields, LastModifiedDate: created, CreatedDate: rows[0]!['CreatedDate'] });
    if (wrong.length > 0)
      problems.push(
        `half-written reading: ${where} is not its latest reading ${JSON.stringify(latest)} (of ${rows.length}): ${wrong.join('; ')}`,
      );
  }

  // the sequences that number purchase requests and orders never fall behind a stored number
  for (const [set, field, prefix] of [
    ['PurchaseRequests', 'PRNumber', 'PR-'],
    ['PurchaseOrders', 'PONumber', 'PO-'],
  ] as const) {
    const ours = seen.sets[set].filter((r) =>
      /^cr-/.test(String(r[set === 'PurchaseRequests' ? 'Description' : 'VendorName'])),
    );
    const highest = Math.max(0, ...ours.map((r) => Number(String(r[field]).slice(prefix.length))));
    const value = seen.sequences.get(`${set}.${field}`) ?? 0;
    if (value < highest)
      problems.push(`odata_sequences ${set}.${field} is ${value}, behind the stored ${prefix}${highest}`);
  }

  // the next round's PATCHes start from what is there now
  for (const t of state.targets) {
    const row = seen.sets[t.set].find((r) => Object.entries(t.key).every(([k, v]) => r[k] === v));
    if (row !== undefined) t.baseline = row;
    t.since = [];
  }
  return problems;
}

// ── the test ──────────────────────────────────────────────────────────────────

/** The storage of one test: the server's arguments, read-only SQL on its data, and its removal. */
interface TestStorage {
  readonly args: string[];
  readonly direct: Direct;
  cleanup(): Promise<void>;
}

/** A new SQLite data directory, or a new schema on the PostgreSQL server. */
async function openStorage(storage: (typeof kinds)[number]): Promise<TestStorage> {
  if (storage === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'odata-crash-'));
    const read = async (sql: string): Promise<Map<string, number>> => {
      const db = new Database(join(dir, 'sites', `${SITE}.db`), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare(sql).raw().all() as [unknown, unknown][];
        return new Map(rows.map(([k, v]) => [String(k), Number(v)]));
      } finally {
        db.close();
      }
    };
    return {
      args: ['--data', dir],
      direct: {
        sequences: () => read('SELECT "name", "value" FROM "odata_sequences"'),
        historyCounts: () => read('SELECT "MeterID", COUNT(*) FROM "MeterReadingHistory" GROUP BY "MeterID"'),
      },
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `odata_crash_${process.pid}_${randomBytes(3).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES });
  await admin.connect();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const read = async (sql: string): Promise<Map<string, number>> => {
    const { rows } = await admin.query<[string, string]>({ text: sql, values: [SITE], rowMode: 'array' });
    return new Map(rows.map(([k, v]) => [k, Number(v)]));
  };
  return {
    args: ['--database-url', `${POSTGRES}?options=${encodeURIComponent(`-c search_path=${schema}`)}`],
    direct: {
      sequences: () => read(`SELECT "name", "value" FROM "${schema}"."odata_sequences" WHERE "site" = $1`),
      historyCounts: () =>
        read(`SELECT "MeterID", COUNT(*) FROM "${schema}"."MeterReadingHistory" WHERE "site" = $1 GROUP BY "MeterID"`),
    },
    cleanup: async () => {
      await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
      await admin.end();
    },
  };
}

describe.each(kinds)('crash durability on %s', (storage) => {
  let storageArgs: string[];
  let direct: Direct;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ args: storageArgs, direct, cleanup } = await openStorage(storage));
  }, 30_000);

  afterAll(async () => {
    for (const child of running) await kill(child);
    await cleanup?.();
  }, 30_000);

  it(`keeps every acknowledged write, whole, across ${ROUNDS} SIGKILLs`, async () => {
    const started = Date.now();
    console.log(`crash test on ${storage}: seed ${SEED} (replay with CRASH_SEED=${SEED}), ${ROUNDS} rounds`);
    const rng = prng(SEED);
    let child = await startServer(storageArgs, true);
    apiKey = child.key;

    // what the demo site holds before any write of ours
    const prs = await getAll(child, 'PurchaseRequests');
    const pos = await getAll(child, 'PurchaseOrders');
    const poLines = await getAll(child, 'POLineItems');
    const workOrders = (await getAll(child, 'WorkOrders')).slice(0, 6);
    const target = (set: PatchTarget['set'], row: Row, key: string[], fields: string[]): PatchTarget => ({
      set,
      key: Object.fromEntries(key.map((k) => [k, row[k]])),
      label: `${set}(${key.map((k) => String(row[k])).join(',')})`,
      fields,
      baseline: row,
      since: [],
      busy: false,
    });
    const state: State = {
      sent: [],
      byMarker: new Map(),
      prHeaders: prs.map((r) => String(r['PRNumber'])),
      poHeaders: pos.map((r) => String(r['PONumber'])),
      targets: [
        ...prs.slice(0, 5).map((r) => target('PurchaseRequests', r, ['PRNumber'], ['Notes', 'Priority'])),
        ...pos.slice(0, 5).map((r) => target('PurchaseOrders', r, ['PONumber'], ['Notes', 'Buyer'])),
        ...poLines
          .slice(0, 5)
          .map((r) => target('POLineItems', r, ['PONumber', 'LineNumber'], ['Description', 'QuantityOrdered'])),
      ],
      workOrders: new Map(workOrders.map((w) => [String(w['WorkOrderID']), w])),
      counter: 0,
    };
    expect(state.targets.length).toBe(15);
    expect(state.workOrders.size).toBe(6);

    const reports: RoundReport[] = [];
    for (let round = 1; round <= ROUNDS + 1; round++) {
      if (round > 1) {
        const killed = child;
        child = await startServer(storageArgs, false);
        const problems = check(state, await observe(child, state, direct));
        const shown = problems.slice(0, 25).concat(problems.length > 25 ? [`... ${problems.length - 25} more`] : []);
        expect(
          shown,
          `${storage}, seed ${SEED} (replay: CRASH_SEED=${SEED}), after the SIGKILL of round ${round - 1} ` +
            `(${JSON.stringify(reports.at(-1))}); the killed server's last output:\n${killed.output().slice(-1500)}\n`,
        ).toEqual([]);
      }
      if (round <= ROUNDS) reports.push(await load(child, state, rng, round));
    }
    await kill(child.process);

    const count = (kind: Kind, outcome: Sent['outcome']): number =>
      state.sent.filter((s) => s.kind === kind && s.outcome === outcome).length;
    const acked = state.sent.filter((s) => s.outcome === 'ack').length;
    const lost = state.sent.filter((s) => s.outcome === 'lost').length;
    console.log(
      `crash test on ${storage}: seed ${SEED}, ${ROUNDS} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${state.sent.length} writes sent, ${acked} acknowledged, ${lost} killed in flight; by kind (acknowledged/in flight): ` +
        KINDS.map((k) => `${k} ${count(k, 'ack')}/${count(k, 'lost')}`).join(', ') +
        `; kills after ${reports.map((r) => r.delay).join(', ')} ms of load from ${reports.map((r) => r.concurrency).join(', ')} ` +
        `workers caught ${reports.map((r) => r.lost).join(', ')} writes in flight`,
    );
    // the test did what it claims: every kind of write was acknowledged, and the kills caught writes in flight
    for (const kind of KINDS)
      expect(count(kind, 'ack'), `acknowledged ${kind} writes (seed ${SEED})`).toBeGreaterThan(0);
    expect(
      reports.filter((r) => r.lost > 0).length,
      `rounds whose kill caught writes in flight (seed ${SEED})`,
    ).toBeGreaterThanOrEqual(ROUNDS / 2);
    expect(state.sent.filter((s) => s.outcome === 'rejected').map(describeSent)).toEqual([]);
  }, 300_000);
});

// ── change sets ($batch) under SIGKILL ───────────────────────────────────────
// Each change set writes a purchase order (Content-ID 1), 3–5 lines through `$1/Lines` and a PATCH of `$1` that sets
// Notes to "<marker> complete": one transaction. Half go as multipart/mixed change sets, half as JSON atomicity groups.
// After every restart, for every change set sent so far: nothing of it, or all of it (the order, exactly its lines,
// the PATCH); all of it when its answer came back whole and successful; and what was once there stays.

const BATCH_ROUNDS = Number(process.env['CRASH_BATCH_ROUNDS'] ?? 5);

interface ChangeSet {
  /** `cs-N`: the order's Buyer, and the first word of its Notes and of its lines' Descriptions. */
  readonly marker: string;
  readonly round: number;
  readonly format: 'multipart' | 'json';
  readonly order: Row;
  readonly lines: readonly Row[];
  /** The Notes its last request PATCHes in. */
  readonly notes: string;
  /** ack: answered 200 with every request's success; rejected: answered otherwise; lost: no whole answer. */
  outcome: 'pending' | 'ack' | 'rejected' | 'lost';
  status?: number;
  /** An acknowledged change set's answered entities: the order created, each line, the order patched. */
  answers?: Row[];
  error?: string;
  /** Found whole after a restart: from then on it must stay so. */
  seen: boolean;
  /** What the restart after its round found of it (a change set that got no answer). */
  found?: 'whole' | 'nothing';
}

interface BatchPart {
  readonly id: string;
  readonly method: 'POST' | 'PATCH';
  readonly url: string;
  readonly body: Row;
}

function describeChangeSet(cs: ChangeSet): string {
  const answer =
    cs.outcome === 'ack'
      ? `${cs.status}`
      : cs.outcome === 'rejected'
        ? `${cs.status} ${cs.error}`
        : `no answer (${cs.error})`;
  return `[round ${cs.round} ${cs.format} change set ${cs.marker}: order, ${cs.lines.length} lines, PATCH → ${answer}]`;
}

function changeSetParts(cs: ChangeSet): BatchPart[] {
  const n = cs.lines.length;
  return [
    { id: '1', method: 'POST', url: 'PurchaseOrders', body: cs.order },
    ...cs.lines.map((body, i) => ({ id: String(i + 2), method: 'POST' as const, url: '$1/Lines', body })),
    { id: String(n + 2), method: 'PATCH', url: '$1', body: { Notes: cs.notes } },
  ];
}

/** The batch's Content-Type and body: one multipart change set, or one JSON atomicity group. */
function batchBody(cs: ChangeSet): { contentType: string; body: string } {
  const parts = changeSetParts(cs);
  if (cs.format === 'json') {
    const requests = parts.map((p) => ({
      id: p.id,
      atomicityGroup: 'g',
      ...(p.id === '1' ? {} : { dependsOn: ['1'] }),
      method: p.method.toLowerCase(),
      url: p.url,
      body: p.body,
    }));
    return { contentType: 'application/json', body: JSON.stringify({ requests }) };
  }
  const [batch, changeSet] = [`batch_${cs.marker}`, `changeset_${cs.marker}`];
  const lines = [`--${batch}`, `Content-Type: multipart/mixed; boundary=${changeSet}`, ''];
  for (const p of parts)
    lines.push(
      `--${changeSet}`,
      'Content-Type: application/http',
      'Content-Transfer-Encoding: binary',
      `Content-ID: ${p.id}`,
      '',
      `${p.method} ${p.url} HTTP/1.1`,
      'Content-Type: application/json',
      '',
      JSON.stringify(p.body),
    );
  lines.push(`--${changeSet}--`, `--${batch}--`, '');
  return { contentType: `multipart/mixed; boundary=${batch}`, body: lines.join('\r\n') };
}

interface PartAnswer {
  readonly status: number;
  readonly body: string;
  /** Answered inside a change set (multipart) or an atomicity group (JSON). */
  readonly grouped: boolean;
}

/** The answers of a batch in order, a change set's flattened; throws on an answer it cannot read. */
function batchAnswers(contentType: string, text: string): PartAnswer[] {
  if (/^application\/json/i.test(contentType)) {
    const { responses } = JSON.parse(text) as { responses: Row[] };
    return responses.map((r) => ({
      status: Number(r['status']),
      body: r['body'] === undefined ? '' : JSON.stringify(r['body']),
      grouped: r['atomicityGroup'] !== undefined,
    }));
  }
  const boundary = (type: string): string => {
    const found = /boundary=("?)([^";]+)\1/i.exec(type)?.[2];
    if (found === undefined) throw new Error(`no boundary in ${type}`);
    return found;
  };
  const out: PartAnswer[] = [];
  const walk = (body: string, delimiter: string, grouped: boolean): void => {
    const pieces = body.split(`--${delimiter}`);
    if (pieces.length < 2 || !pieces[pieces.length - 1]!.startsWith('--')) throw new Error(`no --${delimiter}--`);
    for (const piece of pieces.slice(1, -1)) {
      const part = piece.replace(/^\r\n/, '').replace(/\r\n$/, '');
      const at = part.indexOf('\r\n\r\n');
      const type = /^content-type:\s*(.*)$/im.exec(part.slice(0, at))?.[1] ?? '';
      const message = part.slice(at + 4);
      if (/^multipart\/mixed/i.test(type)) {
        walk(message, boundary(type), true);
        continue;
      }
      const status = /^HTTP\/1\.1 (\d{3})/.exec(message)?.[1];
      if (status === undefined) throw new Error(`a part without a status line: ${message.slice(0, 100)}`);
      const bodyAt = message.indexOf('\r\n\r\n');
      out.push({ status: Number(status), body: bodyAt < 0 ? '' : message.slice(bodyAt + 4), grouped });
    }
  };
  walk(text, boundary(contentType), false);
  return out;
}

async function sendChangeSet(child: Child, cs: ChangeSet, killed: () => boolean): Promise<void> {
  let text: string;
  let contentType: string;
  try {
    const { contentType: type, body } = batchBody(cs);
    const response = await fetch(`${child.root}/$batch`, {
      method: 'POST',
      headers: { API_KEY: key(child), 'content-type': type },
      body,
    });
    cs.status = response.status;
    contentType = response.headers.get('content-type') ?? '';
    // (a 200 alone acknowledges nothing: a failed change set is answered 200 too; only the whole answer says)
    text = await response.text();
  } catch (error) {
    cs.outcome = 'lost';
    const cause = (error as { cause?: unknown }).cause;
    cs.error = `${String(error)}${cause === undefined ? '' : `: ${String(cause)}`}`.slice(0, 200);
    if (!killed()) cs.error = `before the kill: ${cs.error}`;
    return;
  }
  const expected = [...cs.lines.map(() => 201), 201, 200];
  try {
    const answers = cs.status === 200 ? batchAnswers(contentType, text) : [];
    if (answers.length === expected.length && answers.every((a, i) => a.grouped && a.status === expected[i])) {
      cs.outcome = 'ack';
      cs.answers = answers.map((a) => JSON.parse(a.body) as Row);
      return;
    }
    cs.error = `parts answered ${answers.map((a) => `${a.status}${a.grouped ? '' : ' (outside the change set)'}`).join(', ')}: ${text.slice(0, 300)}`;
  } catch (error) {
    cs.error = `an unreadable answer (${String(error)}): ${text.slice(0, 300)}`;
  }
  cs.outcome = 'rejected';
}

interface BatchState {
  readonly sets: ChangeSet[];
  readonly byMarker: Map<string, ChangeSet>;
  counter: number;
}

function nextChangeSet(state: BatchState, rng: () => number, round: number): ChangeSet {
  const marker = `cs-${++state.counter}`;
  const lines = Array.from({ length: 3 + Math.floor(rng() * 3) }, (_, i) => ({
    Description: `${marker} line ${i + 1}`,
    QuantityOrdered: (1 + Math.floor(rng() * 99_999)) / 100,
    UnitOfMeasure: 'EA',
    UnitPrice: Math.floor(rng() * 10_000_000) / 10_000,
  }));
  const order = {
    VendorID: 'V-0001',
    VendorName: `change set ${marker}`,
    Buyer: marker,
    Notes: `${marker} open`,
    FreightAmount: Math.floor(rng() * 1_000_000) / 100,
  };
  return {
    marker,
    round,
    format: rng() < 0.5 ? 'multipart' : 'json',
    order,
    lines,
    notes: `${marker} complete`,
    outcome: 'pending',
    seen: false,
  };
}

/** Change sets from `concurrency` workers until the server is killed, `delay` ms after the first one. */
async function loadChangeSets(child: Child, state: BatchState, rng: () => number, round: number): Promise<RoundReport> {
  const concurrency = 8 + Math.floor(rng() * 9);
  // (not under 50 ms: a just started server has not begun a change set yet, and the rounds are few)
  const delay = 50 + rng() * 850;
  let killed = false;
  const mine: ChangeSet[] = [];
  const worker = async (): Promise<void> => {
    while (!killed) {
      const cs = nextChangeSet(state, rng, round);
      state.sets.push(cs);
      state.byMarker.set(cs.marker, cs);
      mine.push(cs);
      await sendChangeSet(child, cs, () => killed);
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  await new Promise((resolve) => setTimeout(resolve, delay));
  killed = true;
  await kill(child.process);
  await Promise.all(workers);
  return {
    concurrency,
    delay: Math.round(delay),
    sent: mine.length,
    acked: mine.filter((cs) => cs.outcome === 'ack').length,
    lost: mine.filter((cs) => cs.outcome === 'lost').length,
  };
}

/** What is wrong with the change sets' data after a restart; empty when every change set is whole or absent. */
function checkChangeSets(state: BatchState, orders: Row[], lines: Row[], sequence: number): string[] {
  const problems: string[] = [];
  const markerOf = (text: unknown): string | undefined => /^(cs-\d+)( |$)/.exec(String(text))?.[1];
  const ordersOf = new Map<string, Row[]>();
  for (const o of orders) {
    const marker = markerOf(o['Buyer']);
    if (marker !== undefined) ordersOf.set(marker, [...(ordersOf.get(marker) ?? []), o]);
  }
  const linesOf = new Map<string, Row[]>();
  const linesByOrder = new Map<unknown, Row[]>();
  for (const l of lines) {
    linesByOrder.set(l['PONumber'], [...(linesByOrder.get(l['PONumber']) ?? []), l]);
    const marker = markerOf(l['Description']);
    if (marker !== undefined) linesOf.set(marker, [...(linesOf.get(marker) ?? []), l]);
  }
  for (const marker of new Set([...ordersOf.keys(), ...linesOf.keys()]))
    if (!state.byMarker.has(marker)) problems.push(`${marker} is stored, but no change set of that marker was sent`);

  for (const cs of state.sets) {
    if (cs.outcome === 'rejected') problems.push(`refused: ${describeChangeSet(cs)}`);
    if (cs.outcome === 'lost' && cs.error?.startsWith('before the kill') === true)
      problems.push(`failed before the kill: ${describeChangeSet(cs)}`);
    const found = ordersOf.get(cs.marker) ?? [];
    const ours = linesOf.get(cs.marker) ?? [];
    if (found.length === 0 && ours.length === 0) {
      if (cs.outcome === 'ack')
        problems.push(`lost: ${describeChangeSet(cs)} was acknowledged, nothing of it is stored`);
      else if (cs.seen) problems.push(`vanished: ${describeChangeSet(cs)} was whole after an earlier restart`);
      else if (cs.outcome === 'lost') cs.found ??= 'nothing';
      continue;
    }
    // something of it is there: then all of it, as sent (and as answered, when it was)
    const wrong: string[] = [];
    if (found.length !== 1) wrong.push(`${found.length} orders`);
    const order = found[0];
    if (order !== undefined) {
      wrong.push(...differences(order, { ...cs.order, Notes: cs.notes }));
      const answered = cs.answers?.at(-1);
      if (answered !== undefined) wrong.push(...differences(order, answered).map((d) => `as answered, ${d}`));
      const stored = [...(linesByOrder.get(order['PONumber']) ?? [])].sort(
        (a, b) => Number(a['LineNumber']) - Number(b['LineNumber']),
      );
      if (stored.length !== cs.lines.length)
        wrong.push(`${stored.length} lines of ${cs.lines.length}: ${stored.map((l) => l['Description']).join(', ')}`);
      cs.lines.forEach((sent, i) => {
        const line = stored[i];
        if (line === undefined) return;
        const where = `line ${String(line['LineNumber'])}`;
        wrong.push(...differences(line, { ...sent, LineNumber: i + 1 }).map((d) => `${where}: ${d}`));
        const answer = cs.answers?.[i + 1];
        if (answer !== undefined) wrong.push(...differences(line, answer).map((d) => `${where} as answered, ${d}`));
        const expected = product(line['QuantityOrdered'], line['UnitPrice']);
        if (expected === undefined || Math.round(Number(line['ExtendedPrice']) * 10_000) !== expected)
          wrong.push(`${where}: ExtendedPrice ${String(line['ExtendedPrice'])} is not QuantityOrdered × UnitPrice`);
      });
    }
    for (const l of ours)
      if (l['PONumber'] !== order?.['PONumber'])
        wrong.push(`line ${String(l['Description'])} is on ${String(l['PONumber'])}, not on the change set's order`);
    if (wrong.length > 0) {
      const held = JSON.stringify({
        orders: found.map((o) => ({ PONumber: o['PONumber'], Notes: o['Notes'] })),
        lines: ours.map((l) => `${String(l['PONumber'])}/${String(l['LineNumber'])}`),
      });
      problems.push(`partial: ${describeChangeSet(cs)} left ${held}: ${wrong.join('; ')}`);
    } else {
      cs.seen = true;
      if (cs.outcome === 'lost') cs.found ??= 'whole';
    }
  }

  // the sequence that numbers the orders was taken in the same transaction: never behind a stored number
  const highest = Math.max(0, ...[...ordersOf.values()].flat().map((o) => Number(String(o['PONumber']).slice(3))));
  if (sequence < highest) problems.push(`odata_sequences PurchaseOrders.PONumber is ${sequence}, behind PO-${highest}`);
  return problems;
}

describe.each(kinds)('change sets under SIGKILL on %s', (storage) => {
  let storageArgs: string[];
  let direct: Direct;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ args: storageArgs, direct, cleanup } = await openStorage(storage));
  }, 30_000);

  afterAll(async () => {
    for (const child of running) await kill(child);
    await cleanup?.();
  }, 30_000);

  it(`keeps every change set whole or absent across ${BATCH_ROUNDS} SIGKILLs`, async () => {
    const started = Date.now();
    console.log(`change sets on ${storage}: seed ${SEED} (replay with CRASH_SEED=${SEED}), ${BATCH_ROUNDS} rounds`);
    const rng = prng(SEED);
    let child = await startServer(storageArgs, true);
    apiKey = child.key;
    const state: BatchState = { sets: [], byMarker: new Map(), counter: 0 };
    const reports: RoundReport[] = [];
    for (let round = 1; round <= BATCH_ROUNDS + 1; round++) {
      if (round > 1) {
        const killed = child;
        child = await startServer(storageArgs, false);
        const [orders, lines] = await Promise.all([getAll(child, 'PurchaseOrders'), getAll(child, 'POLineItems')]);
        const sequence = (await direct.sequences()).get('PurchaseOrders.PONumber') ?? 0;
        const problems = checkChangeSets(state, orders, lines, sequence);
        const shown = problems.slice(0, 25).concat(problems.length > 25 ? [`... ${problems.length - 25} more`] : []);
        expect(
          shown,
          `${storage}, seed ${SEED} (replay: CRASH_SEED=${SEED}), after the SIGKILL of round ${round - 1} ` +
            `(${JSON.stringify(reports.at(-1))}); the killed server's last output:\n${killed.output().slice(-1500)}\n`,
        ).toEqual([]);
      }
      if (round <= BATCH_ROUNDS) reports.push(await loadChangeSets(child, state, rng, round));
    }
    await kill(child.process);

    const of = (outcome: ChangeSet['outcome'], format?: ChangeSet['format']): number =>
      state.sets.filter((cs) => cs.outcome === outcome && (format === undefined || cs.format === format)).length;
    const found = (what: ChangeSet['found']): number => state.sets.filter((cs) => cs.found === what).length;
    const writes = state.sets.reduce((n, cs) => n + cs.lines.length + 2, 0);
    console.log(
      `change sets on ${storage}: seed ${SEED}, ${BATCH_ROUNDS} rounds in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${state.sets.length} change sets (${writes} writes) sent, ${of('ack')} acknowledged ` +
        `(${of('ack', 'multipart')} multipart, ${of('ack', 'json')} JSON), ${of('lost')} killed in flight, of which ` +
        `${found('whole')} were found whole and ${found('nothing')} absent after the restart; kills after ` +
        `${reports.map((r) => r.delay).join(', ')} ms of load from ${reports.map((r) => r.concurrency).join(', ')} ` +
        `workers caught ${reports.map((r) => r.lost).join(', ')} change sets in flight`,
    );
    // the test did what it claims: change sets of both formats were acknowledged, and the kills caught some in flight
    expect(of('ack', 'multipart'), `acknowledged multipart change sets (seed ${SEED})`).toBeGreaterThan(0);
    expect(of('ack', 'json'), `acknowledged JSON atomicity groups (seed ${SEED})`).toBeGreaterThan(0);
    expect(
      reports.filter((r) => r.lost > 0).length,
      `rounds whose kill caught change sets in flight (seed ${SEED})`,
    ).toBeGreaterThanOrEqual(BATCH_ROUNDS / 2);
    expect(state.sets.filter((cs) => cs.outcome === 'rejected').map(describeChangeSet)).toEqual([]);
  }, 120_000);
});
