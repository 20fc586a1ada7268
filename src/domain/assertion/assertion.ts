import { z } from 'zod';
import type { AssertionClaim, AssertionEvent } from '../../db/generated/client.ts';
import type { BatchSend } from '../../db/sql-port.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { entityKey, findEntity, lockSubject, subjectFields, subjectKey, subjectOf, type Subject } from '../entity/entity.ts';
import { subjectEntityId } from '../entity/store.ts';
import { insertEvents } from '../event/event.ts';
import { claimLive, parseStandingInputs, planStanding, type StandingInputs } from '../enrollment/standing.ts';
import { standingInputs } from '../enrollment/store.ts';
import { capability, batchedMutation, read, type BatchedRun, type Reader } from '../action/action.ts';
import { listOf, pageOf, wholeList, type Page } from '../action/list.ts';
import { timestamp } from '../validation.ts';
import { listLimit } from '../platform/rate-limit.ts';
import { Assertion, presentAssertion, type PublicAssertion } from './presenter.ts';
import { assertionEventOf, assertionEventsByIds, currentClaimStatement, presentClaims, writeClaimStatements } from './store.ts';

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
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export const NoAssertionInput = z.strictObject({});

/** What a revocation answers: the appended `revoked` event, or nothing when the claim was already absent. */
export const AssertionRevocation = z.object({
  object: z.literal('assertion_revocation'),
  entity: z.string().nullable(),
  key: z.string(),
  revoked: z.boolean().describe('true when a revoked event was appended (201); false when the claim was already absent (200)'),
  assertion: Assertion.nullable(),
});
export type PublicAssertionRevocation = z.output<typeof AssertionRevocation>;

type ClaimChange = { action: 'asserted' | 'revoked'; value: number | null; expiresAt: Date | null };

const sameExpiry = (a: Date | null, b: Date | null) => (a?.getTime() ?? null) === (b?.getTime() ?? null);

/** An assertion_event row as row_to_json gives it. */
function assertionEventRow(j: Record<string, unknown>): AssertionEvent {
  return {
    id: j.id as string,
    organizationId: j.organization_id as string,
    entityId: j.entity_id as string,
    key: j.key as string,
    action: j.action as string,
    value: j.value as number | null,
    expiresAt: j.expires_at == null ? null : new Date(j.expires_at as string),
    effectiveAt: new Date(j.effective_at as string),
    livemode: j.livemode as boolean,
    createdAt: new Date(j.created_at as string),
  };
}

interface Claim {
  /** null: the subject names no entity (an external pair never seen, on revoke). */
  entity: string | null;
  current: (Pick<AssertionClaim, 'present' | 'value' | 'expiresAt'> & { event: AssertionEvent }) | null;
  inputs: StandingInputs;
}

/**
 * Everything a claim change reads, in one round trip: the entity's lock
 * (creating the entity on first use of an external pair), then, seeing what
 * the lock's previous holder committed, the current claim and the standing
 * inputs of the entity's active enrollments. Entity null: an external pair
 * never seen (without `create`); an unknown `ent_` id is 404.
 */
async function readClaim(
  deps: Deps,
  send: BatchSend,
  organizationId: string,
  subject: Subject,
  claimKey: string,
  opts: { create: boolean },
): Promise<Claim> {
  const lock = lockSubject(deps, organizationId, subject, opts);
  const entity = subjectEntityId(organizationId, subject);
  const results = await send([...lock, currentClaimStatement(entity, claimKey), standingInputs(entity, deps.clock.now())], {
    keys: [subjectKey(organizationId, subject)],
  });
  const [locked, [claim], [inputs]] = results.slice(lock.length - 1) as [
    { id: string }[],
    { claim: Record<string, unknown> }[],
    { inputs: unknown }[],
  ];
  const current = claim?.claim;
  if (!locked.length && subject.kind === 'entity') throw missing('entity', subject.id, 'entity');
  return {
    entity: locked[0]?.id ?? null,
    current: current
      ? {
          present: current.present as boolean,
          value: current.value as number | null,
          expiresAt: current.expiresAt == null ? null : new Date(current.expiresAt as string),
          event: assertionEventRow(current.event as Record<string, unknown>),
        }
      : null,
    inputs: parseStandingInputs(inputs!.inputs),
  };
}

/**
 * Appends the change as statements for the commit's batch: the history row,
 * the claim projection, then `assertion.*` and any standing events in one
 * append, and the enrollments' new standing (evaluated with the claim as it
 * now is). Ids are drawn here, under the entity lock, so one entity's
 * events are numbered in commit order.
 */
function appendChange(deps: Deps, organizationId: string, entityId: string, claimKey: string, change: ClaimChange, inputs: StandingInputs) {
  const now = deps.clock.now();
  const row: AssertionEvent = {
    id: newId('assertion'),
    organizationId,
    entityId,
    key: claimKey,
    ...change,
    effectiveAt: now,
    livemode: true,
    createdAt: now,
  };
  const assertion = presentAssertion(row);
  const claims = [
    ...inputs.claims.filter((c) => c.key !== claimKey),
    { key: claimKey, present: change.action === 'asserted', value: change.value, expiresAt: change.expiresAt },
  ];
  const standing = planStanding({ ...inputs, claims }, { trigger: 'assertion', assertion: row.id }, now);
  const event = {
    organizationId,
    type: change.action === 'asserted' ? 'assertion.created' : 'assertion.revoked',
    subject: { type: 'assertion', id: row.id },
    data: { ...assertion },
  };
  return { assertion, finish: [...writeClaimStatements(row), insertEvents(deps, [event, ...standing.events]), ...standing.statements] };
}

