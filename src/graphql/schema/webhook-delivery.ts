import { DomainError } from '../../domain/errors.ts';
import { validateIdempotencyKey } from '../../domain/idempotency/idempotency.ts';
import {
  listWebhookDeliveries,
  mutateWebhookDelivery,
  webhookDeliverySummary,
  type PublicWebhookAttempt,
  type PublicWebhookDelivery,
  type WebhookDeliverySummary,
} from '../../domain/webhook/delivery.ts';
import { builder } from '../builder.ts';
import { WebhookEndpoint } from './webhook-endpoint.ts';
import { WebhookDeliveryStatus } from './enums.ts';
import { Node } from './node.ts';

/** Webhook deliveries in GraphQL: the same domain functions as the REST delivery routes. */
const WebhookAttempt = builder.objectRef<PublicWebhookAttempt>('WebhookAttempt').implement({
  description: 'One HTTP attempt of a delivery',
  fields: (t) => ({
    number: t.exposeInt('number'),
    startedAt: t.exposeString('started_at'),
    durationMs: t.exposeInt('duration_ms'),
    statusCode: t.exposeInt('status_code', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    responseExcerpt: t.exposeString('response_excerpt', { nullable: true, description: 'At most the first 1 KiB of the response body' }),
  }),
});

const WebhookDelivery = builder.objectRef<PublicWebhookDelivery>('WebhookDelivery').implement({
  description: 'One event on its way to one endpoint, with its attempts',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    endpointId: t.exposeString('endpoint_id'),
    eventId: t.exposeString('event_id', { description: 'Also the webhook-id header' }),
    eventType: t.exposeString('event_type', { nullable: true }),
    status: t.expose('status', { type: WebhookDeliveryStatus }),
    attempts: t.exposeInt('attempts'),
    nextAttemptAt: t.exposeString('next_attempt_at', { nullable: true }),
    lastStatusCode: t.exposeInt('last_status_code', { nullable: true }),
    lastError: t.exposeString('last_error', { nullable: true }),
    createdAt: t.exposeString('created_at'),
    completedAt: t.exposeString('completed_at', { nullable: true }),
    attemptLog: t.field({ type: [WebhookAttempt], resolve: (d) => d.attempt_log }),
  }),
});

const WebhookDeliveryStatusSummary = builder.objectRef<WebhookDeliverySummary>('WebhookDeliveryStatusSummary').implement({
  description: 'Deliveries of one endpoint by status',
  fields: (t) => ({
    pending: t.exposeInt('pending'),
    failing: t.exposeInt('failing'),
    succeeded: t.exposeInt('succeeded'),
    exhausted: t.exposeInt('exhausted'),
  }),
});

builder.objectFields(WebhookEndpoint, (t) => ({
  webhookDelivery: t.field({
    type: WebhookDeliveryStatusSummary,
    description: 'Delivery counts by status (scope webhooks:read)',
    authScopes: { scope: 'webhooks:read' },
    resolve: (e, _a, ctx) => webhookDeliverySummary(ctx.deps, e.id),
  }),
  deliveries: t.connection({
    type: WebhookDelivery,
    description: 'Deliveries newest first with their attempt logs (scope webhooks:read). Pages with first (1..100) and after.',
    authScopes: { scope: 'webhooks:read' },
    resolve: async (e, a, ctx) => {
      if (a.last != null || a.before != null) throw new DomainError('invalid_request', 'Deliveries page with first and after only', a.last != null ? 'last' : 'before');
      const page = await listWebhookDeliveries(ctx.deps, ctx.caller.organization.id, e.id, {
        ...(a.first != null ? { limit: a.first } : {}),
        ...(a.after != null ? { starting_after: a.after } : {}),
      });
      return {
        edges: page.data.map((node) => ({ cursor: node.id, node })),
        pageInfo: { hasNextPage: page.has_more, hasPreviousPage: a.after != null, startCursor: page.data[0]?.id ?? null, endCursor: page.data.at(-1)?.id ?? null },
      };
    },
  }),
}));

builder.mutationField('retryWebhookDelivery', (t) =>
  t.field({
    type: WebhookDelivery,
    description: 'Re-queue a failing or exhausted delivery for an immediate attempt (scope webhooks:write)',
    authScopes: { scope: 'webhooks:write' },
    args: {
      endpointId: t.arg.id({ required: true }),
      id: t.arg.id({ required: true }),
      idempotencyKey: t.arg.string({ description: 'Overrides the Idempotency-Key header' }),
    },
    resolve: async (_r, a, ctx) => {
      const key = a.idempotencyKey != null ? validateIdempotencyKey(a.idempotencyKey, 'idempotencyKey') : ctx.idempotencyKey;
      const out = await mutateWebhookDelivery(ctx.deps, ctx.caller, { op: 'retry', endpointId: String(a.endpointId), id: String(a.id), input: {} }, key);
      return (out.body as { webhook_delivery: PublicWebhookDelivery }).webhook_delivery;
    },
  }),
);
