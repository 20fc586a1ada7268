import type { Context } from 'koa';
import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { runMutation } from '../../src/domain/platform/mutation.ts';
import {
  CreateWebhookEndpointInput,
  ListWebhookEndpointsInput,
  UpdateWebhookEndpointInput,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  retrieveWebhookEndpoint,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from '../../src/domain/webhook/endpoint.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { callerWith, idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';
import { DeletedWebhookEndpoint, WebhookEndpointEnvelope, WebhookEndpointList } from './schemas.ts';

/** Webhook endpoints: organization-scoped; the Service-Brand header does not apply. */
export function webhookEndpointRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Webhook endpoints', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };

  const NoInput = z.strictObject({});
  /** Scope check, idempotency and the effect in one transaction; answers the stored (or replayed) response. */
  const mutate = async (ctx: Context, name: string, input: unknown, effect: Parameters<typeof runMutation>[3]) => {
    const caller = callerWith(ctx, 'webhooks:write');
    const out = await runMutation(deps, caller, { name, target: ctx.params.id, input, idempotencyKey: idempotencyKeyOf(ctx) }, effect);
    if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = out.status;
    ctx.body = out.body;
  };

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
      handler: async (ctx) => {
        callerWith(ctx, 'webhooks:write');
        const body = await platformBody(deps, ctx);
        await mutate(ctx, 'webhook_endpoints.create', body, async (tx) => ({
          status: 201,
          body: { webhook_endpoint: await createWebhookEndpoint(deps, tx, ctx.state.caller.organization.id, body) },
        }));
      },
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
      query: NoInput,
      success: { status: 200, description: 'The wrapped endpoint', schema: WebhookEndpointEnvelope },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'webhooks:read');
        parseInput(NoInput, platformQuery(ctx));
        ctx.body = { webhook_endpoint: await retrieveWebhookEndpoint(deps, caller.organization.id, ctx.params.id!) };
      },
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
      handler: async (ctx) => {
        callerWith(ctx, 'webhooks:write');
        const body = await platformBody(deps, ctx);
        await mutate(ctx, 'webhook_endpoints.update', body, async (tx) => ({
          status: 200,
          body: { webhook_endpoint: await updateWebhookEndpoint(deps, tx, ctx.state.caller.organization.id, ctx.params.id!, body) },
        }));
      },
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
      handler: async (ctx) => {
        callerWith(ctx, 'webhooks:write');
        const body = await platformBody(deps, ctx);
        parseInput(NoInput, body);
        await mutate(ctx, 'webhook_endpoints.rotate_secret', body, async (tx) => ({
          status: 200,
          body: { webhook_endpoint: await rotateWebhookEndpointSecret(deps, tx, ctx.state.caller.organization.id, ctx.params.id!) },
        }));
      },
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
      handler: async (ctx) => {
        await mutate(ctx, 'webhook_endpoints.delete', null, async (tx) => ({
          status: 200,
          body: await deleteWebhookEndpoint(deps, tx, ctx.state.caller.organization.id, ctx.params.id!),
        }));
      },
    },
  ];
}
