import { z } from 'zod';
import type { WebhookAttempt, WebhookDelivery, WebhookEndpoint } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import { isId } from '../id.ts';
import { runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';
import { namesLoopback } from './address-guard.ts';
import { findEndpoint } from './endpoint.ts';
import { listLimit } from '../platform/rate-limit.ts';

/**
 * Webhook deliveries as the API shows them: one per (endpoint, event), with
 * its attempt log. Statuses: `pending` (not tried yet), `failing` (an attempt
 * failed, another is scheduled), `succeeded`, `exhausted` (the schedule ran
 * out, or the endpoint was disabled). The sending itself is the worker's
 * (src/workers/webhook-delivery.ts).
 */
export const DELIVERY_STATUSES = ['pending', 'failing', 'succeeded', 'exhausted'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface PublicWebhookAttempt {
  number: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  response_excerpt: string | null;
}

export interface PublicWebhookDelivery {
  id: string;
  object: 'webhook_delivery';
  endpoint_id: string;
  event_id: string;
  event_type: string | null;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
  attempt_log: PublicWebhookAttempt[];
}

export function presentDelivery(row: WebhookDelivery & { attemptLog: WebhookAttempt[] }, eventType: string | null, showExcerpts: boolean): PublicWebhookDelivery {
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

async function present(deps: Deps, db: Tx | Deps['db']['prisma'], endpoint: WebhookEndpoint, rows: (WebhookDelivery & { attemptLog: WebhookAttempt[] })[]) {
  const events = await db.event.findMany({ where: { id: { in: rows.map((r) => r.eventId) } }, select: { id: true, type: true } });
  const types = new Map(events.map((e) => [e.id, e.type]));
  const excerpts = showsExcerpts(deps, endpoint);
  return rows.map((r) => presentDelivery(r, types.get(r.eventId) ?? null, excerpts));
}

/** One delivery by id, of any endpoint of the organization (404 otherwise). */
export async function retrieveWebhookDelivery(deps: Deps, organizationId: string, id: string) {
  const row = isId('delivery', id) ? await deps.db.prisma.webhookDelivery.findFirst({ where: { id, endpoint: { organizationId } }, include: { attemptLog: true, endpoint: true } }) : null;
  if (!row) throw missing('webhook delivery', id, null);
  const [delivery] = await present(deps, deps.db.prisma, row.endpoint, [row]);
  return delivery!;
}

export const ListWebhookDeliveriesInput = z.strictObject({
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
});

async function findDelivery(db: Tx | Deps['db']['prisma'], endpointId: string, id: string, param: string | null = null) {
  const row = isId('delivery', id) ? await db.webhookDelivery.findFirst({ where: { id, endpointId }, include: { attemptLog: true } }) : null;
  if (!row) throw missing('webhook delivery', id, param);
  return row;
}

/** Newest first (ids are time-ordered), paged backward with starting_after. */
export async function listWebhookDeliveries(deps: Deps, organizationId: string, endpointId: string, raw: unknown) {
  const endpoint = await findEndpoint(deps.db.prisma, organizationId, endpointId);
  const input = parseInput(ListWebhookDeliveriesInput, raw);
  const cursor = input.starting_after ? await findDelivery(deps.db.prisma, endpoint.id, input.starting_after, 'starting_after') : undefined;
  const rows = await deps.db.prisma.webhookDelivery.findMany({
    where: { endpointId: endpoint.id, ...(cursor ? { id: { lt: cursor.id } } : {}), ...(input.status ? { status: input.status } : {}) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
    include: { attemptLog: true },
  });
  return { object: 'list' as const, data: await present(deps, deps.db.prisma, endpoint, rows.slice(0, input.limit)), has_more: rows.length > input.limit };
}

export type WebhookDeliverySummary = Record<DeliveryStatus, number>;

/** Counts per status for one endpoint (the `webhookDelivery` field in GraphQL). */
export async function webhookDeliverySummary(deps: Deps, endpointId: string): Promise<WebhookDeliverySummary> {
  const groups = await deps.db.prisma.webhookDelivery.groupBy({ by: ['status'], where: { endpointId }, _count: { _all: true } });
  const out: WebhookDeliverySummary = { pending: 0, failing: 0, succeeded: 0, exhausted: 0 };
  for (const g of groups) if (g.status in out) out[g.status as DeliveryStatus] = g._count._all;
  return out;
}

export const RetryWebhookDeliveryInput = z.strictObject({});

/**
 * Re-queues a delivery for an immediate attempt. An exhausted one gets one
 * more attempt (if it fails, it is exhausted again); a failing or pending one
 * is simply brought forward. A succeeded delivery, or one of a disabled
 * endpoint, cannot be retried.
 */
async function retryWebhookDelivery(deps: Deps, tx: Tx, organizationId: string, endpointId: string, id: string, raw: unknown) {
  parseInput(RetryWebhookDeliveryInput, raw);
  const endpoint = await findEndpoint(tx, organizationId, endpointId);
  const row = await findDelivery(tx, endpoint.id, id);
  if (endpoint.status !== 'enabled') throw new DomainError('invalid_status', 'The webhook endpoint is disabled; enable it before retrying its deliveries');
  if (row.status === 'succeeded') throw new DomainError('invalid_status', 'The delivery already succeeded');
  const now = deps.clock.now();
  const updated = await tx.webhookDelivery.update({
    where: { id: row.id },
    data: { status: row.attempts > 0 ? 'failing' : 'pending', nextAttemptAt: now, completedAt: null, updatedAt: now },
    include: { attemptLog: true },
  });
  deps.db.afterCommit(tx, () => deps.webhooks?.kick());
  const [delivery] = await present(deps, tx, endpoint, [updated]);
  return delivery!;
}

export function mutateWebhookDelivery(
  deps: Deps,
  caller: SurfaceBCaller,
  m: { op: 'retry'; endpointId: string; id: string; input: unknown },
  idempotencyKey?: string,
): Promise<StoredResponse & { replayed: boolean }> {
  const req = { name: `webhook_deliveries.${m.op}`, target: `${m.endpointId}/${m.id}`, input: m.input, idempotencyKey };
  return runMutation(deps, caller, req, async (tx) => ({
    status: 200,
    body: { webhook_delivery: await retryWebhookDelivery(deps, tx, caller.organization.id, m.endpointId, m.id, m.input) },
  }));
}
