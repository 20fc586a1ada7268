import type { PrismaClient, WebhookEndpoint } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import { inBatch, statement, type SqlPort } from '../../db/sql-port.ts';
import { OPERATIONS_CHANNEL } from '../operation/store.ts';
import type { EndpointPolicy } from './policy.ts';

// The webhook capability's SQL: endpoints, deliveries and their attempts, health events, the fan-out's batches and
// the lease. Rule code (endpoint.ts, delivery.ts, fanout.ts, lease.ts, replay.ts...) calls these functions.

type Db = Tx | PrismaClient;
/** A page's bound below the cursor (src/domain/action/list.ts). */
type Below = { id?: { lt: string } };

// Endpoints

export function insertEndpoint(tx: Tx, data: Prisma.WebhookEndpointUncheckedCreateInput): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.create({ data });
}

export function updateEndpoint(tx: Tx, id: string, data: Prisma.WebhookEndpointUncheckedUpdateInput): Promise<WebhookEndpoint> {
  return tx.webhookEndpoint.update({ where: { id }, data });
}

/** Hard delete: its deliveries, attempts and health events go with it (foreign keys). */
export async function deleteEndpoint(tx: Tx, id: string): Promise<void> {
  await tx.webhookEndpoint.delete({ where: { id } });
}

/** The organization's webhook endpoints and event destinations, enabled or not (the cap counts both). */
export function countEndpoints(tx: Tx, organizationId: string): Promise<number> {
  return tx.webhookEndpoint.count({ where: { organizationId } });
}

/** An endpoint of the organization by id (null: none). */
export function findEndpointOf(db: Db, organizationId: string, id: string): Promise<WebhookEndpoint | null> {
  return db.webhookEndpoint.findFirst({ where: { id, organizationId } });
}

/** An endpoint by id, whatever its organization (the operator's view, a replay's step). */
export function findEndpointById(db: Db, id: string): Promise<WebhookEndpoint | null> {
  return db.webhookEndpoint.findUnique({ where: { id } });
}

/** A page of the organization's webhook endpoints (or event destinations), newest first. */
export function endpointsPage(
  db: Db,
  organizationId: string,
  destinations: boolean,
  below: Below,
  take: number,
): Promise<WebhookEndpoint[]> {
  const type = destinations ? { not: 'webhook' } : 'webhook';
  return db.webhookEndpoint.findMany({ where: { organizationId, type, ...below }, orderBy: { id: 'desc' }, take });
}

/** Event destinations whose stored credentials are encrypted, by id after `after` (re-encryption pages through them). */
export function encryptedDestinationsAfter(db: Db, after: string, take: number) {
  return db.webhookEndpoint.findMany({
    where: { urlCiphertext: { not: null }, id: { gt: after } },
    orderBy: { id: 'asc' },
    take,
    select: { id: true, urlCiphertext: true },
  });
}

/** Replaces a destination's ciphertext if it is still `was` (a concurrent update wins); whether it did. */
export async function replaceCiphertext(db: Db, id: string, was: string, now: string): Promise<boolean> {
  const { count } = await db.webhookEndpoint.updateMany({ where: { id, urlCiphertext: was }, data: { urlCiphertext: now } });
  return count === 1;
}

// Deliveries as the API reads them

/** Which deliveries a log shows: one endpoint's, or one event's across the organization's endpoints. */
export type DeliveryScope = { endpointId: string } | { eventId: string; organizationId: string; endpoint: { type: string } };

/** A delivery log's filters (all given ones apply); `statusClass` is the last attempt's HTTP status class, `error` none. */
export interface DeliveryFilter {
  status?: string;
  eventType?: string;
  eventId?: string;
  created: { gte?: Date; gt?: Date; lte?: Date; lt?: Date };
  statusClass?: '2xx' | '3xx' | '4xx' | '5xx' | 'error';
}

