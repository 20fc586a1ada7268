import { enrollments } from '../../domain/enrollment/enrollment.ts';
import type { PublicEnrollment } from '../../domain/enrollment/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { EnrollmentStanding, EnrollmentStatus } from './enums.ts';
import { Node } from './node.ts';

const EnrollmentTier = builder.objectRef<NonNullable<PublicEnrollment['tier']>>('EnrollmentTier').implement({
  description: "An enrollment's current tier: the highest rung whose threshold the metric's sum over the program's current period meets",
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    rateBps: t.exposeInt('rate_bps'),
    metric: t.exposeString('metric'),
    threshold: t.exposeFloat('threshold'),
    value: t.exposeFloat('value', { description: 'the sum the last evaluation saw' }),
  }),
});

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
    tier: t.field({ type: EnrollmentTier, nullable: true, description: 'null: no rung reached, or no ladder', resolve: (e) => e.tier }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

connectionAction('enrollments', enrollments.list, {
  type: Enrollment,
  description: "Enrollments in the brand's programs, newest first (scope enrollments:read). Cursors are enr_ ids.",
  args: (arg) => ({ program: arg.id(), ...subjectArgs, status: arg({ type: EnrollmentStatus }) }),
  input: (a) => ({ input: given({ program: a.program ?? undefined, ...subjectInput(a), status: a.status ?? undefined }) }),
});

queryAction('enrollment', enrollments.retrieve, {
  description: 'One enrollment by enr_ id (scope enrollments:read)',
  type: Enrollment,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createEnrollment', enrollments.create, {
  description: 'Enroll an entity in a program of the brand (scope enrollments:write)',
  type: Enrollment,
  args: (arg) => ({ program: arg.id({ required: true }), ...subjectArgs }),
  input: (a) => ({ input: given({ program: String(a.program), ...subjectInput(a) }) }),
});

for (const [field, op] of [
  ['approveEnrollment', 'approve'],
  ['rejectEnrollment', 'reject'],
  ['activateEnrollment', 'activate'],
  ['resumeEnrollment', 'resume'],
] as const) {
  mutationAction(field, enrollments[op], {
    description: `${op[0]!.toUpperCase()}${op.slice(1)} an enrollment (scope enrollments:write)`,
    type: Enrollment,
    args: (arg) => ({ id: arg.id({ required: true }) }),
    input: (a) => ({ params: { id: String(a.id) }, input: {} }),
  });
}
