import { z } from 'zod';
import type { Enrollment as EnrollmentRow } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { appendEvent } from '../event/event.ts';
import { ensureEntity, findEntity, lockEntity, subjectFields, subjectOf } from '../entity/entity.ts';
import { findProgram } from '../program/program.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { ENROLLMENT_STATUSES, Enrollment, presentEnrollment, type PublicEnrollment } from './presenter.ts';
import { evaluateEntityStanding } from './standing.ts';
import { enrollmentById, enrollmentIn, enrollmentOf, enrollmentsPage, insertEnrollmentRow, setEnrollmentStatus } from './store.ts';
import { brandProgramId, brandProgramIds } from '../program/store.ts';
import { liveRelationship } from '../relationship/store.ts';

/**
 * Enrollments: an entity in a program. Lifecycle `pending → approved →
 * active` (or `rejected` from pending or approved); standing is evaluated
 * only while `active`, first at activation. Ending the entity's relationship
 * with the brand pauses its active enrollments (relationship.ts); `resume`
 * makes a paused one active again once the entity has a relationship with
 * the brand that has not ended (ADR 0010), re-evaluating its standing as
 * activation does. The public vocabulary has no event for a resume: an
 * internal `enrollment.resumed` event records it, as `enrollment.paused`
 * records the pause.
 */
export const CreateEnrollmentInput = z.strictObject({ program: z.string().min(1), ...subjectFields });

export const ListEnrollmentsInput = z.strictObject({
  program: z.string().min(1).optional(),
  ...subjectFields,
  status: z.enum(ENROLLMENT_STATUSES).optional(),
  ...ListInput.shape,
});

export const NoEnrollmentInput = z.strictObject({});

type Move = 'approve' | 'reject' | 'activate' | 'resume';

/** Which statuses each lifecycle move goes from, where to, and the event it emits. */
const LIFECYCLE: Record<Move, { from: readonly string[]; to: (typeof ENROLLMENT_STATUSES)[number]; event: string }> = {
  approve: { from: ['pending'], to: 'approved', event: 'enrollment.approved' },
  reject: { from: ['pending', 'approved'], to: 'rejected', event: 'enrollment.rejected' },
  activate: { from: ['approved'], to: 'active', event: 'enrollment.activated' },
  resume: { from: ['paused'], to: 'active', event: 'enrollment.resumed' },
};

