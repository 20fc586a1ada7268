import type { Deps } from '../../src/domain/context.ts';
import { ListInput } from '../../src/domain/action/list.ts';
import { authenticateOperator } from '../../src/domain/operator/operator-token.ts';
import { HealthEventPage, listHealthEvents } from '../../src/domain/webhook/health-event.ts';
import { bearer } from '../http/body.ts';
import type { RouteDef } from '../http/route.ts';
import { platformQuery } from '../platform/pipeline.ts';

/** What operators see of webhook endpoints: their health transitions (internal events, never public ones). */
export function operatorWebhookRoutes(deps: Deps): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/operator/webhook_endpoints/:id/health_events',
      operationId: 'listWebhookEndpointHealthEvents',
      summary: "List an endpoint's health transitions (failing_started, recovered, disabled with its reason, enabled), newest first",
      tag: 'Operator',
      auth: 'operator',
      query: ListInput,
      success: { status: 200, description: 'A page of health events', schema: HealthEventPage },
      errors: [400, 401, 404],
      handler: async (ctx) => {
        await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
        ctx.body = await listHealthEvents(deps, ctx.params.id!, platformQuery(ctx));
      },
    },
  ];
}
