import { Prisma } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { newId } from '../id.ts';
import { endpointMatcher } from './endpoint.ts';

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
const LOCK_KEY = 7_351_002;
const CURSOR_KEY = 'webhook_fanout.position';
export const FANOUT_BATCH = 1000;

interface EventRow {
  id: string;
  organization_id: string;
  type: string;
  brand_id: string | null;
  subject_type: string;
  subject_id: string;
  created_at: Date;
  position: string;
}
interface EndpointRow {
  id: string;
  organization_id: string;
  enabled_events: string[];
  filter: Prisma.JsonValue;
  created_at: Date;
}

/**
 * The first statements of every fan-out transaction: its commit does not wait for the WAL flush
 * (`synchronous_commit` off for this transaction only), then the cluster-wide lock. Losing the last fan-outs in a
 * crash only moves the cursor back: the range is fanned out again, and the unique (endpoint, event) index keeps it
 * to one delivery each. A delivery cannot be sent and then lost: its lease is a synchronous commit, whose WAL
 * flush covers the fan-out that made the row, since the lease saw it. Spares the disk one flush per sequenced
 * batch, the most frequent commit of a deployment without endpoints.
 */
const BEGIN_FANOUT = [
  Prisma.sql`SELECT set_config('synchronous_commit', 'off', true)`,
  Prisma.sql`SELECT pg_advisory_xact_lock(${LOCK_KEY}::bigint)::text`,
];

/** The events after the cursor, in position order (the partial unique `position` index). */
const AFTER_CURSOR = Prisma.sql`SELECT id, organization_id, type, brand_id, subject_type, subject_id, created_at, position FROM event
  WHERE position > coalesce((SELECT (value->>'position')::bigint FROM system_setting WHERE key = ${CURSOR_KEY}), 0)
  ORDER BY position LIMIT ${FANOUT_BATCH}::int`;

/** What one fan-out pass did: events consumed, deliveries made, and whether their organizations had enabled endpoints. */
export interface FanOut {
  events: number;
  deliveries: number;
  endpoints: boolean;
}

/**
 * The cursor moved past the events after it when none of their organizations has an enabled endpoint, in one
 * statement (one snapshot): the events it counts are exactly those it skips.
 */
const SKIP_WITHOUT_ENDPOINTS = (now: Date) => Prisma.sql`WITH ev AS (${AFTER_CURSOR}),
  advanced AS (
    INSERT INTO system_setting (key, value, updated_at)
    SELECT ${CURSOR_KEY}, jsonb_build_object('position', max(position)::text), ${now}::timestamptz FROM ev
    HAVING count(*) > 0 AND NOT EXISTS (
      SELECT 1 FROM webhook_endpoint w WHERE w.status = 'enabled' AND w.organization_id IN (SELECT organization_id FROM ev))
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
    RETURNING 1)
  SELECT (SELECT count(*) FROM ev)::int AS events, (SELECT count(*) FROM advanced)::int AS advanced`;

/**
 * Fans out one batch of events after the cursor. With `expectEndpoints`
 * false (the worker's last pass met no endpoint), it first tries the
 * common case of a deployment or a batch without endpoints in one round
 * trip: BEGIN, BEGIN_FANOUT, SKIP_WITHOUT_ENDPOINTS, COMMIT. Otherwise, or when
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
      const results = await send([...BEGIN_FANOUT, SKIP_WITHOUT_ENDPOINTS(now)], { commit: true });
      return results[BEGIN_FANOUT.length]![0] as { events: number; advanced: number };
    });
    if (skipped.events === 0 || skipped.advanced > 0) return { events: Number(skipped.events), deliveries: 0, endpoints: false };
  }
  return deps.db.sql.transaction(async (send) => {
    const [eventRows, endpointRows] = (
      await send([
        ...BEGIN_FANOUT,
        Prisma.sql`SELECT id, organization_id, type, brand_id, subject_type, subject_id, created_at, position::text AS position FROM (${AFTER_CURSOR}) e`,
        Prisma.sql`SELECT id, organization_id, enabled_events, filter, created_at FROM webhook_endpoint
        WHERE status = 'enabled' AND organization_id IN (SELECT organization_id FROM (${AFTER_CURSOR}) e)`,
      ])
    ).slice(BEGIN_FANOUT.length);
    const events = eventRows as unknown as EventRow[];
    const endpoints = endpointRows!.length > 0;
    if (events.length === 0) return { events: 0, deliveries: 0, endpoints };

    // Each endpoint's matcher is built once for the batch.
    const byOrg = new Map<string, (EndpointRow & { wants: ReturnType<typeof endpointMatcher> })[]>();
    for (const ep of endpointRows as unknown as EndpointRow[]) {
      const wants = endpointMatcher({ enabledEvents: ep.enabled_events, filter: ep.filter });
      byOrg.set(ep.organization_id, [...(byOrg.get(ep.organization_id) ?? []), { ...ep, wants }]);
    }

    const deliveries: { id: string; org: string; endpoint: string; event: string; type: string }[] = [];
    for (const e of events) {
      const event = { type: e.type, brandId: e.brand_id, subjectType: e.subject_type, subjectId: e.subject_id };
      for (const ep of byOrg.get(e.organization_id) ?? []) {
        if (new Date(ep.created_at) > new Date(e.created_at) || !ep.wants(event)) continue;
        deliveries.push({ id: newId('delivery'), org: e.organization_id, endpoint: ep.id, event: e.id, type: e.type });
      }
    }
    const due = new Date(now.getTime() + firstDelayMs);
    const last = events.at(-1)!.position;
    await send(
      [
        ...(deliveries.length
          ? [
              Prisma.sql`INSERT INTO webhook_delivery (id, organization_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
                SELECT d.id, d.org, d.endpoint, d.event, d.type, 'pending', 0, ${due}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
                FROM json_to_recordset(${JSON.stringify(deliveries)}::json) AS d(id text, org text, endpoint text, event text, type text)
                ON CONFLICT (endpoint_id, event_id) WHERE replay_operation_id IS NULL DO NOTHING`,
            ]
          : []),
        Prisma.sql`INSERT INTO system_setting (key, value, updated_at) VALUES (${CURSOR_KEY}, jsonb_build_object('position', ${last}::text), ${now}::timestamptz)
          ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`,
      ],
      { commit: true },
    );
    return { events: events.length, deliveries: deliveries.length, endpoints };
  });
}