/** The filters as a where clause (each has an index leading with endpoint_id or event_id, ordered by id). */
function deliveryWhere(q: DeliveryFilter): Prisma.WebhookDeliveryWhereInput {
  const created = {
    ...(q.created.gte ? { gte: q.created.gte } : {}),
    ...(q.created.gt ? { gt: q.created.gt } : {}),
    ...(q.created.lte ? { lte: q.created.lte } : {}),
    ...(q.created.lt ? { lt: q.created.lt } : {}),
  };
  const klass = q.statusClass;
  const code =
    klass === undefined
      ? {}
      : klass === 'error'
        ? { lastStatusCode: null, lastError: { not: null }, attempts: { gt: 0 } }
        : { lastStatusCode: { gte: Number(klass[0]) * 100, lt: Number(klass[0]) * 100 + 100 } };
  return {
    ...(q.status ? { status: q.status } : {}),
    ...(q.eventType ? { eventType: q.eventType } : {}),
    ...(q.eventId ? { eventId: q.eventId } : {}),
    ...(Object.keys(created).length ? { createdAt: created } : {}),
    ...code,
  };
}

/** A delivery in the scope by id (null: none), a log's cursor. */
export function findDeliveryIn(db: Db, scope: DeliveryScope, id: string) {
  return db.webhookDelivery.findFirst({ where: { ...scope, id } });
}

/** A page of a delivery log, newest first, each delivery with its attempts and endpoint. */
export function deliveryLogPage(db: Db, scope: DeliveryScope, filter: DeliveryFilter, below: Below, take: number) {
  return db.webhookDelivery.findMany({
    where: { ...scope, ...deliveryWhere(filter), ...below },
    orderBy: { id: 'desc' },
    take,
    include: { attemptLog: true, endpoint: true },
  });
}

/** A delivery of any endpoint of the organization, with its attempts and endpoint (null: none). */
export function findOrganizationDelivery(db: Db, organizationId: string, id: string) {
  return db.webhookDelivery.findFirst({ where: { id, endpoint: { organizationId } }, include: { attemptLog: true, endpoint: true } });
}

/** A delivery of the endpoint, with its attempts (null: none). */
export function findEndpointDelivery(db: Db, endpointId: string, id: string) {
  return db.webhookDelivery.findFirst({ where: { id, endpointId }, include: { attemptLog: true } });
}

/** An endpoint's deliveries counted per status. */
export async function deliveryCountsByStatus(db: Db, endpointId: string): Promise<{ status: string; count: number }[]> {
  const groups = await db.webhookDelivery.groupBy({ by: ['status'], where: { endpointId }, _count: { _all: true } });
  return groups.map((g) => ({ status: g.status, count: g._count._all }));
}

/** Re-queues a delivery with `status`, due `now`; returns it with its attempts. */
export function requeueDelivery(tx: Tx, id: string, status: 'pending' | 'failing', now: Date) {
  return tx.webhookDelivery.update({
    where: { id },
    data: { status, nextAttemptAt: now, completedAt: null, updatedAt: now },
    include: { attemptLog: true },
  });
}

/** Deliveries pending or failing across the deployment (the backlog metric). */
export function countLiveDeliveries(db: PrismaClient): Promise<number> {
  return db.webhookDelivery.count({ where: { status: { in: ['pending', 'failing'] } } });
}

// Fan-out (fanout.ts)

const FANOUT_LOCK_KEY = 7_351_002;
const FANOUT_CURSOR_KEY = 'webhook_fanout.position';

