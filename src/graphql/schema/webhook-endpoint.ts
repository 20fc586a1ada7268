import type { GraphQLResolveInfo } from 'graphql';
import {
  listWebhookEndpoints,
  mutateWebhookEndpoint,
  retrieveWebhookEndpoint,
  type PublicWebhookEndpoint,
  type WebhookEndpointMutation,
} from '../../domain/webhook/endpoint.ts';
import { builder } from '../builder.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import { given, listConnection } from '../connection.ts';
import type { GraphQLContext } from '../context.ts';
import { EVENT_TYPE_DOC, WebhookEndpointStatus } from './enums.ts';
import { Node } from './node.ts';

/**
 * Webhook endpoints in GraphQL: the same domain functions and the same
 * idempotent mutation runner as REST, so a key replays identically on both.
 */
export const WebhookEndpoint = builder.objectRef<PublicWebhookEndpoint>('WebhookEndpoint').implement({
  description: 'A URL that receives signed webhook deliveries of the events it subscribes to',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    description: t.exposeString('description', { nullable: true }),
    enabledEvents: t.exposeStringList('enabled_events', { description: `The event types delivered; empty: every one. ${EVENT_TYPE_DOC}` }),
    status: t.expose('status', { type: WebhookEndpointStatus }),
    secret: t.exposeString('secret', { nullable: true, description: 'Only on create and rotate' }),
    rotatedAt: t.exposeString('rotated_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const DeletedWebhookEndpoint = builder.objectRef<{ id: string; deleted: boolean }>('DeletedWebhookEndpoint').implement({
  description: 'What deleteWebhookEndpoint answers',
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
});

async function mutate(ctx: GraphQLContext, info: GraphQLResolveInfo, m: WebhookEndpointMutation, idempotencyKey: string | null | undefined) {
  return (await mutateWebhookEndpoint(ctx.deps, ctx.caller, m, graphqlIdempotencyKey(ctx, info, idempotencyKey))).body;
}

const unwrap = (b: unknown) => (b as { webhook_endpoint: PublicWebhookEndpoint }).webhook_endpoint;

builder.queryField('webhookEndpoints', (t) =>
  t.connection({
    type: WebhookEndpoint,
    description: 'Webhook endpoints, newest first (scope webhooks:read). Pages backward with first (1..100, default 20) and after; cursors are endpoint ids.',
    authScopes: { scope: 'webhooks:read' },
    resolve: (_r, a, ctx) => listConnection(a, (paging) => listWebhookEndpoints(ctx.deps, ctx.caller.organization.id, paging)),
  }),
);

builder.queryField('webhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    description: 'One webhook endpoint by we_ id (scope webhooks:read)',
    authScopes: { scope: 'webhooks:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveWebhookEndpoint(ctx.deps, ctx.caller.organization.id, String(a.id)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    description: 'Create an endpoint; the answer carries its signing secret, once (scope webhooks:write)',
    authScopes: { scope: 'webhooks:write' },
    args: {
      url: t.arg.string({ required: true }),
      description: t.arg.string(),
      enabledEvents: t.arg.stringList(),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx, info) =>
      unwrap(await mutate(ctx, info, { op: 'create', input: given({ url: a.url, description: a.description, enabled_events: a.enabledEvents }) }, a.idempotencyKey)),
  }),
);

builder.mutationField('updateWebhookEndpoint', (t) =>
  t.field({
    type: WebhookEndpoint,
    description: "Change an endpoint's url, description, events or status (scope webhooks:write)",
    authScopes: { scope: 'webhooks:write' },
    args: {
      id: t.arg.id({ required: true }),
      url: t.arg.string(),
      description: t.arg.string(),
      enabledEvents: t.arg.stringList(),
      status: t.arg({ type: WebhookEndpointStatus }),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ url: a.url, description: a.description, enabled_events: a.enabledEvents, status: a.status });
      return unwrap(await mutate(ctx, info, { op: 'update', id: String(a.id), input }, a.idempotencyKey));
    },
  }),
);

builder.mutationField('rotateWebhookEndpointSecret', (t) =>
  t.field({
    type: WebhookEndpoint,
    description: 'Replace the signing secret; the answer carries the new one, once (scope webhooks:write)',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => unwrap(await mutate(ctx, info, { op: 'rotate_secret', id: String(a.id), input: {} }, a.idempotencyKey)),
  }),
);

builder.mutationField('deleteWebhookEndpoint', (t) =>
  t.field({
    type: DeletedWebhookEndpoint,
    description: 'Delete an endpoint (scope webhooks:write)',
    authScopes: { scope: 'webhooks:write' },
    args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => (await mutate(ctx, info, { op: 'delete', id: String(a.id), input: {} }, a.idempotencyKey)) as { id: string; deleted: boolean },
  }),
);
