import { listEnrollments, mutateEnrollment, retrieveEnrollment } from '../../domain/enrollment/enrollment.ts';
import type { PublicEnrollment } from '../../domain/enrollment/presenter.ts';
import { builder } from '../builder.ts';
import { given, listConnection } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';

/** Enrollments: lifecycle moves and standing with the evaluation that produced it. */
const EnrollmentStatus = builder.enumType('EnrollmentStatus', { values: ['pending', 'approved', 'rejected', 'active'] as const });
const EnrollmentStanding = builder.enumType('EnrollmentStanding', { values: ['not_qualified', 'qualified', 'grace'] as const });

export const Enrollment = builder.objectRef<PublicEnrollment>('Enrollment').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    program: t.exposeString('program'),
    entity: t.exposeString('entity'),
    status: t.field({ type: EnrollmentStatus, resolve: (e) => e.status }),
    standing: t.field({ type: EnrollmentStanding, resolve: (e) => e.standing }),
    graceEndsAt: t.exposeString('grace_ends_at', { nullable: true }),
    evaluation: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The evaluation that produced the standing: trigger, evaluated_at, qualified, requirements',
      resolve: (e) => e.evaluation,
    }),
    evaluatedAt: t.exposeString('evaluated_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

builder.queryField('enrollments', (t) =>
  t.connection({
    type: Enrollment,
    description: "Enrollments in the brand's programs, newest first (scope enrollments:read). Cursors are enr_ ids.",
    authScopes: { scope: 'enrollments:read' },
    args: { program: t.arg.id(), ...subjectArgs, status: t.arg({ type: EnrollmentStatus }) },
    resolve: (_r, a, ctx) =>
      listConnection(a, (paging) =>
        listEnrollments(ctx.deps, ctx.caller, given({ program: a.program ?? undefined, ...subjectInput(a), status: a.status ?? undefined, ...paging })),
      ),
  }),
);

builder.queryField('enrollment', (t) =>
  t.field({
    type: Enrollment,
    authScopes: { scope: 'enrollments:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveEnrollment(ctx.deps, ctx.caller, String(a.id)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createEnrollment', (t) =>
  t.field({
    type: Enrollment,
    authScopes: { scope: 'enrollments:write' },
    args: { program: t.arg.id({ required: true }), ...subjectArgs, idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ program: String(a.program), ...subjectInput(a) });
      return (await mutateEnrollment(ctx.deps, ctx.caller, { op: 'create', input }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey))).body as PublicEnrollment;
    },
  }),
);

for (const [field, op] of [
  ['approveEnrollment', 'approve'],
  ['rejectEnrollment', 'reject'],
  ['activateEnrollment', 'activate'],
] as const) {
  builder.mutationField(field, (t) =>
    t.field({
      type: Enrollment,
      authScopes: { scope: 'enrollments:write' },
      args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
      resolve: async (_r, a, ctx, info) =>
        (await mutateEnrollment(ctx.deps, ctx.caller, { op, id: String(a.id), input: {} }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey))).body as PublicEnrollment,
    }),
  );
}
