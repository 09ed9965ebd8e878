// JavaScript's own RegExp, run in a worker thread with a time limit, so that a pattern that backtracks
// catastrophically can never hang the test process: the worker is terminated and the case reported as 'timeout'.
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, pattern, inputs }) => {
  let answer;
  try {
    const re = new RegExp(pattern, 'u');
    answer = inputs.map((s) => re.test(s));
  } catch (error) {
    answer = 'invalid';
  }
  parentPort.postMessage({ id, answer });
});
`;

export type OracleAnswer = readonly boolean[] | 'invalid' | 'timeout';

export class RegExpOracle {
  private worker: Worker | undefined;
  private nextId = 0;
  private pending = new Map<number, (answer: OracleAnswer) => void>();

  constructor(private readonly timeoutMs = 2000) {}

  private start(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', ({ id, answer }: { id: number; answer: boolean[] | 'invalid' }) => {
      this.pending.get(id)?.(answer);
      this.pending.delete(id);
    });
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** `new RegExp(pattern, 'u').test(s)` for each input, computed in the worker. */
  test(pattern: string, inputs: readonly string[]): Promise<OracleAnswer> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.worker = undefined;
        void worker.terminate();
        resolve('timeout');
      }, this.timeoutMs);
      this.pending.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      worker.postMessage({ id, pattern, inputs });
    });
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
