import { enrollments } from '../../domain/enrollment/enrollment.ts';
import { Enrollment as EnrollmentShape } from '../../domain/enrollment/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

objectType('EnrollmentTier', EnrollmentShape.shape.tier.unwrap(), {
  description: "An enrollment's current tier: the highest rung whose threshold the metric's sum over the program's current period meets",
});

/** Enrollments: lifecycle moves and standing with the evaluation that produced it. */
export const Enrollment = objectType('Enrollment', EnrollmentShape, {
  description: "An entity's enrollment in a program, with its standing",
  interfaces: [Node],
});

connectionAction('enrollments', enrollments.list, {
  type: Enrollment,
  description: "Enrollments in the brand's programs, newest first (scope enrollments:read). Cursors are enr_ ids.",
  ids: ['program'],
});

queryAction('enrollment', enrollments.retrieve, {
  description: 'One enrollment by enr_ id (scope enrollments:read)',
  type: Enrollment,
});

mutationAction('createEnrollment', enrollments.create, {
  description: 'Enroll an entity in a program of the brand (scope enrollments:write)',
  type: Enrollment,
  ids: ['program'],
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
  });
}
