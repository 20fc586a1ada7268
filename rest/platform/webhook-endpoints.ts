import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsInput,
  NoWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  listWebhookEndpoints,
  mutateWebhookEndpoint,
  retrieveWebhookEndpoint,
  type WebhookEndpointMutation,
} from '../../src/domain/webhook/endpoint.ts';
import type { RouteDef } from '../http/route.ts';
import { answerMutation, answerRetrieve } from './answer.ts';
import { callerWith, platformQuery } from './pipeline.ts';
import { DeletedWebhookEndpoint, WebhookEndpointEnvelope, WebhookEndpointList } from './schemas.ts';

/** Webhook endpoints: organization-scoped; the Service-Brand header does not apply. */
export function webhookEndpointRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Webhook endpoints', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };

  const mutate = (ctx: Context, op: WebhookEndpointMutation['op']) =>
    answerMutation(deps, ctx, 'webhooks:write', (caller, input, key) =>
      mutateWebhookEndpoint(deps, caller, op === 'create' ? { op, input } : { op, id: ctx.params.id!, input }, key),
    );

  return [
    {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint (its secret is returned once)',
      scope: 'webhooks:write',
      body: CreateWebhookEndpointInput,
      idempotent: true,
      success: { status: 201, description: 'The wrapped endpoint, with `secret`', schema: WebhookEndpointEnvelope },
      handler: (ctx) => mutate(ctx, 'create'),
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints, newest first',
      scope: 'webhooks:read',
      query: ListWebhookEndpointsInput,
      success: { status: 200, description: 'A page of endpoints (no secrets)', schema: WebhookEndpointList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'webhooks:read');
        ctx.body = await listWebhookEndpoints(deps, caller.organization.id, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints/:id',
      operationId: 'retrieveWebhookEndpoint',
      summary: 'Retrieve a webhook endpoint (without its secret)',
      scope: 'webhooks:read',
      query: NoWebhookEndpointInput,
      success: { status: 200, description: 'The wrapped endpoint', schema: WebhookEndpointEnvelope },
      handler: (ctx) =>
        answerRetrieve(ctx, 'webhooks:read', async (caller) => ({
          webhook_endpoint: await retrieveWebhookEndpoint(deps, caller.organization.id, ctx.params.id!),
        })),
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id',
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint; omitted fields are left alone',
      scope: 'webhooks:write',
      body: UpdateWebhookEndpointInput,
      idempotent: true,
      success: { status: 200, description: 'The wrapped endpoint', schema: WebhookEndpointEnvelope },
      handler: (ctx) => mutate(ctx, 'update'),
    },
    {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/rotate_secret',
      operationId: 'rotateWebhookEndpointSecret',
      summary: 'Install a fresh secret; the previous one stays valid for 24 h',
      scope: 'webhooks:write',
      idempotent: true,
      success: { status: 200, description: 'The wrapped endpoint with its new `secret`', schema: WebhookEndpointEnvelope },
      handler: (ctx) => mutate(ctx, 'rotate_secret'),
    },
    {
      ...common,
      method: 'DELETE',
      path: '/webhook_endpoints/:id',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint and its secrets (a replayed delete returns the cached response)',
      scope: 'webhooks:write',
      idempotent: true,
      success: { status: 200, description: 'Deleted', schema: DeletedWebhookEndpoint },
      handler: (ctx) => mutate(ctx, 'delete'),
    },
  ];
}
