import type { Deps } from '../context.ts';
import { pruneAttempts } from './store.ts';

/**
 * Attempt retention (issue 16): attempts older than WEBHOOK_ATTEMPT_RETENTION
 * (default 30 days) are deleted by the maintenance loop, oldest first, in
 * batches of PRUNE_BATCH rows through the `started_at` index, at most
 * PRUNE_BATCHES per run, so one run holds no long lock and a backlog drains
 * over several runs. Deliveries keep their status, attempt count and last
 * result; the event feed keeps everything.
 */
export const PRUNE_BATCH = 5000;
const PRUNE_BATCHES = 20;

export async function pruneWebhookAttempts(deps: Deps): Promise<number> {
  const retention = deps.config.webhook.attemptRetentionMs;
  if (retention <= 0) return 0;
  const cutoff = new Date(deps.clock.now().getTime() - retention);
  let pruned = 0;
  for (let i = 0; i < PRUNE_BATCHES; i++) {
    const n = await pruneAttempts(deps.db.prisma, cutoff, PRUNE_BATCH);
    pruned += n;
    if (n < PRUNE_BATCH) break;
  }
  return pruned;
}
