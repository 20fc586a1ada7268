import type { Deps } from '../domain/context.ts';
import { purgeSpentHandoffs } from '../domain/connect/handoff.ts';
import { purgeExpiredSessions } from '../domain/connect/session.ts';
import { purgeExpiredIdempotencyRecords } from '../domain/idempotency/idempotency.ts';
import { purgeOldRateWindows } from '../domain/scope/create-rate-limit.ts';
import { pruneWebhookAttempts } from '../domain/webhook/retention.ts';
import { pruneIdleMcpSessions } from '../domain/mcp/expiry.ts';

/**
 * Housekeeping that keeps tables bounded: expired idempotency records,
 * spent rate-limit windows, webhook attempts past their retention, redeemed handoffs that can no longer verify,
 * expired connect sessions and idle MCP sessions. Safe to run on every process at once (plain
 * deletes of rows nobody reads any more). On PGlite it then refreshes the
 * planner's statistics, which nothing else there does (`refreshStatistics`).
 */
export function startMaintenance(deps: Deps, intervalMs = 10 * 60_000): { stop(): void; runOnce(): Promise<void> } {
  const runOnce = async () => {
    try {
      const idempotency = await purgeExpiredIdempotencyRecords(deps);
      const windows = await purgeOldRateWindows(deps);
      const attempts = await pruneWebhookAttempts(deps);
      const handoffs = await purgeSpentHandoffs(deps);
      const sessions = await purgeExpiredSessions(deps);
      const mcpSessions = await pruneIdleMcpSessions(deps);
      await deps.db.refreshStatistics();
      if (idempotency || windows || attempts || handoffs || sessions || mcpSessions)
        deps.log.info({ idempotency, windows, attempts, handoffs, sessions, mcpSessions }, 'maintenance purged expired rows');
    } catch (err) {
      deps.log.warn({ err }, 'maintenance failed; will retry');
    }
  };
  const timer = setInterval(() => void runOnce(), intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runOnce };
}
