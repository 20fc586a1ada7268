import type { Event as EventRow, PrismaClient } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import { inBatch, statement, type SqlPort } from '../../db/sql-port.ts';
import { PUBLIC_EVENT_TYPES } from './types.ts';

// The event capability's SQL: the append, the feed's statements, the sequencer's numbering and the stream's pull.

type Db = Tx | PrismaClient;

/**
 * An event row as readers present it (a Prisma row, or a row of the feed
 * statement). `position` is internal and never leaves the server; `seq` is
 * int8, which the drivers hand over as bigint, number or string; `createdAt` is a Date, or the feed's ISO 8601 text.
 */
export type EventRecord = Omit<EventRow, 'position' | 'organizationId' | 'seq' | 'createdAt'> & {
  seq: bigint | number | string | null;
  createdAt: Date | string;
};

/** A new event's row, seq and position NULL until the sequencer numbers it. */
export interface EventInsert {
  id: string;
  organization_id: string;
  type: string;
  subject_type: string;
  subject_id: string;
  data: Record<string, unknown>;
  operation_id: string | null;
  brand_id: string | null;
  created_at: Date;
}

export async function insertEvent(tx: Tx, r: EventInsert): Promise<void> {
  await tx.event.create({
    data: {
      id: r.id,
      organizationId: r.organization_id,
      type: r.type,
      subjectType: r.subject_type,
      subjectId: r.subject_id,
      data: r.data as object,
      operationId: r.operation_id,
      brandId: r.brand_id,
      createdAt: r.created_at,
    },
  });
}

/** Appends of up to this many events are VALUES rows, larger ones a recordset. */
const FEW_EVENTS = 8;

/** The same append as one statement for raw SQL (a batch of the SQL port, or `$executeRaw`), all rows created at `createdAt`. */
export function insertEventsStatement(rows: EventInsert[], createdAt: Date): Prisma.Sql {
  // A few events (a write appends one to three) as VALUES rows: about 40 % less of PostgreSQL's time per row than
  // json_to_recordset (bench/HISTORY.md, 2026-11-26), one prepared text per count. Bulk appends (a payout batch) and
  // none at all as one recordset, one text whatever the count.
  if (rows.length && rows.length <= FEW_EVENTS)
    return Prisma.sql`INSERT INTO event (id, organization_id, type, subject_type, subject_id, data, operation_id, brand_id, created_at)
      VALUES ${Prisma.join(
        rows.map(
          (r) =>
            Prisma.sql`(${r.id}, ${r.organization_id}, ${r.type}, ${r.subject_type}, ${r.subject_id}, ${JSON.stringify(r.data)}::jsonb, ${r.operation_id}, ${r.brand_id}, ${createdAt}::timestamptz)`,
        ),
      )}`;
  return Prisma.sql`INSERT INTO event (id, organization_id, type, subject_type, subject_id, data, operation_id, brand_id, created_at)
    SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS x(id text, organization_id text, type text, subject_type text, subject_id text, data jsonb, operation_id text, brand_id text, created_at timestamptz)`;
}

/** A sequenced event of the organization by id (its seq and type only, for a feed cursor). */
export function sequencedEventSeq(db: Db, organizationId: string, id: string) {
  return db.event.findFirst({ where: { id, organizationId, seq: { not: null } }, select: { seq: true, type: true } });
}

/** A sequenced event of the organization by id. */
export function findSequencedEvent(db: Db, organizationId: string, id: string) {
  return db.event.findFirst({ where: { id, organizationId, seq: { not: null } } });
}

/** The newest sequenced seq of an organization (null when it has none). */
export async function newestSeq(db: Db, organizationId: string): Promise<bigint | null> {
  const row = await db.event.findFirst({
    where: { organizationId, seq: { not: null } },
    orderBy: { seq: 'desc' },
    select: { seq: true },
  });
  return row?.seq ?? null;
}

