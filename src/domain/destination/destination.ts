import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import type { WebhookEndpoint as EndpointRow } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { newId } from '../id.ts';
import { capability, mutation, read } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import { decryptSecret, encryptSecret, keyIdOf, UndecryptableSecret, type EncryptionKey } from '../encryption.ts';
import { Operation } from '../operation/operation.ts';
import { refusedDestination } from '../webhook/address-guard.ts';
import { deliveryLog, ListWebhookDeliveriesInput, retryDelivery, RetryWebhookDeliveryInput, WebhookDelivery } from '../webhook/delivery.ts';
import {
  EVENT_DESTINATIONS,
  EndpointCommon,
  LOOPBACK_HOSTS,
  WEBHOOK_ENDPOINT_STATUSES,
  deleteEndpointRow,
  description,
  enabledEvents,
  filter,
  findEndpoint,
  insertEndpointUnderCap,
  ordering,
  policy,
  presentCommon,
  rotateEndpointSecret,
  updateEndpointRow,
} from '../webhook/endpoint.ts';
import { WebhookEndpointHealth, webhookEndpointHealth } from '../webhook/health.ts';
import { cancelReplay, NoReplayInput, REPLAY_MAX_EVENTS, replayEndpoint, ReplayWebhookEndpointInput } from '../webhook/replay.ts';
import { encryptedDestinationsAfter, endpointsPage, replaceCiphertext } from '../webhook/store.ts';
import { DESTINATION_TYPES, unknownPlaceholders, type DestinationTarget, type DestinationType } from './transport.ts';

/**
 * Event destinations (issue 34, ADR 0012): an organization's events published to a message broker instead of
 * POSTed to a URL. A destination is a row of the webhook endpoint table with a broker `type`, so it has everything an
 * endpoint has (subscriptions, filter, ordering, policy, status and health, attempt log, retry, replay, secret
 * rotation) from the same code, and the one delivery engine sends to it through its type's transport (transport.ts).
 * What is its own is declared here: the broker URL (write-only: stored encrypted when it carries credentials, shown
 * masked) and the type's settings (exchange and templates, MAXLEN, a CA certificate).
 */

/** The URL schemes of each type: TLS first; the plain one only for a loopback host (the spec's `http` rule for webhooks). */
const SCHEMES: Record<DestinationType, { tls: string; plain: string }> = {
  rabbitmq: { tls: 'amqps:', plain: 'amqp:' },
  nats: { tls: 'tls:', plain: 'nats:' },
  redis: { tls: 'rediss:', plain: 'redis:' },
};
/** Query parameters that carry a credential: masked and encrypted like the user info. */
const SECRET_PARAM = /pass|secret|token|key|auth|cred/i;
/** Which input key holds each type's template. */
const TEMPLATE_KEY = { rabbitmq: 'routing_key', nats: 'subject', redis: 'stream' } as const;
/** The keys that belong to one type only. */
const TYPE_KEYS: Record<string, DestinationType> = {
  exchange: 'rabbitmq',
  routing_key: 'rabbitmq',
  subject: 'nats',
  stream: 'redis',
  max_len: 'redis',
};
export const DEFAULT_ROUTING_KEY = '{type}';

const url = z
  .string()
  .max(2048)
  .describe(
    'the broker: amqps:// (rabbitmq), tls:// (nats), rediss:// (redis); amqp://, nats:// and redis:// only for localhost, 127.0.0.1 and [::1]. Credentials go in the user info. Write-only: answers show it masked',
  );
const template = z.string().min(1).max(255);
const caCertificate = z
  .string()
  .max(65_536)
  .nullable()
  .describe("PEM certificates the broker's TLS certificate is verified against instead of the system's CAs (verification is never off)");
