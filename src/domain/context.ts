import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database, Tx } from '../db/database.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import type { Metrics } from '../metrics.ts';

/**
 * What every domain function may use. src/runtime/services.ts builds it once per process; the process's long-running
 * services reach the domain only through the ports below (interfaces declared here, implemented in src/runtime).
 */
export interface Deps {
  db: Database;
  clock: Clock;
  config: Config;
  log: Logger;
  /** The process's Prometheus metrics (src/metrics.ts); absent in one-off commands. */
  metrics?: Metrics;
  /** The `onCommitted` port: wakes the event sequencer (src/runtime/sequencer.ts) after a commit that appended events. */
  sequencer: { kick(): void };
  /**
   * The operations worker (src/workers/operations.ts): kicked after an operation is enqueued or woken, asked to look
   * again when a retry is due; told when one changed, and waited on by subscriptions. `id` tells its own NOTIFY apart.
   */
  operations?: {
    readonly id: string;
    kick(): void;
    wakeAt(at: Date): void;
    changed(id: string): void;
    nextChange(id: string, ms: number, signal?: AbortSignal): Promise<void>;
    /** A run slot of this process for an operation about to be enqueued (src/domain/operation/operation.ts `inlineSlots`); undefined when none is free or the worker is off. `handover`: the calling run's own slot, which its commit ends. */
    reserve(handover?: boolean): OperationSlot | undefined;
  };
  /** The `wakeDelivery` port: wakes the webhook delivery worker (a no-op where none runs: a worker's poll finds the retry); called after a retry commits. */
  webhooks?: { kick(): void };
  /** Failed-authentication throttling per client address; every authentication runs through it (absent: not throttled). */
  failedAuthentication?: AuthenticationThrottle;
  /** Cache of authenticated tokens and brands with cross-process invalidation (absent: every request reads the database). */
  credentials?: Credentials;
}

/** Failed-authentication throttling (src/domain/token/failed-authentication.ts `FailedAuthentication`). */
export interface AuthenticationThrottle {
  /** Runs one authentication; a failure spends from the client address's bucket (`client`: its key, computed when needed). */
  guard<T>(client: (() => string) | undefined, hash: string, authenticate: (hash: string) => Promise<T>): Promise<T>;
  /** A key was just issued: it is vouched for (its first use is never throttled). */
  issued(secret: string): void;
}

/**
 * The process's cache of authenticated keys and selected brands (src/runtime/credential-cache.ts), as the domain uses
 * it: a lookup reads it once it is `fresh` as of the request's arrival, stores what it read under the generation it
 * started in, and a credential change `announce`s itself from its transaction.
 */
export interface Credentials {
  /** The generation a lookup runs under; pass it back to `storeToken`/`storeBrand`. */
  readonly current: number;
  /** True once every credential change committed before `asOf` (performance.now()) has been applied here. */
  fresh(asOf: number): Promise<boolean>;
  /** True when the pool's own statements bring `fresh` forward (its connections listen), so a read needs no round trip. */
  readonly provenByReads: boolean;
  /** Called on every invalidation (other per-process caches drop what they hold). */
  subscribe(fn: () => void): void;
  token(hash: string, now: number): CachedToken | undefined;
  storeToken(generation: number, hash: string, entry: Omit<CachedToken, 'cachedAt'>): void;
  brand(key: string): Brand | undefined;
  storeBrand(generation: number, key: string, brand: Brand): void;
  announce(tx: Tx | PrismaClient): Promise<void>;
}

export interface CachedToken {
  caller: KeyCaller;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  cachedAt: number;
}

/** A reserved run slot: the operation is enqueued already leased to it and run right after its commit, or the slot is given back. */
export interface OperationSlot {
  /** The lease owner prefix of this run (the row's lease owner is `<owner>:<operation id>`). */
  readonly owner: string;
  /** Runs the enqueued row (after its commit). */
  run(op: import('../db/generated/client.ts').Operation): void;
  /** Gives the slot back unused (no-op after `run`). */
  cancel(): void;
}

export interface OrganizationRef {
  id: string;
  slug: string;
  name: string;
}

/** An authenticated platform-token caller (Surface A, Surface B and GraphQL). */
export interface PlatformCaller {
  organization: OrganizationRef;
  tokenId: string;
  /** Effective scopes: stored scopes with aliases resolved and implicit scopes added. */
  scopes: ReadonlySet<string>;
  /** When the token stops working (null: never); an open stream ends then (src/runtime/stream-authority.ts). */
  expiresAt: Date | null;
}

/** An authenticated key (src/domain/token/platform-token.ts): its caller, what kind it is and (publishable) the brand it is bound to. */
export interface KeyCaller extends PlatformCaller {
  /** `secret`: sk_<KEY_BRAND>_live_, holds scopes. `publishable`: pk_live_, bound to one brand, no scopes (partner connect only). */
  kind: 'secret' | 'publishable';
  brandId: string | null;
}

export interface Brand {
  id: string;
  slug: string;
  name: string;
}