export interface FanOutEventRow {
  id: string;
  organization_id: string;
  type: string;
  brand_id: string | null;
  subject_type: string;
  subject_id: string;
  created_at: Date;
  position: string;
}
export interface FanOutEndpointRow {
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
export const BEGIN_FANOUT = [
  Prisma.sql`SELECT set_config('synchronous_commit', 'off', true)`,
  Prisma.sql`SELECT pg_advisory_xact_lock(${FANOUT_LOCK_KEY}::bigint)::text`,
];

/** The events after the cursor, in position order (the partial unique `position` index), at most `batch`. */
const afterCursor = (
  batch: number,
) => Prisma.sql`SELECT id, organization_id, type, brand_id, subject_type, subject_id, created_at, position FROM event
  WHERE position > coalesce((SELECT (value->>'position')::bigint FROM system_setting WHERE key = ${FANOUT_CURSOR_KEY}), 0)
  ORDER BY position LIMIT ${batch}::int`;

/**
 * The cursor moved past the events after it when none of their organizations has an enabled endpoint, in one
 * statement (one snapshot): the events it counts are exactly those it skips. One row: `events`, `advanced`.
 */
export const skipWithoutEndpointsStatement = (now: Date, batch: number) => Prisma.sql`WITH ev AS (${afterCursor(batch)}),
  advanced AS (
    INSERT INTO system_setting (key, value, updated_at)
    SELECT ${FANOUT_CURSOR_KEY}, jsonb_build_object('position', max(position)::text), ${now}::timestamptz FROM ev
    HAVING count(*) > 0 AND NOT EXISTS (
      SELECT 1 FROM webhook_endpoint w WHERE w.status = 'enabled' AND w.organization_id IN (SELECT organization_id FROM ev))
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
    RETURNING 1)
  SELECT (SELECT count(*) FROM ev)::int AS events, (SELECT count(*) FROM advanced)::int AS advanced`;

/** The events after the cursor (FanOutEventRow, `position` as text). */
export const fanOutEventsStatement = (batch: number) =>
  Prisma.sql`SELECT id, organization_id, type, brand_id, subject_type, subject_id, created_at, position::text AS position FROM (${afterCursor(batch)}) e`;

/** The enabled endpoints of the organizations of the events after the cursor (FanOutEndpointRow). */
export const fanOutEndpointsStatement = (
  batch: number,
) => Prisma.sql`SELECT id, organization_id, enabled_events, filter, created_at FROM webhook_endpoint
        WHERE status = 'enabled' AND organization_id IN (SELECT organization_id FROM (${afterCursor(batch)}) e)`;

/** One fan-out delivery: its id, organization, endpoint, event and event type. */
export interface FanOutDelivery {
  id: string;
  org: string;
  endpoint: string;
  event: string;
  type: string;
}

/** Inserts fan-out deliveries, pending and due at `due`; a pair (endpoint, event) already delivered is skipped. */
export const insertFanOutDeliveriesStatement = (deliveries: FanOutDelivery[], due: Date, now: Date) =>
  Prisma.sql`INSERT INTO webhook_delivery (id, organization_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at)
                SELECT d.id, d.org, d.endpoint, d.event, d.type, 'pending', 0, ${due}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
                FROM json_to_recordset(${JSON.stringify(deliveries)}::json) AS d(id text, org text, endpoint text, event text, type text)
                ON CONFLICT (endpoint_id, event_id) WHERE replay_operation_id IS NULL DO NOTHING`;

/** Moves the fan-out cursor to `position`. */
export const fanOutCursorStatement = (position: string, now: Date) =>
  Prisma.sql`INSERT INTO system_setting (key, value, updated_at) VALUES (${FANOUT_CURSOR_KEY}, jsonb_build_object('position', ${position}::text), ${now}::timestamptz)
          ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`;

// The lease (lease.ts)

/** What a lease returns per delivery: the delivery, its endpoint's URL, secrets and policy, its event. */
export interface LeasedRow {
  id: string;
  organization_id: string;
  endpoint_id: string;
  event_id: string;
  attempts: number;
  /** The replay that re-sends this event (sent with a `webhook-replay` header); null for a fan-out delivery. */
  replay_operation_id: string | null;
  url: string;
  /** `webhook`, or a destination's broker type with its settings and encrypted URL (null: its `url` holds no credentials). */
  endpoint_type: string;
  config: Prisma.JsonValue;
  url_ciphertext: string | null;
  endpoint_status: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  failing_since: Date | string | null;
  policy: EndpointPolicy | null;
  type: string;
  seq: string | number | bigint | null;
  subject_type: string;
  subject_id: string;
  data: Prisma.JsonValue;
  operation_id: string | null;
  brand_id: string | null;
  livemode: boolean;
  created_at: Date;
}

/**
 * Ordered endpoints (`ordering: subject`): a delivery is a candidate only if
 * no earlier event (lower seq) of the same subject still has a pending or
 * failing delivery to that endpoint, leased or not, due or not. So one
 * subject's deliveries go one at a time in seq order and a failing one holds
 * back only its own subject; an exhausted one releases it. Fan-out inserts
 * deliveries in event order, so an earlier event's delivery always exists
 * before a later one's. An unordered endpoint's candidate pays nothing for
 * it; an ordered one's walks the subject's earlier events by the
 * (organization_id, subject_id, seq) index and probes (endpoint_id, event_id).
 *
 * One statement on the SQL port, so no interactive transaction:
 * - the endpoints with unfinished deliveries, one probe each on the
 *   (endpoint_id, next_attempt_at) partial index (a loose index scan), and
 *   their free slots (0: skipped, so a busy endpoint's backlog is never read);
 * - each one's oldest due deliveries, at most its free slots: a pass reads
 *   what it may take, never a tenant's backlog behind it;
 * - the picks, shared out max-min fair twice: between organizations first
 *   (`organization_turn`: the organization's requests in flight here plus
 *   its candidate's rank), so while one organization has thousands due,
 *   another's new delivery takes the next free slot; then between endpoints
 *   (`endpoint_turn`: the endpoint's in flight plus rank), so a slow endpoint
 *   holding many slots cannot take the ones a fast endpoint frees;
 * - lock what is picked (SKIP LOCKED: another worker's picks are skipped,
 *   never waited for; one that committed meanwhile fails the re-checked
 *   condition), stamp the lease, and return what the attempt needs (endpoint
 *   URL and secrets, the event row).
 * Its cost grows with the endpoints that have unfinished deliveries (capped
 * per organization), not with the deliveries due.
 */
const leaseStatement = statement<[Date, string[], number[], number[], number, number, string, Date, number, string[], number[]], LeasedRow>(
  'webhook_lease_due',
  `WITH RECURSIVE known AS (
     SELECT * FROM unnest($2::text[], $3::int[], $4::int[]) AS k(endpoint_id, free, in_flight)
   ), busy AS (
     SELECT * FROM unnest($10::text[], $11::int[]) AS b(organization_id, in_flight)
   ), pending AS (
     (SELECT d.endpoint_id FROM webhook_delivery d WHERE d.status IN ('pending', 'failing') ORDER BY d.endpoint_id LIMIT 1)
     UNION ALL
     SELECT (SELECT d.endpoint_id FROM webhook_delivery d
             WHERE d.status IN ('pending', 'failing') AND d.endpoint_id > p.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
     FROM pending p WHERE p.endpoint_id IS NOT NULL
   ), slot AS (
     SELECT w.id, w.organization_id, w.ordering, coalesce(k.in_flight, 0) AS in_flight,
            least(coalesce(k.free, $5::int),
                  coalesce((w.policy->>'max_in_flight')::int - coalesce(k.in_flight, 0), $6::int),
                  CASE WHEN k.endpoint_id IS NULL THEN greatest(1, floor((w.policy->>'rate_limit_per_second')::float8))::int END,
                  $6::int) AS free
     FROM pending p JOIN webhook_endpoint w ON w.id = p.endpoint_id LEFT JOIN known k ON k.endpoint_id = w.id
   ), candidate AS (
     SELECT c.id, c.next_attempt_at, s.organization_id,
            s.in_flight + row_number() OVER (PARTITION BY s.id ORDER BY c.next_attempt_at) AS endpoint_turn
     FROM slot s CROSS JOIN LATERAL (
       SELECT d.id, d.next_attempt_at FROM webhook_delivery d
       WHERE d.endpoint_id = s.id AND d.status IN ('pending', 'failing') AND d.next_attempt_at <= $1::timestamptz
         AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::timestamptz)
         AND NOT (s.ordering = 'subject' AND EXISTS (SELECT 1 FROM event e
           JOIN event e2 ON e2.organization_id = e.organization_id AND e2.subject_id = e.subject_id
             AND e2.subject_type = e.subject_type AND e2.seq < e.seq
           JOIN webhook_delivery d2 ON d2.endpoint_id = d.endpoint_id AND d2.event_id = e2.id
           WHERE e.id = d.event_id AND d2.status IN ('pending', 'failing')))
       ORDER BY d.next_attempt_at
       LIMIT s.free
     ) c
     WHERE s.free > 0
   ), ranked AS (
     SELECT c.id, c.next_attempt_at, c.endpoint_turn,
            coalesce(b.in_flight, 0) + row_number() OVER (PARTITION BY c.organization_id ORDER BY c.endpoint_turn, c.next_attempt_at) AS organization_turn
     FROM candidate c LEFT JOIN busy b ON b.organization_id = c.organization_id
   ), pick AS (
     SELECT id FROM ranked ORDER BY organization_turn, endpoint_turn, next_attempt_at LIMIT $6::int
   ), locked AS (
     SELECT d.id FROM webhook_delivery d JOIN pick ON pick.id = d.id
     WHERE d.status IN ('pending', 'failing') AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= $1::timestamptz)
     FOR UPDATE OF d SKIP LOCKED
   )
   UPDATE webhook_delivery d
   SET lease_owner = $7, updated_at = $1::timestamptz,
     lease_expires_at = $8::timestamptz + greatest(0, coalesce((w.policy->>'timeout_ms')::int, 0) - $9::int) * interval '1 millisecond'
   FROM locked, webhook_endpoint w, event e
   WHERE d.id = locked.id AND w.id = d.endpoint_id AND e.id = d.event_id
   RETURNING d.id, d.organization_id, d.endpoint_id, d.event_id, d.attempts, d.replay_operation_id, w.url, w.type AS endpoint_type, w.config, w.url_ciphertext,
     w.status AS endpoint_status, w.secret, w.previous_secret,
     w.previous_secret_expires_at, w.failing_since, w.policy, e.type, e.seq, e.subject_type, e.subject_id, e.data, e.operation_id, e.brand_id, e.livemode, e.created_at`,
);

/** What one lease asks for, with the instants it runs at. */
export interface DueClaim {
  now: Date;
  leaseUntil: Date;
  owner: string;
  /** The deployment's timeout: an endpoint whose own is longer has its lease lengthened by the difference. */
  timeoutMs: number;
  /** How many to claim in total. */
  limit: number;
  /** Free slots of an endpoint this process knows nothing about (its starting limit). */
  initialFree: number;
  /** Endpoints this process knows (see EndpointLimits.known): free slots (0 = skipped in SQL, so they cannot crowd out the others) and in-flight counts. */
  known: { ids: string[]; free: number[]; inFlight: number[] };
  /** Organizations with requests in flight in this process, and how many: the lease serves the others' first. */
  organizations: { ids: string[]; inFlight: number[] };
}

/** Leases due deliveries (the statement above) and returns what their attempts need. */
export function claimDueDeliveries(sql: SqlPort, c: DueClaim): Promise<LeasedRow[]> {
  return sql.rows(leaseStatement, [
    c.now,
    c.known.ids,
    c.known.free,
    c.known.inFlight,
    c.initialFree,
    c.limit,
    c.owner,
    c.leaseUntil,
    c.timeoutMs,
    c.organizations.ids,
    c.organizations.inFlight,
  ]);
}

const recordStatement = statement<
  [
    string[],
    string[],
    number[],
    (string | null)[],
    (number | null)[],
    (string | null)[],
    (string | null)[],
    string[],
    string[],
    number[],
    (string | null)[],
    string,
    Date,
  ],
  never
>(
  'webhook_record_attempts',
  `WITH o AS (
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::timestamptz[], $5::int[], $6::text[], $7::timestamptz[], $8::text[], $9::timestamptz[], $10::int[], $11::text[])
       AS o(id, status, made, next_at, code, error, completed_at, attempt_id, started_at, duration_ms, excerpt)
   ), moved AS (
     UPDATE webhook_delivery d
     SET status = o.status, attempts = o.made, next_attempt_at = coalesce(o.next_at, d.next_attempt_at), last_status_code = o.code,
         last_error = o.error, completed_at = o.completed_at, lease_owner = NULL, lease_expires_at = NULL, updated_at = $13::timestamptz
     FROM o WHERE d.id = o.id AND d.lease_owner = $12 AND d.status IN ('pending', 'failing')
     RETURNING d.id
   )
   INSERT INTO webhook_attempt (id, delivery_id, endpoint_id, number, started_at, duration_ms, status_code, error, response_excerpt)
   SELECT o.attempt_id, o.id, d.endpoint_id, o.made, o.started_at, o.duration_ms, o.code, o.error, o.excerpt
   FROM o JOIN webhook_delivery d ON d.id = o.id`,
);

/** Finished attempts as columns (one entry per attempt; instants as ISO text). */
export interface AttemptColumns {
  id: string[];
  status: string[];
  made: number[];
  next: (string | null)[];
  code: (number | null)[];
  error: (string | null)[];
  completed: (string | null)[];
  attemptId: string[];
  started: string[];
  duration: number[];
  excerpt: (string | null)[];
}

/**
 * Records finished attempts in one statement: the guarded state change of
 * each delivery (only while `owner` still holds it) and its attempt row
 * (always: the request happened whether or not the lease still held).
 */
export async function recordAttemptRows(sql: SqlPort, c: AttemptColumns, owner: string, now: Date): Promise<void> {
  await sql.rows(recordStatement, [
    c.id,
    c.status,
    c.made,
    c.next,
    c.code,
    c.error,
    c.completed,
    c.attemptId,
    c.started,
    c.duration,
    c.excerpt,
    owner,
    now,
  ]);
}

/** Clears `failing_since` of the endpoints that had one; returns those. */
export async function clearFailing(tx: Tx, ids: string[]): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
        UPDATE webhook_endpoint SET failing_since = NULL WHERE id = ANY(${ids}::text[]) AND failing_since IS NOT NULL RETURNING id`;
  return rows.map((r) => r.id);
}

/** Sets `failing_since` of the endpoints that had none; returns those. */
export async function markFailing(tx: Tx, failing: { id: string; since: Date }[]): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`UPDATE webhook_endpoint w SET failing_since = x.since
        FROM unnest(${failing.map((f) => f.id)}::text[], ${failing.map((f) => f.since.toISOString())}::timestamptz[]) AS x(id, since)
        WHERE w.id = x.id AND w.failing_since IS NULL RETURNING w.id`;
  return rows.map((r) => r.id);
}

/** Disables the enabled ones of the endpoints with `reason`; returns those. */
export async function disableEndpoints(tx: Tx, ids: string[], reason: string, now: Date): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
        UPDATE webhook_endpoint SET status = 'disabled', disabled_reason = ${reason}, updated_at = ${now}::timestamptz
        WHERE id = ANY(${ids}::text[]) AND status = 'enabled' RETURNING id`;
  return rows.map((r) => r.id);
}

