import type { Tx } from '../../db/database.ts';
import type { WebhookEndpoint } from '../../db/generated/client.ts';
import type { EventRecord } from '../event/store.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import type { AttemptOutcome } from './send.ts';
import { scheduleOf, type EndpointPolicy } from './policy.ts';
import { recordHealthEvents, type HealthTransition } from './health-event.ts';
import { wakeSettledReplays, wakeSettledReplaysIn } from './replay-wake.ts';
import {
  claimDueDeliveries,
  clearFailing,
  disableEndpoints,
  exhaustDeliveriesOfEndpoint,
  exhaustDeliveriesOfEndpoints,
  exhaustLeasedDeliveries,
  markFailing,
  recordAttemptRows,
  type AttemptColumns,
  type DueClaim,
  type LeasedRow,
} from './store.ts';

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
export type LeasedDelivery = Pick<LeasedRow, 'id' | 'organization_id' | 'endpoint_id' | 'event_id' | 'attempts' | 'replay_operation_id'> & {
  endpoint: Pick<
    WebhookEndpoint,
    'url' | 'type' | 'config' | 'urlCiphertext' | 'status' | 'secret' | 'previousSecret' | 'previousSecretExpiresAt' | 'failingSince'
  > & {
    policy: EndpointPolicy | null;
  };
  event: EventRecord;
};

/** What one lease asks for: the store's claim, with the lease's length instead of its instants. */
export interface LeaseRequest extends Omit<DueClaim, 'now' | 'leaseUntil'> {
  leaseMs: number;
}

export async function leaseDue(deps: Deps, r: LeaseRequest): Promise<LeasedDelivery[]> {
  if (r.limit <= 0) return [];
  const now = deps.clock.now();
  const rows = await claimDueDeliveries(deps.db.sql, {
    now,
    leaseUntil: new Date(now.getTime() + r.leaseMs),
    owner: r.owner,
    timeoutMs: r.timeoutMs,
    limit: r.limit,
    initialFree: r.initialFree,
    known: r.known,
    organizations: r.organizations,
  });
  return rows.map((x) => ({
    id: x.id,
    organization_id: x.organization_id,
    endpoint_id: x.endpoint_id,
    event_id: x.event_id,
    attempts: x.attempts,
    replay_operation_id: x.replay_operation_id,
    endpoint: {
      url: x.url,
      type: x.endpoint_type,
      config: typeof x.config === 'string' ? JSON.parse(x.config) : x.config,
      urlCiphertext: x.url_ciphertext,
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

/**
 * Records finished attempts in one statement: the guarded state change of
 * each delivery (only while this worker still holds it) and its attempt row
 * (always: the request happened whether or not the lease still held).
 */
export async function recordAttempts(deps: Deps, owner: string, finished: FinishedAttempt[]): Promise<void> {
  if (!finished.length) return;
  const now = deps.clock.now();
  const c: AttemptColumns = {
    id: [],
    status: [],
    made: [],
    next: [],
    code: [],
    error: [],
    completed: [],
    attemptId: [],
    started: [],
    duration: [],
    excerpt: [],
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
  await recordAttemptRows(deps.db.sql, c, owner, now);
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
    if (h.recovered.length)
      transitions.push(...(await clearFailing(tx, h.recovered)).map((id) => ({ endpointId: id, kind: 'recovered' as const })));
    if (h.failing.length)
      transitions.push(...(await markFailing(tx, h.failing)).map((id) => ({ endpointId: id, kind: 'failing_started' as const })));
    const out: { id: string; reason: string }[] = [];
    for (const reason of ['gone', 'failing'] as const) {
      const ids = h.disable.filter((d) => d.reason === reason).map((d) => d.id);
      if (!ids.length) continue;
      const disabled = await disableEndpoints(tx, ids, reason, now);
      if (disabled.length) await wakeSettledReplaysIn(deps, tx, await exhaustDeliveriesOfEndpoints(tx, now, disabled));
      out.push(...disabled.map((id) => ({ id, reason })));
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
  await wakeSettledReplays(deps, await exhaustLeasedDeliveries(deps.db.prisma, deps.clock.now(), ids, owner));
}

/**
 * Disabling an endpoint stops delivery at once: everything not yet delivered
 * is exhausted in the disabling transaction, so no worker leases it again,
 * and re-enabling later does not bring it back. A request already on the wire
 * finishes, but its worker's guarded update no longer matches (recordAttempt).
 */
export async function exhaustEndpointDeliveries(deps: Deps, tx: Tx, endpointId: string): Promise<void> {
  await wakeSettledReplaysIn(deps, tx, await exhaustDeliveriesOfEndpoint(tx, deps.clock.now(), endpointId));
}
