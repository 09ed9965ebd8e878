#!/usr/bin/env node
// The `odata-engine` command line: run the reference server (`serve`), manage its sites, keys and users, `explain`
// how a query string is read and the SQL each dialect runs for it, and `bench` filters on every backend.
import {
  isODataError,
  parseQuery,
  printFilter,
  printOrderBy,
  printSelect,
  toODataErrorBody,
  validateQuery,
  type BoundExpr,
  type BoundQuery,
  type NavigationProperty,
} from '../index.js';
import { toSql, toSqlApply, type SqlDialectName, type SqlOptions } from '../backends/sql/index.js';
import { printApply } from '../syntax/print.js';
import { defaultLimits } from '../validate/bind.js';
import { dialects } from '../backends/sql/dialects.js';
import { entitySetNames, plantDataModel } from './model.js';

/** Each sub-command: what it prints for --help, and the flags it takes (a value, or none). */
interface CommandSpec {
  readonly usage: string;
  readonly flags: Readonly<Record<string, 'value' | 'switch'>>;
}

const storageFlags = { data: 'value', 'database-url': 'value' } as const;
const storageNote =
  '  (--data DIR: SQLite files under DIR, default ./data; --database-url URL or DATABASE_URL: postgres://… or mysql://…)';

const commands: Readonly<Record<string, CommandSpec>> = {
  serve: {
    usage: `odata-engine serve [--port N] [--host H] [--data DIR] [--database-url URL] [--demo] [--page-size N]
                   [--public-url URL] [--site-from-host] [--log-level LEVEL] [--rate-limit N] [--rate-burst N]
                   [--header-timeout S] [--request-timeout S] [--shutdown-timeout S] [--query-timeout S]
                   [--acquire-timeout S] [--pool-size N] [--readers N] [--reader-processes]
  Run the reference server: SQLite files under DIR (default ./data), or PostgreSQL (postgres://…) or MySQL/MariaDB
  (mysql://…) with --database-url (or DATABASE_URL); --demo makes a site "demo" with generated records and prints a key and a curl line. JSON log lines
  (pino) at LEVEL (default info; silent for none); N requests per second per credential (default 200, burst 2N; 0:
  no limit); timeouts in seconds for headers (10), the whole request (60) and draining on SIGTERM (30).
  Every query has a budget (--query-timeout, default 10 s; 0: none; past it 504) and waits at most --acquire-timeout
  (2 s; then 503) for a database connection (--pool-size, default 10) or a SQLite reader (--readers, default 4
  threads; 0: reads on the server's thread, stopped at the budget but blocking others until then;
  --reader-processes: processes, stoppable at any point).`,
    flags: {
      ...storageFlags,
      port: 'value',
      host: 'value',
      demo: 'switch',
      'page-size': 'value',
      'public-url': 'value',
      'site-from-host': 'switch',
      'log-level': 'value',
      'rate-limit': 'value',
      'rate-burst': 'value',
      'header-timeout': 'value',
      'request-timeout': 'value',
      'shutdown-timeout': 'value',
      'query-timeout': 'value',
      'acquire-timeout': 'value',
      'pool-size': 'value',
      readers: 'value',
      'reader-processes': 'switch',
    },
  },
  sites: {
    usage: `odata-engine sites create NAME [--time-zone TZ] | sites list\n${storageNote}`,
    flags: { ...storageFlags, 'time-zone': 'value' },
  },
  keys: {
    usage: `odata-engine keys create SITE [--label TEXT] | keys list SITE | keys revoke SITE KEY_ID\n${storageNote}`,
    flags: { ...storageFlags, label: 'value' },
  },
  users: {
    usage: `odata-engine users create SITE NAME      (the password is read from standard input)\n${storageNote}`,
    flags: storageFlags,
  },
  import: {
    usage: `odata-engine import SITE SET FILE [--format json|csv]
  Load records (a JSON array or CSV with a header row) into any set, or Comments/ActualLabor (with WorkOrderID),
  validated like a POST; all or nothing.\n${storageNote}`,
    flags: { ...storageFlags, format: 'value' },
  },
  seed: {
    usage: `odata-engine seed SITE [--rows N] [--seed S]   fill an empty site with generated records\n${storageNote}`,
    flags: { ...storageFlags, rows: 'value', seed: 'value' },
  },
  bench: {
    usage: `odata-engine bench SET [FILTER...] [--model FILE] [--filters FILE] [--rows N | --data FILE [--format json|csv]]
                   [--predicates FILE] [--seed S] [--rounds N] [--round-ms MS] [--postgres URL|off] [--mysql URL|off]
                   [--svg FILE] [--markdown FILE]
  Time each $filter over the rows of SET on the memory backend, SQLite, PostgreSQL and MySQL/MariaDB (those
  reachable) and hand-written predicates, after checking that they keep the same rows; print rows per second with
  the spread and the ratios, and write an SVG chart (default ./odata-bench.svg).
  SET is an entity set of the reference model, or of the model a JavaScript module exports (--model FILE: its default
  export or "model", made with defineModel). Filters: the arguments, and one per line of --filters FILE (# starts a
  comment); without any, 8 generated ones. Rows: N generated (default 100000; --seed S, default 1), or the records of
  a JSON array or CSV file. --predicates FILE: a module whose default export maps filter text to (row) => boolean.
  PostgreSQL: --postgres URL (default postgres://postgres@127.0.0.1:5432/postgres; a schema is made and dropped);
  MySQL/MariaDB: --mysql URL (default mysql://root@127.0.0.1:3306; a database likewise); off: not run.
  --rounds N timed rounds (default 3) of at least --round-ms MS each (default 200). Exit status 1 when a backend
  keeps other rows than the memory backend.`,
    flags: {
      model: 'value',
      filters: 'value',
      rows: 'value',
      data: 'value',
      format: 'value',
      predicates: 'value',
      seed: 'value',
      rounds: 'value',
      'round-ms': 'value',
      postgres: 'value',
      mysql: 'value',
      svg: 'value',
      markdown: 'value',
    },
  },
  explain: {
    usage: `odata-engine explain [SET] '<query string>'
  Show how the query options are parsed and, given an entity set of the service, bound to its entity type and
  translated to SQL for each dialect.

Entity sets: ${entitySetNames.join(', ')}

Example:
  odata-engine explain WorkOrders "\\$filter=Status eq 'APPR' and Priority le 2&\\$orderby=RequestedDate desc&\\$top=10"`,
    flags: {},
  },
};

