// `$apply` over rows in memory (Data Aggregation 4.0 CS03): each transformation takes the rows the one before gave, in
// their order, and gives new ones. Made rows hold their values in row form (decimals and Int64 as canonical text,
// instants as ISO text in UTC), as a store's rows do, so the rest of the query reads them as it reads any row.
// Semantics: groups come in ascending order of their values (nulls first), as a database's GROUP BY is asked for
// them; aggregates leave nulls out, as SQL does; a sum or an average of no values is null, a count 0; decimal sums
// are exact, and an average is the exact sum divided by the count, rounded as every decimal quotient is (SEMANTICS.md:
// half away from zero at 20 digits after the point).
import type { BoundAggregate, BoundApply, BoundApplyStep, BoundExpr } from '../../validate/bound.js';
import type { EdmPrimitiveType } from '../../values/edm.js';
import { rowFormOf } from '../../values/cast.js';
import { comparer } from '../../values/compare.js';
import {
  addDecimal,
  compareDecimal,
  decimalFromBigInt,
  divDecimal,
  mulDecimal,
  parseDecimal,
  type Decimal,
} from '../../values/decimal.js';
import { decimalOf, type Value } from '../../values/read.js';
import { ClosureCompiler, type RelatedRows } from './closures.js';
import { comparatorOf, sortKeysOf } from './order.js';
import { searchPredicate } from './search.js';
import { setGrouped } from '../../validate/apply.js';
import { generatedPredicate } from './source.js';
import type { Row } from './working-values.js';

/**
 * The rows `$apply` gives for `rows` of its input type, in their order. `related` gives the rows a navigation leads to
 * (as for compileQuery), for transformations that read through navigations.
 */
export function runApply(
  rows: readonly Row[],
  apply: BoundApply,
  options: { readonly now?: number; readonly related?: RelatedRows } = {},
): Row[] {
  const compiler = new ClosureCompiler(options.related);
  const own = new ClosureCompiler();
  compiler.now = own.now = options.now ?? Date.now();
  return new ApplyRunner(compiler, own).sequence(rows, apply.steps);
}

/** Text equal for values OData calls equal (1.5 and 1.50, an instant at any offset): a group's key. */
function groupText(value: Value, type: EdmPrimitiveType): string {
  if (value === null) return 'n';
  if (type === 'Edm.Decimal' || type === 'Edm.Double' || type === 'Edm.Int64' || type === 'Edm.Int32') {
    const decimal = decimalOf(value);
    return decimal === null ? `v${String(value)}` : `d${decimal.coefficient}e${decimal.exponent}`;
  }
  if (value instanceof Uint8Array) return `b${Buffer.from(value).toString('hex')}`;
  return `v${String(value)}`;
}

class ApplyRunner {
  /**
   * `entities`: the compiler for the input's rows (a navigation reads the store's related rows); `made`: for the
   * instances a grouping makes, whose navigations hold a grouping path's values as their own objects (ownMember).
   */
  constructor(
    private readonly entities: ClosureCompiler,
    private readonly made: ClosureCompiler,
    private readonly compiler: ClosureCompiler = entities,
  ) {}

  sequence(rows: readonly Row[], steps: readonly BoundApplyStep[]): Row[] {
    let current = rows as Row[];
    let runner: ApplyRunner = this;
    for (const step of steps) {
      current = runner.step(current, step);
      if (step.kind === 'aggregate' || step.kind === 'groupby' || step.kind === 'concat') {
        runner = new ApplyRunner(this.entities, this.made, this.made);
      }
    }
    return current;
  }

  private read(expr: BoundExpr): (row: Row) => Value {
    return this.compiler.compile(expr);
  }

  private step(rows: Row[], step: BoundApplyStep): Row[] {
    switch (step.kind) {
      case 'filter': {
        const keep = generatedPredicate(step.predicate, this.compiler);
        return rows.filter(keep);
      }
      case 'search':
        // what $search keeps (the word matching of search.ts)
        return rows.filter(searchPredicate(step.search));
      case 'orderby': {
        // a stable sort: rows the order does not tell apart keep the order they came in
        const compare = comparatorOf(sortKeysOf(step.orderBy, this.compiler));
        return rows.slice().sort(compare);
      }
      case 'top':
        return rows.slice(0, step.count);
      case 'skip':
        return rows.slice(step.count);
      case 'compute': {
        const computed = step.computed.map(({ property, expr }) => ({
          name: property.name,
          type: property.type,
          read: this.read(expr),
        }));
        return rows.map((row) => {
          const out: Record<string, unknown> = { ...row };
          for (const c of computed) out[c.name] = rowFormOf(c.read(row), c.type);
          return out;
        });
      }
      case 'aggregate':
        return [this.aggregate(rows, step.aggregates)];
      case 'groupby':
        return this.groupby(rows, step);
      case 'concat':
        return step.sequences.flatMap((sequence) => this.sequence(rows, sequence));
      case 'topcount':
      case 'bottomcount':
      case 'toppercent':
      case 'bottompercent':
      case 'topsum':
      case 'bottomsum':
        return this.ranked(rows, step);
    }
  }

