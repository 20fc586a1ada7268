import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import { subscriptionCovers } from '../event/types.ts';

/**
 * Fan-out: turns sequenced events into deliveries, one per (endpoint, event).
 *
 * Invariant: every sequenced public event is considered exactly once, and
 * yields one delivery for each endpoint that is enabled, subscribed to its
 * type and was created at or before the event. A single cursor over the
 * internal global `position` (stored in system_setting; `seq` is per
 * organization, ADR 0005) advances in the same transaction that inserts
 * the deliveries, under a cluster-wide advisory lock, so concurrent workers
 * in any number of processes never fan out the same range twice, and a crash
 * rolls back both the inserts and the cursor. Because `position` order is
 * commit order (see the sequencer), no event can appear behind the cursor later.
 * The unique (endpoint_id, event_id) index with ON CONFLICT DO NOTHING is a
 * second guard that makes a replayed range harmless.
 */
const LOCK_KEY = 7_351_002;
const CURSOR_KEY = 'webhook_fanout.position';
export const FANOUT_BATCH = 1000;

interface EventRow {
  id: string;
  organization_id: string;
  type: string;
  created_at: Date;
  position: bigint;
}
interface EndpointRow {
  id: string;
  organization_id: string;
  enabled_events: string[];
  created_at: Date;
}

/** Fans out one batch of events after the cursor; returns how many events it consumed. */
export async function fanOutBatch(deps: Deps, firstDelayMs: number): Promise<number> {
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    await tx.$queryRaw`SELECT pg_advisory_xact_lock(${LOCK_KEY})::text`;
    const [cursor] = await tx.$queryRaw<{ position: string }[]>`SELECT value->>'position' AS position FROM system_setting WHERE key = ${CURSOR_KEY}`;
    const after = BigInt(cursor?.position ?? '0');
    const events = await tx.$queryRaw<EventRow[]>`
      SELECT id, organization_id, type, created_at, position FROM event
      WHERE position > ${after} ORDER BY position LIMIT ${FANOUT_BATCH}`;
    if (events.length === 0) return 0;

    const orgs = [...new Set(events.map((e) => e.organization_id))];
    const endpoints = await tx.$queryRaw<EndpointRow[]>`
      SELECT id, organization_id, enabled_events, created_at FROM webhook_endpoint
      WHERE organization_id = ANY(${orgs}::text[]) AND status = 'enabled'`;
    const byOrg = new Map<string, EndpointRow[]>();
    for (const ep of endpoints) byOrg.set(ep.organization_id, [...(byOrg.get(ep.organization_id) ?? []), ep]);

    const cols = { id: [] as string[], org: [] as string[], endpoint: [] as string[], event: [] as string[] };
    for (const e of events) {
      for (const ep of byOrg.get(e.organization_id) ?? []) {
        if (ep.created_at > e.created_at || !subscriptionCovers(ep.enabled_events, e.type)) continue;
        cols.id.push(newId('delivery'));
        cols.org.push(e.organization_id);
        cols.endpoint.push(ep.id);
        cols.event.push(e.id);
      }
    }
    if (cols.id.length) {
      const due = new Date(now.getTime() + firstDelayMs);
      await tx.$executeRaw`
        INSERT INTO webhook_delivery (id, organization_id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at, updated_at)
        SELECT d.id, d.org, d.endpoint, d.event, 'pending', 0, ${due}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
        FROM unnest(${cols.id}::text[], ${cols.org}::text[], ${cols.endpoint}::text[], ${cols.event}::text[]) AS d(id, org, endpoint, event)
        ON CONFLICT (endpoint_id, event_id) DO NOTHING`;
    }
    const last = String(events.at(-1)!.position);
    await tx.$executeRaw`
      INSERT INTO system_setting (key, value, updated_at) VALUES (${CURSOR_KEY}, jsonb_build_object('position', ${last}::text), ${now}::timestamptz)
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`;
    return events.length;
  });
}
