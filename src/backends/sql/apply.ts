// `$apply` made by the database as far as one statement can: the leading `filter` and `search` transformations as its
// WHERE (the searches as one `$search`), the `compute` aliases a grouping reads, and the first `aggregate` or
// `groupby(..., aggregate(...))` as GROUP BY with SUM, MIN, MAX, COUNT and COUNT(DISTINCT). What comes after the
// grouping (a few instances, one per group) is left to the memory backend's runApply, which also defines what every
// transformation means: this module gives the same instances it would (docs/backends.md, "$apply"), in the same
// order, or declines (undefined) and the caller reads the rows and runs every transformation in memory.
import type { Property, Row } from '../../model/schema.js';
import { ODataError } from '../../errors.js';
import type { EdmPrimitiveType } from '../../values/edm.js';
import { isIntegral } from '../../values/edm.js';
import { rowFormOf } from '../../values/cast.js';
import { decimalFromBigInt, decimalToString, divDecimal, type Decimal } from '../../values/decimal.js';
import { decimalOf, reader } from '../../values/read.js';
import type {
  BoundAggregate,
  BoundApply,
  BoundApplyStep,
  BoundExpr,
  BoundGroupKey,
  BoundQuery,
} from '../../validate/bound.js';
import { leadingConditions, setGrouped } from '../../validate/apply.js';
import { dialects } from './dialects.js';
import { SqlEmitter, type GroupedAggregate, type SqlOptions, type SqlStatement } from './emit.js';

/** The part of `$apply` a database makes, and what is left for memory. */
export interface SqlApply {
  /** The grouping's statement: one row per instance, in the order the memory backend gives them. */
  readonly statement: SqlStatement;
  /**
   * The same with exact sums, where the dialect's SUM fails on a sum past 64 bits instead of widening it (SQLite):
   * run it when `statement` fails with such an error (isSumOverflow).
   */
  readonly exactSums?: SqlStatement;
  /** The statements' columns, in order (a driver that gives rows as objects is read by these names). */
  readonly columns: readonly string[];
  /** A row of either statement, as the array of its column values, as the instance it stands for (row form). */
  decode(raw: readonly unknown[]): Row;
  /** The transformations after the grouping: runApply makes the final instances of those `decode` gives. */
  readonly rest: BoundApply;
}

/** Whether a statement of toSqlApply failed because a sum left 64 bits (then run its `exactSums`). */
export function isSumOverflow(error: unknown): boolean {
  return error instanceof Error && /integer overflow/i.test(error.message);
}

/** One aggregate as the statement reads it, and how its columns make the alias's value. */
interface Planned {
  readonly aggregate: BoundAggregate;
  /** The positions among the aggregated columns of those it reads (an average: the sum and the count of values). */
  readonly columns: readonly number[];
}

/**
 * The statement of `$apply`'s leading filters and first grouping, or undefined where the database cannot make it
 * exactly as the memory backend does (a grouping over an expression other than a property or an integer, string,
 * Boolean or date alias; min or max of a Boolean or a Guid; a decimal SQLite does not keep; no grouping at all...).
 * `limit`: at most this many instances (a LIMIT), for a caller that bounds them.
 */
