import { Prisma, type Tx } from '../../db/database.ts';
import type { Event, WebhookEndpoint } from '../../db/generated/client.ts';
import type { EventRecord } from '../event/event.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import type { AttemptOutcome } from './send.ts';

/**
 * Leasing: how workers claim due deliveries.
 *
 * A delivery is due when it is pending or failing, its next_attempt_at has
 * passed, and nobody holds an unexpired lease on it. A worker claims a batch:
 * it selects candidates FOR UPDATE SKIP LOCKED (so two workers never pick
 * the same row, and neither waits on the other), then stamps them with its owner id and a lease expiry longer than the request
 * timeout (one statement: lock, pick, stamp). The attempt is recorded by an UPDATE conditioned on that owner, so
 * a worker whose lease was taken over (it stalled past the expiry) or whose
 * delivery was exhausted meanwhile (endpoint disabled) cannot overwrite the
 * newer state. A worker killed mid-flight leaves its leases to expire; the
 * next worker sends again (at-least-once; receivers dedupe on webhook-id).
 * On PGlite there is one connection, so every lease statement is serialized.
 */
export interface LeasedDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  endpoint: Pick<WebhookEndpoint, 'url' | 'status' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>;
  event: EventRecord;
}

export interface LeaseRequest {
  owner: string;
  leaseMs: number;
  /** How many to claim in total. */
  limit: number;
  /** Free slots of an endpoint with nothing in flight in this process. */
  endpointConcurrency: number;
  /** Endpoints with attempts in flight here, and the slots they have left (0 = skipped in SQL, so they cannot crowd out the others). */
  busy: Map<string, number>;
}

interface LeasedRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  url: string;
  endpoint_status: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  organization_id: string;
  type: string;
  seq: bigint | null;
  subject_type: string;
  subject_id: string;
  data: Event['data'];
  operation_id: string | null;
  livemode: boolean;
  created_at: Date;
}

/**
 * One statement, so no interactive transaction: lock candidates (SKIP LOCKED),
 * keep at most the free slots per endpoint, stamp the lease, and return what
 * the attempt needs (endpoint URL and secrets, the event row).
 */
