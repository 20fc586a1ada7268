import { ListInput } from '../../domain/action/list.ts';
import { Event as EventShape, cursorSeq, events, feedPage } from '../../domain/event/event.ts';
import { Operation as OperationShape } from '../../domain/operation/presenter.ts';
import { GRAPHQL_PARAMS, MAX_FILTER_ENTRIES, parseEventFilter } from '../../domain/event/filter.ts';
import type { ArgBuilder } from '@pothos/core';
import { builder } from '../builder.ts';
import { objectType } from '../derive.ts';
import { queryAction } from '../action.ts';
import { listConnection, type Paging } from '../connection.ts';
import { parseInput } from '../../domain/validation.ts';
import { lastEventId } from '../sse.ts';
import { EVENT_TYPE_DOC } from './enums.ts';
import { Node } from './node.ts';

/** The event log: feed as a connection, one event by id, and the live stream. */
export const EventSubject = objectType('EventSubject', EventShape.shape.subject, {
  description: 'What an event (or an operation) is about',
  sameAs: [OperationShape.shape.subject],
});

export const Event = objectType('Event', EventShape, {
  description: 'One entry of the event log, in seq order',
  interfaces: [Node],
});

/** The brand and subject filters (src/domain/event/filter.ts), the same on the feed query and the subscription. */
type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
const filterArgs = (arg: ArgBuilder<Types>) => ({
  brands: arg.stringList({
    description: `Only events of these brands (ids or slugs, at most ${MAX_FILTER_ENTRIES}); organization-level events never match`,
  }),
  subjectTypes: arg.stringList({ description: `Only events whose subject has one of these types (at most ${MAX_FILTER_ENTRIES})` }),
  subjectId: arg.string({ description: 'Only events about this subject id' }),
});

builder.queryField('events', (t) =>
  t.connection({
    type: Event,
    description:
      'The event feed in ascending seq (scope events:read). Cursors are seq numbers. first/after page forward; last/before page backward from the newest event (REST order=desc): events(last: 1) is the head of the feed, the seq to resume after.',
    authScopes: { scope: 'events:read' },
    args: { type: t.arg.string({ description: `Only events of this type. ${EVENT_TYPE_DOC}` }), ...filterArgs(t.arg) },
    resolve: (_root, args, ctx) => {
      const filter = { type: args.type, brands: args.brands, subject_types: args.subjectTypes, subject_id: args.subjectId };
      const page = ({ reversed, ...paging }: Paging) =>
        feedPage(
          ctx.deps,
          ctx.caller.organization.id,
          { ...parseInput(ListInput, paging), order: reversed ? 'desc' : 'asc' },
          filter,
          GRAPHQL_PARAMS,
        );
      return listConnection(args, page, (e) => String(e.seq), {}, true);
    },
  }),
);

queryAction('event', events.retrieve, {
  description: 'One event by evt_ id (scope events:read)',
  type: Event,
});

builder.subscriptionType({});

builder.subscriptionField('events', (t) =>
  t.field({
    type: Event,
    description:
      'Live events of the organization in seq order (scope events:read). With startingAfter, replays the feed after that seq first, with no gap or duplicate at the seam.',
    authScopes: { scope: 'events:read' },
    args: {
      types: t.arg.stringList({ description: `Only events of these types. ${EVENT_TYPE_DOC}` }),
      ...filterArgs(t.arg),
      startingAfter: t.arg.string({ description: 'A seq number or an evt_ id' }),
    },
    subscribe: async (_root, args, ctx) => {
      const org = ctx.caller.organization.id;
      const filter = await parseEventFilter(
        ctx.deps,
        org,
        { types: args.types, brands: args.brands, subject_types: args.subjectTypes, subject_id: args.subjectId },
        GRAPHQL_PARAMS,
      );
      // An SSE reconnect's Last-Event-ID is where the client really is: it wins over the startingAfter it first sent.
      const resumeAt = lastEventId(ctx.lastEventId);
      ctx.streamCursor = {};
      const startingAfter = resumeAt ?? (args.startingAfter == null ? undefined : await cursorSeq(ctx.deps, org, args.startingAfter));
      const live = ctx.live; // graphql-ws: events rendered once per group of alike subscribers, written to the socket (src/graphql/live.ts)
      if (!live) return ctx.stream.subscribe(org, { filter, startingAfter });
      return (live.source = ctx.stream.subscribe(org, { filter, startingAfter, view: live.view, sink: live.sink, until: live.until }));
    },
    resolve: (e, _args, ctx) => {
      if (ctx.streamCursor) ctx.streamCursor.seq = String(e.seq); // the SSE `id:` of this result (src/graphql/sse.ts)
      return e;
    },
  }),
);
