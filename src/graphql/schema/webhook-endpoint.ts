import { findEndpoint, presentWebhookEndpoint, webhookEndpoints, type PublicWebhookEndpoint } from '../../domain/webhook/endpoint.ts';
import { watchHealthEvents, type PublicWebhookEndpointHealthEvent } from '../../domain/webhook/health-event.ts';
import { webhookEndpointHealth, type PublicWebhookEndpointHealth } from '../../domain/webhook/health.ts';
import type { PublicWebhookEndpointPolicy } from '../../domain/webhook/policy.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import {
  EVENT_TYPE_DOC,
  WebhookEndpointDisabledReason,
  WebhookEndpointHealthEventKind,
  WebhookEndpointOrdering,
  WebhookEndpointStatus,
} from './enums.ts';
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

const WebhookEndpointPolicy = builder.objectRef<PublicWebhookEndpointPolicy>('WebhookEndpointPolicy').implement({
  description: "The endpoint's own delivery policy; a null field is the deployment's setting",
  fields: (t) => ({
    timeoutMs: t.exposeInt('timeout_ms', { nullable: true, description: 'Per attempt' }),
    retrySchedule: t.exposeStringList('retry_schedule', {
      nullable: true,
      description: 'Delay before each retry after the first attempt (e.g. 30s, 5m); its length is the number of retries',
    }),
    maxInFlight: t.exposeInt('max_in_flight', { nullable: true, description: 'Requests in flight at once, per process' }),
    rateLimitPerSecond: t.exposeFloat('rate_limit_per_second', { nullable: true, description: 'Attempts started per second, per process' }),
  }),
});

const WebhookEndpointPolicyInput = builder.inputType('WebhookEndpointPolicyInput', {
  description: 'Overrides of the deployment’s delivery policy; an omitted field is left alone, null restores the deployment’s setting',
  fields: (t) => ({
    timeoutMs: t.int(),
    retrySchedule: t.stringList(),
    maxInFlight: t.int(),
    rateLimitPerSecond: t.float(),
  }),
});

/** REST's policy body from the GraphQL input (omitted stays omitted, null stays null). */
const policyInput = (
  p:
    | { timeoutMs?: number | null; retrySchedule?: string[] | null; maxInFlight?: number | null; rateLimitPerSecond?: number | null }
    | null
    | undefined,
) =>
  p == null
    ? p
    : given({
        timeout_ms: p.timeoutMs,
        retry_schedule: p.retrySchedule,
        max_in_flight: p.maxInFlight,
        rate_limit_per_second: p.rateLimitPerSecond,
      });

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
    policy: t.field({ type: WebhookEndpointPolicy, resolve: (e) => e.policy }),
    ordering: t.expose('ordering', { type: WebhookEndpointOrdering }),
    secret: t.exposeString('secret', { nullable: true, description: 'Only on create and rotate' }),
    rotatedAt: t.exposeString('rotated_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

type Health = PublicWebhookEndpointHealth;
const WebhookHealthWindow = builder.objectRef<Health['last_hour']>('WebhookHealthWindow').implement({
  description: 'Attempts to one endpoint within a window',
  fields: (t) => ({
    attempts: t.exposeInt('attempts', { description: 'Attempts started in the window' }),
    succeeded: t.exposeInt('succeeded', { description: 'Of which answered 2xx' }),
    successRate: t.exposeFloat('success_rate', { nullable: true, description: 'succeeded / attempts (0..1); null without attempts' }),
    p50Ms: t.exposeInt('p50_ms', { nullable: true, description: 'Median attempt duration' }),
    p99Ms: t.exposeInt('p99_ms', { nullable: true, description: '99th percentile attempt duration' }),
  }),
});
const WebhookAttemptFailure = builder.objectRef<NonNullable<Health['last_failure']>>('WebhookAttemptFailure').implement({
  description: 'The latest failed attempt to an endpoint',
  fields: (t) => ({
    at: t.exposeString('at'),
    statusCode: t.exposeInt('status_code', { nullable: true, description: 'Null when no response arrived' }),
    error: t.exposeString('error', { nullable: true }),
  }),
});
const WebhookEndpointHealth = builder.objectRef<Health>('WebhookEndpointHealth').implement({
  description: "An endpoint's recent delivery health, computed when asked",
  fields: (t) => ({
    lastHour: t.field({ type: WebhookHealthWindow, resolve: (h) => h.last_hour }),
    lastDay: t.field({ type: WebhookHealthWindow, resolve: (h) => h.last_day }),
    lastSuccessAt: t.exposeString('last_success_at', { nullable: true }),
    lastFailure: t.field({ type: WebhookAttemptFailure, nullable: true, resolve: (h) => h.last_failure }),
  }),
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
    policy: arg({ type: WebhookEndpointPolicyInput }),
    ordering: arg({ type: WebhookEndpointOrdering }),
  }),
  input: (a) => ({
    input: given({
      url: a.url,
      description: a.description,
      enabled_events: a.enabledEvents,
      filter: filterInput(a.filter),
      policy: policyInput(a.policy),
      ordering: a.ordering,
    }),
  }),
});

mutationAction('updateWebhookEndpoint', webhookEndpoints.update, {
  description: "Change an endpoint's url, description, events, status, policy or ordering (scope webhooks:write)",
  type: WebhookEndpoint,
  args: (arg) => ({
    id: arg.id({ required: true }),
    url: arg.string(),
    description: arg.string(),
    enabledEvents: arg.stringList(),
    filter: arg({ type: WebhookEndpointFilterInput, description: 'null clears it' }),
    status: arg({ type: WebhookEndpointStatus }),
    policy: arg({ type: WebhookEndpointPolicyInput }),
    ordering: arg({ type: WebhookEndpointOrdering }),
  }),
  input: (a) => ({
    params: { id: String(a.id) },
    input: given({
      url: a.url,
      description: a.description,
      enabled_events: a.enabledEvents,
      filter: filterInput(a.filter),
      status: a.status,
      policy: policyInput(a.policy),
      ordering: a.ordering,
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

type HealthEventWithEndpoint = PublicWebhookEndpointHealthEvent & { endpoint: PublicWebhookEndpoint };
const WebhookEndpointHealthEvent = builder.objectRef<HealthEventWithEndpoint>('WebhookEndpointHealthEvent').implement({
  description: 'A health transition of an endpoint: an internal event, never a public one (not in the feed, never delivered)',
  fields: (t) => ({
    id: t.exposeID('id'),
    kind: t.expose('kind', { type: WebhookEndpointHealthEventKind }),
    reason: t.exposeString('reason', { nullable: true, description: 'For DISABLED: manual, gone or failing' }),
    createdAt: t.exposeString('created_at'),
    endpoint: t.field({ type: WebhookEndpoint, description: 'The endpoint as it is after the transition', resolve: (e) => e.endpoint }),
  }),
});

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
          const now = await ctx.deps.db.prisma.webhookEndpoint.findFirst({ where: { id: endpoint.id, organizationId } });
          if (!now) return; // deleted
          yield { ...e, endpoint: presentWebhookEndpoint(now) };
        }
      })();
    },
    resolve: (e) => e,
  }),
);