/** A new event when the claim changes (absent → present, new value, new expiry); the current event, outcome `ok`, otherwise. */
async function createAssertion(
  deps: Deps,
  send: BatchSend,
  organizationId: string,
  input: z.output<typeof CreateAssertionInput>,
): Promise<BatchedRun<PublicAssertion>> {
  const subject = subjectOf(input);
  if (input.expires_at && input.expires_at <= deps.clock.now())
    throw new DomainError('invalid_request', 'expires_at must be in the future', 'expires_at');
  const value = input.value ?? 1;
  const expiresAt = input.expires_at ?? null;
  const { entity, current, inputs } = await readClaim(deps, send, organizationId, subject, input.key, { create: true });
  if (claimLive(current ?? undefined, deps.clock.now()) && current!.value === value && sameExpiry(current!.expiresAt, expiresAt)) {
    return { value: presentAssertion(current!.event), outcome: 'ok', finish: [], appended: false };
  }
  const { assertion, finish } = appendChange(deps, organizationId, entity!, input.key, { action: 'asserted', value, expiresAt }, inputs);
  return { value: assertion, finish, appended: true, keys: [entityKey(entity!)] };
}

/**
 * The appended `revoked` event when the claim was present; outcome `ok` and
 * nothing appended when it was absent (never stated, revoked, or expired).
 * An external pair never seen is an absent claim, not a new entity.
 */
async function revokeAssertion(
  deps: Deps,
  send: BatchSend,
  organizationId: string,
  input: z.output<typeof RevokeAssertionInput>,
): Promise<BatchedRun<PublicAssertionRevocation>> {
  const subject = subjectOf(input);
  const { entity, current, inputs } = await readClaim(deps, send, organizationId, subject, input.key, { create: false });
  const absent = { object: 'assertion_revocation' as const, entity, key: input.key, revoked: false, assertion: null };
  if (!entity || !claimLive(current ?? undefined, deps.clock.now())) return { value: absent, outcome: 'ok', finish: [], appended: false };
  const { assertion, finish } = appendChange(
    deps,
    organizationId,
    entity,
    input.key,
    { action: 'revoked', value: null, expiresAt: null },
    inputs,
  );
  return { value: { ...absent, revoked: true, assertion }, finish, appended: true, keys: [entityKey(entity)] };
}

async function findAssertion(db: Reader, organizationId: string, id: string) {
  const row = isId('assertion', id) ? await assertionEventOf(db, organizationId, id) : null;
  if (!row) throw missing('assertion', id);
  return presentAssertion(row);
}

/**
 * The subject's current claims, each as its newest event, ordered by key
 * (a claim's event id changes on every refresh, its key never does).
 * `starting_after` is an `asrt_` id from a previous page: the page resumes
 * after that event's key. Expired claims appear only with include_expired.
 */
async function listAssertions(
  db: Reader,
  organizationId: string,
  input: z.output<typeof ListAssertionsInput>,
  now: Date,
): Promise<Page<PublicAssertion>> {
  const entity = await findEntity(db, organizationId, subjectOf(input));
  let afterKey: string | undefined;
  if (input.starting_after !== undefined) {
    const cursor =
      entity && isId('assertion', input.starting_after)
        ? await assertionEventOf(db, organizationId, input.starting_after, entity.id)
        : null;
    if (!cursor) throw missing('assertion', input.starting_after, 'starting_after');
    afterKey = cursor.key;
  }
  if (!entity) return wholeList([]);
  const claims = await presentClaims(db, {
    entityId: entity.id,
    includeExpired: input.include_expired,
    key: input.key,
    afterKey,
    now,
    take: input.limit + 1,
  });
  const page = pageOf(claims, input.limit);
  const events = await assertionEventsByIds(
    db,
    page.data.map((c) => c.eventId),
  );
  const byId = new Map(events.map((e) => [e.id, e]));
  return { ...page, data: page.data.map((c) => presentAssertion(byId.get(c.eventId)!)) };
}

/** The assertion actions (src/domain/action/action.ts); both changes run on the batched SQL port, the hot path. */
export const assertions = capability({ name: 'assertions', title: 'Assertions', resource: 'assertions' })({
  /** Outcome `created` with a new event; `ok` with the current one when the claim was already in that state. */
  create: batchedMutation({
    summary: 'State a claim: a new event when it changed, the current one (nothing appended) when it was already in that state',
    input: CreateAssertionInput,
    output: Assertion,
    outcome: 'created',
    alsoAnswers: ['ok'],
    group: true,
    run: ({ deps, caller, input, send }) => createAssertion(deps, send, caller.organization.id, input),
  }),
  /** Outcome `created` with the appended `revoked` event; `ok` when the claim was already absent. */
  revoke: batchedMutation({
    summary: 'Revoke a claim: the revoked event when it was present, nothing appended when absent',
    input: RevokeAssertionInput,
    output: AssertionRevocation,
    outcome: 'created',
    alsoAnswers: ['ok'],
    group: true,
    run: ({ deps, caller, input, send }) => revokeAssertion(deps, send, caller.organization.id, input),
  }),
  list: read({
    summary: "The subject's current claims (each as its newest event), ordered by key",
    input: ListAssertionsInput,
    output: listOf(Assertion),
    run: ({ deps, caller, input, db }) => listAssertions(db, caller.organization.id, input, deps.clock.now()),
  }),
  retrieve: read({
    summary: 'One assertion event by asrt_ id',
    params: ['id'],
    retrieves: 'assertion',
    input: NoAssertionInput,
    output: Assertion,
    run: ({ caller, params, db }) => findAssertion(db, caller.organization.id, params.id),
  }),
});
