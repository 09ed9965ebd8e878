// The parent's side of a benchmark server in a process of its own (bench/expand/server.ts, bench/apply/server.ts):
// forks it with its configuration in an environment variable, waits for its port, and asks it for its CPU time
// (bench/finished-requests.ts answers).
import { fork, type ChildProcess } from 'node:child_process';

export interface ServerProcess<Kind extends string> {
  readonly kind: Kind;
  readonly process: ChildProcess;
  readonly origin: string;
  readonly label: string;
  /** The process's CPU time once every request it received is finished, and how many it finished. */
  cpu(): Promise<{ cpuUs: number; finished: number }>;
}

/** Forks `script` (under tsx, NODE_ENV production) with `config` as JSON in `variable`; resolves once it listens. */
export async function startServerProcess<Kind extends string>(
  script: string,
  variable: string,
  config: { readonly kind: Kind },
): Promise<ServerProcess<Kind>> {
  const child = fork(script, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, [variable]: JSON.stringify(config), NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{ port: number; label: string }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { port: number; label: string }));
    child.once('exit', (code) => reject(new Error(`the ${config.kind} server exited with ${code}`)));
  });
  let next = 0;
  return {
    kind: config.kind,
    process: child,
    origin: `http://127.0.0.1:${ready.port}`,
    label: ready.label,
    cpu: () =>
      new Promise((resolve) => {
        const id = next++;
        const listen = (m: { id?: number; cpuUs: number; finished: number }): void => {
          if (m.id !== id) return;
          child.off('message', listen);
          resolve(m);
        };
        child.on('message', listen);
        child.send({ id, op: 'cpu' });
      }),
  };
}
