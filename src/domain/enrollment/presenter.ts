import type { Enrollment } from '../../db/generated/client.ts';

/** The public enrollment object: lifecycle status, standing, and the evaluation that produced the standing. */
export interface PublicEnrollment {
  id: string;
  object: 'enrollment';
  program: string;
  entity: string;
  status: 'pending' | 'approved' | 'rejected' | 'active';
  standing: 'not_qualified' | 'qualified' | 'grace';
  grace_ends_at: string | null;
  evaluation: unknown;
  evaluated_at: string | null;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

export function presentEnrollment(row: Enrollment): PublicEnrollment {
  return {
    id: row.id,
    object: 'enrollment',
    program: row.programId,
    entity: row.entityId,
    status: row.status as PublicEnrollment['status'],
    standing: row.standing as PublicEnrollment['standing'],
    grace_ends_at: row.graceEndsAt?.toISOString() ?? null,
    evaluation: row.evaluation ?? null,
    evaluated_at: row.evaluatedAt?.toISOString() ?? null,
    livemode: true,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