/** The first seq at or after `at` (null: none), from the organization's sequenced events. */
export async function firstSeqFrom(tx: Tx, organizationId: string, at: Date): Promise<number | null> {
  const rows = await tx.$queryRaw<{ s: bigint | null }[]>`SELECT min(seq) AS s FROM event
    WHERE organization_id = ${organizationId} AND created_at >= ${at}::timestamptz AND seq IS NOT NULL`;
  return rows[0]?.s == null ? null : Number(rows[0].s);
}

/** The last seq at or before `at` (null: none), from the organization's sequenced events. */
export async function lastSeqUntil(tx: Tx, organizationId: string, at: Date): Promise<number | null> {
  const rows = await tx.$queryRaw<{ s: bigint | null }[]>`SELECT max(seq) AS s FROM event
    WHERE organization_id = ${organizationId} AND created_at <= ${at}::timestamptz AND seq IS NOT NULL`;
  return rows[0]?.s == null ? null : Number(rows[0].s);
}

/** What a replay reads of an event to decide whether an endpoint receives it. */
export interface SeqRangeRow {
  id: string;
  seq: bigint;
  type: string;
  brand_id: string | null;
  subject_type: string;
  subject_id: string;
  created_at: Date;
}

/** Up to `limit` events of the organization in `(after, until]` by seq, in seq order. */
export function eventsInSeqRange(tx: Tx, organizationId: string, after: number, until: number, limit: number): Promise<SeqRangeRow[]> {
  return tx.$queryRaw<SeqRangeRow[]>`
    SELECT id, seq, type, brand_id, subject_type, subject_id, created_at FROM event
    WHERE organization_id = ${organizationId} AND seq > ${after} AND seq <= ${until}
    ORDER BY seq LIMIT ${limit}::int`;
}

type FeedOrder = 'asc' | 'desc';
type FeedRow = EventRecord & { createdAt: string };
/**
 * `created_at` as the API writes it (ISO 8601, UTC, milliseconds: what `toISOString` gives for the clock's Date that
 * stored it), formatted by the database: a page of 100 events no longer has the driver parse 100 timestamps into Dates
 * for the presenter to format again, 16 % of the feed route's allocations (sampled, bench/HISTORY.md 2026-11-28).
 */
const FEED_COLUMNS = `id, type, seq, subject_type AS "subjectType", subject_id AS "subjectId", data, operation_id AS "operationId", brand_id AS "brandId", livemode, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "createdAt"`;

/** The public vocabulary as an SQL array constant (its names are dotted lowercase words: nothing to escape). */
const PUBLIC_TYPES = (() => {
  for (const t of PUBLIC_EVENT_TYPES) if (!/^[a-z_]+(\.[a-z_]+)+$/.test(t)) throw new Error(`Event type ${t} cannot be an SQL constant`);
  return `'{${PUBLIC_EVENT_TYPES.join(',')}}'::text[]`;
})();

/**
 * The brand and subject filters (src/domain/event/filter.ts), one statement
 * per driving index, most selective first: a subject id walks
 * (organization_id, subject_id, seq); brands take up to `limit` rows per brand
 * from (organization_id, brand_id, seq), subject types per type from
 * (organization_id, subject_type, seq), merged like the type filter below.
 * The other dimensions (types always: the public vocabulary when unfiltered)
 * are checked on the rows the index hands over; a NULL array means
 * "not filtered". Each text is fixed, so its generic plan keeps its index.
 */
type FilteredParams = [
  organizationId: string,
  after: string,
  types: string[],
  brands: string[] | null,
  subjectTypes: string[] | null,
  subjectId: string | null,
  limit: number,
];

/**
 * One page of the feed on the SQL port (the hottest read), as prepared
 * statements whose plan holds for any parameters (PostgreSQL switches a
 * prepared statement to one generic plan). The whole public vocabulary walks
 * the organization's (organization_id, seq) range, skipping internal types.
 * A type filter takes up to `limit` rows per type from the
 * (organization_id, type, seq) index and merges them, so a rare type costs a
 * few index probes however large the log (`type = ANY(...)` on the seq range
 * would scan past every other event).
 * The unfiltered page names the public vocabulary as a constant of its text
 * (`PUBLIC_TYPES`) rather than a parameter: nothing to serialize and parse on
 * each run (a 40-element array), and PostgreSQL checks each row against it
 * with a hash table.
 */
