import type { Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../db/generated/client.ts';

/** The scope capability's SQL: Surface A's create-rate windows. */

/**
 * Counts one create in the bucket's window unless it already holds `limit`: one atomic upsert both checks and counts,
 * so concurrent creates can never overshoot. No row: the window is full.
 */
export function countCreate(tx: Tx, bucket: string, windowStart: Date, limit: number): Promise<{ count: number }[]> {
  return tx.$queryRaw<{ count: number }[]>`
    INSERT INTO rate_limit_counter (bucket, window_start, count) VALUES (${bucket}, ${windowStart}, 1)
    ON CONFLICT (bucket, window_start) DO UPDATE SET count = rate_limit_counter.count + 1
    WHERE rate_limit_counter.count < ${limit}
    RETURNING count`;
}

export async function deleteRateWindowsBefore(db: PrismaClient, before: Date): Promise<number> {
  const { count } = await db.rateLimitCounter.deleteMany({ where: { windowStart: { lt: before } } });
  return count;
}
