import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import type { CredentialCache } from './token/credential-cache.ts';

/** What every domain function may use. Transports build it once per process. */
export interface Deps {
  db: Database;
  clock: Clock;
  config: Config;
  log: Logger;
  /** Wakes the event sequencer; appendEvent calls it after commit. */
  sequencer: { kick(): void };
  /** The operations worker (src/workers/operations.ts): kicked after an operation is enqueued or woken; told when one changed, and waited on by subscriptions. */
  operations?: { kick(): void; changed(id: string): void; nextChange(id: string, ms: number, signal?: AbortSignal): Promise<void> };
  /** Wakes the webhook delivery worker (absent where none runs); called after a retry commits. */
  webhooks?: { kick(): void };
  /** Cache of authenticated tokens and brands with cross-process invalidation (absent: every request reads the database). */
  credentials?: CredentialCache;
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