function feedStatements(order: FeedOrder) {
  const suffix = order === 'asc' ? '' : '_newest_first';
  const past = order === 'asc' ? 'seq > $2::bigint' : 'seq < $2::bigint';
  const by = (seq: string) => (order === 'asc' ? seq : `${seq} DESC`);
  const filtered = (driver: string) =>
    `SELECT ${FEED_COLUMNS} FROM event WHERE organization_id = $1 AND ${driver} AND ${past}
     AND type = ANY($3::text[]) AND ($4::text[] IS NULL OR brand_id = ANY($4::text[]))
     AND ($5::text[] IS NULL OR subject_type = ANY($5::text[])) AND ($6::text IS NULL OR subject_id = $6::text)
   ORDER BY ${by('seq')} LIMIT $7`;
  /** Up to `limit` rows per value of a list parameter from its column's index, merged in seq order. */
  const perValue = (name: string, list: '$4' | '$5', column: string) =>
    statement<FilteredParams, FeedRow>(
      name + suffix,
      `SELECT e.* FROM unnest(${list}::text[]) AS v(value) CROSS JOIN LATERAL (${filtered(`${column} = v.value`)}) e ORDER BY ${by('e.seq')} LIMIT $7`,
    );
  return {
    all: statement<[organizationId: string, after: string, limit: number], FeedRow>(
      `event_feed_page${suffix}`,
      `SELECT ${FEED_COLUMNS} FROM event WHERE organization_id = $1 AND ${past} AND type = ANY(${PUBLIC_TYPES}) ORDER BY ${by('seq')} LIMIT $3`,
    ),
    ofTypes: statement<[organizationId: string, after: string, types: string[], limit: number], FeedRow>(
      `event_feed_page_of_types${suffix}`,
      `SELECT e.* FROM unnest($3::text[]) AS t(type) CROSS JOIN LATERAL (
     SELECT ${FEED_COLUMNS} FROM event WHERE organization_id = $1 AND type = t.type AND ${past} ORDER BY ${by('seq')} LIMIT $4
   ) e ORDER BY ${by('e.seq')} LIMIT $4`,
    ),
    ofSubject: statement<FilteredParams, FeedRow>(`event_feed_page_of_subject${suffix}`, filtered('subject_id = $6::text')),
    ofBrands: perValue('event_feed_page_of_brands', '$4', 'brand_id'),
    ofSubjectTypes: perValue('event_feed_page_of_subject_types', '$5', 'subject_type'),
  };
}
export const FEED_STATEMENTS = { asc: feedStatements('asc'), desc: feedStatements('desc') };
export const {
  all: feedPageStatement,
  ofTypes: feedPageOfTypesStatement,
  ofSubject: feedPageOfSubjectStatement,
  ofBrands: feedPageOfBrandsStatement,
  ofSubjectTypes: feedPageOfSubjectTypesStatement,
} = FEED_STATEMENTS.asc;

/** What one page of the feed reads: past `after` (a seq) in `order`; a list given (or a subject id) filters, null does not. */
export interface FeedQuery {
  after: string;
  order: FeedOrder;
  /** The types to read: the filter's, else the whole public vocabulary (`typeFiltered` false). */
  types: string[];
  typeFiltered: boolean;
  brands: string[] | null;
  subjectTypes: string[] | null;
  subjectId: string | null;
  limit: number;
}

/** The rows of one feed page, from the statement of the query's most selective index. */
export function feedRows(sql: SqlPort, organizationId: string, q: FeedQuery): Promise<FeedRow[]> {
  const s = FEED_STATEMENTS[q.order];
  if (q.brands || q.subjectTypes || q.subjectId !== null) {
    const filtered = q.subjectId !== null ? s.ofSubject : q.brands ? s.ofBrands : s.ofSubjectTypes;
    return sql.rows(filtered, [organizationId, q.after, q.types, q.brands, q.subjectTypes, q.subjectId, q.limit]);
  }
  if (q.typeFiltered) return sql.rows(s.ofTypes, [organizationId, q.after, q.types, q.limit]);
  return sql.rows(s.all, [organizationId, q.after, q.limit]);
}

