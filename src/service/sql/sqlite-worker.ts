// A reader of the SQLite read pool (sqlite-pool.ts), as a thread or a child process: runs one read at a time on its
// own read-only connection to the site's file, so that a long statement blocks this reader and not the server's
// event loop. Connections are opened on first use and kept for the most recently used files (each keeps its
// prepared statements).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { registerSqliteFunctions, runWithDeadline } from '../../backends/sql/sqlite/functions.js';
import type { SqlParam } from '../../backends/sql/index.js';
import type { ReaderReply, ReaderRequest, ReaderSetup } from './sqlite-pool.js';
import { packSafeIntegers } from './reader-rows.js';

interface Connection {
  readonly db: Database.Database;
  readonly statements: Map<string, Database.Statement>;
}

// a thread of the server (parentPort), or a child process (process.send, its setup in argv)
const send = (reply: ReaderReply): void => {
  if (parentPort !== null) parentPort.postMessage(reply);
  else process.send!(reply);
};
const { maxConnections } = (parentPort !== null ? workerData : JSON.parse(process.argv[2]!)) as ReaderSetup;
/** Open connections, least recently used first (a Map keeps insertion order). */
const connections = new Map<string, Connection>();

function connection(file: string): Connection {
  let open = connections.get(file);
  if (open !== undefined) {
    connections.delete(file);
    connections.set(file, open);
    return open;
  }
  // Read-only: a reader can never write, even by mistake. The main connection opened the file in WAL mode first,
  // so the -wal and -shm files exist and each statement reads the last committed state.
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.defaultSafeIntegers(true);
  registerSqliteFunctions(db);
  open = { db, statements: new Map() };
  connections.set(file, open);
  if (connections.size > maxConnections) {
    const [oldest, evicted] = connections.entries().next().value as [string, Connection];
    connections.delete(oldest);
    evicted.db.close();
  }
  return open;
}

function read(request: ReaderRequest): unknown[] {
  const { db, statements } = connection(request.file);
  let statement = statements.get(request.sql);
  if (statement === undefined) {
    statement = db.prepare(request.sql);
    if (!statement.reader) throw new TypeError('A reader thread runs only statements that return rows');
    if (statements.size > 500) statements.clear();
    statements.set(request.sql, statement);
  }
  // (a statement is shared by the reads of its text: its mode is set for each)
  const run = statement.raw(request.values === true);
  // a statement with the emitter's row checks stops itself at the budget, even inside SQLite's own code, and this
  // reader goes on; the pool's timer (a little later) terminates a reader whose statement has no checks
  return request.budgetMs > 0
    ? runWithDeadline(request.budgetMs, () => run.all(...(request.params as SqlParam[])))
    : run.all(...(request.params as SqlParam[]));
}

function onMessage(request: ReaderRequest | 'close'): void {
  if (request === 'close') {
    for (const { db } of connections.values()) db.close();
    connections.clear();
    if (parentPort !== null) parentPort.close();
    else process.exit(0);
    return;
  }
  let reply: ReaderReply;
  try {
    const rows = read(request);
    // arrays of values: their safe BigInts travel as numbers (reader-rows.ts)
    reply = request.values === true ? { rows, safeIntegers: packSafeIntegers(rows as unknown[][]) } : { rows };
  } catch (error) {
    const { name, message, code } = error as { name?: unknown; message?: unknown; code?: unknown };
    reply = {
      error: {
        name: typeof name === 'string' ? name : 'Error',
        message: typeof message === 'string' ? message : String(error),
        ...(typeof code === 'string' ? { code } : {}),
      },
    };
  }
  send(reply);
}

if (parentPort !== null) parentPort.on('message', onMessage);
else {
  process.on('message', (message) => onMessage(message as ReaderRequest | 'close'));
  // the server is gone (or closed the channel): nothing will ask for reads any more
  process.once('disconnect', () => process.exit(0));
}
// the modules are loaded: the pool starts a read's budget only from here
send('ready');