const usage = `Usage:
${Object.values(commands)
  .map((c) => `  ${c.usage.split('\n')[0]}`)
  .join('\n')}

Every command answers --help with its own usage (and does nothing else).`;

/** A mistake in the command line: the message, then the command's usage; exit code 2. */
class UsageError extends Error {}

/** JSON with bigint and binary values shown readably. */
function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_, inner: unknown) =>
      typeof inner === 'bigint' ? `${inner}n` : inner instanceof Uint8Array ? `<${inner.length} bytes>` : inner,
    2,
  );
}

/** A bound tree with names instead of schema objects: what a reader wants to see. */
function describeBound(expr: BoundExpr): unknown {
  return JSON.parse(
    JSON.stringify(expr, (key, value: unknown) => {
      if (key === 'span') return undefined;
      if (key === 'property' || key === 'navigation') return (value as { name: string }).name;
      return typeof value === 'bigint' ? `${value}n` : value;
    }),
  );
}

function describeQuery(bound: BoundQuery): unknown {
  return {
    entityType: bound.entityType.name,
    filter: bound.filter === undefined ? null : describeBound(bound.filter),
    orderBy: bound.orderBy.map((o) => ({
      ...(describeBound(o.expr) as object),
      direction: o.direction,
      tieBreak: o.tieBreak,
    })),
    select: bound.select.map((p) => p.name),
    top: bound.top ?? null,
    skip: bound.skip ?? null,
    count: bound.count,
  };
}

