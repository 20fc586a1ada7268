import type { Deps } from '../context.ts';
import { lockEntity } from '../entity/entity.ts';
import { evaluateEntityStanding } from './standing.ts';
import { dueEntities, nextDueInstant } from './store.ts';
import { accrueEntity } from '../payout/ledger.ts';
import { dueAccruals } from '../payout/store.ts';

/**
 * Time-driven standing changes: a claim expiring (no event is written for
 * that, but standing must follow) and a grace window running out. Work is due
 * for an active enrollment when
 *   - one of its entity's claims expired after the enrollment was last
 *     evaluated (expires_at <= now and evaluated_at < expires_at), or
 *   - it is in grace and grace_ends_at <= now, or
 *   - its program has a `metric:<key>` requirement and a new period of the
 *     program's window began after it was last evaluated (the sums start
 *     again from zero: trigger `period`).
 * Each due entity is re-evaluated in its own transaction under the entity
 * lock, which records evaluated_at = now and so clears the condition: running
 * this twice, or from several processes at once, emits nothing twice.
 */
const BATCH = 100;

/** Runs every evaluation due at deps.clock's now; returns the number of standing events emitted. Tests call it directly. */
export async function runDueEvaluations(deps: Deps): Promise<number> {
  await runDueAccruals(deps);
  let emitted = 0;
  for (;;) {
    const now = deps.clock.now();
    const entities = await dueEntities(deps.db.prisma, now, BATCH);
    for (const { entity_id: entityId } of entities) {
      emitted += await deps.db.transaction(async (tx) => {
        await lockEntity(tx, entityId);
        // Another process (or this one's poller) may have evaluated it since: then it is not due any more, and
        // evaluating again would emit nothing but stamp a second, misleading evaluation over the first.
        const [still] = await dueEntities(tx, now, BATCH, entityId);
        if (!still) return 0;
        return evaluateEntityStanding(deps, tx, entityId, { trigger: still.trigger }, { alreadyLocked: true });
      });
    }
    if (entities.length < BATCH) return emitted;
  }
}

/**
 * Accrues closed periods into the payout ledger (ADR 0009), entity by entity under its lock, before standing is
 * evaluated for the new period: the accrual reads the standing the closed period ended with.
 */
async function runDueAccruals(deps: Deps): Promise<void> {
  for (;;) {
    const now = deps.clock.now();
    const entities = await dueAccruals(deps.db.prisma, now, BATCH);
    for (const entityId of entities) {
      await deps.db.transaction(async (tx) => {
        await lockEntity(tx, entityId);
        if ((await dueAccruals(tx, now, 1, [entityId])).length) await accrueEntity(deps, tx, entityId);
      });
    }
    if (entities.length < BATCH) return;
  }
}

/** The next instant at which runDueEvaluations would find work (a future claim expiry, grace end or metric period start), if any. */
export async function nextDueAt(deps: Deps): Promise<Date | null> {
  const now = deps.clock.now();
  return nextDueInstant(deps.db.prisma, now);
}
