import type { Deps } from '../../src/domain/context.ts';
import { webhookEndpoints } from '../../src/domain/webhook/endpoint.ts';
import { REPLAY_MAX_EVENTS, webhookReplays } from '../../src/domain/webhook/replay.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Webhook endpoints: organization-scoped; the Service-Brand header does not apply. */
export function webhookEndpointRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Webhook endpoints', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, webhookEndpoints.create, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints',
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint (its secret is returned once)',
      description: 'The wrapped endpoint, with `secret`',
      envelope: 'webhook_endpoint',
    }),
    actionRoute(deps, webhookEndpoints.list, {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints, newest first',
      description: 'A page of endpoints (no secrets)',
    }),
    actionRoute(deps, webhookEndpoints.retrieve, {
      ...common,
      method: 'GET',
      path: '/webhook_endpoints/:id',
      operationId: 'retrieveWebhookEndpoint',
      summary: 'Retrieve a webhook endpoint (without its secret)',
      description: 'The wrapped endpoint',
      envelope: 'webhook_endpoint',
    }),
    actionRoute(deps, webhookEndpoints.update, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id',
      operationId: 'updateWebhookEndpoint',
      summary: 'Update a webhook endpoint; omitted fields are left alone',
      description: 'The wrapped endpoint',
      envelope: 'webhook_endpoint',
    }),
    actionRoute(deps, webhookEndpoints.rotateSecret, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/rotate_secret',
      operationId: 'rotateWebhookEndpointSecret',
      summary: 'Install a fresh secret; the previous one stays valid for 24 h',
      description: 'The wrapped endpoint with its new `secret`',
      envelope: 'webhook_endpoint',
    }),
    actionRoute(deps, webhookEndpoints.delete, {
      ...common,
      method: 'DELETE',
      path: '/webhook_endpoints/:id',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint and its secrets (a replayed delete returns the cached response)',
      description: 'Deleted',
    }),
    actionRoute(deps, webhookReplays.create, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/replay',
      operationId: 'replayWebhookEndpoint',
      summary: `Re-send a seq or time range of events to the endpoint (at most ${REPLAY_MAX_EVENTS}), as an operation (webhook_endpoint.replay); one live replay per endpoint`,
      description: 'The wrapped operation doing the replay',
      envelope: 'operation',
    }),
    actionRoute(deps, webhookReplays.cancel, {
      ...common,
      method: 'POST',
      path: '/webhook_endpoints/:id/replay/cancel',
      operationId: 'cancelWebhookEndpointReplay',
      summary: 'Cancel the endpoint’s live replay (control plane): it stops at its next batch and exhausts what it queued',
      description: 'The wrapped cancel operation (webhook_endpoint.replay_cancel)',
      envelope: 'operation',
    }),
  ];
}
