import { z } from 'zod';
import type { Event as EventRow } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { parseInput } from '../validation.ts';
import { inBatch, statement } from '../../db/sql-port.ts';
import { PUBLIC_EVENT_TYPES, isPublicEventType } from './types.ts';
import { eventDataProblem } from './payload.ts';
import { capability, read } from '../action/action.ts';
import { ListInput, listOf, type Page } from '../action/list.ts';
import {
  ALL_EVENTS,
  MAX_FILTER_ENTRIES,
  REST_PARAMS,
  assertPublicType,
  parseEventFilter,
  resolveBrands,
  splitList,
  type EventFilter,
  type EventFilterInput,
  type FilterParams,
} from './filter.ts';
import { isoTime } from '../shape.ts';

/**
 * The append-only, organization-scoped event log. `appendEvent` runs inside
 * the transaction of the change it records (transactional outbox); the row
 * becomes visible to the feed, webhooks and subscriptions once the sequencer
 * has given it a `seq` after commit.
 */
export const Event = z.object({
  id: z.string().describe('prefix evt_'),
  object: z.literal('event'),
  type: z.enum(PUBLIC_EVENT_TYPES).describe('one of the public event types; dotted names (GraphQL serves them as strings)'),
  seq: z.number().int().describe('monotonically increasing; defines order'),
  subject: z.object({ type: z.string(), id: z.string() }),
  data: z.record(z.string(), z.unknown()),
  operation: z.string().nullable().describe('op_ id of the causing operation'),
  brand: z
    .string()
    .nullable()
    .describe(
      'brand_ id the causing request selected (Service-Brand, else the oldest brand); null for organization-level events (assertion.*, operations without a brand, operator test events)',
    ),
  livemode: z.boolean(),
  created_at: isoTime,
});
/** An event as every reader shows it; `brand` is null for organization-level events (src/domain/event/filter.ts). */
export type PublicEvent = z.output<typeof Event>;

/**
 * An event row as readers present it (a Prisma row, or a row of the feed
 * statement). `position` is internal and never leaves the server; `seq` is
 * int8, which the drivers hand over as bigint, number or string.
 */
export type EventRecord = Omit<EventRow, 'position' | 'organizationId' | 'seq'> & { seq: bigint | number | string | null };

export interface NewEvent {
  organizationId: string;
  type: string;
  subject: { type: string; id: string };
  data: Record<string, unknown>;
  operationId?: string | null;
  /** The brand the causing request selected (null or omitted: an organization-level event). */
  brandId?: string | null;
  /** A hand-made test event (the operator's route, test and benchmark fixtures): its data is whatever its maker gave, unchecked. */
  test?: true;
}

/**
 * A producer whose payload breaks its type's schema (src/domain/event/payload.ts) has a bug: the write fails
 * loudly rather than publish data the catalogue does not describe. Checked always, in production too: about 0.5 µs
 * for an assertion event and 2.5 µs for a standing event (zod 4), against a write of milliseconds.
 */
function checked(e: NewEvent): NewEvent {
  const problem = e.test ? null : eventDataProblem(e.type, e.data);
  if (problem) throw new Error(`${e.type} data does not match its schema (src/domain/event/payload.ts):\n${problem}`);
  return e;
}

export async function appendEvent(deps: Deps, tx: Tx, e: NewEvent): Promise<string> {
  checked(e);
  const id = newId('event');
  await tx.event.create({
    data: {
      id,
      organizationId: e.organizationId,
      type: e.type,
      subjectType: e.subject.type,
      subjectId: e.subject.id,
      data: e.data as object,
      operationId: e.operationId ?? null,
      brandId: e.brandId ?? null,
      createdAt: deps.clock.now(),
    },
  });
  deps.db.afterCommit(tx, () => deps.sequencer.kick());
  return id;
}

/** Appends of up to this many events are VALUES rows, larger ones a recordset (insertEvents). */
const FEW_EVENTS = 8;

/**
 * The same append as one statement for raw SQL (the batched port, or
 * `$executeRaw`): rows with seq NULL, like appendEvent. The caller wakes the
 * sequencer after its commit.
 */
