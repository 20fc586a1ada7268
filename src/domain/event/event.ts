import { z } from 'zod';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { parseInput } from '../validation.ts';
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
import { organizationById } from '../organization/store.ts';
import {
  feedRows,
  findSequencedEvent,
  insertEvent,
  insertEventsStatement,
  newestSeq,
  sequencedEventSeq,
  type EventInsert,
  type EventRecord,
} from './store.ts';

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
  const [row] = eventRows([e], deps.clock.now());
  await insertEvent(tx, row!);
  deps.db.afterCommit(tx, () => deps.sequencer.kick());
  return row!.id;
}

/** New events' rows (each checked against its type's schema), created at `createdAt`. */
function eventRows(events: NewEvent[], createdAt: Date): EventInsert[] {
  return events.map(checked).map((e) => ({
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
}

/**
 * The same append as one statement for raw SQL (the batched port, or
 * `$executeRaw`): rows with seq NULL, like appendEvent. The caller wakes the
 * sequencer after its commit.
 */
export function insertEvents(deps: Deps, events: NewEvent[]): Prisma.Sql {
  const createdAt = deps.clock.now();
  return insertEventsStatement(eventRows(events, createdAt), createdAt);
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
    created_at: typeof row.createdAt === 'string' ? row.createdAt : row.createdAt.toISOString(),
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
  const row = isId('event', cursor) ? await sequencedEventSeq(deps.db.prisma, organizationId, cursor) : null;
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

const PUBLIC_TYPE_LIST = [...PUBLIC_EVENT_TYPES];

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
  const rows = await feedRows(deps.db.sql, organizationId, {
    after,
    order,
    types,
    typeFiltered: !!f.types,
    brands: f.brands ? [...f.brands] : null,
    subjectTypes: f.subjectTypes ? [...f.subjectTypes] : null,
    subjectId: f.subjectId ?? null,
    limit: q.limit + 1,
  });
  const data: PublicEvent[] = [];
  for (let i = 0; i < rows.length && i < q.limit; i++) data.push(presentEvent(rows[i]!));
  return { object: 'list', data, has_more: rows.length > q.limit };
}

export async function retrieveEvent(deps: Deps, organizationId: string, id: string): Promise<PublicEvent> {
  const row = isId('event', id) ? await findSequencedEvent(deps.db.prisma, organizationId, id) : null;
  if (!row || !isPublicEventType(row.type)) throw missing('event', id);
  return presentEvent(row);
}

/** The newest sequenced seq of an organization's public feed (0 when empty). */
export async function latestSeq(deps: Deps, organizationId: string): Promise<bigint> {
  return (await newestSeq(deps.db.prisma, organizationId)) ?? 0n;
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
  const org = isId('organization', input.organization_id) ? await organizationById(deps.db.prisma, input.organization_id) : null;
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
