import { z } from 'zod';
import { DomainError } from '../errors.ts';

/**
 * Request rate limits: a token bucket per credential, refilled at `perSecond`
 * up to `burst`. Surface B and GraphQL share one set of buckets (per platform
 * token) and charge each request its cost; Surface A and token management
 * have their own set (per platform or user token), 1 per request. Buckets
 * live in process memory: with N processes a token may reach N times the
 * rate, which bounds abuse without a database round trip on every request.
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

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
  ) {}

  take(key: string, cost = 1): RateLimitState {
    const t = this.now();
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: t };
    b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.perSecond);
    b.at = t;
    this.buckets.set(key, b);
    if (this.buckets.size > 100_000) this.evictFull(t);
    if (b.tokens < cost) {
      const retryAfter = Math.max(1, Math.ceil((cost - b.tokens) / this.perSecond));
      throw new DomainError('rate_limited', `Too many requests for this token; retry after ${retryAfter} s`, null, {
        retry_after: retryAfter,
        limit: this.burst,
      });
    }
    b.tokens -= cost;
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
