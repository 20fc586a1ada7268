import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { lockEntity } from '../entity/entity.ts';
import { evaluateEntityStanding, periodEnd, periodStart, type Trigger } from './standing.ts';
import { accrueEntity, dueAccruals } from '../payout/ledger.ts';

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

/** Programs with a requirement on a measured metric or a tier ladder (their standing or tier moves when a period ends). */
const MEASURED_PROGRAM = Prisma.sql`(EXISTS (SELECT 1 FROM program_requirement r WHERE r.program_id = p.id AND r.metric LIKE 'metric:%')
  OR EXISTS (SELECT 1 FROM program_tier t WHERE t.program_id = p.id))`;

interface Due {
  entity_id: string;
  /** `expiry` (a claim expired, or a grace window ended) or `period` (a metric period began), `expiry` first. */
  trigger: Trigger;
}

/** Entities with due work at `now` (all, or only `entityId`: the re-check under its lock). */
async function dueEntities(db: Pick<Tx, '$queryRaw'>, now: Date, entityId?: string): Promise<Due[]> {
  const one = entityId === undefined ? Prisma.empty : Prisma.sql`AND e.entity_id = ${entityId}`;
  return db.$queryRaw<Due[]>`
    SELECT entity_id, min(trigger) AS trigger FROM (
      SELECT e.entity_id, 'expiry' AS trigger FROM enrollment e
        JOIN assertion_claim c ON c.entity_id = e.entity_id
       WHERE e.status = 'active' AND c.present AND c.expires_at <= ${now}
         AND (e.evaluated_at IS NULL OR e.evaluated_at < c.expires_at) ${one}
      UNION ALL
      SELECT e.entity_id, 'expiry' FROM enrollment e
       WHERE e.status = 'active' AND e.standing = 'grace' AND e.grace_ends_at <= ${now} ${one}
      UNION ALL
      SELECT e.entity_id, 'period' FROM enrollment e JOIN program p ON p.id = e.program_id
       WHERE e.status = 'active' AND ${MEASURED_PROGRAM}
         AND e.evaluated_at < ${periodStart(Prisma.sql`p.performance_window`, Prisma.sql`${now}::timestamptz`)} ${one}
    ) due
    GROUP BY entity_id
    ORDER BY 1
    LIMIT ${BATCH}`;
}

/** Runs every evaluation due at deps.clock's now; returns the number of standing events emitted. Tests call it directly. */
export async function runDueEvaluations(deps: Deps): Promise<number> {
  await runDueAccruals(deps);
  let emitted = 0;
  for (;;) {
    const now = deps.clock.now();
    const entities = await dueEntities(deps.db.prisma, now);
    for (const { entity_id: entityId } of entities) {
      emitted += await deps.db.transaction(async (tx) => {
        await lockEntity(tx, entityId);
        // Another process (or this one's poller) may have evaluated it since: then it is not due any more, and
        // evaluating again would emit nothing but stamp a second, misleading evaluation over the first.
        const [still] = await dueEntities(tx, now, entityId);
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
  const rows = await deps.db.prisma.$queryRaw<{ at: Date | null }[]>`
    SELECT LEAST(
      (SELECT min(c.expires_at) FROM assertion_claim c
         WHERE c.present AND c.expires_at > ${now}
           AND EXISTS (SELECT 1 FROM enrollment e WHERE e.entity_id = c.entity_id AND e.status = 'active')),
      (SELECT min(grace_ends_at) FROM enrollment WHERE status = 'active' AND standing = 'grace' AND grace_ends_at > ${now}),
      (SELECT min(${periodEnd(Prisma.sql`p.performance_window`, Prisma.sql`${now}::timestamptz`)})
         FROM program p WHERE ${MEASURED_PROGRAM}
          AND EXISTS (SELECT 1 FROM enrollment e WHERE e.program_id = p.id AND e.status = 'active'))
    ) AS at`;
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}
