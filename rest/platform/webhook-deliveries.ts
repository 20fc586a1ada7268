import type { Deps } from '../../src/domain/context.ts';
import {
  ListWebhookDeliveriesInput,
  RetryWebhookDeliveryInput,
  listWebhookDeliveries,
  mutateWebhookDelivery,
} from '../../src/domain/webhook/delivery.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { callerWith, idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';
import { WebhookDeliveryEnvelope, WebhookDeliveryList } from './schemas.ts';

/** Webhook deliveries of one endpoint (beyond the spec, in its style): the attempt log and a manual retry. */
export function webhookDeliveryRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Webhook endpoints', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'List an endpoint’s deliveries with their attempt logs, newest first',
      scope: 'webhooks:read',
      query: ListWebhookDeliveriesInput,
      success: { status: 200, description: 'A page of deliveries', schema: WebhookDeliveryList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'webhooks:read');
        ctx.body = await listWebhookDeliveries(deps, caller.organization.id, ctx.params.id!, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/deliveries/:delivery_id/retry',
      operationId: 'retryWebhookDelivery',
      summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (400 when the endpoint is disabled)',
      scope: 'webhooks:write',
      body: RetryWebhookDeliveryInput,
      idempotent: true,
      success: { status: 200, description: 'The wrapped delivery, due now', schema: WebhookDeliveryEnvelope },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'webhooks:write');
        parseInput(RetryWebhookDeliveryInput, platformQuery(ctx));
        const input = await platformBody(deps, ctx);
        const m = { op: 'retry' as const, endpointId: ctx.params.id!, id: ctx.params.delivery_id!, input };
        const out = await mutateWebhookDelivery(deps, caller, m, idempotencyKeyOf(ctx));
        if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
        ctx.status = out.status;
        ctx.body = out.body;
      },
    },
  ];
}