/** Exhausts the live deliveries `where` selects; returns the replays they belonged to (which may have none left). */
async function exhaust(db: Db, now: Date, where: Prisma.Sql): Promise<string[]> {
  const rows = await db.$queryRaw<{ replay: string }[]>`
    WITH x AS (
      UPDATE webhook_delivery SET status = 'exhausted', last_error = 'endpoint disabled', completed_at = ${now}::timestamptz,
        lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
      WHERE ${where} AND status IN ('pending', 'failing')
      RETURNING replay_operation_id)
    SELECT DISTINCT replay_operation_id AS replay FROM x WHERE replay_operation_id IS NOT NULL`;
  return rows.map((r) => r.replay);
}

/** Exhausts the live deliveries of the endpoints (disabled); returns their replays. */
export const exhaustDeliveriesOfEndpoints = (db: Db, now: Date, endpointIds: string[]) =>
  exhaust(db, now, Prisma.sql`endpoint_id = ANY(${endpointIds}::text[])`);

/** Exhausts the live deliveries of one endpoint (disabled); returns their replays. */
export const exhaustDeliveriesOfEndpoint = (db: Db, now: Date, endpointId: string) =>
  exhaust(db, now, Prisma.sql`endpoint_id = ${endpointId}`);

/** Exhausts the deliveries `owner` leased (their endpoint is disabled); returns their replays. */
export const exhaustLeasedDeliveries = (db: Db, now: Date, ids: string[], owner: string) =>
  exhaust(db, now, Prisma.sql`id = ANY(${ids}::text[]) AND lease_owner = ${owner}`);