export async function leaseDue(deps: Deps, r: LeaseRequest): Promise<LeasedDelivery[]> {
  if (r.limit <= 0) return [];
  const now = deps.clock.now();
  const saturated = [...r.busy].filter(([, n]) => n <= 0).map(([id]) => id);
  const partial = [...r.busy].filter(([, n]) => n > 0);
  const rows = await deps.db.prisma.$queryRaw<LeasedRow[]>`
    WITH candidate AS (
      SELECT id, endpoint_id, next_attempt_at FROM webhook_delivery
      WHERE status IN ('pending', 'failing') AND next_attempt_at <= ${now}::timestamptz
        AND (lease_expires_at IS NULL OR lease_expires_at <= ${now}::timestamptz)
        AND endpoint_id <> ALL(${saturated}::text[])
      ORDER BY next_attempt_at
      LIMIT ${r.limit * 2}
      FOR UPDATE SKIP LOCKED
    ), ranked AS (
      SELECT c.id, c.next_attempt_at, coalesce(s.slots, ${r.endpointConcurrency}::int) AS slots,
             row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at) AS rn
      FROM candidate c LEFT JOIN unnest(${partial.map(([id]) => id)}::text[], ${partial.map(([, n]) => n)}::int[]) AS s(endpoint_id, slots)
        ON s.endpoint_id = c.endpoint_id
    ), pick AS (
      SELECT id FROM ranked WHERE rn <= slots ORDER BY next_attempt_at LIMIT ${r.limit}
    )
    UPDATE webhook_delivery d
    SET lease_owner = ${r.owner}, lease_expires_at = ${new Date(now.getTime() + r.leaseMs)}::timestamptz, updated_at = ${now}::timestamptz
    FROM pick, webhook_endpoint w, event e
    WHERE d.id = pick.id AND w.id = d.endpoint_id AND e.id = d.event_id
    RETURNING d.id, d.endpoint_id, d.event_id, d.attempts, w.url, w.status AS endpoint_status, w.secret, w.previous_secret,
      w.previous_secret_expires_at, e.organization_id, e.type, e.seq, e.subject_type, e.subject_id, e.data, e.operation_id, e.livemode, e.created_at`;
  return rows.map((x) => ({
    id: x.id,
    endpoint_id: x.endpoint_id,
    event_id: x.event_id,
    attempts: x.attempts,
    endpoint: { url: x.url, status: x.endpoint_status, secret: x.secret, previousSecret: x.previous_secret, previousSecretExpiresAt: x.previous_secret_expires_at },
    event: {
      id: x.event_id,
      organizationId: x.organization_id,
      seq: x.seq,
      type: x.type,
      subjectType: x.subject_type,
      subjectId: x.subject_id,
      data: x.data,
      operationId: x.operation_id,
      livemode: x.livemode,
      createdAt: x.created_at,
    },
  }));
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

export interface FinishedAttempt {
  delivery: LeasedDelivery;
  startedAt: Date;
  outcome: AttemptOutcome;
}

/**
 * Records finished attempts in one statement: the guarded state change of
 * each delivery (only while this worker still holds it) and its attempt row
 * (always: the request happened whether or not the lease still held).
 */
export async function recordAttempts(deps: Deps, owner: string, finished: FinishedAttempt[]): Promise<void> {
  if (!finished.length) return;
  const now = deps.clock.now();
  const schedule = deps.config.webhook.retryScheduleMs;
  const c = { id: [] as string[], status: [] as string[], made: [] as number[], next: [] as (string | null)[], code: [] as (number | null)[], error: [] as (string | null)[], completed: [] as (string | null)[], attemptId: [] as string[], started: [] as string[], duration: [] as number[], excerpt: [] as (string | null)[] };
  for (const f of finished) {
    const made = f.delivery.attempts + 1;
    const next = nextState(f.outcome, made, schedule, now);
    c.id.push(f.delivery.id);
    c.status.push(next.status);
    c.made.push(made);
    c.next.push(next.nextAttemptAt?.toISOString() ?? null);
    c.code.push(f.outcome.statusCode);
    c.error.push(f.outcome.error);
    c.completed.push(next.status === 'failing' ? null : now.toISOString());
    c.attemptId.push(newId('attempt'));
    c.started.push(f.startedAt.toISOString());
    c.duration.push(f.outcome.durationMs);
    c.excerpt.push(f.outcome.excerpt);
  }
  await deps.db.prisma.$executeRaw`
    WITH o AS (
      SELECT * FROM unnest(${c.id}::text[], ${c.status}::text[], ${c.made}::int[], ${c.next}::timestamptz[], ${c.code}::int[], ${c.error}::text[],
        ${c.completed}::timestamptz[], ${c.attemptId}::text[], ${c.started}::timestamptz[], ${c.duration}::int[], ${c.excerpt}::text[])
        AS o(id, status, made, next_at, code, error, completed_at, attempt_id, started_at, duration_ms, excerpt)
    ), moved AS (
      UPDATE webhook_delivery d
      SET status = o.status, attempts = o.made, next_attempt_at = coalesce(o.next_at, d.next_attempt_at), last_status_code = o.code,
          last_error = o.error, completed_at = o.completed_at, lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
      FROM o WHERE d.id = o.id AND d.lease_owner = ${owner} AND d.status IN ('pending', 'failing')
      RETURNING d.id
    )
    INSERT INTO webhook_attempt (id, delivery_id, number, started_at, duration_ms, status_code, error, response_excerpt)
    SELECT o.attempt_id, o.id, o.made, o.started_at, o.duration_ms, o.code, o.error, o.excerpt
    FROM o JOIN webhook_delivery d ON d.id = o.id`;
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
