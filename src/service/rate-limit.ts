// Token buckets per credential (and per client address for failed sign-ins): `perSecond` tokens flow in each second
// up to `burst`; a request takes one. In process and per server: a fleet behind a balancer limits per instance.

export interface RateLimit {
  /** Sustained requests per second per credential. */
  readonly perSecond: number;
  /** Requests that may arrive at once after a quiet spell (default: one second's worth, at least 1). */
  readonly burst?: number;
}

interface Bucket {
  tokens: number;
  /** performance.now() of the last refill. */
  at: number;
}

const MAX_BUCKETS = 100_000;

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  readonly perSecond: number;
  private readonly burst: number;

  constructor(limit: RateLimit) {
    if (!(limit.perSecond > 0) || !Number.isFinite(limit.perSecond))
      throw new RangeError(`rate limit must be a positive number per second, not ${limit.perSecond}`);
    this.perSecond = limit.perSecond;
    this.burst = Math.max(1, limit.burst ?? Math.ceil(limit.perSecond));
  }

  /** Takes a token for `key` when there is one; returns the seconds to wait otherwise (nothing taken). */
  take(key: string, now = performance.now()): number {
    const bucket = this.refill(key, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.perSecond;
  }

  /** Gives back a token taken for `key` (a sign-in check that succeeded), up to the burst. */
  refund(key: string, now = performance.now()): void {
    const bucket = this.refill(key, now);
    bucket.tokens = Math.min(this.burst, bucket.tokens + 1);
  }

  private refill(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= MAX_BUCKETS) this.sweep(now);
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    return bucket;
  }

  /** Forgets full buckets (a new one starts full: nothing is lost); the oldest half when all are in use. */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(key);
    }
    if (this.buckets.size < MAX_BUCKETS) return;
    let n = MAX_BUCKETS / 2;
    for (const key of this.buckets.keys()) {
      if (n-- <= 0) break;
      this.buckets.delete(key);
    }
  }
}
