import { Prisma, type Tx } from '../../db/database.ts';
import type { Event, WebhookEndpoint } from '../../db/generated/client.ts';
import type { EventRecord } from '../event/store.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import { statement } from '../../db/sql-port.ts';
import type { AttemptOutcome } from './send.ts';
import { scheduleOf, type EndpointPolicy } from './policy.ts';
import { recordHealthEvents, type HealthTransition } from './health-event.ts';
import { wakeSettledReplays, wakeSettledReplaysIn } from './replay-wake.ts';

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
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  /** The replay that re-sends this event (sent with a `webhook-replay` header); null for a fan-out delivery. */
  replay_operation_id: string | null;
  endpoint: Pick<WebhookEndpoint, 'url' | 'status' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'> & {
    policy: EndpointPolicy | null;
  };
  event: EventRecord;
}

export interface LeaseRequest {
  owner: string;
  leaseMs: number;
  /** The deployment's timeout: an endpoint whose own is longer has its lease lengthened by the difference. */
  timeoutMs: number;
  /** How many to claim in total. */
  limit: number;
  /** Free slots of an endpoint this process knows nothing about (its starting limit). */
  initialFree: number;
  /** Endpoints this process knows (see EndpointLimits.known): free slots (0 = skipped in SQL, so they cannot crowd out the others) and in-flight counts. */
  known: { ids: string[]; free: number[]; inFlight: number[] };
  /** Organizations with requests in flight in this process, and how many: the lease serves the others' first. */
  organizations: { ids: string[]; inFlight: number[] };
}

interface LeasedRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  replay_operation_id: string | null;
  url: string;
  endpoint_status: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | string | null;
  policy: EndpointPolicy | null;
  type: string;
  seq: string | number | bigint | null;
  subject_type: string;
  subject_id: string;
  data: Event['data'];
  operation_id: string | null;
  brand_id: string | null;
  livemode: boolean;
  created_at: Date;
}

/**
 * Ordered endpoints (`ordering: subject`): a delivery is a candidate only if
 * no earlier event (lower seq) of the same subject still has a pending or
 * failing delivery to that endpoint, leased or not, due or not. So one
 * subject's deliveries go one at a time in seq order and a failing one holds
 * back only its own subject; an exhausted one releases it. Fan-out inserts
 * deliveries in event order, so an earlier event's delivery always exists
 * before a later one's. An unordered endpoint's candidate pays nothing for
 * it; an ordered one's walks the subject's earlier events by the
 * (organization_id, subject_id, seq) index and probes (endpoint_id, event_id).
 *
 * One statement on the SQL port, so no interactive transaction:
 * - the endpoints with unfinished deliveries, one probe each on the
 *   (endpoint_id, next_attempt_at) partial index (a loose index scan), and
 *   their free slots (0: skipped, so a busy endpoint's backlog is never read);
 * - each one's oldest due deliveries, at most its free slots: a pass reads
 *   what it may take, never a tenant's backlog behind it;
 * - the picks, shared out max-min fair twice: between organizations first
 *   (`organization_turn`: the organization's requests in flight here plus
 *   its candidate's rank), so while one organization has thousands due,
 *   another's new delivery takes the next free slot; then between endpoints
 *   (`endpoint_turn`: the endpoint's in flight plus rank), so a slow endpoint
 *   holding many slots cannot take the ones a fast endpoint frees;
 * - lock what is picked (SKIP LOCKED: another worker's picks are skipped,
 *   never waited for; one that committed meanwhile fails the re-checked
 *   condition), stamp the lease, and return what the attempt needs (endpoint
 *   URL and secrets, the event row).
 * Its cost grows with the endpoints that have unfinished deliveries (capped
 * per organization), not with the deliveries due.
 */