export function toSqlApply(apply: BoundApply, options: SqlOptions, limit?: number): SqlApply | undefined {
  const dialect = dialects[options.dialect];
  const { steps } = apply;
  // (the leading searches as one `$search`: the emitter's translation of it serves them)
  const { filter, search, next } = leadingConditions(steps);
  let at = next;
  // compute aliases a grouping may read (as keys): their expressions over the input's properties
  const computed = new Map<Property, BoundExpr>();
  for (; at < steps.length && steps[at]!.kind === 'compute'; at++) {
    const step = steps[at] as Extract<BoundApplyStep, { kind: 'compute' }>;
    for (const { property, expr } of step.computed) computed.set(property, expr);
  }
  const grouping = steps[at];
  let keys: readonly BoundGroupKey[];
  let aggregates: readonly BoundAggregate[];
  if (grouping?.kind === 'aggregate') {
    keys = [];
    aggregates = grouping.aggregates;
  } else if (grouping?.kind === 'groupby' && grouping.steps.length <= 1) {
    const nested = grouping.steps[0];
    if (nested !== undefined && nested.kind !== 'aggregate') return undefined;
    keys = grouping.keys;
    aggregates = nested?.aggregates ?? [];
  } else {
    return undefined;
  }
  const scaled = dialect.storage.scaledDecimals;
  const stored = (expr: BoundExpr): boolean =>
    expr.type !== 'Edm.Binary' &&
    expr.type !== 'Edm.TimeOfDay' &&
    expr.type !== 'Edm.Duration' &&
    (expr.type !== 'Edm.Decimal' ||
      scaled === undefined ||
      (expr.kind === 'property' && typeof scaled.scale(expr.property) === 'number'));
  // keys: input properties (or read through single-valued navigations: a join), or computed aliases whose SQL value
  // is what the column of their type would hold
  const keyExprs: BoundExpr[] = [];
  for (const key of keys) {
    const alias = key.path.length === 0 ? computed.get(key.expr.property) : undefined;
    const expr = alias ?? key.expr;
    if (alias !== undefined && !['Edm.Int32', 'Edm.String', 'Edm.Boolean', 'Edm.Date'].includes(expr.type)) {
      return undefined;
    }
    if (!stored(expr)) return undefined;
    keyExprs.push(expr);
  }
  // each aggregated column once, however many aggregates read it (a sum and an average of one property share the
  // SUM; COUNT of a property that cannot be null is COUNT(*))
  const columns: GroupedAggregate[] = [];
  const columnAt = new Map<string, number>();
  const column = (aggregate: GroupedAggregate): number => {
    const { expr } = aggregate;
    const counted =
      aggregate.method === 'count' &&
      expr?.kind === 'property' &&
      expr.source.kind === 'root' &&
      !expr.property.nullable;
    const shared: GroupedAggregate = counted ? { method: '$count' } : aggregate;
    const key =
      shared.expr === undefined ? shared.method : `${shared.method} ${JSON.stringify(sourcePath(shared.expr))}`;
    let at = columnAt.get(key);
    if (at === undefined) {
      columnAt.set(key, (at = columns.length));
      columns.push(shared);
    }
    return at;
  };
  const planned: Planned[] = [];
  for (const aggregate of aggregates) {
    const { expr } = aggregate;
    if (aggregate.method === '$count' || expr === undefined) {
      planned.push({ aggregate, columns: [column({ method: '$count' })] });
      continue;
    }
    // a property of the input (a computed alias's value in SQL need not be its stored form)
    if (expr.kind !== 'property' || computed.has(expr.property) || !stored(expr)) return undefined;
    const type = expr.type;
    switch (aggregate.method) {
      case 'sum':
      case 'average': {
        const sum = column({ method: 'sum', expr });
        planned.push({
          aggregate,
          columns: aggregate.method === 'sum' ? [sum] : [sum, column({ method: 'count', expr })],
        });
        break;
      }
      case 'min':
      case 'max':
        // (PostgreSQL has no min or max of booleans or uuids)
        if (type === 'Edm.Boolean' || type === 'Edm.Guid') return undefined;
        planned.push({ aggregate, columns: [column({ method: aggregate.method, expr })] });
        break;
      case 'countdistinct':
        planned.push({ aggregate, columns: [column({ method: 'countdistinct', expr })] });
        break;
    }
  }
  const input: BoundQuery = {
    entityType: apply.input,
    ...(filter === undefined ? {} : { filter }),
    ...(search === undefined ? {} : { search }),
    orderBy: [],
    select: [],
    count: false,
  };
  const emit = (exact: boolean): SqlStatement => {
    const e = new SqlEmitter(dialect, options, apply.input);
    const used = exact
      ? columns.map((c) =>
          c.method === 'sum' && isIntegerBacked(c.expr!, scaled !== undefined)
            ? { ...c, method: 'exactsum' as const }
            : c,
        )
      : columns;
    return e.finish(e.grouped(input, keyExprs, used, limit));
  };
  let statement: SqlStatement;
  try {
    statement = emit(false);
  } catch (error) {
    // what this dialect cannot translate is left to memory, which reads the rows with the same filter (and reports
    // the filter's own 501s as a plain read would)
    if (error instanceof ODataError && error.code === 'NotImplemented') return undefined;
    throw error;
  }
  const exactSums =
    dialect.exactIntegerSum !== undefined &&
    columns.some((c) => c.method === 'sum' && isIntegerBacked(c.expr!, scaled !== undefined))
      ? emit(true)
      : undefined;
  const decodeKey = keyExprs.map((expr, i) => {
    const property = expr.kind === 'property' ? expr.property : { type: keys[i]!.property.type };
    const type = keys[i]!.property.type;
    const read = reader(type);
    return (raw: unknown): unknown => rowFormOf(read(dialect.storage.decode(property, raw)), type);
  });
  const decodeAggregate = planned.map(({ aggregate, columns: read }) => {
    // the columns it reads, among the keys' and the aggregates'
    const at = keys.length + read[0]!;
    const countAt = keys.length + (read[1] ?? read[0]!);
    const out = aggregate.property;
    const expr = aggregate.expr;
    const source = expr?.kind === 'property' ? expr.property : undefined;
    switch (aggregate.method) {
      case '$count':
      case 'countdistinct':
        return (raw: readonly unknown[]): unknown => String(Number(raw[at]));
      case 'min':
      case 'max': {
        const value = reader(out.type);
        return (raw: readonly unknown[]): unknown =>
          rowFormOf(value(dialect.storage.decode(source!, raw[at])), out.type);
      }
      case 'sum':
      case 'average': {
        const sum = sumReader(expr!.type as EdmPrimitiveType, source!, dialect.storage.decode);
        // a decimal, Int64 or Int32's sum in row form: its canonical text
        if (aggregate.method === 'sum') {
          return (raw: readonly unknown[]): unknown => {
            const total = sum(raw[at]);
            return total === null || typeof total === 'number' ? total : decimalToString(total);
          };
        }
        return (raw: readonly unknown[]): unknown => {
          const total = sum(raw[at]);
          if (total === null) return null;
          const count = Number(raw[countAt]);
          // as the memory backend: a double's mean in double arithmetic, any other the exact quotient at 20 places
          if (typeof total === 'number') return total / count;
          return decimalToString(divDecimal(total, decimalFromBigInt(BigInt(count)))!);
        };
      }
    }
  });
  return {
    statement,
    columns: [...keys.map((_, i) => `k${i}`), ...columns.map((_, i) => `a${i}`)],
    ...(exactSums === undefined ? {} : { exactSums }),
    decode: (raw) => {
      const row: Record<string, unknown> = {};
      keys.forEach((key, i) => setGrouped(row, key, decodeKey[i]!(raw[i])));
      planned.forEach(({ aggregate }, i) => (row[aggregate.property.name] = decodeAggregate[i]!(raw)));
      return row;
    },
    rest: { input: grouping.output, steps: steps.slice(at + 1), output: apply.output },
  };
}

