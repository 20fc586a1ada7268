import { webhookEndpoints, type PublicWebhookEndpoint } from '../../domain/webhook/endpoint.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { EVENT_TYPE_DOC, WebhookEndpointDisabledReason, WebhookEndpointStatus } from './enums.ts';
import { Node } from './node.ts';
import { Operation } from './operation.ts';
import { REPLAY_MAX_EVENTS, webhookReplays } from '../../domain/webhook/replay.ts';

const WebhookEndpointFilter = builder.objectRef<PublicWebhookEndpoint['filter']>('WebhookEndpointFilter').implement({
  description: "Besides enabledEvents: an event is delivered only if it matches every list given (the events feed's filters)",
  fields: (t) => ({
    brands: t.exposeStringList('brands', { nullable: true, description: 'Brand ids; null: every brand and organization-level events' }),
    subjectTypes: t.exposeStringList('subject_types', { nullable: true }),
  }),
});

const WebhookEndpointFilterInput = builder.inputType('WebhookEndpointFilterInput', {
  description: "An endpoint's filter: brand ids or slugs, subject types (each list 1 to 20 entries, like the events feed)",
  fields: (t) => ({ brands: t.stringList(), subjectTypes: t.stringList() }),
});
const filterInput = (f: { brands?: string[] | null; subjectTypes?: string[] | null } | null | undefined) =>
  f == null ? f : given({ brands: f.brands ?? undefined, subject_types: f.subjectTypes ?? undefined });

/** Webhook endpoints in GraphQL: the same actions as REST, so a key replays identically on both. */
export const WebhookEndpoint = builder.objectRef<PublicWebhookEndpoint>('WebhookEndpoint').implement({
  description: 'A URL that receives signed webhook deliveries of the events it subscribes to',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    description: t.exposeString('description', { nullable: true }),
    enabledEvents: t.exposeStringList('enabled_events', { description: `The event types delivered; empty: every one. ${EVENT_TYPE_DOC}` }),
    filter: t.field({ type: WebhookEndpointFilter, resolve: (e) => e.filter }),
    status: t.expose('status', { type: WebhookEndpointStatus }),
    disabledReason: t.expose('disabled_reason', { type: WebhookEndpointDisabledReason, nullable: true }),
    failingSince: t.exposeString('failing_since', {
      nullable: true,
      description: 'Since when every attempt has failed; null after a success',
    }),
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

connectionAction('webhookEndpoints', webhookEndpoints.list, {
  type: WebhookEndpoint,
  description:
    'Webhook endpoints, newest first (scope webhooks:read). Pages backward with first (1..100, default 20) and after; cursors are endpoint ids.',
  input: () => ({}),
});

queryAction('webhookEndpoint', webhookEndpoints.retrieve, {
  description: 'One webhook endpoint by we_ id (scope webhooks:read)',
  type: WebhookEndpoint,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createWebhookEndpoint', webhookEndpoints.create, {
  description: 'Create an endpoint; the answer carries its signing secret, once (scope webhooks:write)',
  type: WebhookEndpoint,
  args: (arg) => ({
    url: arg.string({ required: true }),
    description: arg.string(),
    enabledEvents: arg.stringList(),
    filter: arg({ type: WebhookEndpointFilterInput }),
  }),
  input: (a) => ({
    input: given({ url: a.url, description: a.description, enabled_events: a.enabledEvents, filter: filterInput(a.filter) }),
  }),
});

mutationAction('updateWebhookEndpoint', webhookEndpoints.update, {
  description: "Change an endpoint's url, description, events or status (scope webhooks:write)",
  type: WebhookEndpoint,
  args: (arg) => ({
    id: arg.id({ required: true }),
    url: arg.string(),
    description: arg.string(),
    enabledEvents: arg.stringList(),
    filter: arg({ type: WebhookEndpointFilterInput, description: 'null clears it' }),
    status: arg({ type: WebhookEndpointStatus }),
  }),
  input: (a) => ({
    params: { id: String(a.id) },
    input: given({
      url: a.url,
      description: a.description,
      enabled_events: a.enabledEvents,
      filter: filterInput(a.filter),
      status: a.status,
    }),
  }),
});

mutationAction('rotateWebhookEndpointSecret', webhookEndpoints.rotateSecret, {
  description: 'Replace the signing secret; the answer carries the new one, once (scope webhooks:write)',
  type: WebhookEndpoint,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});

mutationAction('deleteWebhookEndpoint', webhookEndpoints.delete, {
  description: 'Delete an endpoint (scope webhooks:write)',
  type: DeletedWebhookEndpoint,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});

mutationAction('replayWebhookEndpoint', webhookReplays.create, {
  description: `Re-send a seq or time range of events to the endpoint (at most ${REPLAY_MAX_EVENTS}); returns the webhook_endpoint.replay operation (scope webhooks:write)`,
  type: Operation,
  args: (arg) => ({
    id: arg.id({ required: true }),
    startingAfter: arg.int({ description: 'Replay the events after this seq; or give since' }),
    since: arg.string({ description: 'Replay the events appended at or after this RFC 3339 time; or give startingAfter' }),
    until: arg.string({ description: 'The last event replayed: a seq (digits) or an RFC 3339 time; default: the newest event now' }),
    types: arg.stringList({ description: `Only these types. ${EVENT_TYPE_DOC}` }),
    onlyFailed: arg.boolean({ description: 'Skip events the endpoint already has a succeeded or still-scheduled delivery of' }),
  }),
  input: (a) => ({
    params: { id: String(a.id) },
    input: given({ starting_after: a.startingAfter, since: a.since, until: a.until, types: a.types, only_failed: a.onlyFailed }),
  }),
});

mutationAction('cancelWebhookEndpointReplay', webhookReplays.cancel, {
  description: "Cancel the endpoint's live replay; returns the webhook_endpoint.replay_cancel operation (scope webhooks:write)",
  type: Operation,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) }, input: {} }),
});