function explain(query: string, setName?: string): number {
  try {
    const options = parseQuery(query);
    const canonical: string[] = [];
    if (options.apply !== undefined) canonical.push(`$apply=${printApply(options.apply)}`);
    if (options.filter !== undefined) canonical.push(`$filter=${printFilter(options.filter)}`);
    if (options.select !== undefined) canonical.push(`$select=${printSelect(options.select)}`);
    if (options.orderBy !== undefined) canonical.push(`$orderby=${printOrderBy(options.orderBy)}`);
    if (options.top !== undefined) canonical.push(`$top=${options.top}`);
    if (options.skip !== undefined) canonical.push(`$skip=${options.skip}`);
    if (options.count !== undefined) canonical.push(`$count=${options.count}`);
    console.log(`Canonical: ${canonical.join('&')}\n`);
    console.log('Syntax tree:');
    console.log(
      toJson({
        ...options,
        aliases: Object.fromEntries(options.aliases),
        custom: Object.fromEntries(options.custom),
      }),
    );
    if (setName !== undefined) {
      const type = plantDataModel.entitySets.get(setName);
      if (type === undefined) {
        console.error(`Unknown entity set ${setName}; the service has ${entitySetNames.join(', ')}`);
        return 2;
      }
      const bound = validateQuery(options, type);
      console.log(`\nBound to ${setName} (${type.name}):`);
      console.log(toJson(describeQuery(bound)));
      for (const dialect of Object.keys(dialects) as SqlDialectName[]) {
        // tables named after the sets; a navigation's (at any depth of a path) after its target's set
        const navigation = (nav: NavigationProperty) => ({ table: setOf(nav.target().name) ?? nav.name });
        const sqlOptions: SqlOptions = { dialect, table: setName, navigation };
        const show = (what: string, { sql, params }: { sql: string; params: unknown[] }): void =>
          console.log(`\n${what} (${dialect}):\n${sql}\nparams: ${toJson(params).replace(/\s*\n\s*/g, ' ')}`);
        try {
          if (bound.apply === undefined) {
            show('SQL', toSql(bound, sqlOptions));
            continue;
          }
          // $apply: the grouping the database makes, what runs in memory after it (docs/service.md)
          const made = toSqlApply(bound.apply, sqlOptions, defaultLimits.maxApplyRows + 1);
          if (made === undefined) {
            console.log(
              `\nSQL (${dialect}): the rows its leading filters and searches keep, read as for $filter and $search; every transformation of $apply runs in memory (the database cannot make its grouping exactly)`,
            );
            continue;
          }
          show('SQL of $apply', made.statement);
          if (made.exactSums !== undefined)
            show('the same with exact sums, run where a sum leaves 64 bits', made.exactSums);
          console.log(
            `then in memory: ${made.rest.steps.length} transformation(s) after the grouping, and the options after $apply`,
          );
        } catch (error) {
          if (!isODataError(error)) throw error;
          console.log(`\nSQL (${dialect}): not translated (HTTP ${error.status}): ${error.message}`);
        }
      }
    }
    return 0;
  } catch (error) {
    if (!isODataError(error)) throw error;
    console.error(`HTTP ${error.status}`);
    console.error(toJson(toODataErrorBody(error)));
    return 1;
  }
}

function setOf(typeName: string): string | undefined {
  for (const [name, type] of plantDataModel.entitySets) if (type.name === typeName) return name;
  return undefined;
}

/** `--name value`, `--name=value` and switches, as the command declares them; anything else is a UsageError. */
function options(
  command: string,
  args: readonly string[],
): { flags: Map<string, string | true>; positional: string[] } {
  const spec = commands[command]!;
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    const kind = spec.flags[name];
    if (kind === undefined) {
      const known = Object.keys(spec.flags);
      throw new UsageError(
        `odata-engine ${command} has no option --${name}${known.length === 0 ? '' : `; it takes ${known.map((k) => `--${k}`).join(', ')}`}`,
      );
    }
    if (kind === 'switch') {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    const value = inline ?? args[i + 1];
    if (value === undefined || (inline === undefined && value.startsWith('--')))
      throw new UsageError(`--${name} needs a value`);
    if (inline === undefined) i++;
    flags.set(name, value);
  }
  return { flags, positional };
}

