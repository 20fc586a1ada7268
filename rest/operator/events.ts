import type { Deps } from '../../src/domain/context.ts';
import { OperatorEventInput, appendOperatorEvent } from '../../src/domain/event/event.ts';
import { authenticateOperator } from '../../src/domain/operator/operator-token.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import type { RouteDef } from '../http/route.ts';

export function operatorEventRoutes(deps: Deps): RouteDef[] {
  return [
    {
      method: 'POST',
      path: '/operator/events',
      operationId: 'appendTestEvent',
      summary: 'Append a public test event to an organization (data.test = true) to exercise feeds and webhooks',
      tag: 'Operator',
      auth: 'operator',
      body: OperatorEventInput,
      success: { status: 201, description: 'The new event id; it appears in the feed once sequenced' },
      errors: [400, 401, 404],
      handler: async (ctx) => {
        await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
        const body = await readJsonBody(ctx, deps.config.bodyLimitBytes);
        ctx.status = 201;
        ctx.body = await appendOperatorEvent(deps, body);
      },
    },
  ];
}
