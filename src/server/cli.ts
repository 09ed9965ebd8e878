#!/usr/bin/env node
// The `odata-engine` command line. For now: `explain`, which shows how a query string is read and the SQL each
// dialect runs for it.
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
} from '../index.js';
import { toSql, type SqlDialectName } from '../backends/sql/index.js';
import { entitySetNames, plantDataModel } from './model.js';

const usage = `Usage:
  odata-engine explain [SET] '<query string>'   show how the query options are parsed and, given an
                                                entity set of the service, bound to its entity type
                                                and translated to SQL for each dialect

Entity sets: ${entitySetNames.join(', ')}

Example:
  odata-engine explain WorkOrders "\\$filter=Status eq 'APPR' and Priority le 2&\\$orderby=RequestedDate desc&\\$top=10"`;

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
      for (const dialect of ['sqlite', 'postgres', 'mysql'] satisfies SqlDialectName[]) {
        // tables named after the sets; navigation collections after their target's set
        const navigation = Object.fromEntries(
          [...type.navigation.values()].map((nav) => [nav.name, { table: setOf(nav.target().name) ?? nav.name }]),
        );
        try {
          const { sql, params } = toSql(bound, { dialect, table: setName, navigation });
          console.log(`\nSQL (${dialect}):\n${sql}\nparams: ${toJson(params).replace(/\s*\n\s*/g, ' ')}`);
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

function main(args: readonly string[]): number {
  const [command, ...rest] = args;
  if (command === 'explain' && rest.length === 1) return explain(rest[0]!);
  if (command === 'explain' && rest.length === 2) return explain(rest[1]!, rest[0]!);
  console.error(usage);
  return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
}

process.exitCode = main(process.argv.slice(2));