  private groupby(rows: Row[], step: Extract<BoundApplyStep, { kind: 'groupby' }>): Row[] {
    const keys = step.keys.map((key) => ({
      property: key.property,
      path: key.path,
      read: this.read(key.expr),
    }));
    const groups = new Map<string, { values: Record<string, unknown>; rows: Row[] }>();
    for (const row of rows) {
      let text = '';
      const values: Value[] = [];
      for (const key of keys) {
        const value = key.read(row);
        values.push(value);
        text += `${groupText(value, key.property.type)}\u0000`;
      }
      let group = groups.get(text);
      if (group === undefined) {
        const named: Record<string, unknown> = {};
        keys.forEach((key, i) => setGrouped(named, key, rowFormOf(values[i]!, key.property.type)));
        groups.set(text, (group = { values: named, rows: [] }));
      }
      group.rows.push(row);
    }
    // groups in ascending order of their values (nulls first), as $orderby would sort them: the same order on every
    // store whatever order its rows come in, and the order a database's GROUP BY is asked for
    const order = comparatorOf(
      sortKeysOf(
        step.keys.map((key) => ({ expr: key.expr, direction: 'asc', tieBreak: false })),
        this.compiler,
      ),
    );
    const sorted = [...groups.values()].sort((a, b) => order(a.rows[0]!, b.rows[0]!));
    const out: Row[] = [];
    for (const group of sorted) {
      if (step.steps.length === 0) {
        out.push(group.values);
        continue;
      }
      for (const made of this.sequence(group.rows, step.steps)) out.push({ ...made, ...group.values });
    }
    return out;
  }

  private aggregate(rows: readonly Row[], aggregates: readonly BoundAggregate[]): Row {
    const out: Record<string, unknown> = {};
    for (const aggregate of aggregates) {
      const { property } = aggregate;
      if (aggregate.method === '$count' || aggregate.expr === undefined) {
        out[property.name] = String(rows.length);
        continue;
      }
      const read = this.read(aggregate.expr);
      const values: NonNullable<Value>[] = [];
      for (const row of rows) {
        const value = read(row);
        if (value !== null) values.push(value);
      }
      const type = aggregate.expr.type as EdmPrimitiveType;
      out[property.name] = rowFormOf(aggregateOf(aggregate.method, values, type), property.type);
    }
    return out;
  }

  /** topcount and its kin: the rows with the largest (or smallest) values, in the order they came. */
  private ranked(
    rows: Row[],
    step: Extract<
      BoundApplyStep,
      { kind: 'topcount' | 'bottomcount' | 'toppercent' | 'bottompercent' | 'topsum' | 'bottomsum' }
    >,
  ): Row[] {
    const read = this.read(step.value);
    const top = step.kind.startsWith('top');
    const ranked = rows
      .map((row, index) => ({ index, value: decimalOf(read(row)) }))
      // nulls rank last either way; ties keep the order the rows came in
      .sort((a, b) => {
        if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : 1) : -1;
        return top ? compareDecimal(b.value, a.value) : compareDecimal(a.value, b.value);
      });
    const kept = new Set<number>();
    if (step.kind.endsWith('count')) {
      for (const r of ranked.slice(0, step.n)) kept.add(r.index);
    } else {
      const limit = parseDecimal(String(step.n))!;
      let target = limit;
      if (step.kind.endsWith('percent')) {
        let total = decimalFromBigInt(0n);
        for (const r of ranked) if (r.value !== null) total = addDecimal(total, r.value);
        target = divDecimal(mulDecimal(total, limit), decimalFromBigInt(100n))!;
      }
      let sum = decimalFromBigInt(0n);
      for (const r of ranked) {
        if (compareDecimal(sum, target) >= 0 || r.value === null) break;
        kept.add(r.index);
        sum = addDecimal(sum, r.value);
      }
    }
    return rows.filter((_, i) => kept.has(i));
  }
}

/** One aggregate of the non-null values of an expression of type `type` (none: null, a count of none: 0). */
function aggregateOf(
  method: BoundAggregate['method'],
  values: readonly NonNullable<Value>[],
  type: EdmPrimitiveType,
): Value {
  switch (method) {
    case 'countdistinct': {
      if (values.length === 0) return 0;
      const compare = comparer(type);
      const sorted = values.slice().sort(compare);
      let distinct = 1;
      for (let i = 1; i < sorted.length; i++) if (compare(sorted[i - 1]!, sorted[i]!) !== 0) distinct++;
      return distinct;
    }
    case 'min':
    case 'max': {
      if (values.length === 0) return null;
      const compare = comparer(type);
      let best = values[0]!;
      for (const value of values) {
        const c = compare(value, best);
        if (method === 'min' ? c < 0 : c > 0) best = value;
      }
      return best;
    }
    case 'sum':
    case 'average': {
      if (values.length === 0) return null;
      if (type === 'Edm.Double') {
        let sum = 0;
        for (const value of values) sum += value as number;
        return method === 'sum' ? sum : sum / values.length;
      }
      if (type === 'Edm.Int32' && method === 'sum') {
        let sum = 0n;
        for (const value of values) sum += BigInt(value as number);
        return sum;
      }
      let sum: Decimal = decimalFromBigInt(0n);
      for (const value of values) sum = addDecimal(sum, decimalOf(value)!);
      return method === 'sum' ? sum : divDecimal(sum, decimalFromBigInt(BigInt(values.length)));
    }
    case '$count':
      return values.length;
  }
}
