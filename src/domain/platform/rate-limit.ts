import { z } from 'zod';
import { DomainError } from '../errors.ts';

/**
 * Request rate limits: a token bucket per credential, refilled at `perSecond`
 * up to `burst`. Surface B and GraphQL share one set of buckets (per platform
 * token) and charge each request its cost; Surface A and token management
 * have their own set (per platform or user token), 1 per request. Besides its
 * token's bucket, a platform-token request (Surface B, GraphQL, Surface A)
 * spends the same from its organization's bucket, so more tokens never buy
 * more throughput. Buckets live in process memory: with N processes a token
 * may reach N times the rate, which bounds abuse without a database round
 * trip on every request.
 */
export interface RateLimitState {
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** The spec's page size for every Surface B list: `limit` 1 to 100, default 20 (what a request that names no size asks for). */
export const DEFAULT_LIST_LIMIT = 20;
export const MAX_LIST_LIMIT = 100;
export const listLimit = z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT);
const ITEMS_PER_TOKEN = 100;

/**
 * What one request costs, the same rule for REST and GraphQL: 1 token, plus 1
 * per started 100 list items requested beyond the first 100. So a page of up
 * to 100 (`GET /events?limit=100`, `events(first: 100)`) costs 1, and 3,000
 * aliased pages of 100 cost 3,000, not 1.
 */
export function requestCost(listItems: number): number {
  return 1 + Math.ceil(Math.max(0, listItems - ITEMS_PER_TOKEN) / ITEMS_PER_TOKEN);
}

/** A bucket to charge: which set and whose key (`[gate.buckets, tokenId]`). */
export type BucketClaim = readonly [TokenBuckets, string];

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
    /** Whose buckets these are, for the refusal's message: `token`, `organization`. */
    private readonly whose = 'token',
  ) {}

  take(key: string, cost = 1): RateLimitState {
    return TokenBuckets.takeAll(cost, [[this, key]]);
  }

  /**
   * Takes `cost` from every claimed bucket, or from none when one refuses: a
   * request passes only if each admits it (its token's and its
   * organization's). The refusal names the bucket that waits longest; an
   * admission reports the tightest one (fewest remaining), which is what
   * `RateLimit-*` tells the client.
   */
  static takeAll(cost: number, claims: readonly BucketClaim[]): RateLimitState {
    const filled = claims.map(([set, key]) => ({ set, bucket: set.refill(key) }));
    let refusal: { set: TokenBuckets; retryAfter: number } | undefined;
    for (const { set, bucket } of filled) {
      if (bucket.tokens >= cost) continue;
      const retryAfter = Math.max(1, Math.ceil((cost - bucket.tokens) / set.perSecond));
      if (!refusal || retryAfter > refusal.retryAfter) refusal = { set, retryAfter };
    }
    if (refusal) {
      const { set, retryAfter } = refusal;
      throw new DomainError('rate_limited', `Too many requests for this ${set.whose}; retry after ${retryAfter} s`, null, {
        retry_after: retryAfter,
        limit: set.burst,
      });
    }
    let tightest: RateLimitState | undefined;
    for (const { set, bucket } of filled) {
      bucket.tokens -= cost;
      const state = {
        limit: set.burst,
        remaining: Math.floor(bucket.tokens),
        resetSeconds: Math.ceil((set.burst - bucket.tokens) / set.perSecond),
      };
      if (!tightest || state.remaining < tightest.remaining) tightest = state;
    }
    return tightest!;
  }

  /** Seconds until `key`'s bucket holds `cost` (0: it does now), taking nothing. */
  wait(key: string, cost = 1): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond);
    return tokens >= cost ? 0 : Math.max(1, Math.ceil((cost - tokens) / this.perSecond));
  }

  /** Takes `cost` if the bucket holds it; false (taking nothing) if not. */
  spend(key: string, cost = 1): boolean {
    const bucket = this.refill(key);
    if (bucket.tokens < cost) return false;
    bucket.tokens -= cost;
    return true;
  }

  /** Whether no bucket was ever charged (or all were evicted). */
  get empty(): boolean {
    return this.buckets.size === 0;
  }

  /** `key`'s bucket refilled to now (created full). */
  private refill(key: string): { tokens: number; at: number } {
    const t = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= 100_000) this.evictFull(t);
      b = { tokens: this.burst, at: t };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    return b;
  }

  /** Buckets that have refilled completely carry no state worth keeping. */
  private evictFull(t: number) {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.perSecond >= this.burst) this.buckets.delete(k);
    }
  }
}