function flag(flags: Map<string, string | true>, name: string): string | undefined {
  const value = flags.get(name);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The storage the flags name. The admin commands read on their own thread without budgets (they run alone, and a
 * seed or an import may rightly take minutes); `serve` passes its budgets.
 */
async function openFrom(flags: Map<string, string | true>, budgets?: ServeBudgets) {
  const { openBackend } = await import('./backend.js');
  const databaseUrl = flag(flags, 'database-url') ?? process.env['DATABASE_URL'];
  return openBackend({
    dataDir: flag(flags, 'data') ?? 'data',
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    ...(budgets ?? { readerThreads: 0, queryTimeoutMs: 0 }),
  });
}

interface ServeBudgets {
  readonly queryTimeoutMs: number;
  readonly acquireTimeoutMs: number;
  readonly readerThreads: number;
  readonly readerIsolation: 'thread' | 'process';
  readonly max?: number;
}

function serveBudgets(flags: Map<string, string | true>): ServeBudgets {
  const poolSize = flag(flags, 'pool-size');
  return {
    queryTimeoutMs: numberFlag(flags, 'query-timeout', 10) * 1000,
    acquireTimeoutMs: numberFlag(flags, 'acquire-timeout', 2) * 1000,
    readerThreads: Math.floor(numberFlag(flags, 'readers', 4)),
    readerIsolation: flags.has('reader-processes') ? 'process' : 'thread',
    ...(poolSize === undefined ? {} : { max: Math.max(1, Math.floor(numberFlag(flags, 'pool-size', 10))) }),
  };
}

/** A numeric flag: its value, the default when absent; an error naming the flag when it is not a number ≥ 0. */
function numberFlag(flags: Map<string, string | true>, name: string, fallback: number): number {
  const text = flag(flags, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0)
    throw new Error(`--${name} takes a number ≥ 0, not ${JSON.stringify(text)}`);
  return value;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

async function serve(flags: Map<string, string | true>): Promise<number> {
  const { createPlantService } = await import('./plant-service.js');
  const { createServer } = await import('../service/fastify.js');
  const level = flag(flags, 'log-level') ?? 'info';
  if (!LOG_LEVELS.includes(level)) throw new Error(`--log-level is one of ${LOG_LEVELS.join(', ')}, not ${level}`);
  const rate = numberFlag(flags, 'rate-limit', 200);
  const burst = numberFlag(flags, 'rate-burst', rate * 2);
  const timeouts = {
    headersMs: numberFlag(flags, 'header-timeout', 10) * 1000,
    requestMs: numberFlag(flags, 'request-timeout', 60) * 1000,
  };
  const shutdownMs = numberFlag(flags, 'shutdown-timeout', 30) * 1000;
  const backend = await openFrom(flags, serveBudgets(flags));
  const pageSize = flag(flags, 'page-size');
  const publicUrl = flag(flags, 'public-url');
  const service = createPlantService({
    backend,
    ...(pageSize === undefined ? {} : { pageSize: Number(pageSize) }),
    ...(publicUrl === undefined ? {} : { publicUrl }),
    siteFromHost: flags.has('site-from-host'),
    ...(rate > 0 ? { rateLimit: { perSecond: rate, burst: Math.max(1, burst) } } : {}),
    // next links' $skiptoken hold on every instance that shares the secret, and across restarts
    ...(process.env['ODATA_SKIPTOKEN_SECRET'] === undefined
      ? {}
      : { skipTokenSecret: process.env['ODATA_SKIPTOKEN_SECRET'] }),
  });
  const app = createServer({ service, logger: { level }, timeouts });
  const host = flag(flags, 'host') ?? '127.0.0.1';
  await app.listen({ port: Number(flag(flags, 'port') ?? process.env['PORT'] ?? 4004), host });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const where = {
    postgres: 'PostgreSQL',
    mysql: 'MySQL/MariaDB',
    sqlite: `SQLite files under ${flag(flags, 'data') ?? 'data'}/`,
  }[backend.kind];
  console.log(`odata-engine serving on http://${host}:${port} (${where})`);
  if (flags.has('demo')) {
    const { loadDemoSite } = await import('./demo-site.js');
    const { key, created } = await loadDemoSite(backend);
    console.log(`${created ? 'Created' : 'Using'} the demo site; a new API key for it: ${key}`);
    console.log(
      `Try:\n  curl -H 'API_KEY: ${key}' "http://${host}:${port}/demo/ODataApi/v1/WorkOrders?\\$filter=Priority%20le%202&\\$top=3"`,
    );
  }
  // SIGTERM or SIGINT: refuse new requests (503), answer those received, close the database, exit 0; a second signal
  // or the shutdown timeout exits at once with 1
  let stopping = false;
  // Node joins every thread before the process exits: a SQLite reader thread stopped at its budget inside one native
  // step would hold the exit until the step ends (measured: as long as the statement would have run), so then the
  // process ends itself with SIGKILL (status 137); reader processes (--reader-processes) are killed by close()
  const exit = (code: number): void => {
    const stuck = backend.stuckReaders();
    if (stuck === 0) process.exit(code);
    app.log.warn({ stuck }, 'reader threads still inside stopped statements: ending the process with SIGKILL');
    process.kill(process.pid, 'SIGKILL');
  };
  const stop = (signal: string): void => {
    if (stopping) {
      app.log.warn({ signal }, 'second signal: exiting without draining');
      exit(1);
    }
    stopping = true;
    app.log.info({ signal }, 'shutting down: draining requests');
    const deadline = setTimeout(() => {
      app.log.error({ shutdownMs }, 'requests still running at the shutdown timeout: exiting');
      exit(1);
    }, shutdownMs);
    deadline.unref();
    void (async () => {
      await app.close();
      await backend.close();
      app.log.info('stopped: connections and database closed');
      exit(0);
    })();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return 0;
}

async function admin(command: string, args: readonly string[]): Promise<number> {
  const { flags, positional } = options(command, args);
  const [verb, ...rest] = positional;
  const { TenancyError } = await import('./tenancy.js');
  const backend = await openFrom(flags);
  try {
    const d = backend.directory;
    if (command === 'sites' && verb === 'create' && rest.length === 1) {
      const timeZone = flag(flags, 'time-zone');
      const site = await d.createSite(rest[0]!, timeZone === undefined ? {} : { timeZone });
      await backend.store(site.name);
      console.log(`Created site ${site.name} (time zone ${site.timeZone})`);
    } else if (command === 'sites' && verb === 'list') {
      for (const site of await d.listSites()) console.log(`${site.name}\t${site.timeZone}\t${site.createdDate}`);
    } else if (command === 'keys' && verb === 'create' && rest.length === 1) {
      const { id, key } = await d.createKey(rest[0]!, flag(flags, 'label'));
      console.log(`Key ${id} for ${rest[0]} (shown once; send it as the API_KEY header):\n${key}`);
    } else if (command === 'keys' && verb === 'list' && rest.length === 1) {
      for (const k of await d.listKeys(rest[0]!))
        console.log(`${k.id}\t${k.revoked ? 'revoked' : 'active'}\t${k.createdDate}\t${k.label ?? ''}`);
    } else if (command === 'keys' && verb === 'revoke' && rest.length === 2) {
      if (!(await d.revokeKey(rest[0]!, rest[1]!))) throw new TenancyError(`Site ${rest[0]} has no key ${rest[1]}`);
      console.log(`Revoked ${rest[1]}`);
    } else if (command === 'users' && verb === 'create' && rest.length === 2) {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      const password = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/\r?\n$/, '');
      await d.createUser(rest[0]!, rest[1]!, password);
      console.log(`Created user ${rest[1]} of ${rest[0]}`);
    } else {
      console.error(commands[command]!.usage);
      return 2;
    }
    return 0;
  } catch (error) {
    if (error instanceof TenancyError) {
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await backend.close();
  }
}

/** A one-line progress bar on standard error (only when it is a terminal: logs stay clean). */
function progressBar(label: string): (done: number, total?: number) => void {
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - last < 100 && (total === undefined || done < total)) return;
    last = now;
    const share = total === undefined || total === 0 ? undefined : done / total;
    const bar =
      share === undefined ? '' : `[${'#'.repeat(Math.round(share * 30)).padEnd(30, '.')}] ${Math.round(share * 100)}% `;
    const line = `${label} ${bar}${done}${total === undefined ? '' : `/${total}`}`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else if (total !== undefined && done === total) process.stderr.write(`${line}\n`);
  };
}

async function bulk(command: 'import' | 'seed', args: readonly string[]): Promise<number> {
  const { flags, positional } = options(command, args);
  const { AdminError, importRecords, importTargets, parseRecords, seedSite } = await import('./admin.js');
  const backend = await openFrom(flags);
  try {
    if (command === 'import') {
      const [site, target, file] = positional;
      if (site === undefined || target === undefined || file === undefined) {
        console.error(commands['import']!.usage);
        return 2;
      }
      if (!(importTargets as readonly string[]).includes(target)) {
        console.error(`Cannot import into ${target}; one of: ${importTargets.join(', ')}`);
        return 2;
      }
      const { readFileSync } = await import('node:fs');
      const { plantDataModel } = await import('./model.js');
      const format = flag(flags, 'format') ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'json');
      if (format !== 'csv' && format !== 'json') throw new AdminError('--format is json or csv');
      const records = parseRecords(readFileSync(file, 'utf8'), format, plantDataModel.entitySets.get(target));
      const bar = progressBar(`importing ${target}`);
      const n = await importRecords(backend, site, target as (typeof importTargets)[number], records, bar);
      console.log(`Imported ${n} record${n === 1 ? '' : 's'} into ${target} of ${site}`);
    } else {
      const [site] = positional;
      if (site === undefined) {
        console.error(commands['seed']!.usage);
        return 2;
      }
      const rows = Number(flag(flags, 'rows') ?? 1000);
      const seed = flag(flags, 'seed');
      let current = '';
      const bar = progressBar('seeding');
      const total = await seedSite(
        backend,
        site,
        { rows, ...(seed === undefined ? {} : { seed: Number(seed) }) },
        (set, done) => {
          if (set !== current) current = set;
          bar(done);
        },
      );
      if (process.stderr.isTTY) process.stderr.write('\n');
      console.log(`Seeded ${site} with ${total} records`);
    }
    return 0;
  } catch (error) {
    if (error instanceof AdminError) {
      if (process.stderr.isTTY) process.stderr.write('\n');
      console.error(error.message);
      return 1;
    }
    throw error;
  } finally {
    await backend.close();
  }
}

