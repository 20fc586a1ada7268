import {
  DeletedEventDestination as DeletedShape,
  EventDestination as EventDestinationShape,
  eventDestinations,
} from '../../domain/destination/destination.ts';
import { webhookEndpointHealth, type PublicWebhookEndpointHealth } from '../../domain/webhook/health.ts';
import { REPLAY_MAX_EVENTS } from '../../domain/webhook/replay.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';
import { WebhookDelivery } from './webhook-delivery.ts';
import { WebhookEndpointHealth } from './webhook-endpoint.ts';

/**
 * Event destinations in GraphQL: the same actions as REST. Their filter, policy, health and deliveries are the
 * webhook endpoints' types (one engine, one shape).
 */
export const EventDestination = objectType('EventDestination', EventDestinationShape, {
  description: 'A message broker (RabbitMQ, NATS JetStream, Redis Streams) that receives signed messages of the events it subscribes to',
  interfaces: [Node],
});

builder.objectFields(EventDestination, (t) => ({
  health: t.field({
    type: WebhookEndpointHealth,
    description: 'Success rate and latency over the last hour and day, last success and failure (scope webhooks:read)',
    authScopes: { scope: 'webhooks:read' },
    resolve: (e, _a, ctx) =>
      (e as { health?: PublicWebhookEndpointHealth }).health ?? webhookEndpointHealth(ctx.deps.db.prisma, e.id, ctx.deps.clock.now()),
  }),
}));

const DeletedEventDestination = objectType('DeletedEventDestination', DeletedShape, { description: 'What deleteEventDestination answers' });

connectionAction('eventDestinations', eventDestinations.list, {
  type: EventDestination,
  description: 'Event destinations, newest first (scope webhooks:read). Pages backward with first (1..100, default 20) and after.',
});

queryAction('eventDestination', eventDestinations.retrieve, {
  description: 'One event destination by ed_ id (scope webhooks:read)',
  type: EventDestination,
});

mutationAction('createEventDestination', eventDestinations.create, {
  description: 'Create a destination; the answer carries its signing secret, once (scope webhooks:write)',
  type: EventDestination,
});

mutationAction('updateEventDestination', eventDestinations.update, {
  description: "Change a destination's url, settings, events, status, policy or ordering (scope webhooks:write)",
  type: EventDestination,
});

mutationAction('rotateEventDestinationSecret', eventDestinations.rotateSecret, {
  description: 'Replace the signing secret; the answer carries the new one, once (scope webhooks:write)',
  type: EventDestination,
});

mutationAction('deleteEventDestination', eventDestinations.delete, {
  description: 'Delete a destination (scope webhooks:write)',
  type: DeletedEventDestination,
});

mutationAction('replayEventDestination', eventDestinations.replay, {
  description: `Re-send a seq or time range of events to the destination (at most ${REPLAY_MAX_EVENTS}); returns the event_destination.replay operation (scope webhooks:write)`,
  type: Operation,
  args: (arg) => ({
    until: arg.string({ description: 'The last event replayed: a seq (digits) or an RFC 3339 time; default: the newest event now' }),
  }),
});

mutationAction('cancelEventDestinationReplay', eventDestinations.cancelReplay, {
  description: "Cancel the destination's live replay; returns the event_destination.replay_cancel operation (scope webhooks:write)",
  type: Operation,
});

connectionAction('deliveries', eventDestinations.listDeliveries, {
  parent: EventDestination,
  paramsOf: (d) => ({ id: d.id }),
  type: WebhookDelivery,
  description: 'Deliveries newest first with their attempt logs, filtered (scope webhooks:read). Pages with first (1..100) and after.',
});

mutationAction('retryEventDestinationDelivery', eventDestinations.retryDelivery, {
  type: WebhookDelivery,
  description: 'Re-queue a failing or exhausted delivery for an immediate attempt (scope webhooks:write)',
  params: { id: 'destinationId', delivery_id: 'id' },
});
