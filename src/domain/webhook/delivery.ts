import { z } from 'zod';
import type { WebhookAttempt as AttemptRow, WebhookDelivery as DeliveryRow, WebhookEndpoint } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId } from '../id.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { retrieveEvent } from '../event/event.ts';
import { assertPublicType } from '../event/filter.ts';
import { timestamp } from '../validation.ts';
import { ListInput, listOf, newestFirst, type ListQuery } from '../action/list.ts';
import { namesLoopback } from './address-guard.ts';
import { WEBHOOK_ENDPOINTS, findEndpoint } from './endpoint.ts';
import { isoTime } from '../shape.ts';
import {
  deliveryCountsByStatus,
  deliveryLogPage,
  findDeliveryIn,
  findEndpointDelivery,
  findOrganizationDelivery,
  requeueDelivery,
  type DeliveryFilter,
  type DeliveryScope,
} from './store.ts';

/**
 * Webhook deliveries as the API shows them: one per (endpoint, event), with
 * its attempt log. Statuses: `pending` (not tried yet), `failing` (an attempt
 * failed, another is scheduled), `succeeded`, `exhausted` (the schedule ran
 * out, or the endpoint was disabled). The sending itself is the worker's
 * (src/workers/webhook-delivery.ts).
 */
export const DELIVERY_STATUSES = ['pending', 'failing', 'succeeded', 'exhausted'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const WebhookAttempt = z.object({
  number: z.number().int().describe('1 for the first attempt'),
  started_at: isoTime,
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable().describe('null when no response arrived'),
  error: z.string().nullable().describe('short reason: timeout, connection refused, refused address, HTTP status'),
  response_excerpt: z.string().nullable().describe('at most the first 1 KiB of the response body'),
});
export type PublicWebhookAttempt = z.output<typeof WebhookAttempt>;

export const WebhookDelivery = z.object({
  id: z.string().describe('prefix msg_'),
  object: z.literal('webhook_delivery'),
  endpoint_id: z.string(),
  event_id: z.string().describe('also the webhook-id header'),
  event_type: z.string().nullable(),
  status: z.enum(DELIVERY_STATUSES),
  attempts: z.number().int(),
  next_attempt_at: isoTime.nullable().describe('null once succeeded or exhausted'),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: isoTime,
  completed_at: isoTime.nullable(),
  replay_operation_id: z.string().nullable().describe('the replay operation that re-sent the event (op_...); null for a live delivery'),
  attempt_log: z.array(WebhookAttempt),
});
export type PublicWebhookDelivery = z.output<typeof WebhookDelivery>;

export function presentDelivery(
  row: DeliveryRow & { attemptLog: AttemptRow[] },
  eventType: string | null,
  showExcerpts: boolean,
): PublicWebhookDelivery {
  const status = row.status as DeliveryStatus;
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint_id: row.endpointId,
    event_id: row.eventId,
    event_type: eventType,
    status,
    attempts: row.attempts,
    next_attempt_at: status === 'pending' || status === 'failing' ? row.nextAttemptAt.toISOString() : null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    created_at: row.createdAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
    replay_operation_id: row.replayOperationId,
    attempt_log: row.attemptLog
      .sort((a, b) => a.number - b.number)
      .map((a) => ({
        number: a.number,
        started_at: a.startedAt.toISOString(),
        duration_ms: a.durationMs,
        status_code: a.statusCode,
        error: a.error,
        response_excerpt: showExcerpts ? a.responseExcerpt : null,
      })),
  };
}

/**
 * A loopback target's reply is a local service talking: it is shown to the
 * tenant only while loopback delivery is enabled (attempts recorded before it
 * was turned off keep their excerpt in the database, out of sight).
 */
function showsExcerpts(deps: Deps, endpoint: WebhookEndpoint): boolean {
  if (deps.config.webhook.allowLoopback) return true;
  return URL.canParse(endpoint.url) && !namesLoopback(new URL(endpoint.url).hostname);
}

function present(deps: Deps, endpoint: WebhookEndpoint, rows: (DeliveryRow & { attemptLog: AttemptRow[] })[]) {
  const excerpts = showsExcerpts(deps, endpoint);
  return rows.map((r) => presentDelivery(r, r.eventType, excerpts));
}

/** One delivery by id, of any endpoint of the organization (404 otherwise). */
export async function retrieveWebhookDelivery(deps: Deps, organizationId: string, id: string) {
  const row = isId('delivery', id) ? await findOrganizationDelivery(deps.db.prisma, organizationId, id) : null;
  if (!row) throw missing('webhook delivery', id, null);
  return present(deps, row.endpoint, [row])[0]!;
}

/** The HTTP status class of a delivery's last attempt: 2xx..5xx by its status code, `error` when no response arrived. */
export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'error'] as const;

/** Filters of a delivery log (an endpoint's, an event's): all given ones apply (AND). */
const DeliveryFilters = {
  status: z.enum(DELIVERY_STATUSES).optional(),
  event_type: z.string().optional().describe('one public event type'),
  'created[gte]': timestamp().optional().describe('created at or after (RFC 3339)'),
  'created[gt]': timestamp().optional().describe('created after'),
  'created[lte]': timestamp().optional().describe('created at or before'),
  'created[lt]': timestamp().optional().describe('created before'),
  status_class: z.enum(STATUS_CLASSES).optional().describe("the last attempt's HTTP status class; error: no response"),
};
export const ListWebhookDeliveriesInput = ListInput.extend({
  ...DeliveryFilters,
  event_id: z.string().max(128).optional().describe('one event (evt_...)'),
});
export const ListEventDeliveriesInput = ListInput.extend(DeliveryFilters);
export type DeliveryQuery = z.output<typeof ListEventDeliveriesInput> & { event_id?: string };