const typed = {
  exchange: z.string().max(255).describe('rabbitmq: the exchange published to, which must exist (the product declares none); required'),
  routing_key: template.describe('rabbitmq: the routing key, a template over {type}, {event_id} and {destination_id}; default {type}'),
  subject: template.describe('nats: the subject, a template over {type}, {event_id} and {destination_id}; required'),
  stream: template.describe('redis: the stream key, a template over {type}, {event_id} and {destination_id}; required'),
  max_len: z
    .number()
    .int()
    .min(1)
    .max(1_000_000_000)
    .nullable()
    .describe('redis: trims the stream with XADD MAXLEN ~ max_len; null: never'),
};

export const CreateEventDestinationInput = z.strictObject({
  type: z.enum(DESTINATION_TYPES).describe('the broker type'),
  url,
  exchange: typed.exchange.optional(),
  routing_key: typed.routing_key.optional(),
  subject: typed.subject.optional(),
  stream: typed.stream.optional(),
  max_len: typed.max_len.optional(),
  ca_certificate: caCertificate.optional(),
  description: description.optional(),
  enabled_events: enabledEvents.optional(),
  filter: filter.optional(),
  policy: policy.optional(),
  ordering: ordering.optional(),
});

/** The type is fixed at creation; everything else may change. */
export const UpdateEventDestinationInput = CreateEventDestinationInput.omit({ type: true })
  .partial()
  .extend({ status: z.enum(WEBHOOK_ENDPOINT_STATUSES).optional() });
type Settings = Omit<z.output<typeof UpdateEventDestinationInput>, 'status'>;

export const NoEventDestinationInput = z.strictObject({});

export const EventDestination = z.object({
  id: z.string().describe('prefix ed_'),
  object: z.literal('event_destination'),
  type: z.enum(DESTINATION_TYPES),
  url: z.string().describe('the broker URL with its credentials masked (user:***@)'),
  exchange: z.string().nullable().describe('rabbitmq: the exchange; null for other types'),
  routing_key: z.string().nullable().describe('rabbitmq: the routing-key template; null for other types'),
  subject: z.string().nullable().describe('nats: the subject template; null for other types'),
  stream: z.string().nullable().describe('redis: the stream key template; null for other types'),
  max_len: z.number().int().nullable().describe('redis: XADD MAXLEN ~; null: the stream is not trimmed'),
  ca_certificate: z.string().nullable().describe('PEM certificates trusted for the broker instead of the system CAs; null: the system CAs'),
  ...EndpointCommon,
});
export type PublicEventDestination = z.output<typeof EventDestination>;
export const EventDestinationWithHealth = EventDestination.extend({ health: WebhookEndpointHealth });
export const DeletedEventDestination = z.object({ id: z.string(), object: z.literal('event_destination'), deleted: z.literal(true) });

/** The `config` column of a destination. */
interface StoredConfig {
  exchange?: string;
  template: string;
  max_len?: number | null;
  ca_certificate?: string | null;
}
const configOf = (row: { config: unknown }) => (row.config ?? { template: '' }) as unknown as StoredConfig;

export function presentEventDestination(row: EndpointRow, withSecret = false): PublicEventDestination {
  const type = row.type as DestinationType;
  const c = configOf(row);
  return {
    id: row.id,
    object: 'event_destination',
    type,
    url: row.url,
    exchange: type === 'rabbitmq' ? (c.exchange ?? null) : null,
    routing_key: type === 'rabbitmq' ? c.template : null,
    subject: type === 'nats' ? c.template : null,
    stream: type === 'redis' ? c.template : null,
    max_len: type === 'redis' ? (c.max_len ?? null) : null,
    ca_certificate: c.ca_certificate ?? null,
    ...presentCommon(row, withSecret),
  };
}

const invalid = (param: string, message: string) => new DomainError('invalid_request', message, param);

/**
 * The URL as stored: its masked form (`url`, what answers show) and, when it carries credentials (user info, or a
 * query parameter named like one), the whole URL encrypted under the current key, bound to the row.
 */
