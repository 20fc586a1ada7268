import type { Deps } from '../../src/domain/context.ts';
import { enrollments } from '../../src/domain/enrollment/enrollment.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Enrollments in the selected brand's programs: lifecycle moves and standing (with the evaluation that produced it). */
export function enrollmentRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Enrollments', errors: [400, 401, 403, 404, 409, 429, 503] };
  const move = (op: 'approve' | 'reject' | 'activate' | 'resume', summary: string): RouteDef =>
    actionRoute(deps, enrollments[op], {
      ...common,
      method: 'POST',
      path: `/enrollments/:id/${op}`,
      operationId: `${op}Enrollment`,
      summary,
      description: 'The enrollment',
    });
  return [
    actionRoute(deps, enrollments.create, {
      ...common,
      method: 'POST',
      path: '/enrollments',
      operationId: 'createEnrollment',
      summary: 'Enroll an entity (entity, or external_user_id with issuer) in a program; starts pending',
      description: 'The enrollment',
    }),
    move('approve', 'Approve a pending enrollment (enrollment.approved)'),
    move('reject', 'Reject a pending or approved enrollment (enrollment.rejected)'),
    move('activate', 'Activate an approved enrollment (enrollment.activated); standing is evaluated from then on'),
    move(
      'resume',
      'Resume a paused enrollment (its relationship with the brand ended) once the entity has a relationship that has not ended; standing is evaluated again',
    ),
    actionRoute(deps, enrollments.list, {
      ...common,
      method: 'GET',
      path: '/enrollments',
      operationId: 'listEnrollments',
      summary: 'Enrollments, newest first; filter by program, subject and status',
      description: 'A page of enrollments',
    }),
    actionRoute(deps, enrollments.retrieve, {
      ...common,
      method: 'GET',
      path: '/enrollments/:id',
      operationId: 'retrieveEnrollment',
      summary: 'One enrollment with its standing and the evaluation that produced it',
      description: 'The enrollment',
    }),
  ];
}
