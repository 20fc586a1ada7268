import { z } from 'zod';
import type { AssertionClaim, AssertionEvent } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { appendEvent } from '../event/event.ts';
import { ensureEntity, findEntity, lockEntity, subjectFields, subjectOf } from '../entity/entity.ts';
import { claimLive, evaluateEntityStanding } from '../enrollment/standing.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import { runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput, timestamp } from '../validation.ts';

/**
 * Assertions: claims about an entity, addressed by (entity, key). History is
 * the append-only AssertionEvent table; AssertionClaim is the projection of
 * the newest event per claim. A claim past its `expires_at` reads as absent
 * without any event being written.
 */
export const ASSERTION_KEY = /^[a-z][a-z0-9_]{0,63}$/;

const key = z.string().regex(ASSERTION_KEY, 'must match ^[a-z][a-z0-9_]{0,63}$');
/** Booleans become 1 or 0; zod's number already refuses NaN and ±Infinity. */
const value = z.union([z.boolean().transform((b) => (b ? 1 : 0)), z.number()], { error: 'must be a boolean or a finite number' });

export const CreateAssertionInput = z.strictObject({
  ...subjectFields,
  key,
  value: value.optional().describe('boolean (stored as 1 or 0) or finite number; default true'),
  expires_at: timestamp().optional(),
});

export const RevokeAssertionInput = z.strictObject({ ...subjectFields, key });

const booleanQuery = z.union([z.boolean(), z.enum(['true', 'false']).transform((s) => s === 'true')]);

export const ListAssertionsInput = z.strictObject({
  ...subjectFields,
  key: key.optional(),
  include_expired: booleanQuery.default(false),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  starting_after: z.string().min(1).optional(),
});

export const NoAssertionInput = z.strictObject({});

export interface PublicAssertion {
  id: string;
  object: 'assertion';
  entity: string;
  key: string;
  action: 'asserted' | 'revoked';
  value: number | null;
  expires_at: string | null;
  effective_at: string;
  livemode: boolean;
  created_at: string;
}

export function presentAssertion(row: AssertionEvent): PublicAssertion {
  return {
    id: row.id,
    object: 'assertion',
    entity: row.entityId,
    key: row.key,
    action: row.action as PublicAssertion['action'],
    value: row.value,
    expires_at: row.expiresAt?.toISOString() ?? null,
    effective_at: row.effectiveAt.toISOString(),
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
  };
}

/** What POST /assertions/revoke answers: the appended `revoked` event, or nothing when the claim was already absent. */
export interface AssertionRevocation {
  object: 'assertion_revocation';
  entity: string | null;
  key: string;
  revoked: boolean;
  assertion: PublicAssertion | null;
}

const sameExpiry = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/**
 * Appends one history row, moves the claim projection to it, records the
 * public event and re-evaluates the entity's standing, all in `tx` and under
 * the entity lock the caller holds.
 */
async function appendAssertionEvent(
  deps: Deps,
  tx: Tx,
  organizationId: string,
  entityId: string,
  claimKey: string,
  change: { action: 'asserted' | 'revoked'; value: number | null; expiresAt: Date | null },
): Promise<PublicAssertion> {
  const now = deps.clock.now();
  const row = await tx.assertionEvent.create({
    data: { id: newId('assertion'), organizationId, entityId, key: claimKey, ...change, effectiveAt: now, createdAt: now },
  });
  const claim = { eventId: row.id, present: change.action === 'asserted', value: change.value, expiresAt: change.expiresAt, updatedAt: now };
  await tx.assertionClaim.upsert({
    where: { entityId_key: { entityId, key: claimKey } },
    create: { entityId, key: claimKey, organizationId, ...claim },
    update: claim,
  });
  const assertion = presentAssertion(row);
  await appendEvent(deps, tx, {
    organizationId,
    type: change.action === 'asserted' ? 'assertion.created' : 'assertion.revoked',
    subject: { type: 'assertion', id: row.id },
    data: { ...assertion },
  });
  await evaluateEntityStanding(deps, tx, entityId, { trigger: 'assertion', assertion: row.id }, { alreadyLocked: true });
  return assertion;
}

async function currentClaim(tx: Tx, entityId: string, claimKey: string): Promise<AssertionClaim | null> {
  return tx.assertionClaim.findUnique({ where: { entityId_key: { entityId, key: claimKey } } });
}