// Replays (replay.ts, replay-wake.ts)

/**
 * A replay waits `awaiting_deliveries` until none of its deliveries is live (replay.ts); the delivery that settles
 * last wakes it. Whatever settles replayed deliveries (a recorded attempt, an exhaust) runs this statement for their
 * replays, after the settlement: a replay is woken when no delivery of its is pending or failing any more. Run after
 * the settling commit (or later in the settling transaction), the last of several settlements racing in other
 * processes sees every other one, so one of them always wakes it. A replay whose step is in flight is matched too,
 * so the statement waits for that step's commit and wakes it if it committed `waiting` on a count read before this
 * settlement (as the operation store's settle statement does for a cancel). It notifies other processes' workers
 * when it woke one.
 */
const wakeStatement = statement<[replays: string[], now: Date, sender: string], { woken: number }>(
  'webhook_replay_wake',
  `WITH touched AS (
     UPDATE "operation" o SET run_after = CASE WHEN o.status = 'waiting' THEN $2::timestamptz ELSE o.run_after END
     WHERE o.id = ANY($1::text[]) AND o.status IN ('pending', 'running', 'waiting')
       AND NOT EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.replay_operation_id = o.id AND d.status IN ('pending', 'failing'))
     RETURNING o.status = 'waiting' AS woke
   ), notified AS (
     SELECT pg_notify('${OPERATIONS_CHANNEL}', $3) FROM (SELECT FROM touched WHERE woke LIMIT 1) first
   )
   SELECT (SELECT count(*)::int FROM touched WHERE woke) AS woken, (SELECT count(*)::int FROM notified) AS notified`,
);