function storedUrl(deps: Deps, type: DestinationType, raw: string, id: string): { url: string; urlCiphertext: string | null } {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalid('url', 'Invalid url: must be an absolute URL such as amqps://user:password@broker.example:5671/vhost');
  }
  const schemes = SCHEMES[type];
  // Non-special schemes keep the host as written: compare it in lower case.
  const host = u.hostname.toLowerCase();
  if (!host) throw invalid('url', 'Invalid url: it must name the broker host');
  if (u.protocol !== schemes.tls && u.protocol !== schemes.plain)
    throw invalid(
      'url',
      `Invalid url: a ${type} destination takes ${schemes.tls}// (or ${schemes.plain}// for a loopback host), not ${u.protocol}//`,
    );
  if (u.protocol === schemes.plain && !LOOPBACK_HOSTS.has(host))
    throw invalid('url', `Invalid url: must use ${schemes.tls}// (plain ${schemes.plain}// only for localhost, 127.0.0.1 and [::1])`);
  // The address policy reads a host as an https URL shows it (a non-special scheme leaves an IP literal unparsed).
  const asHttps = URL.parse(`https://${u.host.toLowerCase()}`);
  if (!asHttps) throw invalid('url', 'Invalid url: its host is not a host name or address');
  const reason = refusedDestination(deps.config.webhook, asHttps);
  if (reason) throw invalid('url', `Invalid url: ${reason}`);
  const secretParams = [...u.searchParams.keys()].filter((k) => SECRET_PARAM.test(k));
  const credentials = u.username !== '' || u.password !== '' || secretParams.length > 0;
  if (!credentials) return { url: u.href, urlCiphertext: null };
  const urlCiphertext = encryptSecret(deps.config.encryptionKeys, u.href, id, 'url');
  const masked = new URL(u.href);
  if (masked.password) masked.password = '***';
  else if (masked.username) masked.username = '***';
  for (const k of secretParams) masked.searchParams.set(k, '***');
  return { url: masked.href, urlCiphertext };
}

/** A template's unknown placeholders are refused, naming the parameter. */
function checkTemplate(param: string, value: string): void {
  const unknown = unknownPlaceholders(value);
  if (unknown.length)
    throw invalid(
      param,
      `Invalid ${param}: unknown placeholder(s) ${unknown.map((n) => `{${n}}`).join(', ')}; use {type}, {event_id} or {destination_id}`,
    );
}

function checkCertificate(pem: string): void {
  try {
    new X509Certificate(pem);
  } catch {
    throw invalid('ca_certificate', 'Invalid ca_certificate: expected PEM certificates (-----BEGIN CERTIFICATE-----)');
  }
}

/**
 * The type's settings after `input` (create: `before` is null): a key of another type is refused, a required one
 * must be there, a template must name known placeholders only.
 */
function storedConfig(type: DestinationType, input: Settings, before: StoredConfig | null): StoredConfig {
  for (const [key, owner] of Object.entries(TYPE_KEYS))
    if (owner !== type && input[key as keyof Settings] !== undefined) throw invalid(key, `${key} applies to ${owner} destinations only`);
  const templateKey = TEMPLATE_KEY[type];
  const template = input[templateKey] ?? before?.template ?? (type === 'rabbitmq' ? DEFAULT_ROUTING_KEY : undefined);
  if (template === undefined) throw invalid(templateKey, `A ${type} destination needs ${templateKey}`);
  checkTemplate(templateKey, template);
  const exchange = input.exchange ?? before?.exchange;
  if (type === 'rabbitmq' && exchange === undefined) throw invalid('exchange', 'A rabbitmq destination needs exchange');
  if (input.ca_certificate) checkCertificate(input.ca_certificate);
  const caCertificate = input.ca_certificate !== undefined ? input.ca_certificate : (before?.ca_certificate ?? null);
  const maxLen = input.max_len !== undefined ? input.max_len : (before?.max_len ?? null);
  return {
    ...(type === 'rabbitmq' ? { exchange } : {}),
    template,
    ...(type === 'redis' ? { max_len: maxLen } : {}),
    ca_certificate: caCertificate,
  };
}