/** 201 with a new event when the claim changes (absent → present, new value, new expiry); 200 with the current event otherwise. */
async function createAssertion(deps: Deps, tx: Tx, organizationId: string, raw: unknown): Promise<StoredResponse> {
  const input = parseInput(CreateAssertionInput, raw);
  const subject = subjectOf(input);
  const now = deps.clock.now();
  if (input.expires_at && input.expires_at <= now) throw new DomainError('invalid_request', 'expires_at must be in the future', 'expires_at');
  const entity = await ensureEntity(deps, tx, organizationId, subject);
  await lockEntity(tx, entity.id);
  const claimValue = input.value ?? 1;
  const expiresAt = input.expires_at ?? null;
  const claim = await currentClaim(tx, entity.id, input.key);
  if (claimLive(claim ?? undefined, now) && claim!.value === claimValue && sameExpiry(claim!.expiresAt, expiresAt)) {
    const current = await tx.assertionEvent.findUniqueOrThrow({ where: { id: claim!.eventId } });
    return { status: 200, body: presentAssertion(current) };
  }
  const body = await appendAssertionEvent(deps, tx, organizationId, entity.id, input.key, { action: 'asserted', value: claimValue, expiresAt });
  return { status: 201, body };
}

/**
 * 201 with the appended `revoked` event when the claim was present; 200 and
 * nothing appended when it was absent (never stated, revoked, or expired).
 * An external pair never seen is an absent claim, not a new entity.
 */
async function revokeAssertion(deps: Deps, tx: Tx, organizationId: string, raw: unknown): Promise<StoredResponse> {
  const input = parseInput(RevokeAssertionInput, raw);
  const entity = await findEntity(tx, organizationId, subjectOf(input));
  const absent = { object: 'assertion_revocation' as const, entity: entity?.id ?? null, key: input.key, revoked: false, assertion: null };
  if (!entity) return { status: 200, body: absent };
  await lockEntity(tx, entity.id);
  const claim = await currentClaim(tx, entity.id, input.key);
  if (!claimLive(claim ?? undefined, deps.clock.now())) return { status: 200, body: absent };
  const assertion = await appendAssertionEvent(deps, tx, organizationId, entity.id, input.key, { action: 'revoked', value: null, expiresAt: null });
  return { status: 201, body: { ...absent, revoked: true, assertion } satisfies AssertionRevocation };
}

export type AssertionMutation = { op: 'create' | 'revoke'; input: unknown };

/** Both assertion mutations, from REST or GraphQL, through the idempotent runner (the stored response is the REST one). */
export function mutateAssertion(deps: Deps, caller: SurfaceBCaller, m: AssertionMutation, idempotencyKey?: string) {
  const org = caller.organization.id;
  return runMutation(deps, caller, { name: `assertions.${m.op}`, input: m.input, idempotencyKey }, (tx) =>
    m.op === 'create' ? createAssertion(deps, tx, org, m.input) : revokeAssertion(deps, tx, org, m.input),
  );
}

export async function retrieveAssertion(deps: Deps, organizationId: string, id: string): Promise<PublicAssertion> {
  const row = isId('assertion', id) ? await deps.db.prisma.assertionEvent.findFirst({ where: { id, organizationId } }) : null;
  if (!row) throw missing('assertion', id);
  return presentAssertion(row);
}

export interface AssertionPage {
  object: 'list';
  data: PublicAssertion[];
  has_more: boolean;
}

/**
 * The subject's current claims, each as its newest event, ordered by key
 * (a claim's event id changes on every refresh, its key never does).
 * `starting_after` is an `asrt_` id from a previous page: the page resumes
 * after that event's key. Expired claims appear only with include_expired.
 */
export async function listAssertions(deps: Deps, organizationId: string, raw: unknown): Promise<AssertionPage> {
  const input = parseInput(ListAssertionsInput, raw);
  const db = deps.db.prisma;
  const entity = await findEntity(db, organizationId, subjectOf(input));
  let afterKey: string | undefined;
  if (input.starting_after !== undefined) {
    const cursor =
      entity && isId('assertion', input.starting_after)
        ? await db.assertionEvent.findFirst({ where: { id: input.starting_after, organizationId, entityId: entity.id } })
        : null;
    if (!cursor) throw missing('assertion', input.starting_after, 'starting_after');
    afterKey = cursor.key;
  }
  if (!entity) return { object: 'list', data: [], has_more: false };
  const now = deps.clock.now();
  const claims = await db.assertionClaim.findMany({
    where: {
      entityId: entity.id,
      present: true,
      ...(input.include_expired ? {} : { OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] }),
      key: input.key !== undefined ? input.key : afterKey !== undefined ? { gt: afterKey } : undefined,
      ...(input.key !== undefined && afterKey !== undefined ? { AND: [{ key: { gt: afterKey } }] } : {}),
    },
    orderBy: { key: 'asc' },
    take: input.limit + 1,
  });
  const page = claims.slice(0, input.limit);
  const events = await db.assertionEvent.findMany({ where: { id: { in: page.map((c) => c.eventId) } } });
  const byId = new Map(events.map((e) => [e.id, e]));
  return { object: 'list', data: page.map((c) => presentAssertion(byId.get(c.eventId)!)), has_more: claims.length > input.limit };
}
