// What a benchmark's server process (bench/http/server.ts, bench/expand/server.ts, bench/apply/server.ts) tells its parent about the
// requests it served: how many it began and finished, and its CPU time once every one begun is finished, so that a
// run's CPU per request counts the work of all its requests and no other.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

let received = 0;
let finished = 0;

/** Counts the requests the server begins and those it is done with (answered, or the client went away). */
export function track(server: Server): void {
  server.on('request', (_request, response) => {
    received++;
    response.once('close', () => finished++);
  });
}

/** CPU time of this process (every thread: SQLite readers too) once every request received has been finished. */
export async function cpuWhenFinished(): Promise<{
  readonly userUs: number;
  readonly systemUs: number;
  readonly received: number;
  readonly finished: number;
}> {
  const deadline = Date.now() + 30_000;
  while (finished < received && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  const used = process.cpuUsage();
  return { userUs: used.user, systemUs: used.system, received, finished };
}

/**
 * The child's side of bench/server-process.ts: answers the parent's CPU questions (cpuWhenFinished), exits when the
 * parent goes, and tells it the server's port and label.
 */
export function answerParent(server: Server, label: string): void {
  process.on('message', (message: { id: number; op: 'cpu' }) => {
    void (async () => {
      const { userUs, systemUs, finished: done } = await cpuWhenFinished();
      process.send!({ id: message.id, cpuUs: userUs + systemUs, finished: done });
    })();
  });
  process.on('disconnect', () => process.exit(0));
  process.send!({ op: 'ready', port: (server.address() as AddressInfo).port, label });
}
