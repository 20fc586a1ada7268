import type { Deps } from '../../src/domain/context.ts';
import {
  CreateEnrollmentInput,
  ListEnrollmentsInput,
  NoEnrollmentInput,
  listEnrollments,
  mutateEnrollment,
  retrieveEnrollment,
  type EnrollmentMutation,
} from '../../src/domain/enrollment/enrollment.ts';
import type { RouteDef } from '../http/route.ts';
import { answerMutation, answerRetrieve } from './answer.ts';
import { callerWith, platformQuery } from './pipeline.ts';
import { Enrollment, EnrollmentList } from './standing-schemas.ts';

/** Enrollments in the selected brand's programs: lifecycle moves and standing (with the evaluation that produced it). */
export function enrollmentRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Enrollments', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };
  const write = 'enrollments:write';
  const move = (op: Exclude<EnrollmentMutation['op'], 'create'>, summary: string): RouteDef => ({
    ...common,
    method: 'POST',
    path: `/enrollments/:id/${op}`,
    operationId: `${op}Enrollment`,
    summary,
    scope: write,
    idempotent: true,
    success: { status: 200, description: 'The enrollment', schema: Enrollment },
    handler: (ctx) =>
      answerMutation(deps, ctx, write, (caller, input, key) => mutateEnrollment(deps, caller, { op, id: ctx.params.id!, input }, key)),
  });
  return [
    {
      ...common,
      method: 'POST',
      path: '/enrollments',
      operationId: 'createEnrollment',
      summary: 'Enroll an entity (entity, or external_user_id with issuer) in a program; starts pending',
      scope: write,
      body: CreateEnrollmentInput,
      idempotent: true,
      success: { status: 201, description: 'The enrollment', schema: Enrollment },
      handler: (ctx) =>
        answerMutation(deps, ctx, write, (caller, input, key) => mutateEnrollment(deps, caller, { op: 'create', input }, key)),
    },
    move('approve', 'Approve a pending enrollment (enrollment.approved)'),
    move('reject', 'Reject a pending or approved enrollment (enrollment.rejected)'),
    move('activate', 'Activate an approved enrollment (enrollment.activated); standing is evaluated from then on'),
    {
      ...common,
      method: 'GET',
      path: '/enrollments',
      operationId: 'listEnrollments',
      summary: 'Enrollments, newest first; filter by program, subject and status',
      scope: 'enrollments:read',
      query: ListEnrollmentsInput,
      success: { status: 200, description: 'A page of enrollments', schema: EnrollmentList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'enrollments:read');
        ctx.body = await listEnrollments(deps, caller, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/enrollments/:id',
      operationId: 'retrieveEnrollment',
      summary: 'One enrollment with its standing and the evaluation that produced it',
      scope: 'enrollments:read',
      query: NoEnrollmentInput,
      success: { status: 200, description: 'The enrollment', schema: Enrollment },
      handler: (ctx) => answerRetrieve(ctx, 'enrollments:read', (caller) => retrieveEnrollment(deps, caller, ctx.params.id!)),
    },
  ];
}