const leaseStatement = statement<[Date, string[], number[], number[], number, number, string, Date, number, string[], number[]], LeasedRow>(
  'webhook_lease_due',
  `WITH RECURSIVE known AS (
     SELECT * FROM unnest($2::text[], $3::int[], $4::int[]) AS k(endpoint_id, free, in_flight)
   ), busy AS (
     SELECT * FROM unnest($10::text[], $11::int[]) AS b(organization_id, in_flight)
   ), pending AS (
     (SELECT d.endpoint_id FROM webhook_delivery d WHERE d.status IN ('pending', 'failing') ORDER BY d.endpoint_id LIMIT 1)
     UNION ALL
     SELECT (SELECT d.endpoint_id FROM webhook_delivery d
             WHERE d.status IN ('pending', 'failing') AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
     FROM pending p WHERE p.endpoint_id IS NOT NULL
   ), slot AS (
     SELECT w.id, w.organization_id, w.ordering, coalesce(k.in_flight, 0) AS in_flight,
            least(coalesce(k.free, $5::int),
                  coalesce((w.policy->>'max_in_flight')::int - coalesce(k.in_flight, 0), $6::int),
                  CASE WHEN k.endpoint_id IS NULL THEN greatest(1, floor((w.policy->>'rate_limit_per_second')::float8))::int END,
                  $6::int) AS free
     FROM pending p JOIN webhook_endpoint w ON w.id = p.endpoint_id LEFT JOIN known k ON k.endpoint_id = w.id
   ), candidate AS (
     SELECT c.id, c.next_attempt_at, s.organization_id,
            s.in_flight + row_number() OVER (PARTITION BY s.id ORDER BY c.next_attempt_at) AS endpoint_turn
     FROM slot s CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at FROM webhook_delivery d
       WHERE d.endpoint_id = s.id AND d.status IN ('pending', 'failing') AND d.next_attempt_at <= $1::timestamptz
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::timestamptz)
         AND NOT (s.ordering = 'subject' AND EXISTS (SELECT 1 FROM event e
           JOIN event e2 ON e2.organization_id = e.organization_id AND e2.subject_id = e.subject_id
             AND e2.subject_type = e.subject_type AND e2.seq < e.seq
           JOIN webhook_delivery d2 ON d2.endpoint_id = d.endpoint_id AND d2.event_id = e2.id
           WHERE e.id = d.event_id AND d2.status IN ('pending', 'failing')))
       ORDER BY d.next_attempt_at
       LIMIT s.free
     ) c
     WHERE s.free > 0
   ), ranked AS (
     SELECT c.id, c.next_attempt_at, c.endpoint_turn,
            coalesce(b.in_flight, 0) + row_number() OVER (PARTITION BY c.organization_id ORDER BY c.endpoint_turn, c.next_attempt_at) AS organization_turn
     FROM candidate c LEFT JOIN busy b ON b.organization_id = c.organization_id
   ), pick AS (
     SELECT id FROM ranked ORDER BY organization_turn, endpoint_turn, next_attempt_at LIMIT $6::int
   ), locked AS (
     SELECT d.id FROM webhook_delivery d JOIN pick ON pick.id = d.id
     WHERE d.status IN ('pending', 'failing') AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::timestamptz)
     FOR UPDATE OF d SKIP LOCKED
   )
   UPDATE webhook_delivery d
   SET lease_owner = $7, updated_at = $1::timestamptz,
     lease_expires_at = $8::timestamptz + greatest(0, coalesce((w.policy->>'timeout_ms')::int, 0) - $9::int) * interval '1 millisecond'
   FROM locked, webhook_endpoint w, event e
   WHERE d.id = locked.id AND w.id = d.endpoint_id AND e.id = d.event_id
   RETURNING d.id, d.organization_id, d.endpoint_id, d.event_id, d.attempts, d.replay_operation_id, w.url, w.status AS endpoint_status, w.secret, w.previous_secret,
     w.previous_secret_expires_at, w.failing_since, w.policy, e.type, e.seq, e.subject_type, e.subject_id, e.data, e.operation_id, e.brand_id, e.livemode, e.created_at`,
);