/** The query's filters as the store takes them (an unknown event type is refused). */
function deliveryFilter(q: DeliveryQuery): DeliveryFilter {
  assertPublicType(q.event_type, 'event_type');
  return {
    status: q.status,
    eventType: q.event_type,
    eventId: q.event_id,
    created: { gte: q['created[gte]'], gt: q['created[gt]'], lte: q['created[lte]'], lt: q['created[lt]'] },
    statusClass: q.status_class,
  };
}

async function findDelivery(db: Reader, endpointId: string, id: string, param: string | null = null) {
  const row = isId('delivery', id) ? await findEndpointDelivery(db, endpointId, id) : null;
  if (!row) throw missing('webhook delivery', id, param);
  return row;
}

export type WebhookDeliverySummary = Record<DeliveryStatus, number>;

/** Counts per status for one endpoint (the `webhookDelivery` field in GraphQL). */
export async function webhookDeliverySummary(deps: Deps, endpointId: string): Promise<WebhookDeliverySummary> {
  const out: WebhookDeliverySummary = { pending: 0, failing: 0, succeeded: 0, exhausted: 0 };
  for (const g of await deliveryCountsByStatus(deps.db.prisma, endpointId)) if (g.status in out) out[g.status as DeliveryStatus] = g.count;
  return out;
}

export const RetryWebhookDeliveryInput = z.strictObject({});

/**
 * Re-queues a delivery for an immediate attempt. An exhausted one gets one
 * more attempt (if it fails, it is exhausted again); a failing or pending one
 * is simply brought forward. A succeeded delivery, or one of a disabled
 * endpoint, cannot be retried.
 */
export async function retryDelivery(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  endpointId: string,
  id: string,
  family = WEBHOOK_ENDPOINTS,
) {
  const endpoint = await findEndpoint(tx, organizationId, endpointId, null, family);
  const row = await findDelivery(tx, endpoint.id, id);
  if (endpoint.status !== 'enabled')
    throw new DomainError('invalid_status', `The ${family.noun} is disabled; enable it before retrying its deliveries`);
  if (row.status === 'succeeded') throw new DomainError('invalid_status', 'The delivery already succeeded');
  const now = deps.clock.now();
  const updated = await requeueDelivery(tx, row.id, row.attempts > 0 ? 'failing' : 'pending', now);
  deps.db.afterCommit(tx, () => deps.webhooks?.kick());
  return present(deps, endpoint, [updated])[0]!;
}

/** A page of a delivery log: the deliveries `scope` selects, filtered, newest first; a cursor outside the scope is 404. */
export async function deliveryLog(deps: Deps, db: Reader, scope: DeliveryScope, input: DeliveryQuery & ListQuery) {
  const filter = deliveryFilter(input);
  const page = await newestFirst(
    input,
    async (id, param) => {
      const row = isId('delivery', id) ? await findDeliveryIn(db, scope, id) : null;
      if (!row) throw missing('webhook delivery', id, param);
      return row;
    },
    (below, take) => deliveryLogPage(db, scope, filter, below, take),
  );
  return { ...page, data: page.data.map((r) => present(deps, r.endpoint, [r])[0]!) };
}

/** The delivery actions (src/domain/action/action.ts); `id` is the endpoint's. */
export const webhookDeliveries = capability({ name: 'webhook_deliveries', title: 'Webhook endpoints', resource: 'webhooks' })({
  /** Newest first (ids are time-ordered), paged backward with starting_after. */
  list: read({
    summary: 'List an endpoint’s deliveries with their attempt logs, newest first',
    params: ['id'],
    input: ListWebhookDeliveriesInput,
    output: listOf(WebhookDelivery),
    run: async ({ deps, caller, params, input, db }) => {
      const endpoint = await findEndpoint(db, caller.organization.id, params.id);
      return deliveryLog(deps, db, { endpointId: endpoint.id }, input);
    },
  }),
  /** One event's deliveries across the organization's endpoints, newest first (an unknown or foreign event is 404). */
  listForEvent: read({
    summary: 'List one event’s deliveries across the organization’s endpoints, newest first',
    params: ['id'],
    input: ListEventDeliveriesInput,
    output: listOf(WebhookDelivery),
    run: async ({ deps, caller, params, input, db }) => {
      const organizationId = caller.organization.id;
      const event = await retrieveEvent(deps, organizationId, params.id);
      // Webhook endpoints' deliveries only: an event destination's are in its own log.
      return deliveryLog(deps, db, { eventId: event.id, organizationId, endpoint: { type: 'webhook' } }, input);
    },
  }),
  retry: mutation({
    summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (refused while the endpoint is disabled)',
    params: ['id', 'delivery_id'],
    input: RetryWebhookDeliveryInput,
    output: WebhookDelivery,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) => retryDelivery(deps, db, caller.organization.id, params.id, params.delivery_id),
  }),
});
