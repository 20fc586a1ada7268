import { z } from 'zod';
import type { Relationship as RelationshipRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { appendEvent } from '../event/event.ts';
import { ensureEntity, findEntity, lockEntity, subjectFields, subjectOf } from '../entity/entity.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { RELATIONSHIP_STATUSES, type RelationshipStatus } from './states.ts';
import { presentRelationship, Relationship, type PublicRelationship } from './presenter.ts';
import {
  insertRelationshipRow,
  liveRelationship,
  moveRelationshipRow,
  relationshipById,
  relationshipOfBrand,
  relationshipsPage,
} from './store.ts';
import { pauseBrandEnrollments } from '../enrollment/store.ts';

/**
 * Relationships: a brand's durable relationship with an entity, in the
 * brand Service-Brand selects. At most one per (brand, entity) is not ended
 * (a partial unique index): a second is 409 `resource_conflict`; once it has
 * ended a new one may follow. Every move appends its `relationship.*` event
 * in the same transaction. Ending one pauses the entity's active enrollments
 * in the brand's programs (status `paused`: standing is no longer evaluated);
 * the public vocabulary has no event for that, so an internal
 * `enrollment.paused` event records each.
 */
export const CreateRelationshipInput = z.strictObject({ ...subjectFields });

export const ListRelationshipsInput = z.strictObject({
  ...subjectFields,
  status: z.enum(RELATIONSHIP_STATUSES).optional(),
  ...ListInput.shape,
});

export const NoRelationshipInput = z.strictObject({});

type Move = 'activate' | 'pause' | 'resume' | 'end';

/** Which statuses each move goes from, where to, and the event it emits. */
const LIFECYCLE: Record<Move, { from: readonly RelationshipStatus[]; to: RelationshipStatus; event: string }> = {
  activate: { from: ['created'], to: 'active', event: 'relationship.activated' },
  pause: { from: ['active'], to: 'paused', event: 'relationship.paused' },
  resume: { from: ['paused'], to: 'active', event: 'relationship.resumed' },
  end: { from: ['created', 'active', 'paused'], to: 'ended', event: 'relationship.ended' },
};

/** A relationship of the caller's brand; anything else (other brand, other organization, bad id) is 404. */
async function findRelationship(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<RelationshipRow> {
  const row = isId('relationship', id) ? await relationshipOfBrand(db, caller.organization.id, caller.brand.id, id) : null;
  if (!row) throw missing('relationship', id, param);
  return row;
}

const appendMove = (deps: Deps, tx: Tx, caller: SurfaceBCaller, type: string, row: RelationshipRow) =>
  appendEvent(deps, tx, {
    organizationId: row.organizationId,
    type,
    subject: { type: 'relationship', id: row.id },
    data: { ...presentRelationship(row) },
    brandId: caller.brand.id,
  });

async function createRelationship(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof CreateRelationshipInput>,
): Promise<PublicRelationship> {
  const entity = await ensureEntity(deps, tx, caller.organization.id, subjectOf(input));
  return presentRelationship(await insertRelationship(deps, tx, caller, entity.id));
}

/** A new relationship of the caller's brand with the entity, and its `relationship.created` event; 409 while one has not ended. */
async function insertRelationship(deps: Deps, tx: Tx, caller: SurfaceBCaller, entityId: string): Promise<RelationshipRow> {
  const now = deps.clock.now();
  let row: RelationshipRow;
  try {
    row = await insertRelationshipRow(tx, {
      id: newId('relationship'),
      organizationId: caller.organization.id,
      brandId: caller.brand.id,
      entityId,
      createdAt: now,
      updatedAt: now,
    });
  } catch (e) {
    if (isUniqueViolation(e))
      throw new DomainError(
        'resource_conflict',
        `Entity ${entityId} already has a relationship with this brand that has not ended; end it before starting another`,
        'entity',
      );
    throw e;
  }
  await appendMove(deps, tx, caller, 'relationship.created', row);
  return row;
}

/** The entity's relationship with the caller's brand that has not ended, else a new one (the caller holds the entity's lock). */
export async function ensureRelationship(deps: Deps, tx: Tx, caller: SurfaceBCaller, entityId: string): Promise<RelationshipRow> {
  const live = await liveRelationship(tx, caller.brand.id, entityId);
  return live ?? insertRelationship(deps, tx, caller, entityId);
}

/**
 * The entity's active enrollments in the brand's programs become `paused`
 * (standing evaluation reads only active ones), each recorded by an internal
 * event; run under the entity's lock, so no evaluation races it.
 */
async function pauseEnrollments(deps: Deps, tx: Tx, caller: SurfaceBCaller, row: RelationshipRow): Promise<void> {
  const now = deps.clock.now();
  const paused = await pauseBrandEnrollments(tx, row.brandId, row.entityId, now);
  for (const e of paused) {
    await appendEvent(deps, tx, {
      organizationId: row.organizationId,
      type: 'enrollment.paused',
      subject: { type: 'enrollment', id: e.id },
      data: { id: e.id, program: e.program_id, entity: row.entityId, status: 'paused', cause: { relationship: row.id } },
      brandId: caller.brand.id,
    });
  }
}

/** Moves take the entity's lock (as enrollment moves and evaluations do), then read the row as it now is. */
async function moveRelationship(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string, move: Move): Promise<PublicRelationship> {
  const found = await findRelationship(tx, caller, id);
  await lockEntity(tx, found.entityId);
  const row = await relationshipById(tx, found.id);
  const rule = LIFECYCLE[move];
  if (!rule.from.includes(row.status as RelationshipStatus)) {
    throw new DomainError(
      'invalid_state_transition',
      `Cannot ${move} a relationship that is ${row.status} (allowed from: ${rule.from.join(', ')})`,
    );
  }
  const now = deps.clock.now();
  const updated = await moveRelationshipRow(tx, row.id, rule.to, now, rule.to === 'ended' ? now : undefined);
  await appendMove(deps, tx, caller, rule.event, updated);
  if (rule.to === 'ended') await pauseEnrollments(deps, tx, caller, updated);
  return presentRelationship(updated);
}

/** Newest first, within the caller's brand; filters by subject and status. */
async function listRelationships(db: Reader, caller: SurfaceBCaller, input: z.output<typeof ListRelationshipsInput>) {
  const hasSubject = input.entity !== undefined || input.external_user_id !== undefined || input.issuer !== undefined;
  const entity = hasSubject ? await findEntity(db, caller.organization.id, subjectOf(input)) : undefined;
  const page = await newestFirst(
    input,
    (id, param) => findRelationship(db, caller, id, param),
    async (below, take) =>
      // A subject with no entity yet has no relationship.
      entity === null
        ? []
        : relationshipsPage(
            db,
            { organizationId: caller.organization.id, brandId: caller.brand.id, entityId: entity?.id, status: input.status },
            below,
            take,
          ),
  );
  return { ...page, data: page.data.map(presentRelationship) };
}

const move = (name: Move, summary: string) =>
  mutation({
    summary,
    params: ['id'],
    input: NoRelationshipInput,
    output: Relationship,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) => moveRelationship(deps, db, caller, params.id, name),
  });

/** The relationship actions (src/domain/action/action.ts). */
export const relationships = capability({ name: 'relationships', title: 'Relationships', resource: 'relationships' })({
  create: mutation({
    summary:
      'Start a relationship between the brand and an entity (entity, or external_user_id with issuer: created on first use); one not ended per brand and entity',
    input: CreateRelationshipInput,
    output: Relationship,
    outcome: 'created',
    run: ({ deps, caller, input, db }) => createRelationship(deps, db, caller, input),
  }),
  activate: move('activate', 'Activate a created relationship (relationship.activated)'),
  pause: move('pause', 'Pause an active relationship (relationship.paused)'),
  resume: move('resume', 'Resume a paused relationship (relationship.resumed)'),
  end: move('end', "End a relationship (relationship.ended; final): the entity's active enrollments in the brand's programs become paused"),
  list: read({
    summary: "The brand's relationships, newest first; filter by subject and status",
    input: ListRelationshipsInput,
    output: listOf(Relationship),
    run: ({ caller, input, db }) => listRelationships(db, caller, input),
  }),
  retrieve: read({
    summary: 'One relationship of the brand',
    params: ['id'],
    retrieves: 'relationship',
    input: NoRelationshipInput,
    output: Relationship,
    run: async ({ caller, params, db }) => presentRelationship(await findRelationship(db, caller, params.id)),
  }),
});
