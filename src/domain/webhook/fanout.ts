import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import { endpointMatcher } from './endpoint.ts';
import {
  BEGIN_FANOUT,
  fanOutCursorStatement,
  fanOutEndpointsStatement,
  fanOutEventsStatement,
  insertFanOutDeliveriesStatement,
  skipWithoutEndpointsStatement,
  type FanOutDelivery,
  type FanOutEndpointRow,
  type FanOutEventRow,
} from './store.ts';

/**
 * Fan-out: turns sequenced events into deliveries, one per (endpoint, event).
 *
 * Invariant: every sequenced public event is considered exactly once, and
 * yields one delivery for each endpoint that is enabled, subscribed to its
 * type, whose filter (brands, subject types) it matches, and that was created at or before the event. A single cursor over the
 * internal global `position` (stored in system_setting; `seq` is per
 * organization, ADR 0005) advances in the same transaction that inserts
 * the deliveries, under a cluster-wide advisory lock, so concurrent workers
 * in any number of processes never fan out the same range twice, and a crash
 * rolls back both the inserts and the cursor. Because `position` order is
 * commit order (see the sequencer), no event can appear behind the cursor later.
 * The unique (endpoint_id, event_id) index with ON CONFLICT DO NOTHING is a
 * second guard that makes a replayed range harmless.
 */
/** Events one fan-out pass reads after the cursor. */
export const FANOUT_BATCH = 1000;

/** What one fan-out pass did: events consumed, deliveries made, and whether their organizations had enabled endpoints. */
export interface FanOut {
  events: number;
  deliveries: number;
  endpoints: boolean;
}

/**
 * Fans out one batch of events after the cursor. With `expectEndpoints`
 * false (the worker's last pass met no endpoint), it first tries the
 * common case of a deployment or a batch without endpoints in one round
 * trip: BEGIN, BEGIN_FANOUT, skipWithoutEndpointsStatement, COMMIT. Otherwise, or when
 * that found endpoints (nothing changed), two round trips: (1) BEGIN,
 * BEGIN_FANOUT, the events after the cursor, the enabled endpoints of their
 * organizations (a later statement, a fresh snapshot: it may see more
 * events, never fewer, so its organizations are a superset); (2) the
 * deliveries, the cursor, COMMIT.
 */
export async function fanOutBatch(deps: Deps, firstDelayMs: number, expectEndpoints: boolean): Promise<FanOut> {
  const now = deps.clock.now();
  if (!expectEndpoints) {
    const skipped = await deps.db.sql.transaction(async (send) => {
      const results = await send([...BEGIN_FANOUT, skipWithoutEndpointsStatement(now, FANOUT_BATCH)], { commit: true });
      return results[BEGIN_FANOUT.length]![0] as { events: number; advanced: number };
    });
    if (skipped.events === 0 || skipped.advanced > 0) return { events: Number(skipped.events), deliveries: 0, endpoints: false };
  }
  return deps.db.sql.transaction(async (send) => {
    const [eventRows, endpointRows] = (
      await send([...BEGIN_FANOUT, fanOutEventsStatement(FANOUT_BATCH), fanOutEndpointsStatement(FANOUT_BATCH)])
    ).slice(BEGIN_FANOUT.length);
    const events = eventRows as unknown as FanOutEventRow[];
    const endpoints = endpointRows!.length > 0;
    if (events.length === 0) return { events: 0, deliveries: 0, endpoints };

    // Each endpoint's matcher is built once for the batch.
    const byOrg = new Map<string, (FanOutEndpointRow & { wants: ReturnType<typeof endpointMatcher> })[]>();
    for (const ep of endpointRows as unknown as FanOutEndpointRow[]) {
      const wants = endpointMatcher({ enabledEvents: ep.enabled_events, filter: ep.filter });
      byOrg.set(ep.organization_id, [...(byOrg.get(ep.organization_id) ?? []), { ...ep, wants }]);
    }

    const deliveries: FanOutDelivery[] = [];
    for (const e of events) {
      const event = { type: e.type, brandId: e.brand_id, subjectType: e.subject_type, subjectId: e.subject_id };
      for (const ep of byOrg.get(e.organization_id) ?? []) {
        if (new Date(ep.created_at) > new Date(e.created_at) || !ep.wants(event)) continue;
        deliveries.push({ id: newId('delivery'), org: e.organization_id, endpoint: ep.id, event: e.id, type: e.type });
      }
    }
    const due = new Date(now.getTime() + firstDelayMs);
    const last = events.at(-1)!.position;
    await send([...(deliveries.length ? [insertFanOutDeliveriesStatement(deliveries, due, now)] : []), fanOutCursorStatement(last, now)], {
      commit: true,
    });
    return { events: events.length, deliveries: deliveries.length, endpoints };
  });
}
