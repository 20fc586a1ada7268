import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { WebhookEndpoint } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { canonicalEventType } from '../event/types.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import { runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';
import { refusedDestination } from './address-guard.ts';
import { exhaustEndpointDeliveries } from './lease.ts';
import { listLimit } from '../platform/rate-limit.ts';

/**
 * Webhook endpoints: organization-scoped (brand selection does not apply).
 * The secret is returned by create and rotate_secret only; after a rotation
 * the previous secret keeps signing for SECRET_OVERLAP_MS.
 */
export const SECRET_OVERLAP_MS = 24 * 3600 * 1000;
export const DESCRIPTION_MAX = 500;
export const ENABLED_EVENTS_MAX = 100;

/** The spec's URL rule: the only hosts plain http may name. Whether this server delivers to them is checkDestination's. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

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

const enabledEvents = z.array(z.string()).max(ENABLED_EVENTS_MAX, `at most ${ENABLED_EVENTS_MAX} entries`);
/** null = no description (create) or clear it (update). */
const description = z.string().max(DESCRIPTION_MAX, `at most ${DESCRIPTION_MAX} characters`).nullable();

export const CreateWebhookEndpointInput = z.strictObject({
  url,
  description: description.optional(),
  enabled_events: enabledEvents.optional(),
});

export const WEBHOOK_ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;

export const UpdateWebhookEndpointInput = z.strictObject({
  url: url.optional(),
  description: description.optional(),
  enabled_events: enabledEvents.optional(),
  status: z.enum(WEBHOOK_ENDPOINT_STATUSES).optional(),
});

/** rotate_secret and delete take no parameters. */
export const NoWebhookEndpointInput = z.strictObject({});