/** Wakes the replays with no live delivery left, autocommitted; returns how many it woke (`sender`: the NOTIFY's payload). */
export async function wakeReplays(sql: SqlPort, replays: string[], now: Date, sender: string): Promise<number> {
  const [row] = await sql.rows(wakeStatement, [replays, now, sender]);
  return row?.woken ?? 0;
}

/** The same in the caller's transaction. */
export async function wakeReplaysIn(tx: Tx, replays: string[], now: Date, sender: string): Promise<number> {
  const [row] = await tx.$queryRaw<{ woken: number }[]>(inBatch(wakeStatement, [replays, now, sender]));
  return row?.woken ?? 0;
}

/** Of the events, those the endpoint already has a succeeded or still-scheduled delivery of. */
export async function eventsDeliveredOrScheduled(tx: Tx, endpointId: string, eventIds: string[]): Promise<string[]> {
  const done = await tx.$queryRaw<{ event_id: string }[]>`
      SELECT DISTINCT event_id FROM webhook_delivery
      WHERE endpoint_id = ${endpointId} AND event_id = ANY(${eventIds}::text[]) AND status IN ('succeeded', 'pending', 'failing')`;
  return done.map((d) => d.event_id);
}

/** Inserts a replay's deliveries, pending and due at `due`; an event the replay already queued is skipped. */
export async function insertReplayDeliveries(
  tx: Tx,
  r: { organizationId: string; endpointId: string; operationId: string; due: Date; now: Date },
  rows: { id: string; event: string; type: string }[],
): Promise<void> {
  await tx.$executeRaw`
      INSERT INTO webhook_delivery (id, organization_id, endpoint_id, event_id, event_type, status, attempts, next_attempt_at, created_at, updated_at, replay_operation_id)
      SELECT d.id, ${r.organizationId}, ${r.endpointId}, d.event, d.type, 'pending', 0, ${r.due}::timestamptz, ${r.now}::timestamptz, ${r.now}::timestamptz, ${r.operationId}
      FROM json_to_recordset(${JSON.stringify(rows)}::json) AS d(id text, event text, type text)
      ON CONFLICT (replay_operation_id, event_id) WHERE replay_operation_id IS NOT NULL DO NOTHING`;
}

