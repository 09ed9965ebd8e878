// HTTP/1.1 over a bare socket, for what fetch cannot do: malformed request lines, huge or hostile headers, bytes
// sent slowly, a body sent in parts, a keep-alive connection reused at a chosen moment.
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Header names in lower case; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A response, or how the connection ended without one (`closed`: the server ended or reset it). */
export type RawOutcome = { readonly kind: 'response'; readonly response: RawResponse } | { readonly kind: 'closed' };

/** A connected socket to 127.0.0.1:port (rejects with the connection error, e.g. ECONNREFUSED). */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.setNoDelay(true);
    socket.once('connect', () => {
      socket.off('error', reject);
      // a reset after the answer is an outcome here, not an error
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

function parse(buffer: Buffer): { response: RawResponse; length: number } | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  if (headers['transfer-encoding'] !== undefined) throw new Error('chunked answers are not read here');
  const length = Number(headers['content-length'] ?? 0);
  if (buffer.length < end + 4 + length) return undefined;
  const body = buffer.subarray(end + 4, end + 4 + length).toString('utf8');
  return { response: { status, headers, body }, length: end + 4 + length };
}

/**
 * Reads `socket` from now on: each call of the function returned resolves with the next response on it (bytes that
 * arrived before the call included), or `closed` when the connection ends first; it rejects after `timeoutMs`.
 */
export function reader(socket: Socket): (timeoutMs?: number) => Promise<RawOutcome> {
  let buffer = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake?.();
  });
  socket.on('close', () => {
    ended = true;
    wake?.();
  });
  return (timeoutMs = 10_000) =>
    new Promise<RawOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        wake = undefined;
        reject(new Error(`no answer in ${timeoutMs} ms; received ${JSON.stringify(buffer.toString('latin1'))}`));
      }, timeoutMs);
      const check = (): void => {
        const parsed = parse(buffer);
        if (parsed === undefined && !ended) return;
        clearTimeout(timer);
        wake = undefined;
        if (parsed === undefined) resolve({ kind: 'closed' });
        else {
          buffer = buffer.subarray(parsed.length);
          resolve({ kind: 'response', response: parsed.response });
        }
      };
      wake = check;
      check();
    });
}

/** Sends `text` on a new connection and reads one answer. */
export async function exchange(port: number, text: string | Buffer, timeoutMs = 10_000): Promise<RawOutcome> {
  const socket = await open(port);
  const read = reader(socket);
  socket.write(text);
  try {
    return await read(timeoutMs);
  } finally {
    socket.destroy();
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
