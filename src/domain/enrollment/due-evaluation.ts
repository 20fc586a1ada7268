import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { lockEntity } from '../entity/entity.ts';
import { evaluateEntityStanding } from './standing.ts';
import { Loop } from '../../runtime/loop.ts';

/**
 * Time-driven standing changes: a claim expiring (no event is written for
 * that, but standing must follow) and a grace window running out. Work is due
 * for an active enrollment when
 *   - one of its entity's claims expired after the enrollment was last
 *     evaluated (expires_at <= now and evaluated_at < expires_at), or
 *   - it is in grace and grace_ends_at <= now.
 * Each due entity is re-evaluated in its own transaction under the entity
 * lock, which records evaluated_at = now and so clears the condition: running
 * this twice, or from several processes at once, emits nothing twice.
 */
const BATCH = 100;

/** Entities with due work at `now` (all, or only `entityId`: the re-check under its lock). */
async function dueEntities(db: Pick<Tx, '$queryRaw'>, now: Date, entityId?: string): Promise<string[]> {
  const one = entityId === undefined ? Prisma.empty : Prisma.sql`AND e.entity_id = ${entityId}`;
  const rows = await db.$queryRaw<{ entity_id: string }[]>`
    SELECT DISTINCT e.entity_id FROM enrollment e
      JOIN assertion_claim c ON c.entity_id = e.entity_id
     WHERE e.status = 'active' AND c.present AND c.expires_at <= ${now}
       AND (e.evaluated_at IS NULL OR e.evaluated_at < c.expires_at) ${one}
    UNION
    SELECT e.entity_id FROM enrollment e
     WHERE e.status = 'active' AND e.standing = 'grace' AND e.grace_ends_at <= ${now} ${one}
    ORDER BY 1
    LIMIT ${BATCH}`;
  return rows.map((r) => r.entity_id);
}

/** Runs every evaluation due at deps.clock's now; returns the number of standing events emitted. Tests call it directly. */
export async function runDueEvaluations(deps: Deps): Promise<number> {
  let emitted = 0;
  for (;;) {
    const now = deps.clock.now();
    const entities = await dueEntities(deps.db.prisma, now);
    for (const entityId of entities) {
      emitted += await deps.db.transaction(async (tx) => {
        await lockEntity(tx, entityId);
        // Another process (or this one's poller) may have evaluated it since: then it is not due any more, and
        // evaluating again would emit nothing but stamp a second, misleading `expiry` evaluation over the first.
        if (!(await dueEntities(tx, now, entityId)).length) return 0;
        return evaluateEntityStanding(deps, tx, entityId, { trigger: 'expiry' }, { alreadyLocked: true });
      });
    }
    if (entities.length < BATCH) return emitted;
  }
}

/** The next instant at which runDueEvaluations would find work (a future claim expiry or grace end), if any. */
export async function nextDueAt(deps: Deps): Promise<Date | null> {
  const now = deps.clock.now();
  const rows = await deps.db.prisma.$queryRaw<{ at: Date | null }[]>`
    SELECT LEAST(
      (SELECT min(c.expires_at) FROM assertion_claim c
         WHERE c.present AND c.expires_at > ${now}
           AND EXISTS (SELECT 1 FROM enrollment e WHERE e.entity_id = c.entity_id AND e.status = 'active')),
      (SELECT min(grace_ends_at) FROM enrollment WHERE status = 'active' AND standing = 'grace' AND grace_ends_at > ${now})
    ) AS at`;
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}

/**
 * Evaluates what is due, then wakes at the next due instant when it comes
 * before the next poll; the poll (every `pollIntervalMs`) picks up changes
 * committed by another process and clocks that are not wall time.
 */
export class StandingScheduler {
  private readonly loop = new Loop(
    () => this.pass(),
    (err) => this.deps.log.error({ err }, 'standing evaluation poll failed'),
  );

  constructor(
    private readonly deps: Deps,
    private readonly pollIntervalMs = 1000,
  ) {}

  start(): void {
    this.loop.start(this.pollIntervalMs);
    this.loop.kick();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  private async pass(): Promise<void> {
    await runDueEvaluations(this.deps);
    const next = await nextDueAt(this.deps);
    const delay = next ? next.getTime() - this.deps.clock.now().getTime() : Number.POSITIVE_INFINITY;
    if (delay < this.pollIntervalMs) this.loop.wakeIn(delay);
  }
}
