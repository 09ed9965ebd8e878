// The service's plans of reads and counts: by query string, and by query shape (src/syntax/shape.ts), so that a query that differs
// from an earlier one only in the values of its `$filter` literals reuses that one's parsed, bound and translated
// plan and the database's prepared statement, with its own values as parameters.
//
// Both maps are least-recently-used (a Map keeps insertion order: a hit moves its key to the end), bounded by the
// same size. A few lines of Map need no dependency; lru-cache would add TTLs and size accounting nobody uses here.
import type { Lifting } from '../syntax/lifted.js';
import type { QueryShape } from '../syntax/shape.js';
import type { LiteralValue } from '../syntax/ast.js';

/** What a plan runs: a store's prepared read or count, which may take other values of its lifted literals. */
export interface Rebindable {
  rebind?(written: readonly LiteralValue[]): Rebindable | undefined;
}

/** A least-recently-used map of at most `size` entries (0: keeps nothing). */
class LruMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly size: number) {}

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    if (this.size === 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }

  get length(): number {
    return this.entries.size;
  }
}

/** Counts of the plan cache, since the service started. */
export interface PlanCacheStats {
  /** Requests (reads and counts) whose query string had a plan. */
  readonly hits: number;
  /** Requests that reused the plan of their query's shape with their own literal values. */
  readonly shapeHits: number;
  /** Requests that had to parse, bind and translate their query. */
  readonly misses: number;
  /** Plans kept by query string, and shapes with plans. */
  readonly plans: number;
  readonly shapes: number;
}

/** A plan made from one query of a shape, and what holds it for others. */
interface ShapePlan<Plan> {
  readonly plan: Plan;
  /** The literals the plan was decided from (src/syntax/lifted.ts): another query must have them as written. */
  readonly pinned: readonly { readonly index: number; readonly text: string }[];
  readonly lifting: Lifting;
}

/** Plans made from a few queries of one shape that pinned different literals; the newest first. */
const PLANS_PER_SHAPE = 8;

export class PlanCache<Plan extends { readonly read: Rebindable }> {
  private readonly byQuery: LruMap<string, Plan>;
  private readonly byShape: LruMap<string, ShapePlan<Plan>[]>;
  private counts = { hits: 0, shapeHits: 0, misses: 0 };

  constructor(size: number) {
    if (!Number.isInteger(size) || size < 0) throw new RangeError(`planCacheSize must be a whole number, not ${size}`);
    this.byQuery = new LruMap(size);
    this.byShape = new LruMap(size);
  }

  /** The plan of `key` (the query string under its store, collection and options). */
  find(key: string): Plan | undefined {
    const plan = this.byQuery.get(key);
    if (plan !== undefined) this.counts.hits++;
    return plan;
  }

  /** The plan of `shapeKey` (the shape under the same) for `shape`'s literal values, kept for `key` too. */
  findShape(key: string, shapeKey: string, shape: QueryShape): Plan | undefined {
    const candidates = this.byShape.get(shapeKey);
    if (candidates === undefined) return undefined;
    const written = shape.literals.map((literal) => literal.value);
    for (const candidate of candidates) {
      if (!candidate.pinned.every(({ index, text }) => shape.literals[index]!.text === text)) continue;
      if (!candidate.lifting.holdsFor(written)) continue;
      // (a read's rebind gives a read, a count's a count)
      const read = candidate.plan.read.rebind?.(written) as Plan['read'] | undefined;
      if (read === undefined) continue;
      const rebound: Plan = { ...candidate.plan, read };
      this.byQuery.set(key, rebound);
      this.counts.shapeHits++;
      return rebound;
    }
    return undefined;
  }

  /** Counts a request that had to make its plan. */
  missed(): void {
    this.counts.misses++;
  }

  /** Keeps a plan made for `key`; with `lifting`, also for its shape (when its read can be rebound). */
  keep(key: string, plan: Plan, shaped?: { key: string; shape: QueryShape; lifting: Lifting }): void {
    this.byQuery.set(key, plan);
    if (shaped === undefined || plan.read.rebind === undefined) return;
    const { shape, lifting } = shaped;
    const pinned = [...lifting.reads]
      .sort((a, b) => a - b)
      .map((index) => ({ index, text: shape.literals[index]!.text }));
    // a plan that pinned every literal serves only its own query string, which byQuery has
    if (pinned.length === shape.literals.length) return;
    // beside the others: a plan of the same pins may serve values the newer one does not (MySQL casts a Decimal
    // parameter to the size of its value: 10.5 and 10.25 need two statements)
    const others = this.byShape.get(shaped.key) ?? [];
    this.byShape.set(shaped.key, [{ plan, pinned, lifting }, ...others].slice(0, PLANS_PER_SHAPE));
  }

  stats(): PlanCacheStats {
    return { ...this.counts, plans: this.byQuery.length, shapes: this.byShape.length };
  }
}

/** Two caches' counts as one. */
export function sumStats(a: PlanCacheStats, b: PlanCacheStats): PlanCacheStats {
  return {
    hits: a.hits + b.hits,
    shapeHits: a.shapeHits + b.shapeHits,
    misses: a.misses + b.misses,
    plans: a.plans + b.plans,
    shapes: a.shapes + b.shapes,
  };
}
