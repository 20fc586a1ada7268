import { listEnrollments, mutateEnrollment, retrieveEnrollment } from '../../domain/enrollment/enrollment.ts';
import type { PublicEnrollment } from '../../domain/enrollment/presenter.ts';
import { builder } from '../builder.ts';
import { given, listConnection } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import { EnrollmentStanding, EnrollmentStatus } from './enums.ts';
import { Node } from './node.ts';

/** Enrollments: lifecycle moves and standing with the evaluation that produced it. */
export const Enrollment = builder.objectRef<PublicEnrollment>('Enrollment').implement({
  description: "An entity's enrollment in a program, with its standing",
  interfaces: [Node],
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
        listEnrollments(
          ctx.deps,
          ctx.caller,
          given({ program: a.program ?? undefined, ...subjectInput(a), status: a.status ?? undefined, ...paging }),
        ),
      ),
  }),
);

builder.queryField('enrollment', (t) =>
  t.field({
    type: Enrollment,
    description: 'One enrollment by enr_ id (scope enrollments:read)',
    authScopes: { scope: 'enrollments:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveEnrollment(ctx.deps, ctx.caller, String(a.id)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

builder.mutationField('createEnrollment', (t) =>
  t.field({
    type: Enrollment,
    description: 'Enroll an entity in a program of the brand (scope enrollments:write)',
    authScopes: { scope: 'enrollments:write' },
    args: { program: t.arg.id({ required: true }), ...subjectArgs, idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
    resolve: async (_r, a, ctx, info) => {
      const input = given({ program: String(a.program), ...subjectInput(a) });
      return (await mutateEnrollment(ctx.deps, ctx.caller, { op: 'create', input }, graphqlIdempotencyKey(ctx, info, a.idempotencyKey)))
        .body as PublicEnrollment;
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
      description: `${op[0]!.toUpperCase()}${op.slice(1)} an enrollment (scope enrollments:write)`,
      authScopes: { scope: 'enrollments:write' },
      args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
      resolve: async (_r, a, ctx, info) =>
        (
          await mutateEnrollment(
            ctx.deps,
            ctx.caller,
            { op, id: String(a.id), input: {} },
            graphqlIdempotencyKey(ctx, info, a.idempotencyKey),
          )
        ).body as PublicEnrollment,
    }),
  );
}