export async function leaseDue(deps: Deps, r: LeaseRequest): Promise<LeasedDelivery[]> {
  if (r.limit <= 0) return [];
  const now = deps.clock.now();
  const rows = await deps.db.sql.rows(leaseStatement, [
    now,
    r.known.ids,
    r.known.free,
    r.known.inFlight,
    r.initialFree,
    r.limit,
    r.owner,
    new Date(now.getTime() + r.leaseMs),
    r.timeoutMs,
    r.organizations.ids,
    r.organizations.inFlight,
  ]);
  return rows.map((x) => ({
    id: x.id,
    organization_id: x.organization_id,
    endpoint_id: x.endpoint_id,
    event_id: x.event_id,
    attempts: x.attempts,
    replay_operation_id: x.replay_operation_id,
    endpoint: {
      url: x.url,
      status: x.endpoint_status,
      secret: x.secret,
      previousSecret: x.previous_secret,
      previousSecretExpiresAt: x.previous_secret_expires_at,
      failingSince: x.failing_since === null ? null : new Date(x.failing_since),
      policy: typeof x.policy === 'string' ? JSON.parse(x.policy) : x.policy,
    },
    event: {
      id: x.event_id,
      seq: x.seq,
      type: x.type,
      subjectType: x.subject_type,
      subjectId: x.subject_id,
      data: x.data,
      operationId: x.operation_id,
      brandId: x.brand_id,
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
  // 410 Gone: the receiver retired the URL (Standard Webhooks); the endpoint is disabled with it (recordAttempts).
  if (outcome.statusCode === 410 || attemptsMade >= scheduleMs.length) return { status: 'exhausted', nextAttemptAt: null };
  // A 429 or 503 with Retry-After is waited for as asked (within RETRY_AFTER_BOUNDS_MS), instead of the schedule.
  const delay =
    outcome.retryAfterMs !== undefined
      ? Math.min(Math.max(outcome.retryAfterMs, RETRY_AFTER_BOUNDS_MS[0]), RETRY_AFTER_BOUNDS_MS[1])
      : withJitter(scheduleMs[attemptsMade]!, random);
  return { status: 'failing', nextAttemptAt: new Date(now.getTime() + delay) };
}

/** The range a receiver's Retry-After is clamped to: at least 1 s, at most 6 h. */
export const RETRY_AFTER_BOUNDS_MS = [1000, 6 * 3600 * 1000] as const;

/** ±10 % so retries of many deliveries that failed together (a receiver outage) do not arrive together. */
export function withJitter(delayMs: number, random: () => number = Math.random): number {
  return Math.round(delayMs * (0.9 + 0.2 * random()));
}

export interface FinishedAttempt {
  delivery: LeasedDelivery;
  startedAt: Date;
  outcome: AttemptOutcome;
}

const recordStatement = statement<
  [
    string[],
    string[],
    number[],
    (string | null)[],
    (number | null)[],
    (string | null)[],
    (string | null)[],
    string[],
    string[],
    number[],
    (string | null)[],
    string,
    Date,
  ],
  never
>(
  'webhook_record_attempts',
  `WITH o AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[], $8::text[], $9::timestamptz[], $10::int[], $11::text[])
       AS o(id, status, made, next_at, code, error, completed_at, attempt_id, started_at, duration_ms, excerpt)
   ), moved AS (
     UPDATE webhook_delivery d
     SET status = o.status, attempts = o.made, next_attempt_at = coalesce(o.next_at, d.next_attempt_at), last_status_code = o.code,
         last_error = o.error, completed_at = o.completed_at, lease_owner = NULL, lease_expires_at = NULL, updated_at = $13::timestamptz
     FROM o WHERE d.id = o.id AND d.lease_owner = $12 AND d.status IN ('pending', 'failing')
     RETURNING d.id
   )
   INSERT INTO webhook_attempt (id, delivery_id, endpoint_id, number, started_at, duration_ms, status_code, error, response_excerpt)
   SELECT o.attempt_id, o.id, d.endpoint_id, o.made, o.started_at, o.duration_ms, o.code, o.error, o.excerpt
   FROM o JOIN webhook_delivery d ON d.id = o.id`,
);

/**
 * Records finished attempts in one statement: the guarded state change of
 * each delivery (only while this worker still holds it) and its attempt row
 * (always: the request happened whether or not the lease still held).
 */
export async function recordAttempts(deps: Deps, owner: string, finished: FinishedAttempt[]): Promise<void> {
  if (!finished.length) return;
  const now = deps.clock.now();
  const c = {
    id: [] as string[],
    status: [] as string[],
    made: [] as number[],
    next: [] as (string | null)[],
    code: [] as (number | null)[],
    error: [] as (string | null)[],
    completed: [] as (string | null)[],
    attemptId: [] as string[],
    started: [] as string[],
    duration: [] as number[],
    excerpt: [] as (string | null)[],
  };
  const failed: { f: FinishedAttempt; made: number; next: ReturnType<typeof nextState> }[] = [];
  const replays: (string | null)[] = [];
  for (const f of finished) {
    const made = f.delivery.attempts + 1;
    const next = nextState(f.outcome, made, scheduleOf(deps.config.webhook, f.delivery.endpoint.policy), now);
    if (!f.outcome.ok) failed.push({ f, made, next });
    if (next.status !== 'failing') replays.push(f.delivery.replay_operation_id);
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
  await deps.db.sql.rows(recordStatement, [
    c.id,
    c.status,
    c.made,
    c.next,
    c.code,
    c.error,
    c.completed,
    c.attemptId,
    c.started,
    c.duration,
    c.excerpt,
    owner,
    now,
  ]);
  await wakeSettledReplays(deps, replays);
  for (const x of failed) logFailedAttempt(deps, x.f, x.made, x.next);
  const health = endpointHealth(finished, deps.config.webhook.disableFailingAfterMs, now);
  if (health) await recordEndpointHealth(deps, health, now);
}

interface EndpointHealthChange {
  /** Endpoints that answered a 2xx while marked failing: no longer failing. */
  recovered: string[];
  /** Endpoints that failed while not marked failing: failing since their first failed attempt here. */
  failing: { id: string; since: Date }[];
  /** Endpoints to disable, with why: a 410 Gone, or failing past the threshold. */
  disable: { id: string; reason: 'gone' | 'failing' }[];
}

/**
 * What a batch of attempts changes about its endpoints' health, from what the
 * lease read (`failing_since`); null in the steady state (a healthy endpoint
 * succeeding, a failing one failing within its window), which costs nothing.
 */
export function endpointHealth(finished: FinishedAttempt[], disableAfterMs: number, now: Date): EndpointHealthChange | null {
  const byEndpoint = new Map<string, { since: Date | null; ok: boolean; gone: boolean; firstFailed: Date | null }>();
  for (const f of finished) {
    const e = byEndpoint.get(f.delivery.endpoint_id) ?? {
      since: f.delivery.endpoint.failingSince,
      ok: false,
      gone: false,
      firstFailed: null,
    };
    if (f.outcome.ok) e.ok = true;
    else {
      if (f.outcome.statusCode === 410) e.gone = true;
      if (!e.firstFailed || f.startedAt < e.firstFailed) e.firstFailed = f.startedAt;
    }
    byEndpoint.set(f.delivery.endpoint_id, e);
  }
  const change: EndpointHealthChange = { recovered: [], failing: [], disable: [] };
  for (const [id, e] of byEndpoint) {
    if (e.gone) change.disable.push({ id, reason: 'gone' });
    else if (e.ok) {
      if (e.since) change.recovered.push(id);
    } else if (!e.since) change.failing.push({ id, since: e.firstFailed! });
    else if (disableAfterMs > 0 && now.getTime() - e.since.getTime() >= disableAfterMs) change.disable.push({ id, reason: 'failing' });
  }
  return change.recovered.length || change.failing.length || change.disable.length ? change : null;
}

/**
 * Records health changes in one transaction. Disabling (a receiver's 410 Gone,
 * which Standard Webhooks recommends honouring at once, or every attempt
 * failing for WEBHOOK_DISABLE_FAILING_AFTER) sets `disabled_reason` and
 * exhausts everything the endpoint still had queued, as a manual disable does.
 */
async function recordEndpointHealth(deps: Deps, h: EndpointHealthChange, now: Date): Promise<void> {
  const disabled = await deps.db.transaction(async (tx) => {
    const transitions: HealthTransition[] = [];
    if (h.recovered.length) {
      const rows = await tx.$queryRaw<{ id: string }[]>`
        UPDATE webhook_endpoint SET failing_since = NULL WHERE id = ANY(${h.recovered}::text[]) AND failing_since IS NOT NULL RETURNING id`;
      transitions.push(...rows.map((r) => ({ endpointId: r.id, kind: 'recovered' as const })));
    }
    if (h.failing.length) {
      const rows = await tx.$queryRaw<{ id: string }[]>`UPDATE webhook_endpoint w SET failing_since = x.since
        FROM unnest(${h.failing.map((f) => f.id)}::text[], ${h.failing.map((f) => f.since.toISOString())}::timestamptz[]) AS x(id, since)
        WHERE w.id = x.id AND w.failing_since IS NULL RETURNING w.id`;
      transitions.push(...rows.map((r) => ({ endpointId: r.id, kind: 'failing_started' as const })));
    }
    const out: { id: string; reason: string }[] = [];
    for (const reason of ['gone', 'failing'] as const) {
      const ids = h.disable.filter((d) => d.reason === reason).map((d) => d.id);
      if (!ids.length) continue;
      const rows = await tx.$queryRaw<{ id: string }[]>`
        UPDATE webhook_endpoint SET status = 'disabled', disabled_reason = ${reason}, updated_at = ${now}::timestamptz
        WHERE id = ANY(${ids}::text[]) AND status = 'enabled' RETURNING id`;
      if (rows.length)
        await wakeSettledReplaysIn(deps, tx, await exhaust(tx, now, Prisma.sql`endpoint_id = ANY(${rows.map((r) => r.id)}::text[])`));
      out.push(...rows.map((r) => ({ id: r.id, reason })));
    }
    transitions.push(...out.map((d) => ({ endpointId: d.id, kind: 'disabled' as const, reason: d.reason })));
    await recordHealthEvents(tx, now, transitions);
    return out;
  });
  for (const d of disabled)
    deps.log.warn(
      { endpoint_id: d.id, disabled_reason: d.reason },
      d.reason === 'gone'
        ? 'webhook endpoint disabled: its receiver answered 410 Gone'
        : 'webhook endpoint disabled: every attempt failed for too long',
    );
}

/** A failed attempt at warn with what an operator needs to find it (never the URL's secrets nor the payload); the last one at error. */
function logFailedAttempt(deps: Deps, f: FinishedAttempt, attempt: number, next: ReturnType<typeof nextState>): void {
  const fields = {
    endpoint_id: f.delivery.endpoint_id,
    delivery_id: f.delivery.id,
    event_id: f.delivery.event_id,
    status_code: f.outcome.statusCode,
    error: f.outcome.error,
    attempt,
    ms: f.outcome.durationMs,
  };
  if (next.status === 'exhausted') {
    deps.metrics?.webhookExhausted.inc();
    deps.log.error(fields, 'webhook delivery exhausted: its last scheduled attempt failed');
  } else deps.log.warn({ ...fields, next_attempt_at: next.nextAttemptAt?.toISOString() }, 'webhook attempt failed; retrying later');
}

/** Leased deliveries whose endpoint is disabled (a fan-out raced the disable): exhausted without a request. */
export async function exhaustLeased(deps: Deps, owner: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await wakeSettledReplays(
    deps,
    await exhaust(deps.db.prisma, deps.clock.now(), Prisma.sql`id = ANY(${ids}::text[]) AND lease_owner = ${owner}`),
  );
}

/**
 * Disabling an endpoint stops delivery at once: everything not yet delivered
 * is exhausted in the disabling transaction, so no worker leases it again,
 * and re-enabling later does not bring it back. A request already on the wire
 * finishes, but its worker's guarded update no longer matches (recordAttempt).
 */
export async function exhaustEndpointDeliveries(deps: Deps, tx: Tx, endpointId: string): Promise<void> {
  await wakeSettledReplaysIn(deps, tx, await exhaust(tx, deps.clock.now(), Prisma.sql`endpoint_id = ${endpointId}`));
}

/** Exhausts the live deliveries `where` selects; returns the replays they belonged to (which may have none left). */
async function exhaust(db: Tx, now: Date, where: Prisma.Sql): Promise<string[]> {
  const rows = await db.$queryRaw<{ replay: string }[]>`
    WITH x AS (
      UPDATE webhook_delivery SET status = 'exhausted', last_error = 'endpoint disabled', completed_at = ${now}::timestamptz,
        lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
      WHERE ${where} AND status IN ('pending', 'failing')
      RETURNING replay_operation_id)
    SELECT DISTINCT replay_operation_id AS replay FROM x WHERE replay_operation_id IS NOT NULL`;
  return rows.map((r) => r.replay);
}