export function insertEvents(deps: Deps, events: NewEvent[]): Prisma.Sql {
  const createdAt = deps.clock.now();
  const rows = events.map(checked).map((e) => ({
    id: newId('event'),
    organization_id: e.organizationId,
    type: e.type,
    subject_type: e.subject.type,
    subject_id: e.subject.id,
    data: e.data,
    operation_id: e.operationId ?? null,
    brand_id: e.brandId ?? null,
    created_at: createdAt,
  }));
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

export function presentEvent(row: EventRecord): PublicEvent {
  return {
    id: row.id,
    object: 'event',
    // Readers select public types only (isPublicEventType at every read path).
    type: row.type as PublicEvent['type'],
    seq: Number(row.seq),
    subject: { type: row.subjectType, id: row.subjectId },
    data: row.data as Record<string, unknown>,
    operation: row.operationId,
    brand: row.brandId,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * The feed's order: `asc`, the log to tail (the default), or `desc`, newest first (`order=desc&limit=1` is the
 * head of the feed, the seq to resume after). A cursor continues in the page's order: past it ascending, below it
 * newest first. Each order has its own statements, walking the same indexes forward or backward.
 */
export const FEED_ORDERS = ['asc', 'desc'] as const;
export type FeedOrder = (typeof FEED_ORDERS)[number];
/** Where a page starts without a cursor: before the first seq, or past the last. */
const NO_CURSOR: Record<FeedOrder, bigint> = { asc: -1n, desc: 9223372036854775807n };

const listParam = (what: string) =>
  z
    .string()
    .optional()
    .describe(`${what}: one value or several separated by commas (at most ${MAX_FILTER_ENTRIES}); repeating the parameter is refused`);

export const ListEventsInput = z.strictObject({
  type: z.string().optional(),
  brands: listParam('Only events of these brands (ids or slugs; organization-level events never match)'),
  subject_types: listParam('Only events whose subject has one of these types'),
  subject_id: z.string().optional().describe('Only events about this subject id'),
  order: z
    .enum(FEED_ORDERS)
    .default('asc')
    .describe(
      'asc: oldest first, the log to tail (the default); desc: newest first, starting_after then pages to older events. order=desc&limit=1 reads the head of the feed.',
    ),
  ...ListInput.shape,
});

/** A `starting_after` cursor: a seq number or an `evt_` id of this organization's feed. */
export async function cursorSeq(deps: Deps, organizationId: string, cursor: string): Promise<bigint> {
  if (/^\d{1,18}$/.test(cursor)) return BigInt(cursor);
  const row = isId('event', cursor)
    ? await deps.db.prisma.event.findFirst({ where: { id: cursor, organizationId, seq: { not: null } }, select: { seq: true, type: true } })
    : null;
  if (!row || !isPublicEventType(row.type)) throw missing('event', cursor, 'starting_after');
  return row.seq!;
}

export type EventPage = Page<PublicEvent>;

/**
 * The event feed (REST only: GraphQL's `events` query takes its filters as
 * lists, shared with the subscription, and reads the same pages through
 * `feedPage`). Ascending `seq` by default, unlike other lists: the feed is a
 * log to tail, not a recent-first view; `order=desc` reads it newest first.
 */
export const events = capability({ name: 'events', title: 'Events', resource: 'events' })({
  list: read({
    summary: 'The event feed: public events in ascending seq',
    input: ListEventsInput,
    output: listOf(Event),
    fronts: ['rest'],
    run: ({ deps, caller, input }) =>
      feedPage(deps, caller.organization.id, input, {
        type: input.type,
        brands: splitList(input.brands),
        subject_types: splitList(input.subject_types),
        subject_id: input.subject_id,
      } as EventFilterInput),
  }),
  retrieve: read({
    summary: 'One public event by evt_ id, once it is sequenced (the same object the feed and webhooks carry)',
    params: ['id'],
    retrieves: 'event',
    input: z.strictObject({}),
    output: Event,
    run: ({ deps, caller, params }) => retrieveEvent(deps, caller.organization.id, params.id),
  }),
});

/**
 * One page of the feed in `order` past a `starting_after` cursor (a seq or an evt_ id), filtered; the filter's
 * errors name `params`.
 */
export async function feedPage(
  deps: Deps,
  organizationId: string,
  paging: { limit: number; starting_after?: string; order?: FeedOrder },
  filterInput: EventFilterInput,
  params: FilterParams = REST_PARAMS,
): Promise<EventPage> {
  const order = paging.order ?? 'asc';
  const filter = await parseEventFilter(deps, organizationId, filterInput, params);
  const after = paging.starting_after === undefined ? NO_CURSOR[order] : await cursorSeq(deps, organizationId, paging.starting_after);
  return pageEvents(deps, organizationId, { after, limit: paging.limit, filter, order });
}

type FeedRow = EventRecord;
const PUBLIC_TYPE_LIST = [...PUBLIC_EVENT_TYPES];
const FEED_COLUMNS = `id, type, seq, subject_type AS "subjectType", subject_id AS "subjectId", data, operation_id AS "operationId", brand_id AS "brandId", livemode, created_at AS "createdAt"`;

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
    all: statement<[organizationId: string, after: string, publicTypes: string[], limit: number], FeedRow>(
      `event_feed_page${suffix}`,
      `SELECT ${FEED_COLUMNS} FROM event WHERE organization_id = $1 AND ${past} AND type = ANY($3::text[]) ORDER BY ${by('seq')} LIMIT $4`,
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

function filteredStatement(f: EventFilter, order: FeedOrder) {
  const s = FEED_STATEMENTS[order];
  if (f.subjectId !== undefined) return s.ofSubject;
  if (f.brands) return s.ofBrands;
  return s.ofSubjectTypes;
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

/** A page of the feed past `after` (a seq) in `order` (ascending unless given). */
export async function pageEvents(
  deps: Deps,
  organizationId: string,
  q: { after: bigint; limit: number; filter?: EventFilter; order?: FeedOrder },
): Promise<EventPage> {
  const after = String(q.after);
  const order = q.order ?? 'asc';
  const f = q.filter ?? ALL_EVENTS;
  const types = f.types ? [...f.types] : PUBLIC_TYPE_LIST;
  const rows =
    f.brands || f.subjectTypes || f.subjectId !== undefined
      ? await deps.db.sql.rows(filteredStatement(f, order), [
          organizationId,
          after,
          types,
          f.brands ? [...f.brands] : null,
          f.subjectTypes ? [...f.subjectTypes] : null,
          f.subjectId ?? null,
          q.limit + 1,
        ])
      : f.types
        ? await deps.db.sql.rows(FEED_STATEMENTS[order].ofTypes, [organizationId, after, types, q.limit + 1])
        : await deps.db.sql.rows(FEED_STATEMENTS[order].all, [organizationId, after, types, q.limit + 1]);
  const data: PublicEvent[] = [];
  for (let i = 0; i < rows.length && i < q.limit; i++) data.push(presentEvent(rows[i]!));
  return { object: 'list', data, has_more: rows.length > q.limit };
}

export async function retrieveEvent(deps: Deps, organizationId: string, id: string): Promise<PublicEvent> {
  const row = isId('event', id) ? await deps.db.prisma.event.findFirst({ where: { id, organizationId, seq: { not: null } } }) : null;
  if (!row || !isPublicEventType(row.type)) throw missing('event', id);
  return presentEvent(row);
}

/** The newest sequenced seq of an organization's public feed (0 when empty). */
export async function latestSeq(deps: Deps, organizationId: string): Promise<bigint> {
  const row = await deps.db.prisma.event.findFirst({
    where: { organizationId, seq: { not: null } },
    orderBy: { seq: 'desc' },
    select: { seq: true },
  });
  return row?.seq ?? 0n;
}

export const OperatorEventInput = z.strictObject({
  organization_id: z.string().min(1),
  type: z.string(),
  subject: z.strictObject({ type: z.string().min(1).max(64), id: z.string().min(1).max(128) }),
  data: z.record(z.string(), z.unknown()).default({}),
  /** The brand (id or slug) the event carries, as if a request had selected it; omitted: an organization-level event. */
  brand: z.string().min(1).max(128).optional(),
});

/**
 * Appends a public event by hand, so integrators can exercise their feed
 * readers and webhook receivers before real traffic (like `stripe trigger`).
 */
export async function appendOperatorEvent(deps: Deps, raw: unknown): Promise<{ id: string }> {
  const input = parseInput(OperatorEventInput, raw);
  assertPublicType(input.type);
  const org = isId('organization', input.organization_id)
    ? await deps.db.prisma.organization.findUnique({ where: { id: input.organization_id }, select: { id: true } })
    : null;
  if (!org) throw missing('organization', input.organization_id, 'organization_id');
  const [brandId] = input.brand === undefined ? [null] : await resolveBrands(deps, org.id, [input.brand], 'brand');
  const id = await deps.db.transaction((tx) =>
    appendEvent(deps, tx, {
      organizationId: org.id,
      type: input.type,
      subject: input.subject,
      data: { ...input.data, test: true },
      brandId,
      test: true,
    }),
  );
  return { id };
}