/** A sequenced event as the live stream reads it: the feed's columns plus its organization and internal position. */
export type StreamRow = FeedRow & { organizationId: string; position: bigint | number | string };
/** The most events one pull reads. */
export const STREAM_PULL_LIMIT = 1000;
/** The live stream's pull: everything sequenced after a global position, in position order (the unique `position` index). */
export const streamPullStatement = statement<[afterPosition: string, limit: number], StreamRow>(
  'event_stream_pull',
  `SELECT ${FEED_COLUMNS}, organization_id AS "organizationId", position FROM event WHERE position > $1::bigint ORDER BY position LIMIT $2`,
);
/** The same pull as a statement of a batch (the sequencer's, which reads the batch it numbers for its own process's stream). */
export const streamPullSql = (after: bigint): Prisma.Sql => inBatch(streamPullStatement, [String(after), STREAM_PULL_LIMIT]);
/** Where the live stream starts: the highest position sequenced so far (the `position` index's last entry). */
export const maxPositionStatement = statement<[], { max: string | null }>(
  'event_max_position',
  'SELECT max(position)::text AS max FROM event',
);

/** Up to `limit` events sequenced after `after`, in position order. */
export function pullSequenced(sql: SqlPort, after: bigint, limit: number): Promise<StreamRow[]> {
  return sql.rows(streamPullStatement, [String(after), limit]);
}

/** The highest position sequenced so far (null: none). */
export async function maxPosition(sql: SqlPort): Promise<string | null> {
  const [row] = await sql.rows(maxPositionStatement, []);
  return row?.max ?? null;
}

const unsequencedStatement = statement<[], { id: string }>('event_unsequenced', 'SELECT id FROM event WHERE seq IS NULL LIMIT 1');

/** Whether any committed event still waits for its seq. */
export async function hasUnsequenced(sql: SqlPort): Promise<boolean> {
  return (await sql.rows(unsequencedStatement, [])).length > 0;
}

/**
 * The sequencer's batch (src/runtime/sequencer.ts): the cluster-wide lock, then the numbering of up to `batch`
 * unsequenced events with, when `notify`, one NOTIFY on `channel` carrying the highest position. Its second
 * statement returns one row: `n` numbered, `max` position (text, null when none).
 */
export function sequenceStatements(o: { lockKey: number; channel: string; batch: number; notify: boolean }): Prisma.Sql[] {
  // `pending` is referenced twice, so PostgreSQL materializes it: nextval runs once per row. `top` is materialized too:
  // inlined, its max(seq) probe ran once per pending row instead of once per organization.
  return [
    Prisma.sql`SELECT pg_advisory_xact_lock(${o.lockKey}::bigint)::text`,
    Prisma.sql`
    WITH pending AS (
      SELECT id, organization_id, nextval('event_position_seq') AS position
      FROM (SELECT id, organization_id FROM event WHERE seq IS NULL ORDER BY id LIMIT ${o.batch}::int) unsequenced
    ), top AS MATERIALIZED (
      SELECT o.organization_id, coalesce((SELECT max(e.seq) FROM event e WHERE e.organization_id = o.organization_id), 0) AS seq
      FROM (SELECT DISTINCT organization_id FROM pending) o
    ), numbered AS (
      SELECT p.id, p.position, top.seq + row_number() OVER (PARTITION BY p.organization_id ORDER BY p.position) AS seq
      FROM pending p JOIN top USING (organization_id)
    ), updated AS (
      UPDATE event e SET seq = numbered.seq, position = numbered.position FROM numbered WHERE e.id = numbered.id RETURNING e.position
    )
    SELECT n, max, CASE WHEN ${o.notify} AND max IS NOT NULL THEN pg_notify(${o.channel}, max)::text END AS notified
    FROM (SELECT count(*)::int AS n, max(position)::text AS max FROM updated) batch`,
  ];
}
