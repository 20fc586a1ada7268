import {
  CreateWebhookEndpointInput,
  DeletedWebhookEndpoint as DeletedShape,
  WebhookEndpoint as WebhookEndpointShape,
  findEndpoint,
  presentWebhookEndpoint,
  webhookEndpoints,
  type PublicWebhookEndpoint,
} from '../../domain/webhook/endpoint.ts';
import { WebhookEndpointHealthEvent as HealthEventShape, watchHealthEvents } from '../../domain/webhook/health-event.ts';
import {
  WebhookEndpointHealth as WebhookEndpointHealthShape,
  WebhookHealthWindow,
  webhookEndpointHealth,
  type PublicWebhookEndpointHealth,
} from '../../domain/webhook/health.ts';
import { WebhookEndpointPolicyInput } from '../../domain/webhook/policy.ts';
import { REPLAY_MAX_EVENTS, webhookReplays } from '../../domain/webhook/replay.ts';
import { findEndpointOf } from '../../domain/webhook/store.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { inputType, objectType } from '../derive.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';

const endpoint = WebhookEndpointShape.shape;
objectType('WebhookEndpointFilter', endpoint.filter, {
  description: "Besides enabledEvents: an event is delivered only if it matches every list given (the events feed's filters)",
});
inputType('WebhookEndpointFilterInput', CreateWebhookEndpointInput.shape.filter, {
  description: "An endpoint's filter: brand ids or slugs, subject types (each list 1 to 20 entries, like the events feed)",
});
objectType('WebhookEndpointPolicy', endpoint.policy, {
  description: "The endpoint's own delivery policy; a null field is the deployment's setting",
});
inputType('WebhookEndpointPolicyInput', WebhookEndpointPolicyInput, {
  description: 'Overrides of the deployment’s delivery policy; an omitted field is left alone, null restores the deployment’s setting',
});

/** Webhook endpoints in GraphQL: the same actions as REST, so a key replays identically on both. */
export const WebhookEndpoint = objectType('WebhookEndpoint', WebhookEndpointShape, {
  description: 'A URL that receives signed webhook deliveries of the events it subscribes to',
  interfaces: [Node],
});

type Health = PublicWebhookEndpointHealth;
objectType('WebhookHealthWindow', WebhookHealthWindow, { description: 'Attempts to one endpoint within a window' });
objectType('WebhookAttemptFailure', WebhookEndpointHealthShape.shape.last_failure.unwrap(), {
  description: 'The latest failed attempt to an endpoint',
});
export const WebhookEndpointHealth = objectType('WebhookEndpointHealth', WebhookEndpointHealthShape, {
  description: "An endpoint's recent delivery health, computed when asked",
});

builder.objectFields(WebhookEndpoint, (t) => ({
  health: t.field({
    type: WebhookEndpointHealth,
    description: 'Success rate and latency over the last hour and day, last success and failure (scope webhooks:read)',
    authScopes: { scope: 'webhooks:read' },
    // webhookEndpoint(id) computed it already (the retrieve action); any other endpoint object computes it here, when selected.
    resolve: (e, _a, ctx) => (e as { health?: Health }).health ?? webhookEndpointHealth(ctx.deps.db.prisma, e.id, ctx.deps.clock.now()),
  }),
}));

const DeletedWebhookEndpoint = objectType('DeletedWebhookEndpoint', DeletedShape, { description: 'What deleteWebhookEndpoint answers' });

connectionAction('webhookEndpoints', webhookEndpoints.list, {
  type: WebhookEndpoint,
  description:
    'Webhook endpoints, newest first (scope webhooks:read). Pages backward with first (1..100, default 20) and after; cursors are endpoint ids.',
});

queryAction('webhookEndpoint', webhookEndpoints.retrieve, {
  description: 'One webhook endpoint by we_ id (scope webhooks:read)',
  type: WebhookEndpoint,
});

mutationAction('createWebhookEndpoint', webhookEndpoints.create, {
  description: 'Create an endpoint; the answer carries its signing secret, once (scope webhooks:write)',
  type: WebhookEndpoint,
});

mutationAction('updateWebhookEndpoint', webhookEndpoints.update, {
  description: "Change an endpoint's url, description, events, status, policy or ordering (scope webhooks:write)",
  type: WebhookEndpoint,
});

mutationAction('rotateWebhookEndpointSecret', webhookEndpoints.rotateSecret, {
  description: 'Replace the signing secret; the answer carries the new one, once (scope webhooks:write)',
  type: WebhookEndpoint,
});

mutationAction('deleteWebhookEndpoint', webhookEndpoints.delete, {
  description: 'Delete an endpoint (scope webhooks:write)',
  type: DeletedWebhookEndpoint,
});

mutationAction('replayWebhookEndpoint', webhookReplays.create, {
  description: `Re-send a seq or time range of events to the endpoint (at most ${REPLAY_MAX_EVENTS}); returns the webhook_endpoint.replay operation (scope webhooks:write)`,
  type: Operation,
  // A seq or a time: GraphQL takes either as a string (REST's JSON also takes a number).
  args: (arg) => ({
    until: arg.string({ description: 'The last event replayed: a seq (digits) or an RFC 3339 time; default: the newest event now' }),
  }),
});

mutationAction('cancelWebhookEndpointReplay', webhookReplays.cancel, {
  description: "Cancel the endpoint's live replay; returns the webhook_endpoint.replay_cancel operation (scope webhooks:write)",
  type: Operation,
});

const WebhookEndpointHealthEvent = objectType('WebhookEndpointHealthEvent', HealthEventShape, {
  description: 'A health transition of an endpoint: an internal event, never a public one (not in the feed, never delivered)',
  omit: ['endpoint_id'],
});
builder.objectFields(WebhookEndpointHealthEvent, (t) => ({
  endpoint: t.field({
    type: WebhookEndpoint,
    description: 'The endpoint as it is after the transition',
    resolve: (e) => (e as typeof e & { endpoint: PublicWebhookEndpoint }).endpoint,
  }),
}));

builder.subscriptionField('webhookEndpointHealthChanged', (t) =>
  t.field({
    type: WebhookEndpointHealthEvent,
    description:
      "The endpoint's health transitions from now on (failing started, recovered, disabled with its reason, enabled), with the endpoint after each (scope webhooks:read)",
    authScopes: { scope: webhookEndpoints.retrieve.scope },
    args: {
      id: t.arg.id({ required: true }),
      after: t.arg.string({ description: 'Resume after this health event id (whe_…); omitted: from now on' }),
    },
    subscribe: async (_r, a, ctx) => {
      const organizationId = ctx.caller.organization.id;
      const endpoint = await findEndpoint(ctx.deps.db.prisma, organizationId, String(a.id));
      return (async function* () {
        for await (const e of watchHealthEvents(ctx.deps, endpoint.id, a.after ?? undefined)) {
          const now = await findEndpointOf(ctx.deps.db.prisma, organizationId, endpoint.id);
          if (!now) return; // deleted
          yield { ...e, endpoint: presentWebhookEndpoint(now) };
        }
      })();
    },
    resolve: (e) => e,
  }),
);
