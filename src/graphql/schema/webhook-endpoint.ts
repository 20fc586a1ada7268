import type { Tx } from '../../db/database.ts';
import { runMutation } from '../../domain/platform/mutation.ts';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listWebhookEndpoints,
  retrieveWebhookEndpoint,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
  type PublicWebhookEndpoint,
} from '../../domain/webhook/endpoint.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';

/**
 * Webhook endpoints in GraphQL: the same domain functions and the same
 * idempotent mutation runner as REST, so a key replays identically on both.
 */
export const WebhookEndpoint = builder.objectRef<PublicWebhookEndpoint>('WebhookEndpoint').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    description: t.exposeString('description', { nullable: true }),
    enabledEvents: t.exposeStringList('enabled_events'),
    status: t.exposeString('status'),
    secret: t.exposeString('secret', { nullable: true, description: 'Only on create and rotate' }),
    rotatedAt: t.exposeString('rotated_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const DeletedWebhookEndpoint = builder.objectRef<{ id: string; deleted: boolean }>('DeletedWebhookEndpoint').implement({
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
});

const WebhookEndpointStatus = builder.enumType('WebhookEndpointStatus', { values: ['enabled', 'disabled'] as const });

const compact = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));

async function mutate<T>(
  ctx: GraphQLContext,
  name: string,
  target: string | undefined,
  input: unknown,
  idempotencyKey: string | null | undefined,
  effect: (tx: Tx) => Promise<unknown>,
): Promise<T> {
  const out = await runMutation(ctx.deps, ctx.caller, { name, target, input, idempotencyKey: idempotencyKey ?? ctx.idempotencyKey }, async (tx) => ({
    status: 200,
    body: await effect(tx),
  }));
  return out.body as T;
}

const unwrap = (b: unknown) => (b as { webhook_endpoint: PublicWebhookEndpoint }).webhook_endpoint;

builder.queryField('webhookEndpoints', (t) =>
  t.field({
    type: [WebhookEndpoint],
    description: 'Webhook endpoints, newest first (scope webhooks:read)',
    authScopes: { scope: 'webhooks:read' },
    args: { limit: t.arg.int(), startingAfter: t.arg.id() },
    resolve: async (_r, a, ctx) =>
      (await listWebhookEndpoints(ctx.deps, ctx.caller.organization.id, compact({ limit: a.limit, starting_after: a.startingAfter }))).data,
  }),
);

builder.queryField('webhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    authScopes: { scope: 'webhooks:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveWebhookEndpoint(ctx.deps, ctx.caller.organization.id, String(a.id)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    authScopes: { scope: 'webhooks:write' },
    args: {
      url: t.arg.string({ required: true }),
      description: t.arg.string(),
      enabledEvents: t.arg.stringList(),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx) => {
      const input = compact({ url: a.url, description: a.description, enabled_events: a.enabledEvents });
      return unwrap(
        await mutate(ctx, 'webhook_endpoints.create', undefined, input, a.idempotencyKey, async (tx) => ({
          webhook_endpoint: await createWebhookEndpoint(ctx.deps, tx, ctx.caller.organization.id, input),
        })),
      );
    },
  }),
);

builder.mutationField('updateWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    authScopes: { scope: 'webhooks:write' },
    args: {
      id: t.arg.id({ required: true }),
      url: t.arg.string(),
      description: t.arg.string(),
      enabledEvents: t.arg.stringList(),
      status: t.arg({ type: WebhookEndpointStatus }),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx) => {
      const id = String(a.id);
      const input = compact({ url: a.url, description: a.description, enabled_events: a.enabledEvents, status: a.status });
      return unwrap(
        await mutate(ctx, 'webhook_endpoints.update', id, input, a.idempotencyKey, async (tx) => ({
          webhook_endpoint: await updateWebhookEndpoint(ctx.deps, tx, ctx.caller.organization.id, id, input),
        })),
      );
    },
  }),
);

builder.mutationField('rotateWebhookEndpointSecret', (t) =>
  t.field({
    type: WebhookEndpoint,
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx) => {
      const id = String(a.id);
      return unwrap(
        await mutate(ctx, 'webhook_endpoints.rotate_secret', id, {}, a.idempotencyKey, async (tx) => ({
          webhook_endpoint: await rotateWebhookEndpointSecret(ctx.deps, tx, ctx.caller.organization.id, id),
        })),
      );
    },
  }),
);

builder.mutationField('deleteWebhookEndpoint', (t) =>
  t.field({
    type: DeletedWebhookEndpoint,
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx) => {
      const id = String(a.id);
      return mutate<{ id: string; deleted: boolean }>(ctx, 'webhook_endpoints.delete', id, null, a.idempotencyKey, (tx) =>
        deleteWebhookEndpoint(ctx.deps, tx, ctx.caller.organization.id, id),
      );
    },
  }),
);
