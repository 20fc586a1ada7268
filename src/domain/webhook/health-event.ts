import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import { parseInput } from '../validation.ts';
import { isoTime } from '../shape.ts';
import { findEndpointById, findHealthEvent, healthEventsAfter, healthEventsPage, insertHealthEvents, latestHealthEvent } from './store.ts';

/**
 * An endpoint's health transitions as internal events: `failing_started`
 * (an unbroken run of failed attempts began), `recovered` (a 2xx ended it),
 * `disabled` (with its reason: manual, gone, failing) and `enabled`. They are
 * not public events: the spec's vocabulary is closed, so they are kept in
 * their own table, never in the feed, never delivered to a webhook. Operators
 * read them at `GET /operator/webhook_endpoints/{id}/health_events`; the
 * endpoint's owner watches them with the GraphQL subscription
 * `webhookEndpointHealthChanged(id)`. Each is written in the transaction of
 * the change it records.
 */
export const WEBHOOK_HEALTH_EVENT_KINDS = ['failing_started', 'recovered', 'disabled', 'enabled'] as const;
export type WebhookHealthEventKind = (typeof WEBHOOK_HEALTH_EVENT_KINDS)[number];

export const WebhookEndpointHealthEvent = z.object({
  id: z.string().describe('prefix whe_'),
  object: z.literal('webhook_endpoint_health_event'),
  endpoint_id: z.string(),
  kind: z.enum(WEBHOOK_HEALTH_EVENT_KINDS),
  reason: z.string().nullable().describe('for disabled: manual, gone or failing; null otherwise'),
  created_at: isoTime,
});
export type PublicWebhookEndpointHealthEvent = z.output<typeof WebhookEndpointHealthEvent>;

export interface HealthTransition {
  endpointId: string;
  kind: WebhookHealthEventKind;
  reason?: string | null;
}

/** Records transitions in the caller's transaction (the endpoint's organization is read from the endpoint). */
export async function recordHealthEvents(tx: Tx, now: Date, transitions: HealthTransition[]): Promise<void> {
  if (!transitions.length) return;
  await insertHealthEvents(
    tx,
    now,
    transitions.map((t) => ({ id: newId('webhookHealthEvent'), endpointId: t.endpointId, kind: t.kind, reason: t.reason ?? null })),
  );
}

interface Row {
  id: string;
  endpointId: string;
  kind: string;
  reason: string | null;
  createdAt: Date;
}

export const presentHealthEvent = (r: Row): PublicWebhookEndpointHealthEvent => ({
  id: r.id,
  object: 'webhook_endpoint_health_event',
  endpoint_id: r.endpointId,
  kind: r.kind as WebhookHealthEventKind,
  reason: r.reason,
  created_at: r.createdAt.toISOString(),
});

export const HealthEventPage = listOf(WebhookEndpointHealthEvent);

/** The operator's view: one endpoint's transitions, newest first, paged with starting_after (404 for an unknown endpoint). */
export async function listHealthEvents(deps: Deps, endpointId: string, raw: unknown) {
  const q = parseInput(ListInput, raw);
  const db = deps.db.prisma;
  const endpoint = isId('webhookEndpoint', endpointId) ? await findEndpointById(db, endpointId) : null;
  if (!endpoint) throw missing('webhook endpoint', endpointId, null);
  const page = await newestFirst(
    q,
    async (id, param) => {
      const row = isId('webhookHealthEvent', id) ? await findHealthEvent(db, endpointId, id) : null;
      if (!row) throw missing('health event', id, param);
      return row;
    },
    (below, take) => healthEventsPage(db, endpointId, below, take),
  );
  return { ...page, data: page.data.map(presentHealthEvent) };
}

/**
 * The transitions of one endpoint after the one with id `after` (a
 * subscriber resuming), or from now on, as they are committed: read every
 * `pollMs` by the (endpoint_id, id) index (ids grow with time).
 */
export function watchHealthEvents(
  deps: Deps,
  endpointId: string,
  from: string | undefined,
  pollMs = 1000,
): AsyncGenerator<PublicWebhookEndpointHealthEvent> {
  const db = deps.db.prisma;
  return (async function* () {
    const latest = from === undefined ? await latestHealthEvent(db, endpointId) : null;
    let after = from ?? latest?.id ?? '';
    for (;;) {
      const rows = await healthEventsAfter(db, endpointId, after, 100);
      for (const r of rows) {
        after = r.id;
        yield presentHealthEvent(r);
      }
      if (rows.length < 100) await new Promise((r) => setTimeout(r, pollMs));
    }
  })();
}
