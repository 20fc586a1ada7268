import {
  WebhookAttempt,
  WebhookDelivery as WebhookDeliveryShape,
  webhookDeliveries,
  webhookDeliverySummary,
  type WebhookDeliverySummary,
} from '../../domain/webhook/delivery.ts';
import { connectionAction, mutationAction } from '../action.ts';
import { builder } from '../builder.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';
import { WebhookEndpoint } from './webhook-endpoint.ts';

/** Webhook deliveries in GraphQL: the same actions as the REST delivery routes. */
objectType('WebhookAttempt', WebhookAttempt, { description: 'One HTTP attempt of a delivery' });

export const WebhookDelivery = objectType('WebhookDelivery', WebhookDeliveryShape, {
  description: 'One event on its way to one endpoint, with its attempts',
  interfaces: [Node],
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

connectionAction('deliveries', webhookDeliveries.list, {
  parent: WebhookEndpoint,
  paramsOf: (endpoint) => ({ id: endpoint.id }),
  type: WebhookDelivery,
  description: 'Deliveries newest first with their attempt logs, filtered (scope webhooks:read). Pages with first (1..100) and after.',
});

connectionAction('eventDeliveries', webhookDeliveries.listForEvent, {
  type: WebhookDelivery,
  description: "One event's deliveries across the organization's endpoints, newest first, filtered (scope webhooks:read)",
  params: { id: 'eventId' },
});

mutationAction('retryWebhookDelivery', webhookDeliveries.retry, {
  type: WebhookDelivery,
  description: 'Re-queue a failing or exhausted delivery for an immediate attempt (scope webhooks:write)',
  params: { id: 'endpointId', delivery_id: 'id' },
});
