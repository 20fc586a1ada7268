import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { Metrics } from '../metrics.ts';
import type { CredentialCache } from './token/credential-cache.ts';
import type { FailedAuthentication } from './token/failed-authentication.ts';

/** What every domain function may use. Transports build it once per process. */
export interface Deps {
  db: Database;
  clock: Clock;
  config: Config;
  log: Logger;
  /** The process's Prometheus metrics (src/metrics.ts); absent in one-off commands. */
  metrics?: Metrics;
  /** Wakes the event sequencer; appendEvent calls it after commit. */
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
  /** Wakes the webhook delivery worker (absent where none runs); called after a retry commits. */
  webhooks?: { kick(): void };
  /** Failed-authentication throttling per client address; every authentication runs through it (absent: not throttled). */
  failedAuthentication?: FailedAuthentication;
  /** Cache of authenticated tokens and brands with cross-process invalidation (absent: every request reads the database). */
  credentials?: CredentialCache;
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
  /** When the token stops working (null: never); an open stream ends then (src/domain/platform/stream-authority.ts). */
  expiresAt: Date | null;
}
