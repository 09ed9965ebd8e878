#!/usr/bin/env node
// The `odata-engine` command line. For now: `explain`, which shows how a query string is read.
import { isODataError, parseQuery, printFilter, printOrderBy, printSelect, toODataErrorBody } from '../index.js';

const usage = `Usage:
  odata-engine explain '<query string>'     show how the query options are parsed

Example:
  odata-engine explain "\\$filter=Status eq 'Open' and Priority le 2&\\$orderby=RequestedDate desc&\\$top=10"`;

/** JSON with bigint and binary values shown readably. */
function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_, inner: unknown) =>
      typeof inner === 'bigint' ? `${inner}n` : inner instanceof Uint8Array ? `<${inner.length} bytes>` : inner,
    2,
  );
}

function explain(query: string): number {
  try {
    const options = parseQuery(query);
    const canonical: string[] = [];
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
    return 0;
  } catch (error) {
    if (!isODataError(error)) throw error;
    console.error(`HTTP ${error.status}`);
    console.error(toJson(toODataErrorBody(error)));
    return 1;
  }
}

function main(args: readonly string[]): number {
  const [command, ...rest] = args;
  if (command === 'explain' && rest.length === 1) return explain(rest[0]!);
  console.error(usage);
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
}

process.exitCode = main(process.argv.slice(2));
