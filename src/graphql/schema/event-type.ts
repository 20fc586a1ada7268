import { EventType, eventTypes } from '../../domain/event/catalogue.ts';
import { queryAction } from '../action.ts';
import { objectType } from '../derive.ts';

/** The event-type catalogue (src/domain/event/catalogue.ts): the same entries as GET /v1/platform/event_types. */
export const EventCatalogueEntry = objectType('EventCatalogueEntry', EventType, {
  description: 'One public event type: what it means, the JSON Schema of its data, and an example payload',
});

queryAction('eventTypes', eventTypes.list, {
  type: [EventCatalogueEntry],
  description: 'Every public event type, ordered by type (scope events:read)',
  result: (list) => list.data,
});

queryAction('eventType', eventTypes.retrieve, {
  type: EventCatalogueEntry,
  description: 'One public event type (scope events:read); a legacy program_member.* spelling answers its canonical relationship.* type',
  // Its path parameter is a type name, not an id.
  args: (arg) => ({ type: arg.string({ required: true }) }),
  input: (a) => ({ params: { type: a.type } }),
});