/** An enrollment in a program of the caller's brand; anything else is 404. */
async function findEnrollment(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<EnrollmentRow> {
  const row = isId('enrollment', id) ? await enrollmentOf(db, caller.organization.id, id) : null;
  const program = row ? await brandProgramId(db, row.programId, caller.brand.id) : null;
  if (!row || !program) throw missing('enrollment', id, param);
  return row;
}

async function createEnrollment(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof CreateEnrollmentInput>,
): Promise<PublicEnrollment> {
  const subject = subjectOf(input);
  const program = await findProgram(tx, caller, input.program, 'program');
  const entity = await ensureEntity(deps, tx, caller.organization.id, subject);
  return presentEnrollment(await insertEnrollment(deps, tx, caller, program.id, entity.id));
}

/** A new `pending` enrollment and its `enrollment.created` event; 409 when the entity is enrolled in the program already. */
async function insertEnrollment(deps: Deps, tx: Tx, caller: SurfaceBCaller, programId: string, entityId: string): Promise<EnrollmentRow> {
  const now = deps.clock.now();
  let row: EnrollmentRow;
  try {
    row = await insertEnrollmentRow(tx, {
      id: newId('enrollment'),
      organizationId: caller.organization.id,
      programId,
      entityId,
      createdAt: now,
      updatedAt: now,
    });
  } catch (e) {
    if (isUniqueViolation(e))
      throw new DomainError('resource_conflict', `Entity ${entityId} is already enrolled in program ${programId}`, 'program');
    throw e;
  }
  await appendEvent(deps, tx, {
    organizationId: row.organizationId,
    type: 'enrollment.created',
    subject: { type: 'enrollment', id: row.id },
    data: { ...presentEnrollment(row) },
    brandId: caller.brand.id,
  });
  return row;
}

/** The entity's enrollment in the program (any status), else a new pending one (the caller holds the entity's lock). */
export async function ensureEnrollment(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  programId: string,
  entityId: string,
): Promise<EnrollmentRow> {
  const found = await enrollmentIn(tx, programId, entityId);
  return found ?? insertEnrollment(deps, tx, caller, programId, entityId);
}

/** Lifecycle moves take the entity lock, so activation's first evaluation never races an assertion's. */
async function moveEnrollment(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string, move: Move): Promise<PublicEnrollment> {
  const found = await findEnrollment(tx, caller, id);
  await lockEntity(tx, found.entityId);
  const row = await enrollmentById(tx, found.id);
  const rule = LIFECYCLE[move];
  if (!rule.from.includes(row.status)) {
    throw new DomainError(
      'invalid_state_transition',
      `Cannot ${move} an enrollment that is ${row.status} (allowed from: ${rule.from.join(', ')})`,
    );
  }
  if (move === 'resume' && !(await liveRelationship(tx, caller.brand.id, row.entityId))) {
    throw new DomainError(
      'invalid_state_transition',
      `Cannot resume: entity ${row.entityId} has no relationship with this brand that has not ended; start one first (POST /relationships)`,
    );
  }
  const updated = await setEnrollmentStatus(tx, row.id, rule.to, deps.clock.now());
  await appendEvent(deps, tx, {
    organizationId: row.organizationId,
    type: rule.event,
    subject: { type: 'enrollment', id: row.id },
    data: { ...presentEnrollment(updated) },
    brandId: caller.brand.id,
  });
  if (move === 'activate' || move === 'resume') {
    await evaluateEntityStanding(deps, tx, row.entityId, { trigger: 'activation' }, { programId: row.programId, alreadyLocked: true });
  }
  return presentEnrollment(await enrollmentById(tx, row.id));
}

/** Newest first; filters by program, subject and status, always within the caller's brand. */
async function listEnrollments(db: Reader, caller: SurfaceBCaller, input: z.output<typeof ListEnrollmentsInput>) {
  const hasSubject = input.entity !== undefined || input.external_user_id !== undefined || input.issuer !== undefined;
  const entity = hasSubject ? await findEntity(db, caller.organization.id, subjectOf(input)) : undefined;
  const programIds = input.program
    ? [(await findProgram(db, caller, input.program, 'program')).id]
    : (await brandProgramIds(db, caller.organization.id, caller.brand.id)).map((p) => p.id);
  const page = await newestFirst(
    input,
    (id, param) => findEnrollment(db, caller, id, param),
    async (below, take) =>
      // A subject with no entity yet is enrolled nowhere.
      entity === null
        ? []
        : enrollmentsPage(
            db,
            { organizationId: caller.organization.id, programIds, entityId: entity?.id, status: input.status },
            below,
            take,
          ),
  );
  return { ...page, data: page.data.map(presentEnrollment) };
}

const move = (name: Move, summary: string) =>
  mutation({
    summary,
    params: ['id'],
    input: NoEnrollmentInput,
    output: Enrollment,
    outcome: 'ok',
    run: ({ deps, caller, params, db }) => moveEnrollment(deps, db, caller, params.id, name),
  });

/** The enrollment actions (src/domain/action/action.ts). */
export const enrollments = capability({ name: 'enrollments', title: 'Enrollments', resource: 'enrollments' })({
  create: mutation({
    summary: 'Enroll an entity (entity, or external_user_id with issuer) in a program; starts pending',
    input: CreateEnrollmentInput,
    output: Enrollment,
    outcome: 'created',
    run: ({ deps, caller, input, db }) => createEnrollment(deps, db, caller, input),
  }),
  approve: move('approve', 'Approve a pending enrollment (enrollment.approved)'),
  reject: move('reject', 'Reject a pending or approved enrollment (enrollment.rejected)'),
  activate: move('activate', 'Activate an approved enrollment (enrollment.activated); standing is evaluated from then on'),
  resume: move(
    'resume',
    'Resume a paused enrollment (its relationship with the brand ended) once the entity has a relationship that has not ended; standing is evaluated again',
  ),
  list: read({
    summary: 'Enrollments, newest first; filter by program, subject and status',
    input: ListEnrollmentsInput,
    output: listOf(Enrollment),
    run: ({ caller, input, db }) => listEnrollments(db, caller, input),
  }),
  retrieve: read({
    summary: 'One enrollment with its standing and the evaluation that produced it',
    params: ['id'],
    retrieves: 'enrollment',
    input: NoEnrollmentInput,
    output: Enrollment,
    run: async ({ caller, params, db }) => presentEnrollment(await findEnrollment(db, caller, params.id)),
  }),
});
