import { z } from 'zod';
import type { Enrollment } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { appendEvent } from '../event/event.ts';
import { ensureEntity, findEntity, lockEntity, subjectFields, subjectOf } from '../entity/entity.ts';
import { findProgram } from '../program/program.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import { runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';
import { presentEnrollment, type PublicEnrollment } from './presenter.ts';
import { evaluateEntityStanding } from './standing.ts';
import { listLimit } from '../platform/rate-limit.ts';

/**
 * Enrollments: an entity in a program. Lifecycle `pending → approved →
 * active` (or `rejected` from pending or approved); standing is evaluated
 * only while `active`, first at activation.
 */
export const CreateEnrollmentInput = z.strictObject({ program: z.string().min(1), ...subjectFields });

export const ENROLLMENT_STATUSES = ['pending', 'approved', 'rejected', 'active'] as const;

export const ListEnrollmentsInput = z.strictObject({
  program: z.string().min(1).optional(),
  ...subjectFields,
  status: z.enum(ENROLLMENT_STATUSES).optional(),
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export const NoEnrollmentInput = z.strictObject({});

type Action = 'approve' | 'reject' | 'activate';

/** Which statuses each lifecycle action moves from, where to, and the event it emits. */
const LIFECYCLE: Record<Action, { from: readonly string[]; to: (typeof ENROLLMENT_STATUSES)[number]; event: string }> = {
  approve: { from: ['pending'], to: 'approved', event: 'enrollment.approved' },
  reject: { from: ['pending', 'approved'], to: 'rejected', event: 'enrollment.rejected' },
  activate: { from: ['approved'], to: 'active', event: 'enrollment.activated' },
};

type Reader = Tx | Deps['db']['prisma'];

/** An enrollment in a program of the caller's brand; anything else is 404. */
async function findEnrollment(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<Enrollment> {
  const row = isId('enrollment', id) ? await db.enrollment.findFirst({ where: { id, organizationId: caller.organization.id } }) : null;
  const program = row ? await db.program.findFirst({ where: { id: row.programId, brandId: caller.brand.id }, select: { id: true } }) : null;
  if (!row || !program) throw missing('enrollment', id, param);
  return row;
}

async function createEnrollment(deps: Deps, tx: Tx, caller: SurfaceBCaller, raw: unknown): Promise<StoredResponse> {
  const input = parseInput(CreateEnrollmentInput, raw);
  const subject = subjectOf(input);
  const program = await findProgram(tx, caller, input.program, 'program');
  const entity = await ensureEntity(deps, tx, caller.organization.id, subject);
  const now = deps.clock.now();
  let row: Enrollment;
  try {
    row = await tx.enrollment.create({
      data: {
        id: newId('enrollment'),
        organizationId: caller.organization.id,
        programId: program.id,
        entityId: entity.id,
        createdAt: now,
        updatedAt: now,
      },
    });
  } catch (e) {
    if (isUniqueViolation(e))
      throw new DomainError('resource_conflict', `Entity ${entity.id} is already enrolled in program ${program.id}`, 'program');
    throw e;
  }
  const body = presentEnrollment(row);
  await appendEvent(deps, tx, {
    organizationId: row.organizationId,
    type: 'enrollment.created',
    subject: { type: 'enrollment', id: row.id },
    data: { ...body },
    brandId: caller.brand.id,
  });
  return { status: 201, body };
}

/** Lifecycle moves take the entity lock, so activation's first evaluation never races an assertion's. */
async function moveEnrollment(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  id: string,
  action: Action,
  raw: unknown,
): Promise<StoredResponse> {
  parseInput(NoEnrollmentInput, raw);
  const found = await findEnrollment(tx, caller, id);
  await lockEntity(tx, found.entityId);
  const row = await tx.enrollment.findUniqueOrThrow({ where: { id: found.id } });
  const rule = LIFECYCLE[action];
  if (!rule.from.includes(row.status)) {
    throw new DomainError(
      'invalid_state_transition',
      `Cannot ${action} an enrollment that is ${row.status} (allowed from: ${rule.from.join(', ')})`,
    );
  }
  const updated = await tx.enrollment.update({ where: { id: row.id }, data: { status: rule.to, updatedAt: deps.clock.now() } });
  await appendEvent(deps, tx, {
    organizationId: row.organizationId,
    type: rule.event,
    subject: { type: 'enrollment', id: row.id },
    data: { ...presentEnrollment(updated) },
    brandId: caller.brand.id,
  });
  if (action === 'activate') {
    await evaluateEntityStanding(deps, tx, row.entityId, { trigger: 'activation' }, { programId: row.programId, alreadyLocked: true });
  }
  return { status: 200, body: presentEnrollment(await tx.enrollment.findUniqueOrThrow({ where: { id: row.id } })) };
}

export type EnrollmentMutation = { op: 'create'; input: unknown } | { op: Action; id: string; input: unknown };

export function mutateEnrollment(deps: Deps, caller: SurfaceBCaller, m: EnrollmentMutation, idempotencyKey?: string) {
  const target = m.op === 'create' ? undefined : m.id;
  return runMutation(deps, caller, { name: `enrollments.${m.op}`, target, input: m.input, idempotencyKey }, (tx) =>
    m.op === 'create' ? createEnrollment(deps, tx, caller, m.input) : moveEnrollment(deps, tx, caller, m.id, m.op, m.input),
  );
}

export async function retrieveEnrollment(deps: Deps, caller: SurfaceBCaller, id: string): Promise<PublicEnrollment> {
  return presentEnrollment(await findEnrollment(deps.db.prisma, caller, id));
}

/** Newest first; filters by program, subject and status, always within the caller's brand. */
export async function listEnrollments(deps: Deps, caller: SurfaceBCaller, raw: unknown) {
  const input = parseInput(ListEnrollmentsInput, raw);
  const db = deps.db.prisma;
  const hasSubject = input.entity !== undefined || input.external_user_id !== undefined || input.issuer !== undefined;
  const entity = hasSubject ? await findEntity(db, caller.organization.id, subjectOf(input)) : undefined;
  const programIds = input.program
    ? [(await findProgram(db, caller, input.program, 'program')).id]
    : (
        await db.program.findMany({ where: { organizationId: caller.organization.id, brandId: caller.brand.id }, select: { id: true } })
      ).map((p) => p.id);
  const cursor = input.starting_after ? await findEnrollment(db, caller, input.starting_after, 'starting_after') : undefined;
  if (entity === null) return { object: 'list' as const, data: [], has_more: false };
  const rows = await db.enrollment.findMany({
    where: {
      organizationId: caller.organization.id,
      programId: { in: programIds },
      ...(entity ? { entityId: entity.id } : {}),
      ...(input.status ? { status: input.status } : {}),
      ...(cursor ? { id: { lt: cursor.id } } : {}),
    },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
  });
  return { object: 'list' as const, data: rows.slice(0, input.limit).map(presentEnrollment), has_more: rows.length > input.limit };
}