/** Where an aggregated property is read from: the same path reads the same column. */
function sourcePath(expr: BoundExpr): unknown {
  if (expr.kind !== 'property') return expr.kind;
  const path: string[] = [expr.property.name];
  for (let source = expr.source; source.kind === 'navigation'; source = source.from)
    path.unshift(source.navigation.name);
  return path;
}

/** Whether a sum of this value is a sum of integers to the database (integers, or decimals kept scaled). */
function isIntegerBacked(expr: BoundExpr, scaledDecimals: boolean): boolean {
  return isIntegral(expr.type as EdmPrimitiveType) || (scaledDecimals && expr.type === 'Edm.Decimal');
}

/**
 * A SUM's value: a number for doubles, else an exact decimal. The database gives a sum of integers as an integer, a
 * decimal or its digit text (an exact sum), and a sum of scaled decimals as their scaled integer: read as the
 * summed property's own column would be, then as a decimal.
 */
function sumReader(
  type: EdmPrimitiveType,
  source: Property,
  decode: (property: Pick<Property, 'type' | 'scale'>, raw: unknown) => unknown,
): (raw: unknown) => number | Decimal | null {
  if (type === 'Edm.Double') return (raw) => (raw === null || raw === undefined ? null : Number(raw));
  const as: Pick<Property, 'type' | 'scale'> =
    type === 'Edm.Decimal'
      ? { type, ...(source.scale === undefined ? {} : { scale: source.scale }) }
      : { type: 'Edm.Decimal', scale: 0 };
  return (raw) =>
    raw === null || raw === undefined ? null : (decimalOf(reader('Edm.Decimal')(decode(as, raw))) ?? null);
}
