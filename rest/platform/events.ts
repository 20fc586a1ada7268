import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { ListEventsInput, events } from '../../src/domain/event/event.ts';
import { eventTypes } from '../../src/domain/event/catalogue.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

export function eventRoutes(deps: Deps): RouteDef[] {
  return [
    actionRoute(deps, events.list, {
      method: 'GET',
      path: '/events',
      operationId: 'listEvents',
      summary: 'The event feed: public events in ascending seq',
      tag: 'Events',
      description: 'A page of events, oldest first',
      errors: [400, 401, 403, 404, 429, 503],
      // Documented with the public vocabulary as an enum; validated by the domain (invalid_event_type).
      documentedQuery: ListEventsInput.extend({ type: z.enum(PUBLIC_EVENT_TYPES).optional() }),
    }),
    actionRoute(deps, events.retrieve, {
      method: 'GET',
      path: '/events/:id',
      operationId: 'retrieveEvent',
      summary: 'One public event by evt_ id, once it is sequenced (the same object the feed and webhooks carry)',
      tag: 'Events',
      description: 'The event',
      errors: [400, 401, 403, 404, 429, 503],
    }),
    actionRoute(deps, eventTypes.list, {
      method: 'GET',
      path: '/event_types',
      operationId: 'listEventTypes',
      summary: 'The event-type catalogue: every public type with the JSON Schema of its data and an example, ordered by type (one page)',
      tag: 'Events',
      description: 'Every public event type',
      errors: [400, 401, 403, 429, 503],
    }),
    actionRoute(deps, eventTypes.retrieve, {
      method: 'GET',
      path: '/event_types/:type',
      operationId: 'retrieveEventType',
      summary: 'One public event type; a legacy program_member.* spelling answers its canonical relationship.* type',
      tag: 'Events',
      description: 'The event type',
      errors: [400, 401, 403, 404, 429, 503],
    }),
  ];
}
