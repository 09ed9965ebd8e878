// What every HTTP adapter does beside carrying bytes: answer `Expect: 100-continue` before a body the service would
// refuse for its size, read (then drop) what a client keeps sending after a 413, and tell the service when a client
// has gone.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { ODataError } from '../errors.js';
import type { HttpService, ServiceRequest } from './service.js';

/**
 * After a 413 the client is usually still sending the body: closing at once would make its writes fail (EPIPE,
 * ECONNRESET) before it reads the answer. The rest of the body is read and dropped instead, up to `4 × limit` more
 * bytes (then the connection is closed); the request timeout still applies.
 */
export function discardBody(request: IncomingMessage, limit: number): void {
  if (request.complete) return;
  let discarded = 0;
  const bound = 4 * limit;
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > bound) request.socket.destroy();
  });
  request.resume();
}

/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): a body announced larger than the limit is refused with 413 before the
 * client sends it; anything else is told to continue and handled as usual.
 */
export function checkContinue(
  service: HttpService,
  request: IncomingMessage,
  response: ServerResponse,
  handle: () => void,
): void {
  const length = Number(request.headers['content-length']);
  if (Number.isFinite(length) && length > service.maxBodyBytes) {
    const answer = service.errorResponse(
      new ODataError('PayloadTooLarge', `The body exceeds ${service.maxBodyBytes} bytes`),
      randomUUID(),
    );
    // no 100 was sent, so the client sends no body: the connection can close with the answer
    response.writeHead(answer.status, { ...answer.headers, connection: 'close' }).end(answer.body);
    return;
  }
  response.writeContinue();
  handle();
}

/**
 * A request as the Node adapters hand it to the service. Its `signal` aborts when the connection closes before the
 * answer is finished (the client is gone, so a query still running for it is stopped). The signal is made when it is
 * first read, usually never: a key lookup or a read on the server's thread does not look at it, and an
 * AbortController costs more (1.6 µs on Node 20) than routing a key lookup. One made after the client left is
 * aborted already. (A class, not an object literal with a getter: V8 builds such a literal slowly.)
 */
export class NodeRequest implements ServiceRequest {
  private controller: AbortController | undefined;
  private gone = false;

  constructor(
    readonly method: string,
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    /** Set by an adapter that reads the body after making the request. */
    public body: Uint8Array | undefined,
    readonly id: string,
    readonly remoteAddress: string | undefined,
    readonly protocol: 'http' | 'https' | undefined,
    response: ServerResponse,
  ) {
    response.once('close', () => {
      if (response.writableFinished) return;
      this.gone = true;
      this.controller?.abort(clientLeft());
    });
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.gone) this.controller.abort(clientLeft());
    }
    return this.controller.signal;
  }
}

const clientLeft = (): Error => new Error('The client closed the connection');
