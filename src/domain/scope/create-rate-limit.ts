import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { countCreate, deleteRateWindowsBefore } from './store.ts';

/**
 * Surface A create limit: CREATE_RATE_LIMIT creates per CREATE_RATE_WINDOW
 * per (organization, token, resource family), counted in fixed windows
 * aligned to the window length. One atomic upsert both checks and counts, so
 * concurrent creates can never overshoot; it runs inside the create's
 * transaction, so a create that fails does not spend quota.
 */
export interface Quota {
  limit: number;
  remaining: number;
  resetAt: Date;
}

export async function consumeCreateQuota(
  deps: Deps,
  tx: Tx,
  key: { organizationId: string; tokenId: string; family: string },
): Promise<Quota> {
  const windowMs = deps.config.createRateWindowSeconds * 1000;
  const limit = deps.config.createRateLimit;
  const start = new Date(Math.floor(deps.clock.now().getTime() / windowMs) * windowMs);
  const resetAt = new Date(start.getTime() + windowMs);
  const bucket = `${key.organizationId}:${key.tokenId}:${key.family}`;
  const rows = await countCreate(tx, bucket, start, limit);
  if (rows.length === 0) {
    throw new DomainError(
      'create_rate_limit_exceeded',
      `Create rate limit exceeded: at most ${limit} ${key.family} creates per ${deps.config.createRateWindowSeconds} s for this token; retry after ${resetAt.toISOString()}`,
      null,
      {
        retry_after: Math.ceil((resetAt.getTime() - deps.clock.now().getTime()) / 1000),
        quota: { limit, remaining: 0, resetAt } satisfies Quota,
      },
    );
  }
  return { limit, remaining: limit - Number(rows[0]!.count), resetAt };
}

/** Old windows are never read again; the maintenance worker drops them. */
export async function purgeOldRateWindows(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - deps.config.createRateWindowSeconds * 1000 * 2);
  return deleteRateWindowsBefore(deps.db.prisma, before);
}
