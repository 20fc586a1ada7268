import type { Deps } from '../domain/context.ts';
import { purgeExpiredIdempotencyRecords } from '../domain/idempotency/idempotency.ts';
import { purgeOldRateWindows } from '../domain/scope/create-rate-limit.ts';

/**
 * Housekeeping that keeps tables bounded: expired idempotency records and
 * spent rate-limit windows. Safe to run on every process at once (plain
 * deletes of rows nobody reads any more).
 */
export function startMaintenance(deps: Deps, intervalMs = 10 * 60_000): { stop(): void; runOnce(): Promise<void> } {
  const runOnce = async () => {
    try {
      const idempotency = await purgeExpiredIdempotencyRecords(deps);
      const windows = await purgeOldRateWindows(deps);
      if (idempotency || windows) deps.log.info({ idempotency, windows }, 'maintenance purged expired rows');
    } catch (err) {
      deps.log.warn({ err }, 'maintenance failed; will retry');
    }
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runOnce };
}