async function createEventDestination(deps: Deps, tx: Tx, organizationId: string, input: z.output<typeof CreateEventDestinationInput>) {
  const id = newId('eventDestination');
  const config = storedConfig(input.type, input, null);
  const target = {
    id,
    type: input.type,
    config: config as unknown as Prisma.InputJsonObject,
    ...storedUrl(deps, input.type, input.url, id),
  };
  return presentEventDestination(await insertEndpointUnderCap(deps, tx, organizationId, target, input), true);
}

async function updateEventDestination(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  id: string,
  input: z.output<typeof UpdateEventDestinationInput>,
) {
  const row = await findEndpoint(tx, organizationId, id, null, EVENT_DESTINATIONS);
  const type = row.type as DestinationType;
  const config = storedConfig(type, input, configOf(row));
  const target = {
    config: config as unknown as Prisma.InputJsonObject,
    ...(input.url !== undefined ? storedUrl(deps, type, input.url, row.id) : {}),
  };
  return presentEventDestination(await updateEndpointRow(deps, tx, row, input, target));
}

/**
 * Where the engine publishes one of a destination's deliveries: its settings and its URL, decrypted (throws
 * UndecryptableSecret when its key is not configured: the attempt fails with that reason, never the URL).
 */
export function destinationTarget(
  keys: readonly EncryptionKey[] | undefined,
  row: { id: string; type: string; url: string; urlCiphertext: string | null; config: unknown },
): DestinationTarget {
  const c = configOf(row);
  return {
    id: row.id,
    type: row.type as DestinationType,
    url: row.urlCiphertext ? decryptSecret(keys, row.urlCiphertext, row.id) : row.url,
    caCertificate: c.ca_certificate ?? null,
    ...(c.exchange !== undefined ? { exchange: c.exchange } : {}),
    template: c.template,
    ...(row.type === 'redis' ? { maxLen: c.max_len ?? null } : {}),
  };
}

/**
 * The event-destination actions: the webhook endpoints' rules and engine (src/domain/webhook/) on the destination
 * rows, declared once here for every front.
 */
