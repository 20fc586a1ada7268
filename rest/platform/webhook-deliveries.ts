import type { Deps } from '../../src/domain/context.ts';
import { webhookDeliveries } from '../../src/domain/webhook/delivery.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Webhook deliveries of one endpoint (beyond the spec, in its style): the attempt log and a manual retry. */
export function webhookDeliveryRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Webhook endpoints', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, webhookDeliveries.list, {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List an endpoint’s deliveries with their attempt logs, newest first',
      description: 'A page of deliveries',
    }),
    actionRoute(deps, webhookDeliveries.listForEvent, {
      ...common,
      method: 'GET',
      path: '/events/:id/deliveries',
      operationId: 'listEventDeliveries',
      summary: 'List one event’s deliveries across the organization’s endpoints, newest first',
      description: 'A page of deliveries',
    }),
    actionRoute(deps, webhookDeliveries.retry, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/deliveries/:delivery_id/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (400 when the endpoint is disabled)',
      description: 'The wrapped delivery, due now',
      envelope: 'webhook_delivery',
    }),
  ];
}
