import { DomainError } from '../errors.ts';

/**
 * Surface B request rate limit: a token bucket per platform token, refilled
 * at RATE_LIMIT_PER_SECOND up to RATE_LIMIT_BURST. Buckets live in process
 * memory: with N processes a token may reach N times the rate, which bounds
 * abuse without a database round trip on every request.
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(key: string): RateLimitState {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.evictFull(t);
    if (b.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - b.tokens) / this.perSecond));
      throw new DomainError('rate_limited', `Too many requests for this token; retry after ${retryAfter} s`, null, { retry_after: retryAfter });
    }
    b.tokens -= 1;
    return {
      limit: this.burst,
      remaining: Math.floor(b.tokens),
      resetSeconds: Math.ceil((this.burst - b.tokens) / this.perSecond),
    };
  }

  /** Buckets that have refilled completely carry no state worth keeping. */
  private evictFull(t: number) {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(k);
    }
  }
}
