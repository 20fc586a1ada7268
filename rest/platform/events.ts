import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { ListEventsInput, listEvents } from '../../src/domain/event/event.ts';
import type { RouteDef } from '../http/route.ts';
import { callerWith, platformQuery } from './pipeline.ts';
import { EventList } from './schemas.ts';

export function eventRoutes(deps: Deps): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/events',
      operationId: 'listEvents',
      summary: 'The event feed: public events in ascending seq',
      tag: 'Events',
      auth: 'platform',
      scope: 'events:read',
      // Documented with the public vocabulary as an enum; validated by the domain (invalid_event_type).
      query: ListEventsInput.extend({ type: z.enum(PUBLIC_EVENT_TYPES).optional() }),
      success: { status: 200, description: 'A page of events, oldest first', schema: EventList },
      errors: [400, 401, 403, 404, 429, 503],
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'events:read');
        ctx.body = await listEvents(deps, caller.organization.id, platformQuery(ctx));
      },
    },
  ];
}
