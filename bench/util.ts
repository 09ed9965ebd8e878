import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Task } from 'tinybench';
// Small helpers shared by the benchmark files: machine description, number formatting, tables.
import os from 'node:os';
import pg from 'pg';

export interface MachineInfo {
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  readonly platform: string;
  readonly memoryGiB: number;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpu: cpus[0]?.model.trim() ?? 'unknown CPU',
    cores: cpus.length,
    platform: `${os.platform()} ${os.release()} (${os.arch()})`,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
}

export function describeMachine(m: MachineInfo = machineInfo()): string {
  return `Node ${m.node} · ${m.cpu} × ${m.cores} · ${m.platform} · ${m.memoryGiB} GiB RAM`;
}

/** Integer with thousands separators: 1234567 → "1,234,567". */
export function formatInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** A number with roughly three significant digits, for µs values. */
export function formatSig(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (n >= 100) return formatInt(n);
  if (n >= 10) return n.toFixed(1);
  if (n >= 1) return n.toFixed(2);
  return n.toFixed(3);
}

export type Align = 'left' | 'right';

/** A GitHub-flavoured markdown table, padded so it also reads well in a terminal. */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  align?: readonly Align[],
): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length), 3));
  const alignOf = (i: number): Align => align?.[i] ?? (i === 0 ? 'left' : 'right');
  const pad = (cell: string, i: number): string =>
    alignOf(i) === 'left' ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!);
  const line = (cells: readonly string[]): string => `| ${header.map((_, i) => pad(cells[i] ?? '', i)).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (alignOf(i) === 'left' ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Error message on one line, shortened. */
export function errorText(error: unknown, max = 160): string {
  const text =
    error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/** Mean time of one iteration of a completed tinybench task, in ms. */
export function meanLatencyMs(task: Task): number {
  const result = task.result;
  if (result.state === 'errored') throw result.error;
  if (result.state !== 'completed') throw new Error(`Task ${task.name} did not complete (state ${result.state})`);
  return result.latency.mean;
}

export function relativeMargin(task: Task): number {
  const result = task.result;
  return result.state === 'completed' ? result.latency.rme : Number.NaN;
}

/** Writes `bench/results/<name>.md` and says where. */
export async function writeResults(name: string, markdown: string): Promise<void> {
  const folder = new URL('./results/', import.meta.url);
  await mkdir(folder, { recursive: true });
  const file = fileURLToPath(new URL(`${name}.md`, folder));
  await writeFile(file, markdown);
  console.log(`Results written to ${file}`);
}

/** Why the PostgreSQL server at `url` cannot be reached, or undefined when it answers. */
export async function postgresUnreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

/** A number from the environment variable `name` (a benchmark's knob), or `fallback` when it is unset or empty. */
export function positiveNumber(name: string, fallback: number, zeroAllowed = false): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed))
    throw new Error(`${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number, got ${text}`);
  return value;
}