export const eventDestinations = capability({ name: 'event_destinations', title: 'Event destinations', resource: 'webhooks' })({
  create: mutation({
    summary: 'Create an event destination on a RabbitMQ, NATS JetStream or Redis Streams broker (its signing secret is returned once)',
    input: CreateEventDestinationInput,
    output: EventDestination,
    outcome: 'created',
    revealsSecret: ['secret'],
    run: ({ deps, caller, input, db }) => createEventDestination(deps, db, caller.organization.id, input),
  }),
  list: read({
    summary: 'List event destinations, newest first',
    input: ListInput,
    output: listOf(EventDestination),
    run: async ({ caller, input, db }) => {
      const organizationId = caller.organization.id;
      const page = await newestFirst(
        input,
        (id, param) => findEndpoint(db, organizationId, id, param, EVENT_DESTINATIONS),
        (below, take) => endpointsPage(db, organizationId, true, below, take),
      );
      return { ...page, data: page.data.map((r) => presentEventDestination(r)) };
    },
  }),
  retrieve: read({
    summary: 'Retrieve an event destination (without its secret, its URL masked)',
    params: ['id'],
    retrieves: 'eventDestination',
    input: NoEventDestinationInput,
    output: EventDestinationWithHealth,
    run: async ({ deps, caller, params, db }) => {
      const row = await findEndpoint(db, caller.organization.id, params.id, null, EVENT_DESTINATIONS);
      return { ...presentEventDestination(row), health: await webhookEndpointHealth(db, row.id, deps.clock.now()) };
    },
  }),
  update: mutation({
    summary: 'Update an event destination; omitted fields are left alone (its type is fixed)',
    params: ['id'],
    input: UpdateEventDestinationInput,
    output: EventDestination,
    outcome: 'ok',
    run: ({ deps, caller, params, input, db }) => updateEventDestination(deps, db, caller.organization.id, params.id, input),
  }),
  rotateSecret: mutation({
    summary: 'Install a fresh signing secret; the previous one stays valid for 24 h',
    params: ['id'],
    input: NoEventDestinationInput,
    output: EventDestination,
    outcome: 'ok',
    revealsSecret: ['secret'],
    run: async ({ deps, caller, params, db }) =>
      presentEventDestination(await rotateEndpointSecret(deps, db, caller.organization.id, params.id, EVENT_DESTINATIONS), true),
  }),
  delete: mutation({
    summary: 'Delete an event destination, its credentials and its secrets',
    params: ['id'],
    input: NoEventDestinationInput,
    output: DeletedEventDestination,
    outcome: 'ok',
    run: async ({ deps, caller, params, db }) => {
      const row = await deleteEndpointRow(deps, db, caller.organization.id, params.id, EVENT_DESTINATIONS);
      return { id: row.id, object: 'event_destination' as const, deleted: true as const };
    },
  }),
  replay: mutation({
    summary: `Re-send a seq or time range of events to the destination (at most ${REPLAY_MAX_EVENTS}), as an operation (event_destination.replay); one live replay per destination`,
    params: ['id'],
    input: ReplayWebhookEndpointInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, params, input, db }) => replayEndpoint(deps, db, caller.organization.id, params.id, input, EVENT_DESTINATIONS),
  }),
  cancelReplay: mutation({
    summary: 'Cancel the destination’s live replay (control plane): it stops at its next batch and exhausts what it queued',
    params: ['id'],
    input: NoReplayInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, params, db }) => cancelReplay(deps, db, caller.organization.id, params.id, EVENT_DESTINATIONS),
  }),
  listDeliveries: read({
    summary: 'List a destination’s deliveries with their attempt logs, newest first',
    params: ['id'],
    input: ListWebhookDeliveriesInput,
    output: listOf(WebhookDelivery),
    run: async ({ deps, caller, params, input, db }) => {
      const row = await findEndpoint(db, caller.organization.id, params.id, null, EVENT_DESTINATIONS);
      return deliveryLog(deps, db, { endpointId: row.id }, input);
    },
  }),
  retryDelivery: mutation({
    summary: 'Re-queue a failing or exhausted delivery for an immediate attempt (refused while the destination is disabled)',
    params: ['id', 'delivery_id'],
    input: RetryWebhookDeliveryInput,
    output: WebhookDelivery,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) =>
      retryDelivery(deps, db, caller.organization.id, params.id, params.delivery_id, EVENT_DESTINATIONS),
  }),
});

/** What a re-encryption did: ciphertexts moved to the current key, already under it, and those no configured key opens. */
export interface Reencryption {
  key: string;
  reencrypted: number;
  current: number;
  undecryptable: string[];
}

/**
 * Re-encrypts every stored broker URL under the current key (`platform reencrypt-credentials`), a page at a time; a
 * row changed meanwhile keeps its newer ciphertext. Run it after putting a new key first in ENCRYPTION_KEYS, then
 * drop the old key once nothing is left under it.
 */
export async function reencryptCredentials(db: Deps['db'], keys: readonly EncryptionKey[] | undefined): Promise<Reencryption> {
  const current = keys?.[0];
  if (!current) throw new Error('ENCRYPTION_KEYS is empty: there is no key to re-encrypt under');
  const out: Reencryption = { key: current.id, reencrypted: 0, current: 0, undecryptable: [] };
  let after = '';
  for (;;) {
    const rows = await encryptedDestinationsAfter(db.prisma, after, 200);
    for (const row of rows) {
      const was = row.urlCiphertext!;
      if (keyIdOf(was) === current.id) out.current++;
      else {
        let plain: string;
        try {
          plain = decryptSecret(keys, was, row.id);
        } catch (e) {
          if (!(e instanceof UndecryptableSecret)) throw e;
          out.undecryptable.push(row.id);
          continue;
        }
        if (await replaceCiphertext(db.prisma, row.id, was, encryptSecret(keys, plain, row.id, 'url'))) out.reencrypted++;
      }
    }
    if (rows.length < 200) return out;
    after = rows.at(-1)!.id;
  }
}