/** Exhausts a canceled replay's deliveries not yet sent. */
export async function exhaustReplayDeliveries(tx: Tx, operationId: string, now: Date): Promise<void> {
  await tx.$executeRaw`
    UPDATE webhook_delivery SET status = 'exhausted', last_error = 'replay canceled', completed_at = ${now}::timestamptz,
      lease_owner = NULL, lease_expires_at = NULL, updated_at = ${now}::timestamptz
    WHERE replay_operation_id = ${operationId} AND status IN ('pending', 'failing')`;
}

/** A replay's deliveries counted per status. */
export function replayDeliveryCounts(tx: Tx, operationId: string): Promise<{ status: string; n: number }[]> {
  return tx.$queryRaw<{ status: string; n: number }[]>`
    SELECT status, count(*)::int AS n FROM webhook_delivery WHERE replay_operation_id = ${operationId} GROUP BY status`;
}

// Health (health.ts, health-event.ts)

export interface HealthRow {
  hour_attempts: number;
  hour_succeeded: number;
  hour_p50: number | null;
  hour_p99: number | null;
  day_attempts: number;
  day_succeeded: number;
  day_p50: number | null;
  day_p99: number | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_failure_status: number | null;
  last_failure_error: string | null;
}

/**
 * One statement over the attempt log: the last day is one range of the (endpoint_id, started_at) index (the hour
 * after `hour` counted apart), the last success and failure one backward probe each.
 */
