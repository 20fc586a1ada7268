import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { WebhookEndpoint as WebhookEndpointRow } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { lockOrganization } from '../organization/organization.ts';
import { canonicalEventType, subscriptionCovers } from '../event/types.ts';
import { parseEventFilter, storedEventFilter, type FilterableRow } from '../event/filter.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import { refusedDestination } from './address-guard.ts';
import { exhaustEndpointDeliveries } from './lease.ts';
import { wakeOperations } from '../operation/operation.ts';
import { WebhookEndpointHealth, webhookEndpointHealth } from './health.ts';
import { recordHealthEvents } from './health-event.ts';
import { countEndpoints, deleteEndpoint, endpointsPage, findEndpointOf, insertEndpoint, updateEndpoint } from './store.ts';
import { mergePolicy, presentPolicy, WebhookEndpointPolicy, WebhookEndpointPolicyInput } from './policy.ts';
import { isoTime } from '../shape.ts';

/**
 * Webhook endpoints: organization-scoped (brand selection does not apply).
 * The secret is returned by create and rotate_secret only; after a rotation
 * the previous secret keeps signing for SECRET_OVERLAP_MS.
 */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;
export const DESCRIPTION_MAX = 500;
export const ENABLED_EVENTS_MAX = 100;

/**
 * The two resources the endpoint table holds (ADR 0012): webhook endpoints (`we_`, type `webhook`) and event
 * destinations (`ed_`, a broker type). They share every rule and the one delivery engine; what differs is named here.
 * A row is found by its id, whose prefix says which resource it is; a list reads only its own resource's rows.
 */
export interface EndpointFamily {
  idKind: 'webhookEndpoint' | 'eventDestination';
  /** How messages name one. */
  noun: string;
  /** Its replays' operation subject type and kinds. */
  subjectType: 'webhook_endpoint' | 'event_destination';
  replayKind: string;
  replayCancelKind: string;
  /** Whether its rows are event destinations (type other than `webhook`). */
  destinations: boolean;
}

export const WEBHOOK_ENDPOINTS: EndpointFamily = {
  idKind: 'webhookEndpoint',
  noun: 'webhook endpoint',
  subjectType: 'webhook_endpoint',
  replayKind: 'webhook_endpoint.replay',
  replayCancelKind: 'webhook_endpoint.replay_cancel',
  destinations: false,
};

export const EVENT_DESTINATIONS: EndpointFamily = {
  idKind: 'eventDestination',
  noun: 'event destination',
  subjectType: 'event_destination',
  replayKind: 'event_destination.replay',
  replayCancelKind: 'event_destination.replay_cancel',
  destinations: true,
};

/** The spec's URL rule: the only hosts plain http may name. Whether this server delivers to them is checkDestination's. */
export const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

const url = z
  .string()
  .max(2048)
  .superRefine((raw, ctx) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute URL' });
      return;
    }
    if (u.username || u.password) ctx.addIssue({ code: 'custom', message: 'must not carry credentials' });
    else if (u.protocol === 'https:') return;
    else if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return;
    else ctx.addIssue({ code: 'custom', message: 'must use https (plain http only for localhost, 127.0.0.1 and [::1])' });
  });

export const enabledEvents = z.array(z.string()).max(ENABLED_EVENTS_MAX, `at most ${ENABLED_EVENTS_MAX} entries`);
/** null = no description (create) or clear it (update). */
export const description = z.string().max(DESCRIPTION_MAX, `at most ${DESCRIPTION_MAX} characters`).nullable();

/**
 * Beyond `enabled_events`: the feed's brand and subject-type filters, with the feed's validation (filter.ts) and
 * parameter names under `filter.`; an event reaches the endpoint only if every given list matches. null (update)
 * clears it.
 */
export const filter = z
  .strictObject({
    brands: z.array(z.string()).optional().describe('brand ids or slugs of the organization (stored as ids); only events of these brands'),
    subject_types: z.array(z.string()).optional().describe('only events about these subject types'),
  })
  .nullable();

/**
 * `subject`: deliveries of one subject {type, id} go one at a time in seq order (lease.ts); `none` (the default, as
 * the spec says): in parallel, in any order.
 */
