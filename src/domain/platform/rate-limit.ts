import { z } from 'zod';
import { DomainError } from '../errors.ts';

/**
 * Request rate limits: a token bucket per credential, refilled at `perSecond`
 * up to `burst`. Surface B and GraphQL share one set of buckets (per platform
 * token) and charge each request its cost; Surface A and token management
 * have their own set (per platform or user token), 1 per request. Besides its
 * token's bucket, a platform-token request (Surface B, GraphQL, Surface A)
 * spends the same from its organization's bucket, so more tokens never buy
 * more throughput. Buckets live in process memory: with N machines a token
 * may reach N times the rate, which bounds abuse without a database round
 * trip on every request. The processes of one machine (PLATFORM_API_PROCESSES)
 * keep theirs in one place, the cluster's primary (a `BucketLedger`,
 * src/runtime/cluster.ts, which lends each process small leases), so a
 * machine admits at most what one process would.
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

/** What identifies a set of buckets across processes: its name (one per set in a process) and its rule. */
export interface BucketSpec {
  readonly name: string;
  readonly perSecond: number;
  readonly burst: number;
  readonly whose: string;
}

/**
 * Buckets kept for several processes by another one (the cluster primary: src/runtime/cluster.ts): the same
 * operations as a set's, on the ledger's buckets. `charged`: whether any bucket of the set was ever charged there
 * (what `empty` answers locally).
 */
export interface BucketLedger {
  takeAll(cost: number, claims: readonly { set: BucketSpec; key: string }[]): Promise<RateLimitState>;
  wait(set: BucketSpec, key: string, cost: number): Promise<number>;
  spend(set: BucketSpec, key: string, cost: number): Promise<boolean>;
  charged(set: BucketSpec): boolean;
}

let ledger: BucketLedger | undefined;

/** Every set of this process keeps its buckets in `shared` from now on (undefined: in this process again). */
export function keepBucketsIn(shared: BucketLedger | undefined): void {
  ledger = shared;
}

export class TokenBuckets {
  private buckets = new Map<string, { tokens: number; at: number }>();
  readonly spec: BucketSpec;

  constructor(
    /** Unique among the sets of a process: a ledger keeps one set per name. */
    name: string,
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number,
    /** Whose buckets these are, for the refusal's message: `token`, `organization`. */
    private readonly whose = 'token',
  ) {
    this.spec = { name, perSecond, burst, whose };
  }

  /** A set kept by a ledger holder for its clients (the clock is the holder's). */
  static of(spec: BucketSpec, now: () => number): TokenBuckets {
    return new TokenBuckets(spec.name, spec.perSecond, spec.burst, now, spec.whose);
  }

  take(key: string, cost = 1): Promise<RateLimitState> {
    return TokenBuckets.takeAll(cost, [[this, key]]);
  }

  /**
   * Takes `cost` from every claimed bucket, or from none when one refuses: a
   * request passes only if each admits it (its token's and its
   * organization's). The refusal names the bucket that waits longest; an
   * admission reports the tightest one (fewest remaining), which is what
   * `RateLimit-*` tells the client.
   */
  static async takeAll(cost: number, claims: readonly BucketClaim[]): Promise<RateLimitState> {
    if (ledger)
      return ledger.takeAll(
        cost,
        claims.map(([set, key]) => ({ set: set.spec, key })),
      );
    return TokenBuckets.takeAllHere(cost, claims);
  }

  /** Seconds until `key`'s bucket holds `cost` (0: it does now), taking nothing. */
  async wait(key: string, cost = 1): Promise<number> {
    return ledger ? ledger.wait(this.spec, key, cost) : this.waitHere(key, cost);
  }

  /** Takes `cost` if the bucket holds it; false (taking nothing) if not. */
  async spend(key: string, cost = 1): Promise<boolean> {
    return ledger ? ledger.spend(this.spec, key, cost) : this.spendHere(key, cost);
  }

  /** `takeAll` on this process's buckets (what a ledger runs for its clients). */
  static takeAllHere(cost: number, claims: readonly BucketClaim[]): RateLimitState {
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

  waitHere(key: string, cost = 1): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return 0;
    const tokens = Math.min(this.burst, bucket.tokens + ((this.now() - bucket.at) / 1000) * this.perSecond);
    return tokens >= cost ? 0 : Math.max(1, Math.ceil((cost - tokens) / this.perSecond));
  }

  /**
   * Takes a share of what `key`'s bucket holds for a process to spend by itself: at most `max`, and at most
   * 1/`share` of what is left, so a nearly empty bucket lends nothing and the last tokens go through the ledger one
   * request at a time. Taken, so the set never admits more than it would alone.
   */
  leaseHere(key: string, max: number, share: number): { tokens: number; left: number } {
    const bucket = this.refill(key);
    const tokens = Math.max(0, Math.floor(Math.min(max, bucket.tokens / share)));
    bucket.tokens -= tokens;
    return { tokens, left: bucket.tokens };
  }

  /** Tokens a lease did not spend, back into `key`'s bucket (never above `burst`). */
  giveBackHere(key: string, tokens: number): void {
    const bucket = this.refill(key);
    bucket.tokens = Math.min(this.burst, bucket.tokens + tokens);
  }

  spendHere(key: string, cost = 1): boolean {
    const bucket = this.refill(key);
    if (bucket.tokens < cost) return false;
    bucket.tokens -= cost;
    return true;
  }

  /** Whether no bucket was ever charged (or all were evicted), in every process the ledger serves. */
  get empty(): boolean {
    return ledger ? !ledger.charged(this.spec) : this.buckets.size === 0;
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