export async function endpointHealthRow(db: Db, endpointId: string, now: Date, hour: Date, day: Date): Promise<HealthRow> {
  // A webhook succeeds with a 2xx; a destination's accepted publish has no HTTP status and no error.
  const ok = Prisma.sql`coalesce(status_code BETWEEN 200 AND 299, error IS NULL)`;
  const [r] = await db.$queryRaw<HealthRow[]>`
    WITH a AS (
      SELECT started_at > ${hour}::timestamptz AS recent, ${ok} AS ok, duration_ms FROM webhook_attempt
      WHERE endpoint_id = ${endpointId} AND started_at > ${day}::timestamptz AND started_at <= ${now}::timestamptz
    ), agg AS (
      SELECT count(*) FILTER (WHERE recent)::int AS hour_attempts, count(*) FILTER (WHERE recent AND ok)::int AS hour_succeeded,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE recent) AS hour_p50,
        percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE recent) AS hour_p99,
        count(*)::int AS day_attempts, count(*) FILTER (WHERE ok)::int AS day_succeeded,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS day_p50,
        percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS day_p99
      FROM a
    )
    SELECT agg.*, s.started_at AS last_success_at, f.started_at AS last_failure_at, f.status_code AS last_failure_status,
      f.error AS last_failure_error
    FROM agg
    LEFT JOIN LATERAL (SELECT started_at FROM webhook_attempt WHERE endpoint_id = ${endpointId} AND started_at <= ${now}::timestamptz AND ${ok}
      ORDER BY started_at DESC LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT started_at, status_code, error FROM webhook_attempt
      WHERE endpoint_id = ${endpointId} AND started_at <= ${now}::timestamptz AND NOT ${ok}
      ORDER BY started_at DESC LIMIT 1) f ON true`;
  return r!;
}

/** Inserts health events, each with the organization of its endpoint. */
export async function insertHealthEvents(
  tx: Tx,
  now: Date,
  events: { id: string; endpointId: string; kind: string; reason: string | null }[],
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO webhook_endpoint_health_event (id, organization_id, endpoint_id, kind, reason, created_at)
    SELECT x.id, w.organization_id, w.id, x.kind, x.reason, ${now}::timestamptz
    FROM unnest(${events.map((e) => e.id)}::text[], ${events.map((e) => e.endpointId)}::text[],
      ${events.map((e) => e.kind)}::text[], ${events.map((e) => e.reason)}::text[]) AS x(id, endpoint_id, kind, reason)
    JOIN webhook_endpoint w ON w.id = x.endpoint_id`;
}

/** A health event of the endpoint by id (null: none). */
export function findHealthEvent(db: Db, endpointId: string, id: string) {
  return db.webhookEndpointHealthEvent.findFirst({ where: { id, endpointId } });
}

/** A page of the endpoint's health events, newest first. */
export function healthEventsPage(db: Db, endpointId: string, below: Below, take: number) {
  return db.webhookEndpointHealthEvent.findMany({ where: { endpointId, ...below }, orderBy: { id: 'desc' }, take });
}

/** The endpoint's newest health event (null: none). */
export function latestHealthEvent(db: Db, endpointId: string) {
  return db.webhookEndpointHealthEvent.findFirst({ where: { endpointId }, orderBy: { id: 'desc' } });
}

/** Up to `take` of the endpoint's health events after the one with id `after`, oldest first. */
export function healthEventsAfter(db: Db, endpointId: string, after: string, take: number) {
  return db.webhookEndpointHealthEvent.findMany({ where: { endpointId, id: { gt: after } }, orderBy: { id: 'asc' }, take });
}

// Retention (retention.ts)

/** Deletes up to `batch` attempts started before `cutoff`, oldest first (the `started_at` index); returns how many. */
export function pruneAttempts(db: PrismaClient, cutoff: Date, batch: number): Promise<number> {
  return db.$executeRaw`
      DELETE FROM webhook_attempt WHERE id IN (
        SELECT id FROM webhook_attempt WHERE started_at < ${cutoff}::timestamptz ORDER BY started_at LIMIT ${batch}::int)`;
}
