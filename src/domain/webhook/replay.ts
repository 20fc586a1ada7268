import { z } from 'zod';
import type { Operation as OperationRow, WebhookEndpoint as EndpointRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { newId } from '../id.ts';
import { capability, mutation } from '../action/action.ts';
import type { OperationHandler, StepOutcome } from '../operation/engine.ts';
import {
  Operation,
  enqueueOperation,
  liveOperation,
  presentOperation,
  requestCancel,
  targetSettlement,
  type PublicOperation,
} from '../operation/operation.ts';
import { timestamp } from '../validation.ts';
import { EVENT_DESTINATIONS, WEBHOOK_ENDPOINTS, checkEventTypes, endpointMatcher, findEndpoint, type EndpointFamily } from './endpoint.ts';
import { eventsInSeqRange, firstSeqFrom, lastSeqUntil, newestSeq } from '../event/store.ts';
import {
  eventsDeliveredOrScheduled,
  exhaustReplayDeliveries,
  findEndpointById,
  insertReplayDeliveries,
  replayDeliveryCounts,
} from './store.ts';

/**
 * Replay (issue 16): re-sends the events of a `seq` range to one endpoint, as
 * an operation (`webhook_endpoint.replay`) that the engine runs in batches.
 *
 * Invariants. Only events the endpoint would have received live are sent:
 * appended at or after its creation (the spec forbids backfill), of a type it
 * subscribes to and matching its filter, narrowed by the request's `types`.
 * The range is fixed when the replay is accepted (`until` defaults to the
 * newest event then), so a replay never chases live traffic, which fan-out
 * delivers anyway; it holds at most REPLAY_MAX_EVENTS events. Each re-sent
 * event is a new delivery row carrying the operation's id (`replay_operation_id`),
 * with its own attempts and retry schedule, signed like a live one (same
 * `webhook-id`, both secrets in a rotation window) plus a `webhook-replay`
 * header; the original delivery and its log are untouched. One replay is live
 * per endpoint: the operation's subject is the endpoint, and the
 * one-live-mutation index refuses a second (409 operation_conflict). A cancel
 * runs on the control plane (`webhook_endpoint.replay_cancel`): the replay
 * stops at its next batch and exhausts what it had queued and not yet sent.
 */
export const REPLAY_MAX_EVENTS = 100_000;
/** Events read per step (one transaction); a replay of REPLAY_MAX_EVENTS takes 50 steps, within one run of the engine. */
export const REPLAY_BATCH = 2000;
export const REPLAY_KIND = WEBHOOK_ENDPOINTS.replayKind;
export const REPLAY_CANCEL_KIND = WEBHOOK_ENDPOINTS.replayCancelKind;

const seq = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

export const ReplayWebhookEndpointInput = z.strictObject({
  starting_after: seq.optional().describe('replay the events after this seq (exclusive); or give since'),
  since: timestamp().optional().describe('replay the events appended at or after this time; or give starting_after'),
  until: z
    .union([seq, z.string().max(64)])
    .optional()
    .describe('last event replayed: a seq (inclusive), or an RFC 3339 time; default: the newest event when the replay is accepted'),
  types: z
    .array(z.string())
    .min(1)
    .max(100)
    .optional()
    .describe('only these public event types (default: every type the endpoint receives)'),
  only_failed: z
    .boolean()
    .optional()
    .describe('skip events the endpoint already has a succeeded or still-scheduled delivery of (default false)'),
});
type ReplayInput = z.output<typeof ReplayWebhookEndpointInput>;

export type { ReplayInput };
export const NoReplayInput = z.strictObject({});

/** What the replay operation carries in `progress` (public): its fixed range and request, where it is, and its counts. */
interface ReplayProgress {
  phase: 'enqueue' | 'deliver';
  after_seq: number;
  until_seq: number;
  types: string[] | null;
  only_failed: boolean;
  cursor_seq: number;
  considered: number;
  enqueued: number;
  delivered: number;
  exhausted: number;
}

const subjectOf = (endpointId: string, family: EndpointFamily) => ({ type: family.subjectType, id: endpointId });

/** The seq bounds of a time: the first seq at or after `at` (the first event of a `since`), or the last at or before it (an `until`). */
const seqAt = (tx: Tx, organizationId: string, at: Date, edge: 'first' | 'last') =>
  edge === 'first' ? firstSeqFrom(tx, organizationId, at) : lastSeqUntil(tx, organizationId, at);

/**
 * The range `(after, until]` in seq, from the request: exactly one of starting_after and since; until a seq or a
 * time, at or after the start; never earlier than the endpoint's creation; at most REPLAY_MAX_EVENTS events.
 */
async function replayRange(tx: Tx, endpoint: EndpointRow, input: ReplayInput): Promise<{ after: number; until: number }> {
  const org = endpoint.organizationId;
  if ((input.starting_after === undefined) === (input.since === undefined))
    throw new DomainError('invalid_request', 'Give exactly one of starting_after (a seq) and since (a time)', 'starting_after');
  let until: number;
  let untilTime: Date | undefined;
  if (input.until === undefined) until = await highestSeq(tx, org);
  else if (typeof input.until === 'number' || /^\d{1,16}$/.test(input.until)) until = Number(input.until);
  else {
    const parsed = timestamp().safeParse(input.until);
    if (!parsed.success) throw new DomainError('invalid_request', 'Invalid until: expected a seq or an RFC 3339 date-time', 'until');
    untilTime = parsed.data;
    until = (await seqAt(tx, org, untilTime, 'last')) ?? 0;
  }
  if (input.since && untilTime && untilTime < input.since)
    throw new DomainError('invalid_request', 'until must not be before since', 'until');
  let after: number;
  if (input.starting_after !== undefined) {
    after = input.starting_after;
    if (input.until !== undefined && !untilTime && until < after)
      throw new DomainError('invalid_request', 'until must not be before starting_after', 'until');
  } else {
    const first = await seqAt(tx, org, input.since!, 'first');
    after = first === null ? Math.max(until, await highestSeq(tx, org)) : first - 1;
  }
  // No backfill: nothing before the endpoint existed is replayed, nor counted against the bound.
  const born = await seqAt(tx, org, endpoint.createdAt, 'first');
  after = Math.max(after, born === null ? until : born - 1);
  until = Math.max(until, after);
  if (until - after > REPLAY_MAX_EVENTS)
    throw new DomainError(
      'invalid_request',
      `A replay covers at most ${REPLAY_MAX_EVENTS} events; this range holds ${until - after}. Narrow it with until`,
      'until',
    );
  return { after, until };
}

export async function replayEndpoint(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  id: string,
  input: ReplayInput,
  family = WEBHOOK_ENDPOINTS,
): Promise<PublicOperation> {
  const endpoint = await findEndpoint(tx, organizationId, id, null, family);
  if (endpoint.status !== 'enabled')
    throw new DomainError('invalid_status', `The ${family.noun} is disabled; enable it before replaying events to it`);
  const types = checkEventTypes(input.types, 'types') ?? null;
  const { after, until } = await replayRange(tx, endpoint, input);
  const progress: ReplayProgress = {
    phase: 'enqueue',
    after_seq: after,
    until_seq: until,
    types,
    only_failed: input.only_failed ?? false,
    cursor_seq: after,
    considered: 0,
    enqueued: 0,
    delivered: 0,
    exhausted: 0,
  };
  const op = await enqueueOperation(deps, tx, {
    organizationId,
    subject: subjectOf(endpoint.id, family),
    kind: family.replayKind,
    progress: { ...progress },
  });
  return presentOperation(op);
}

/** Cancels the endpoint's live replay on the control plane (a second cancel while one is live answers that one). */
export async function cancelReplay(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  id: string,
  family = WEBHOOK_ENDPOINTS,
): Promise<PublicOperation> {
  const endpoint = await findEndpoint(tx, organizationId, id, null, family);
  const subject = subjectOf(endpoint.id, family);
  const running = await liveOperation(tx, subject, 'control');
  if (running) return presentOperation(running);
  const target = await liveOperation(tx, subject);
  if (!target) throw new DomainError('resource_conflict', `The ${family.noun} ${endpoint.id} has no live replay to cancel`, null);
  const op = await enqueueOperation(deps, tx, {
    organizationId,
    subject,
    kind: family.replayCancelKind,
    plane: 'control',
    targetOperationId: target.id,
  });
  await requestCancel(deps, tx, target, op);
  return presentOperation(op);
}

const replayProgress = (op: OperationRow) => op.progress as unknown as ReplayProgress;

/** Counts of the replay's deliveries: delivered (succeeded), exhausted, and still live (pending or failing). */
async function deliveryCounts(tx: Tx, opId: string) {
  const rows = await replayDeliveryCounts(tx, opId);
  const of = (s: string) => rows.find((r) => r.status === s)?.n ?? 0;
  return { delivered: of('succeeded'), exhausted: of('exhausted'), live: of('pending') + of('failing') };
}

/** After the last batch: waiting while replayed deliveries are still scheduled (counts refresh at each recheck), then succeeded. */
async function deliverOutcome(tx: Tx, op: OperationRow, p: ReplayProgress): Promise<StepOutcome> {
  const c = await deliveryCounts(tx, op.id);
  const progress = { ...p, phase: 'deliver' as const, delivered: c.delivered, exhausted: c.exhausted };
  if (c.live) return { status: 'waiting', reason: 'awaiting_deliveries', progress };
  const { considered, enqueued, delivered, exhausted } = progress;
  return { status: 'succeeded', progress, result: { considered, enqueued, delivered, exhausted } };
}

/** One batch: the next REPLAY_BATCH events of the range, the matching ones queued as replayed deliveries, the cursor moved. */
async function replayBatch(deps: Deps, tx: Tx, op: OperationRow, p: ReplayProgress): Promise<StepOutcome> {
  const endpoint = await findEndpointById(tx, op.subjectId);
  if (endpoint?.status !== 'enabled')
    return {
      status: 'failed',
      progress: { ...p },
      error: { code: 'endpoint_disabled', message: `The ${op.subjectType.replace('_', ' ')} was disabled or deleted during the replay` },
    };
  const events = await eventsInSeqRange(tx, op.organizationId, p.cursor_seq, p.until_seq, REPLAY_BATCH);
  const types = p.types && new Set(p.types);
  const wants = endpointMatcher(endpoint);
  let matched = events.filter(
    (e) =>
      e.created_at >= endpoint.createdAt &&
      (!types || types.has(e.type)) &&
      wants({ type: e.type, brandId: e.brand_id, subjectType: e.subject_type, subjectId: e.subject_id }),
  );
  if (p.only_failed && matched.length) {
    const skip = new Set(
      await eventsDeliveredOrScheduled(
        tx,
        endpoint.id,
        matched.map((e) => e.id),
      ),
    );
    matched = matched.filter((e) => !skip.has(e.id));
  }
  const now = deps.clock.now();
  if (matched.length) {
    const due = new Date(now.getTime() + (deps.config.webhook.retryScheduleMs[0] ?? 0));
    const rows = matched.map((e) => ({ id: newId('delivery'), event: e.id, type: e.type }));
    await insertReplayDeliveries(tx, { organizationId: op.organizationId, endpointId: endpoint.id, operationId: op.id, due, now }, rows);
    deps.db.afterCommit(tx, () => deps.webhooks?.kick());
  }
  const last = events.at(-1);
  const next: ReplayProgress = {
    ...p,
    cursor_seq: events.length < REPLAY_BATCH || !last ? p.until_seq : Number(last.seq),
    considered: p.considered + events.length,
    enqueued: p.enqueued + matched.length,
  };
  if (next.cursor_seq < next.until_seq) return { status: 'continue', progress: { ...next } };
  return deliverOutcome(tx, op, next);
}

/** A canceled replay exhausts what it queued and has not sent; what is on the wire finishes and is logged. */
async function cancelOutcome(deps: Deps, tx: Tx, op: OperationRow): Promise<StepOutcome> {
  const now = deps.clock.now();
  await exhaustReplayDeliveries(tx, op.id, now);
  const c = await deliveryCounts(tx, op.id);
  const p = replayProgress(op);
  return {
    status: 'canceled',
    progress: { ...p, delivered: c.delivered, exhausted: c.exhausted },
    result: {
      canceled_by: op.cancelRequestedBy,
      considered: p.considered,
      enqueued: p.enqueued,
      delivered: c.delivered,
      exhausted: c.exhausted,
    },
  };
}

/** A replay's steps, the same for both resources' replays. */
const replayHandler = (family: EndpointFamily): OperationHandler[] => [
  {
    kind: family.replayKind,
    step: (ctx) =>
      ctx.commit((tx) => {
        const p = replayProgress(ctx.op);
        return p.phase === 'deliver' ? deliverOutcome(tx, ctx.op, p) : replayBatch(ctx.deps, tx, ctx.op, p);
      }),
    cancel: (ctx) => ctx.commit((tx) => cancelOutcome(ctx.deps, tx, ctx.op)),
  },
  {
    kind: family.replayCancelKind,
    step: (ctx) =>
      ctx.commit(async (tx) => {
        const settled = await targetSettlement(tx, ctx.op);
        if (!settled) return { status: 'waiting', reason: 'awaiting_target_settle' };
        return { status: 'succeeded', result: { target_operation_id: ctx.op.targetOperationId, ...settled } };
      }),
  },
];

export const replayHandlers: OperationHandler[] = [...replayHandler(WEBHOOK_ENDPOINTS), ...replayHandler(EVENT_DESTINATIONS)];

/** The replay actions (src/domain/action/action.ts); `id` is the endpoint's. Both answer 202 with an operation. */
export const webhookReplays = capability({ name: 'webhook_endpoints', title: 'Webhook endpoints', resource: 'webhooks' })({
  create: mutation({
    name: 'webhook_endpoints.replay',
    summary: `Re-send a seq or time range of events to the endpoint (at most ${REPLAY_MAX_EVENTS}), as an operation (webhook_endpoint.replay); one live replay per endpoint`,
    params: ['id'],
    input: ReplayWebhookEndpointInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, params, input, db }) => replayEndpoint(deps, db, caller.organization.id, params.id, input),
  }),
  cancel: mutation({
    name: 'webhook_endpoints.cancel_replay',
    summary: 'Cancel the endpoint’s live replay (control plane): it stops at its next batch and exhausts what it queued',
    params: ['id'],
    input: NoReplayInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, params, db }) => cancelReplay(deps, db, caller.organization.id, params.id),
  }),
});

/** The organization's highest seq, 0 when it has no sequenced event. */
const highestSeq = async (tx: Tx, organizationId: string): Promise<number> => Number((await newestSeq(tx, organizationId)) ?? 0n);
