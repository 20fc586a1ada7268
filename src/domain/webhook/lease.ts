import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import type { AttemptOutcome } from './send.ts';

/**
 * Leasing: how workers claim due deliveries.
 *
 * A delivery is due when it is pending or failing, its next_attempt_at has
 * passed, and nobody holds an unexpired lease on it. A worker claims a batch
 * in one transaction: it selects candidates FOR UPDATE SKIP LOCKED (so two
 * workers never pick the same row, and neither waits on the other), then
 * stamps them with its owner id and a lease expiry longer than the request
 * timeout. The attempt is recorded by an UPDATE conditioned on that owner, so
 * a worker whose lease was taken over (it stalled past the expiry) or whose
 * delivery was exhausted meanwhile (endpoint disabled) cannot overwrite the
 * newer state. A worker killed mid-flight leaves its leases to expire; the
 * next worker sends again (at-least-once; receivers dedupe on webhook-id).
 * On PGlite there is one connection and transactions are queued, so leasing
 * is serialized there.
 */
export interface LeasedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
}

export interface LeaseRequest {
  owner: string;
  leaseMs: number;
  /** How many to claim in total. */
  limit: number;
  /** Free slots per endpoint this process may still fill (endpoints absent: the default). */
  endpointSlots: (endpointId: string) => number;
  /** Endpoints with no free slot, skipped in SQL so they cannot crowd out the others. */
  saturated: string[];
}

export async function leaseDue(deps: Deps, r: LeaseRequest): Promise<LeasedDelivery[]> {
  if (r.limit <= 0) return [];
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const candidates = await tx.$queryRaw<{ id: string; endpoint_id: string }[]>`
      SELECT id, endpoint_id FROM webhook_delivery
      WHERE status IN ('pending', 'failing') AND next_attempt_at <= ${now}::timestamptz
        AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}::timestamptz)
        AND endpoint_id <> ALL(${r.saturated}::text[])
      ORDER BY next_attempt_at
      LIMIT ${r.limit * 2}
      FOR UPDATE SKIP LOCKED`;
    const taken = new Map<string, number>();
    const ids: string[] = [];
    for (const c of candidates) {
      const n = taken.get(c.endpoint_id) ?? 0;
      if (ids.length >= r.limit || n >= r.endpointSlots(c.endpoint_id)) continue;
      taken.set(c.endpoint_id, n + 1);
      ids.push(c.id);
    }
    if (ids.length === 0) return [];
    return tx.$queryRaw<LeasedDelivery[]>`
      UPDATE webhook_delivery
      SET lease_owner = ${r.owner}, lease_expires_at = ${new Date(now.getTime() + r.leaseMs)}::timestamptz, updated_at = ${now}::timestamptz
      WHERE id = ANY(${ids}::text[])
      RETURNING id, endpoint_id, event_id, attempts`;
  });
}

/** The state after an attempt: succeeded, exhausted after the last scheduled attempt, or failing with the next one due. */
export function nextState(
  outcome: AttemptOutcome,
  attemptsMade: number,
  scheduleMs: readonly number[],
  now: Date,
  random: () => number = Math.random,
): { status: 'succeeded' | 'failing' | 'exhausted'; nextAttemptAt: Date | null } {
  if (outcome.ok) return { status: 'succeeded', nextAttemptAt: null };
  if (attemptsMade >= scheduleMs.length) return { status: 'exhausted', nextAttemptAt: null };
  return { status: 'failing', nextAttemptAt: new Date(now.getTime() + withJitter(scheduleMs[attemptsMade]!, random)) };
}

/** ±10 % so retries of many deliveries that failed together (a receiver outage) do not arrive together. */
export function withJitter(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (0.9 + 0.2 * random()));
}

/** Records one attempt and moves the delivery on, if this worker still holds it. */
export async function recordAttempt(
  deps: Deps,
  owner: string,
  d: LeasedDelivery,
  startedAt: Date,
  outcome: AttemptOutcome,
): Promise<void> {
  const now = deps.clock.now();
  const made = d.attempts + 1;
  const next = nextState(outcome, made, deps.config.webhook.retryScheduleMs, now);
  const completedAt = next.status === 'failing' ? null : now;
  // One statement: the guarded state change and the attempt row (the attempt
  // happened whether or not the lease still held, so it is always logged).
  await deps.db.prisma.$executeRaw`
    WITH moved AS (
      UPDATE webhook_delivery
      SET status = ${next.status}, attempts = ${made}, next_attempt_at = coalesce(${next.nextAttemptAt}::timestamptz, next_attempt_at),
          last_status_code = ${outcome.statusCode}::int, last_error = ${outcome.error}::text, completed_at = ${completedAt}::timestamptz,
          lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
      WHERE id = ${d.id} AND lease_owner = ${owner} AND status IN ('pending', 'failing')
      RETURNING id
    )
    INSERT INTO webhook_attempt (id, delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt)
    SELECT ${newId('attempt')}, d.id, ${made}::int, ${startedAt}::timestamptz, ${outcome.durationMs}::int, ${outcome.statusCode}::int, ${outcome.error}::text, ${outcome.excerpt}::text
    FROM webhook_delivery d WHERE d.id = ${d.id}`;
}

/** Leased deliveries whose endpoint is disabled (a fan-out raced the disable): exhausted without a request. */
export async function exhaustLeased(deps: Deps, owner: string, ids: string[]): Promise<void> {
  if (ids.length) await exhaust(deps.db.prisma, deps.clock.now(), Prisma.sql`id = ANY(${ids}::text[]) AND lease_owner = ${owner}`);
}

/**
 * Disabling an endpoint stops delivery at once: everything not yet delivered
 * is exhausted in the disabling transaction, so no worker leases it again,
 * and re-enabling later does not bring it back. A request already on the wire
 * finishes, but its worker's guarded update no longer matches (recordAttempt).
 */
export async function exhaustEndpointDeliveries(tx: Tx, endpointId: string, now: Date): Promise<void> {
  await exhaust(tx, now, Prisma.sql`endpoint_id = ${endpointId}`);
}

async function exhaust(db: Tx, now: Date, where: Prisma.Sql): Promise<void> {
  await db.$executeRaw`
    UPDATE webhook_delivery SET status = 'exhausted', last_error = 'endpoint disabled', completed_at = ${now}::timestamptz,
      lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
    WHERE ${where} AND status IN ('pending', 'failing')`;
}
