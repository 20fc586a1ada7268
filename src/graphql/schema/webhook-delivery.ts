import {
  webhookDeliveries,
  webhookDeliverySummary,
  type PublicWebhookAttempt,
  type PublicWebhookDelivery,
  type WebhookDeliverySummary,
} from '../../domain/webhook/delivery.ts';
import type { ArgBuilder } from '@pothos/core';
import { connectionAction, mutationAction } from '../action.ts';
import { given } from '../connection.ts';
import { builder } from '../builder.ts';
import { WebhookEndpoint } from './webhook-endpoint.ts';
import { WebhookDeliveryStatus } from './enums.ts';
import { Node } from './node.ts';

/** Webhook deliveries in GraphQL: the same actions as the REST delivery routes. */
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
    replayOperationId: t.exposeString('replay_operation_id', {
      nullable: true,
      description: 'The replay operation that re-sent the event; null for a live delivery',
    }),
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
}));

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
/** The delivery log's filters (REST: status, event_type, event_id, created[gte|gt|lte|lt], status_class). */
const filterArgs = (arg: ArgBuilder<Types>) => ({
  status: arg({ type: WebhookDeliveryStatus }),
  eventType: arg.string({ description: 'One public event type' }),
  createdGte: arg.string({ description: 'Created at or after (RFC 3339)' }),
  createdGt: arg.string({ description: 'Created after' }),
  createdLte: arg.string({ description: 'Created at or before' }),
  createdLt: arg.string({ description: 'Created before' }),
  statusClass: arg.string({ description: "The last attempt's HTTP status class: 2xx, 3xx, 4xx, 5xx, or error (no response)" }),
});
type FilterArgs = { [K in keyof ReturnType<typeof filterArgs>]?: string | null };

const filterInput = (a: FilterArgs) =>
  given({
    status: a.status ?? undefined,
    event_type: a.eventType ?? undefined,
    'created[gte]': a.createdGte ?? undefined,
    'created[gt]': a.createdGt ?? undefined,
    'created[lte]': a.createdLte ?? undefined,
    'created[lt]': a.createdLt ?? undefined,
    status_class: a.statusClass ?? undefined,
  });
const FILTER_ARG_NAMES = {
  event_type: 'eventType',
  event_id: 'eventId',
  'created[gte]': 'createdGte',
  'created[gt]': 'createdGt',
  'created[lte]': 'createdLte',
  'created[lt]': 'createdLt',
  status_class: 'statusClass',
};

connectionAction('deliveries', webhookDeliveries.list, {
  parent: WebhookEndpoint,
  type: WebhookDelivery,
  description: 'Deliveries newest first with their attempt logs, filtered (scope webhooks:read). Pages with first (1..100) and after.',
  args: (arg) => ({ ...filterArgs(arg), eventId: arg.string({ description: 'One event (evt_...)' }) }),
  input: (a, endpoint) => ({ params: { id: endpoint.id }, input: given({ ...filterInput(a), event_id: a.eventId ?? undefined }) }),
  argNames: FILTER_ARG_NAMES,
});

connectionAction('eventDeliveries', webhookDeliveries.listForEvent, {
  type: WebhookDelivery,
  description: "One event's deliveries across the organization's endpoints, newest first, filtered (scope webhooks:read)",
  args: (arg) => ({ eventId: arg.id({ required: true, description: 'evt_...' }), ...filterArgs(arg) }),
  input: (a) => ({ params: { id: String(a.eventId) }, input: filterInput(a) }),
  argNames: FILTER_ARG_NAMES,
});

mutationAction('retryWebhookDelivery', webhookDeliveries.retry, {
  type: WebhookDelivery,
  description: 'Re-queue a failing or exhausted delivery for an immediate attempt (scope webhooks:write)',
  args: (arg) => ({ endpointId: arg.id({ required: true }), id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.endpointId), delivery_id: String(a.id) }, input: {} }),
});