export const WEBHOOK_ENDPOINT_ORDERINGS = ['none', 'subject'] as const;
export const ordering = z.enum(WEBHOOK_ENDPOINT_ORDERINGS);

/** The endpoint's own delivery policy (policy.ts); null clears it. */
export const policy = WebhookEndpointPolicyInput.nullable();

export const CreateWebhookEndpointInput = z.strictObject({
  url,
  description: description.optional(),
  enabled_events: enabledEvents.optional(),
  filter: filter.optional(),
  policy: policy.optional(),
  ordering: ordering.optional(),
});

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
/** Why an endpoint is disabled: its owner disabled it, its receiver answered 410 Gone (Standard Webhooks), or every attempt failed for WEBHOOK_DISABLE_FAILING_AFTER. */
export const WEBHOOK_ENDPOINT_DISABLED_REASONS = ['manual', 'gone', 'failing'] as const;

export const UpdateWebhookEndpointInput = z.strictObject({
  url: url.optional(),
  description: description.optional(),
  enabled_events: enabledEvents.optional(),
  filter: filter.optional(),
  status: z.enum(WEBHOOK_ENDPOINT_STATUSES).optional(),
  policy: policy.optional(),
  ordering: ordering.optional(),
});

/** rotate_secret and delete take no parameters. */
export const NoWebhookEndpointInput = z.strictObject({});

/** What an endpoint and a destination show alike (each adds its id, object, url and type's fields). */
export const EndpointCommon = {
  description: z.string().nullable(),
  enabled_events: z.array(z.string()).describe('empty = every public event type'),
  filter: z
    .object({
      brands: z.array(z.string()).nullable().describe('brand ids; null = every brand (and organization-level events)'),
      subject_types: z.array(z.string()).nullable().describe('null = every subject type'),
    })
    .describe('besides enabled_events: an event is delivered only if it matches every list given'),
  status: z.enum(WEBHOOK_ENDPOINT_STATUSES),
  disabled_reason: z
    .enum(WEBHOOK_ENDPOINT_DISABLED_REASONS)
    .nullable()
    .describe(
      'why it is disabled: manual (through the API), gone (the receiver answered 410 Gone) or failing (every attempt failed for WEBHOOK_DISABLE_FAILING_AFTER, default 5 days); null while enabled',
    ),
  failing_since: isoTime.nullable().describe('since when every attempt has failed; null after a success (or while nothing was sent)'),
  policy: WebhookEndpointPolicy,
  ordering: ordering.describe('subject: deliveries of one subject go one at a time in seq order; none: in parallel, any order'),
  secret: z.string().optional().describe('whsec_...; only in create and rotate_secret responses'),
  rotated_at: isoTime.nullable(),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
};

/** A webhook endpoint as both fronts show it. */
export const WebhookEndpoint = z.object({
  id: z.string().describe('prefix we_'),
  object: z.literal('webhook_endpoint'),
  url: z.string(),
  ...EndpointCommon,
});
export type PublicWebhookEndpoint = z.output<typeof WebhookEndpoint>;
/** What retrieve answers: the endpoint and its health summary (health.ts), computed for one endpoint, never for a list page. */
export const WebhookEndpointWithHealth = WebhookEndpoint.extend({ health: WebhookEndpointHealth });
export const DeletedWebhookEndpoint = z.object({ id: z.string(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) });

export function presentWebhookEndpoint(row: WebhookEndpointRow, withSecret = false): PublicWebhookEndpoint {
  return { id: row.id, object: 'webhook_endpoint', url: row.url, ...presentCommon(row, withSecret) };
}