export const ListWebhookEndpointsInput = z.strictObject({
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export interface PublicWebhookEndpoint {
  id: string;
  object: 'webhook_endpoint';
  url: string;
  description: string | null;
  enabled_events: string[];
  status: (typeof WEBHOOK_ENDPOINT_STATUSES)[number];
  secret?: string;
  rotated_at: string | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

export function presentWebhookEndpoint(row: WebhookEndpoint, withSecret = false): PublicWebhookEndpoint {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    enabled_events: row.enabledEvents,
    status: row.status as PublicWebhookEndpoint['status'],
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

function checkEventTypes(entries: string[] | undefined): string[] | undefined {
  if (!entries) return undefined;
  const offenders = [...new Set(entries.filter((e) => !canonicalEventType(e)))];
  if (offenders.length) {
    throw new DomainError('invalid_event_type', `Unknown event type(s): ${offenders.join(', ')}`, 'enabled_events');
  }
  return [...new Set(entries)];
}

async function createWebhookEndpoint(deps: Deps, tx: Tx, organizationId: string, raw: unknown) {
  const input = parseInput(CreateWebhookEndpointInput, raw);
  checkDestination(deps, input.url);
  const events = checkEventTypes(input.enabled_events) ?? [];
  const now = deps.clock.now();
  const row = await tx.webhookEndpoint.create({
    data: {
      id: newId('webhookEndpoint'),
      organizationId,
      url: input.url,
      description: input.description ?? null,
      enabledEvents: events,
      secret: generateWebhookSecret(),
      createdAt: now,
      updatedAt: now,
    },
  });
  return presentWebhookEndpoint(row, true);
}

export async function findEndpoint(db: Tx | Deps['db']['prisma'], organizationId: string, id: string, param: string | null = null) {
  const row = isId('webhookEndpoint', id) ? await db.webhookEndpoint.findFirst({ where: { id, organizationId } }) : null;
  if (!row) throw missing('webhook endpoint', id, param);
  return row;
}

export async function retrieveWebhookEndpoint(deps: Deps, organizationId: string, id: string) {
  return presentWebhookEndpoint(await findEndpoint(deps.db.prisma, organizationId, id));
}

/** Newest first, paged backward by creation time (ids are time-ordered). */
export async function listWebhookEndpoints(deps: Deps, organizationId: string, raw: unknown) {
  const input = parseInput(ListWebhookEndpointsInput, raw);
  const cursor = input.starting_after ? await findEndpoint(deps.db.prisma, organizationId, input.starting_after, 'starting_after') : undefined;
  const rows = await deps.db.prisma.webhookEndpoint.findMany({
    where: { organizationId, ...(cursor ? { id: { lt: cursor.id } } : {}) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
  });
  return { object: 'list' as const, data: rows.slice(0, input.limit).map((r) => presentWebhookEndpoint(r)), has_more: rows.length > input.limit };
}

async function updateWebhookEndpoint(deps: Deps, tx: Tx, organizationId: string, id: string, raw: unknown) {
  const row = await findEndpoint(tx, organizationId, id);
  const input = parseInput(UpdateWebhookEndpointInput, raw);
  if (input.url !== undefined) checkDestination(deps, input.url);
  const events = checkEventTypes(input.enabled_events);
  const updated = await tx.webhookEndpoint.update({
    where: { id: row.id },
    data: {
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.description !== undefined ? { description: input.description } : {}),
      ...(events !== undefined ? { enabledEvents: events } : {}),
      ...(input.status !== undefined ? { status: input.status } : {}),
      updatedAt: deps.clock.now(),
    },
  });
  if (input.status === 'disabled') await exhaustEndpointDeliveries(tx, row.id, deps.clock.now());
  return presentWebhookEndpoint(updated);
}

/** Installs a fresh secret; the one it replaces keeps signing for 24 h (an older previous one is dropped). */
async function rotateWebhookEndpointSecret(deps: Deps, tx: Tx, organizationId: string, id: string, raw: unknown) {
  parseInput(NoWebhookEndpointInput, raw);
  const row = await findEndpoint(tx, organizationId, id);
  const now = deps.clock.now();
  const updated = await tx.webhookEndpoint.update({
    where: { id: row.id },
    data: {
      secret: generateWebhookSecret(),
      previousSecret: row.secret,
      previousSecretExpiresAt: new Date(now.getTime() + SECRET_OVERLAP_MS),
      rotatedAt: now,
      updatedAt: now,
    },
  });
  return presentWebhookEndpoint(updated, true);
}

/** Hard delete: the row and both secrets are gone. */
async function deleteWebhookEndpoint(tx: Tx, organizationId: string, id: string, raw: unknown) {
  parseInput(NoWebhookEndpointInput, raw);
  const row = await findEndpoint(tx, organizationId, id);
  await tx.webhookEndpoint.delete({ where: { id: row.id } });
  return { id: row.id, object: 'webhook_endpoint' as const, deleted: true as const };
}

export type WebhookEndpointMutation =
  | { op: 'create'; input: unknown }
  | { op: 'update' | 'rotate_secret' | 'delete'; id: string; input: unknown };

/**
 * Every webhook-endpoint mutation, from REST or GraphQL: idempotency (keyed by
 * the operation, the path id and the input) and the effect in one
 * transaction. The stored response is the REST one (status and wire body),
 * so a key replays identically whichever transport used it first.
 */
export function mutateWebhookEndpoint(
  deps: Deps,
  caller: SurfaceBCaller,
  m: WebhookEndpointMutation,
  idempotencyKey?: string,
): Promise<StoredResponse & { replayed: boolean }> {
  const org = caller.organization.id;
  const id = m.op === 'create' ? undefined : m.id;
  const req = { name: `webhook_endpoints.${m.op}`, target: id, input: m.input, idempotencyKey };
  return runMutation(deps, caller, req, async (tx) => {
    switch (m.op) {
      case 'create':
        return { status: 201, body: { webhook_endpoint: await createWebhookEndpoint(deps, tx, org, m.input) } };
      case 'update':
        return { status: 200, body: { webhook_endpoint: await updateWebhookEndpoint(deps, tx, org, m.id, m.input) } };
      case 'rotate_secret':
        return { status: 200, body: { webhook_endpoint: await rotateWebhookEndpointSecret(deps, tx, org, m.id, m.input) } };
      case 'delete':
        return { status: 200, body: await deleteWebhookEndpoint(tx, org, m.id, m.input) };
    }
  });
}

/** The secrets a delivery signs with right now: current first, then the previous one inside its overlap window. */
export function signingSecrets(row: WebhookEndpoint, now: Date): string[] {
  const out = [row.secret];
  if (row.previousSecret && row.previousSecretExpiresAt && row.previousSecretExpiresAt > now) out.push(row.previousSecret);
  return out;
}
