import type { Deps } from '../domain/context.ts';
import { purgeExpiredIdempotencyRecords } from '../domain/idempotency/idempotency.ts';
import { purgeOldRateWindows } from '../domain/scope/create-rate-limit.ts';
import { pruneWebhookAttempts } from '../domain/webhook/retention.ts';

/**
 * Housekeeping that keeps tables bounded: expired idempotency records,
 * spent rate-limit windows and webhook attempts past their retention. Safe to run on every process at once (plain
 * deletes of rows nobody reads any more).
 */
export function startMaintenance(deps: Deps, intervalMs = 10 * 60_000): { stop(): void; runOnce(): Promise<void> } {
  const runOnce = async () => {
    try {
      const idempotency = await purgeExpiredIdempotencyRecords(deps);
      const windows = await purgeOldRateWindows(deps);
      const attempts = await pruneWebhookAttempts(deps);
      if (idempotency || windows || attempts) deps.log.info({ idempotency, windows, attempts }, 'maintenance purged expired rows');
    } catch (err) {
      deps.log.warn({ err }, 'maintenance failed; will retry');
    }
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runOnce };
}