/** The fields EndpointCommon declares, of either resource's row. */
export function presentCommon(row: WebhookEndpointRow, withSecret: boolean) {
  return {
    description: row.description,
    enabled_events: row.enabledEvents,
    filter: { brands: storedFilter(row).brands ?? null, subject_types: storedFilter(row).subject_types ?? null },
    status: row.status as PublicWebhookEndpoint['status'],
    disabled_reason: (row.disabledReason as PublicWebhookEndpoint['disabled_reason']) ?? null,
    failing_since: row.failingSince?.toISOString() ?? null,
    policy: presentPolicy(row.policy),
    ordering: row.ordering as PublicWebhookEndpoint['ordering'],
    ...(withSecret ? { secret: row.secret } : {}),
    rotated_at: row.rotatedAt?.toISOString() ?? null,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Standard Webhooks secret form: `whsec_` + base64 of 32 random bytes. */
export const generateWebhookSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The deployment's network policy on top of the URL rule: a URL the delivery
 * guard would refuse from its text alone (a loopback host while loopback
 * delivery is off, a private or special literal address) is refused here, so
 * the tenant learns it now rather than from failed attempts.
 */
function checkDestination(deps: Deps, url: string): void {
  const reason = refusedDestination(deps.config.webhook, new URL(url));
  if (reason) throw new DomainError('invalid_request', `Invalid url: ${reason}`, 'url');
}

/** Public types or legacy spellings, deduplicated; any other entry is invalid_event_type naming every offender. */
export function checkEventTypes(entries: string[] | undefined, param = 'enabled_events'): string[] | undefined {
  if (!entries) return undefined;
  const offenders = [...new Set(entries.filter((e) => !canonicalEventType(e)))];
  if (offenders.length) {
    throw new DomainError('invalid_event_type', `Unknown event type(s): ${offenders.join(', ')}`, param);
  }
  return [...new Set(entries)];
}

/** An endpoint's stored filter (`filter` column): brand ids and subject types, either absent. */
export interface EndpointFilter {
  brands?: string[];
  subject_types?: string[];
}
const storedFilter = (row: Pick<WebhookEndpointRow, 'filter'>): EndpointFilter => (row.filter ?? {}) as EndpointFilter;

/** The filter as stored: its lists validated and normalized like the feed's (brands as ids), null when none is given. */
async function checkFilter(deps: Deps, tx: Tx, organizationId: string, input: z.output<typeof filter> | undefined) {
  if (input === undefined) return undefined;
  if (input === null) return Prisma.DbNull;
  const f = await parseEventFilter(deps, organizationId, input, FILTER_PARAMS, tx);
  const stored: EndpointFilter = {
    ...(f.brands ? { brands: [...f.brands] } : {}),
    ...(f.subjectTypes ? { subject_types: [...f.subjectTypes] } : {}),
  };
  return Object.keys(stored).length ? (stored as Prisma.InputJsonObject) : Prisma.DbNull;
}
const FILTER_PARAMS = { brands: 'filter.brands', subjectTypes: 'filter.subject_types', subjectId: 'filter.subject_id' };

/**
 * Which events an endpoint receives (fan-out and replay alike): those its `enabled_events` cover and its filter
 * matches (every given list). Built once per endpoint, applied to many events.
 */
export function endpointMatcher(endpoint: Pick<WebhookEndpointRow, 'enabledEvents' | 'filter'>): (event: FilterableRow) => boolean {
  const f = storedFilter(endpoint);
  const matcher = f.brands || f.subject_types ? storedEventFilter(f.brands, f.subject_types) : undefined;
  return (event) => subscriptionCovers(endpoint.enabledEvents, event.type) && (!matcher || matcher.matches(event));
}

/** What both resources' create and update take alike. */
export type EndpointSettings = Partial<
  Pick<z.output<typeof CreateWebhookEndpointInput>, 'description' | 'enabled_events' | 'filter' | 'policy' | 'ordering'>
>;

/** Where a new row sends: a webhook's URL, or a destination's type, masked URL, settings and encrypted credentials. */
export type EndpointTarget = Pick<Prisma.WebhookEndpointUncheckedCreateInput, 'id' | 'url' | 'type' | 'config' | 'urlCiphertext'>;

/**
 * Inserts an endpoint or a destination under the organization's cap, which counts both (one cap on everywhere its
 * events are sent), with its fresh signing secret.
 */
export async function insertEndpointUnderCap(deps: Deps, tx: Tx, organizationId: string, target: EndpointTarget, input: EndpointSettings) {
  const events = checkEventTypes(input.enabled_events) ?? [];
  const matching = await checkFilter(deps, tx, organizationId, input.filter);
  const policy = input.policy ? mergePolicy(deps.config.webhook, null, input.policy) : null;
  await lockOrganization(tx, organizationId);
  const cap = deps.config.organizationCaps.webhookEndpoints;
  if ((await countEndpoints(tx, organizationId)) >= cap) {
    throw new DomainError(
      'webhook_endpoint_limit_reached',
      `This organization already has ${cap} webhook endpoints and event destinations, its limit: delete one before creating another`,
    );
  }
  const now = deps.clock.now();
  return insertEndpoint(tx, {
    ...target,
    organizationId,
    description: input.description ?? null,
    enabledEvents: events,
    ...(matching !== undefined ? { filter: matching } : {}),
    policy: policy ?? Prisma.DbNull,
    ordering: input.ordering ?? 'none',
    secret: generateWebhookSecret(),
    createdAt: now,
    updatedAt: now,
  });
}

async function createWebhookEndpoint(deps: Deps, tx: Tx, organizationId: string, input: z.output<typeof CreateWebhookEndpointInput>) {
  checkDestination(deps, input.url);
  const row = await insertEndpointUnderCap(deps, tx, organizationId, { id: newId('webhookEndpoint'), url: input.url }, input);
  return presentWebhookEndpoint(row, true);
}

export async function findEndpoint(
  db: Reader,
  organizationId: string,
  id: string,
  param: string | null = null,
  family = WEBHOOK_ENDPOINTS,
) {
  const row = isId(family.idKind, id) ? await findEndpointOf(db, organizationId, id) : null;
  if (!row) throw missing(family.noun, id, param);
  return row;
}

/**
 * Applies an update of either resource: the settings both share, `status` (with its reason and health event), and
 * `target` (what the resource itself validated: a URL, a destination's settings).
 */
export async function updateEndpointRow(
  deps: Deps,
  tx: Tx,
  row: WebhookEndpointRow,
  input: EndpointSettings & { status?: (typeof WEBHOOK_ENDPOINT_STATUSES)[number] },
  target: Prisma.WebhookEndpointUncheckedUpdateInput,
) {
  const events = checkEventTypes(input.enabled_events);
  const matching = await checkFilter(deps, tx, row.organizationId, input.filter);
  const policy = input.policy !== undefined ? mergePolicy(deps.config.webhook, row.policy, input.policy) : undefined;
  const updated = await updateEndpoint(tx, row.id, {
    ...target,
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(events !== undefined ? { enabledEvents: events } : {}),
    ...(matching !== undefined ? { filter: matching } : {}),
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(policy !== undefined ? { policy: policy ?? Prisma.DbNull } : {}),
    ...(input.ordering !== undefined ? { ordering: input.ordering } : {}),
    // Enabling clears the reason and starts the failure clock afresh; disabling an enabled endpoint records the owner's hand (an endpoint the receiver
    // retired with 410 Gone keeps `gone` if it is "disabled" again).
    ...(input.status === 'enabled' ? { disabledReason: null, failingSince: null } : {}),
    ...(input.status === 'disabled' && row.status === 'enabled' ? { disabledReason: 'manual' } : {}),
    updatedAt: deps.clock.now(),
  });
  if (input.status === 'disabled') await exhaustEndpointDeliveries(deps, tx, row.id);
  if (input.status !== undefined && input.status !== row.status)
    await recordHealthEvents(tx, deps.clock.now(), [
      { endpointId: row.id, kind: input.status, reason: input.status === 'disabled' ? updated.disabledReason : null },
    ]);
  return updated;
}

async function updateWebhookEndpoint(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  id: string,
  input: z.output<typeof UpdateWebhookEndpointInput>,
) {
  const row = await findEndpoint(tx, organizationId, id);
  if (input.url !== undefined) checkDestination(deps, input.url);
  return presentWebhookEndpoint(await updateEndpointRow(deps, tx, row, input, input.url !== undefined ? { url: input.url } : {}));
}

/** Installs a fresh secret; the one it replaces keeps signing for 24 h (an older previous one is dropped). */
export async function rotateEndpointSecret(deps: Deps, tx: Tx, organizationId: string, id: string, family = WEBHOOK_ENDPOINTS) {
  const row = await findEndpoint(tx, organizationId, id, null, family);
  const now = deps.clock.now();
  return updateEndpoint(tx, row.id, {
    secret: generateWebhookSecret(),
    previousSecret: row.secret,
    previousSecretExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
    rotatedAt: now,
    updatedAt: now,
  });
}

/** Hard delete: the row and both secrets are gone, with its deliveries: a replay waiting on them has none left. */
export async function deleteEndpointRow(deps: Deps, tx: Tx, organizationId: string, id: string, family = WEBHOOK_ENDPOINTS) {
  const row = await findEndpoint(tx, organizationId, id, null, family);
  await deleteEndpoint(tx, row.id);
  await wakeOperations(deps, tx, { subjectType: family.subjectType, subjectId: row.id, waitingReason: 'awaiting_deliveries' });
  return row;
}

/**
 * The webhook-endpoint actions (src/domain/action/action.ts), one declaration
 * each for REST and GraphQL.
 */
export const webhookEndpoints = capability({ name: 'webhook_endpoints', title: 'Webhook endpoints', resource: 'webhooks' })({
  create: mutation({
    summary: 'Create a webhook endpoint (its secret is returned once)',
    input: CreateWebhookEndpointInput,
    output: WebhookEndpoint,
    outcome: 'created',
    revealsSecret: ['secret'],
    run: ({ deps, caller, input, db }) => createWebhookEndpoint(deps, db, caller.organization.id, input),
  }),
  /** Newest first, paged backward by creation time (ids are time-ordered). */
  list: read({
    summary: 'List webhook endpoints, newest first',
    input: ListInput,
    output: listOf(WebhookEndpoint),
    run: async ({ caller, input, db }) => {
      const organizationId = caller.organization.id;
      const page = await newestFirst(
        input,
        (id, param) => findEndpoint(db, organizationId, id, param),
        (below, take) => endpointsPage(db, organizationId, false, below, take),
      );
      return { ...page, data: page.data.map((r) => presentWebhookEndpoint(r)) };
    },
  }),
  retrieve: read({
    summary: 'Retrieve a webhook endpoint (without its secret)',
    params: ['id'],
    retrieves: 'webhookEndpoint',
    input: NoWebhookEndpointInput,
    output: WebhookEndpointWithHealth,
    run: async ({ deps, caller, params, db }) => {
      const row = await findEndpoint(db, caller.organization.id, params.id);
      return { ...presentWebhookEndpoint(row), health: await webhookEndpointHealth(db, row.id, deps.clock.now()) };
    },
  }),
  update: mutation({
    summary: 'Update a webhook endpoint; omitted fields are left alone',
    params: ['id'],
    input: UpdateWebhookEndpointInput,
    output: WebhookEndpoint,
    outcome: 'ok',
    run: ({ deps, caller, params, input, db }) => updateWebhookEndpoint(deps, db, caller.organization.id, params.id, input),
  }),
  rotateSecret: mutation({
    summary: 'Install a fresh secret; the previous one stays valid for 24 h',
    params: ['id'],
    input: NoWebhookEndpointInput,
    output: WebhookEndpoint,
    outcome: 'ok',
    revealsSecret: ['secret'],
    run: async ({ deps, caller, params, db }) =>
      presentWebhookEndpoint(await rotateEndpointSecret(deps, db, caller.organization.id, params.id), true),
  }),
  delete: mutation({
    summary: 'Delete a webhook endpoint and its secrets (a replayed delete returns the cached response)',
    params: ['id'],
    input: NoWebhookEndpointInput,
    output: DeletedWebhookEndpoint,
    outcome: 'ok',
    run: async ({ deps, caller, params, db }) => {
      const row = await deleteEndpointRow(deps, db, caller.organization.id, params.id);
      return { id: row.id, object: 'webhook_endpoint' as const, deleted: true as const };
    },
  }),
});

/** The secrets a delivery signs with right now: current first, then the previous one inside its overlap window. */
export function signingSecrets(row: WebhookEndpointRow, now: Date): string[] {
  const out = [row.secret];
  if (row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now) out.push(row.previousSecret);
  return out;
}