/** A module's default export, or its export `name`. */
async function moduleExport(file: string, name: string): Promise<unknown> {
  const { resolve } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const module = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  return module['default'] ?? module[name];
}

async function bench(args: readonly string[]): Promise<number> {
  const { flags, positional } = options('bench', args);
  const [set, ...given] = positional;
  if (set === undefined) throw new UsageError('bench needs an entity set');
  const { readFileSync, writeFileSync } = await import('node:fs');
  // the benchmark generates rows and filters with the testing kit, whose fast-check is an optional peer dependency
  const bench = await import('./filter-bench.js').catch((error: unknown) => {
    if (String(error).includes("'fast-check'"))
      throw new Error('odata-engine bench needs fast-check beside odata-engine: npm install --save-dev fast-check');
    throw error;
  });
  const modelFile = flag(flags, 'model');
  const model = modelFile === undefined ? plantDataModel : await moduleExport(modelFile, 'model');
  if (!(model instanceof Object) || !((model as { entitySets?: unknown }).entitySets instanceof Map))
    throw new UsageError(`${modelFile} exports no model (a defineModel result, as its default export or \`model\`)`);
  const typed = model as typeof plantDataModel;
  const entityType = typed.entitySets.get(set);
  if (entityType === undefined)
    throw new UsageError(`The model has no entity set ${set}; it has ${[...typed.entitySets.keys()].join(', ')}`);
  const seed = Math.floor(numberFlag(flags, 'seed', 1));
  const dataFile = flag(flags, 'data');
  let rows;
  if (dataFile === undefined)
    rows = bench.generatedRows(entityType, Math.floor(numberFlag(flags, 'rows', 100_000)), seed);
  else {
    if (flags.has('rows')) throw new UsageError('--rows and --data exclude each other');
    const { parseRecords } = await import('./admin.js');
    const format = flag(flags, 'format') ?? (dataFile.toLowerCase().endsWith('.csv') ? 'csv' : 'json');
    if (format !== 'csv' && format !== 'json') throw new UsageError('--format is json or csv');
    rows = bench.rowsFromRecords(entityType, parseRecords(readFileSync(dataFile, 'utf8'), format, entityType));
  }
  const filters = [...given];
  const filtersFile = flag(flags, 'filters');
  if (filtersFile !== undefined)
    for (const line of readFileSync(filtersFile, 'utf8').split(/\r?\n/)) {
      const text = line.trim();
      if (text !== '' && !text.startsWith('#')) filters.push(text);
    }
  if (filters.length === 0) filters.push(...bench.generatedFilters(entityType, rows, 8, seed));
  const predicatesFile = flag(flags, 'predicates');
  const predicates =
    predicatesFile === undefined
      ? undefined
      : ((await moduleExport(predicatesFile, 'predicates')) as import('./filter-bench.js').Predicates);
  const server = (name: 'postgres' | 'mysql', fallback: string): string | undefined => {
    const value = flag(flags, name) ?? fallback;
    return value === 'off' ? undefined : value;
  };
  const postgresUrl = server('postgres', 'postgres://postgres@127.0.0.1:5432/postgres');
  const mysqlUrl = server('mysql', 'mysql://root@127.0.0.1:3306');
  const bars = new Map<string, (done: number, total?: number) => void>();
  const result = await bench.runFilterBench({
    model: typed,
    set,
    filters,
    rows,
    ...(postgresUrl === undefined ? {} : { postgresUrl }),
    ...(mysqlUrl === undefined ? {} : { mysqlUrl }),
    ...(predicates === undefined ? {} : { predicates }),
    rounds: Math.floor(numberFlag(flags, 'rounds', 3)),
    roundMs: numberFlag(flags, 'round-ms', 200),
    progress: (label, done, total) => {
      let bar = bars.get(label);
      if (bar === undefined) bars.set(label, (bar = progressBar(label)));
      bar(done, total);
      if (done === total && process.stderr.isTTY) process.stderr.write('\n');
    },
  });
  const markdown = bench.formatFilterBench(result);
  console.log(markdown);
  const markdownFile = flag(flags, 'markdown');
  if (markdownFile !== undefined) writeFileSync(markdownFile, `${markdown}\n`);
  const svgFile = flag(flags, 'svg') ?? 'odata-bench.svg';
  writeFileSync(svgFile, bench.filterBenchSvg(result));
  console.log(`\nChart written to ${svgFile}`);
  return result.disagreement ? 1 : 0;
}

async function main(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = command === 'help' ? commands[rest[0] ?? ''] : undefined;
    console.log(topic?.usage ?? usage);
    return 0;
  }
  const spec = commands[command];
  if (spec === undefined) {
    console.error(`Unknown command ${JSON.stringify(command)}\n\n${usage}`);
    return 2;
  }
  // --help anywhere: the usage, and nothing opened, created or started
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(spec.usage);
    return 0;
  }
  try {
    if (command === 'explain') {
      const { positional } = options(command, rest);
      if (positional.length === 1) return explain(positional[0]!);
      if (positional.length === 2) return explain(positional[1]!, positional[0]!);
      throw new UsageError('explain takes a query string, optionally after an entity set');
    }
    if (command === 'serve') {
      const { flags, positional } = options(command, rest);
      if (positional.length > 0) throw new UsageError(`serve takes no arguments, found ${positional.join(' ')}`);
      return await serve(flags);
    }
    if (command === 'bench') return await bench(rest);
    if (command === 'sites' || command === 'keys' || command === 'users') return await admin(command, rest);
    return await bulk(command as 'import' | 'seed', rest);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`${error.message}\n\nUsage: ${spec.usage}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  },
);
