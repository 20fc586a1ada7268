import { z } from 'zod';
import type { Event } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { parseInput } from '../validation.ts';
import { PUBLIC_EVENT_TYPES, isPublicEventType } from './types.ts';

/**
 * The append-only, organization-scoped event log. `appendEvent` runs inside
 * the transaction of the change it records (transactional outbox); the row
 * becomes visible to the feed, webhooks and subscriptions once the sequencer
 * has given it a `seq` after commit.
 */
export interface PublicEvent {
  id: string;
  object: 'event';
  type: string;
  seq: number;
  subject: { type: string; id: string };
  data: unknown;
  operation: string | null;
  livemode: boolean;
  created_at: string;
}

export interface NewEvent {
  organizationId: string;
  type: string;
  subject: { type: string; id: string };
  data: Record<string, unknown>;
  operationId?: string | null;
}

export async function appendEvent(deps: Deps, tx: Tx, e: NewEvent): Promise<string> {
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
      createdAt: deps.clock.now(),
    },
  });
  deps.db.afterCommit(tx, () => deps.sequencer.kick());
  return id;
}

/**
 * The same append as one statement for raw SQL (the batched port, or
 * `$executeRaw`): rows with seq NULL, like appendEvent. The caller wakes the
 * sequencer after its commit.
 */
export function insertEvents(deps: Deps, events: NewEvent[]): Prisma.Sql {
  const createdAt = deps.clock.now();
  const rows = events.map((e) => ({
    id: newId('event'),
    organization_id: e.organizationId,
    type: e.type,
    subject_type: e.subject.type,
    subject_id: e.subject.id,
    data: e.data,
    operation_id: e.operationId ?? null,
    created_at: createdAt,
  }));
  return Prisma.sql`INSERT INTO event (id, organization_id, type, subject_type, subject_id, data, operation_id, created_at)
    SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS x(id text, organization_id text, type text, subject_type text, subject_id text, data jsonb, operation_id text, created_at timestamptz)`;
}

export function presentEvent(row: Event): PublicEvent {
  return {
    id: row.id,
    object: 'event',
    type: row.type,
    seq: Number(row.seq),
    subject: { type: row.subjectType, id: row.subjectId },
    data: row.data,
    operation: row.operationId,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
  };
}

const eventType = z.string().refine(isPublicEventType, { message: 'not a public event type' });

export const ListEventsInput = z.strictObject({
  type: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().min(1).optional(),
});

export function assertPublicType(type: string | undefined, param = 'type'): void {
  if (type !== undefined && !eventType.safeParse(type).success) {
    throw new DomainError('invalid_event_type', `Unknown event type: ${type}. The public types are the enum of \`type\` in GET /v1/platform/openapi.json`, param);
  }
}

/** A `starting_after` cursor: a seq number or an `evt_` id of this organization's feed. */
export async function cursorSeq(deps: Deps, organizationId: string, cursor: string | undefined): Promise<bigint> {
  if (cursor === undefined) return -1n;
  if (/^\d{1,18}$/.test(cursor)) return BigInt(cursor);
  const row = isId('event', cursor)
    ? await deps.db.prisma.event.findFirst({ where: { id: cursor, organizationId, seq: { not: null } }, select: { seq: true, type: true } })
    : null;
  if (!row || !isPublicEventType(row.type)) throw missing('event', cursor, 'starting_after');
  return row.seq!;
}

export interface EventPage {
  object: 'list';
  data: PublicEvent[];
  has_more: boolean;
}

/** Ascending `seq`, unlike other lists: the feed is a log to tail, not a recent-first view. */
export async function listEvents(deps: Deps, organizationId: string, raw: unknown): Promise<EventPage> {
  const input = parseInput(ListEventsInput, raw);
  assertPublicType(input.type);
  const after = await cursorSeq(deps, organizationId, input.starting_after);
  return pageEvents(deps, organizationId, { after, limit: input.limit, types: input.type ? [input.type] : undefined });
}

export async function pageEvents(
  deps: Deps,
  organizationId: string,
  q: { after: bigint; limit: number; types?: readonly string[] },
): Promise<EventPage> {
  const rows = await deps.db.prisma.event.findMany({
    where: { organizationId, seq: { gt: q.after }, type: { in: q.types?.length ? [...q.types] : [...PUBLIC_EVENT_TYPES] } },
    orderBy: { seq: 'asc' },
    take: q.limit + 1,
  });
  return { object: 'list', data: rows.slice(0, q.limit).map(presentEvent), has_more: rows.length > q.limit };
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
  const id = await deps.db.transaction((tx) =>
    appendEvent(deps, tx, { organizationId: org.id, type: input.type, subject: input.subject, data: { ...input.data, test: true } }),
  );
  return { id };
}
