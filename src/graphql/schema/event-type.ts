import { type PublicEventTypeEntry, eventTypes } from '../../domain/event/catalogue.ts';
import { queryAction } from '../action.ts';
import { builder } from '../builder.ts';

/** The event-type catalogue (src/domain/event/catalogue.ts): the same entries as GET /v1/platform/event_types. */
export const EventCatalogueEntry = builder.objectRef<PublicEventTypeEntry>('EventCatalogueEntry').implement({
  description: 'One public event type: what it means, the JSON Schema of its data, and an example payload',
  fields: (t) => ({
    type: t.exposeString('type', { description: 'The dotted type name, as events carry it' }),
    description: t.exposeString('description'),
    schema: t.field({ type: 'JSON', description: "JSON Schema (draft 2020-12) of the event's data", resolve: (e) => e.schema }),
    example: t.field({ type: 'JSON', description: 'A data payload of this type (it validates against schema)', resolve: (e) => e.example }),
  }),
});

queryAction('eventTypes', eventTypes.list, {
  type: [EventCatalogueEntry],
  description: 'Every public event type, ordered by type (scope events:read)',
  input: () => ({}),
  result: (list) => list.data,
});

queryAction('eventType', eventTypes.retrieve, {
  type: EventCatalogueEntry,
  description: 'One public event type (scope events:read); a legacy program_member.* spelling answers its canonical relationship.* type',
  args: (arg) => ({ type: arg.string({ required: true }) }),
  input: (a) => ({ params: { type: a.type } }),
});
