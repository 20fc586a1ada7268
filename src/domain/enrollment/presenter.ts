import { z } from 'zod';
import type { Enrollment as EnrollmentRow } from '../../db/generated/client.ts';
import { isoTime } from '../shape.ts';

/** `paused`: the entity's relationship with the program's brand ended (standing is evaluated only while `active`). */
export const ENROLLMENT_STATUSES = ['pending', 'approved', 'rejected', 'active', 'paused'] as const;
/** The standings of an active enrollment (standing.ts moves between them). */
export const STANDINGS = ['not_qualified', 'qualified', 'grace'] as const;
export type Standing = (typeof STANDINGS)[number];
/** What caused a standing evaluation (the `trigger` of an evaluation and of `enrollment.qualified`/`enrollment.disqualified`). */
export const STANDING_TRIGGERS = [
  'assertion',
  'metric',
  'period',
  'expiry',
  'grace_expired',
  'requirement_change',
  'tier_change',
  'activation',
] as const;

/** The public enrollment object: lifecycle status, standing, and the evaluation that produced the standing. */
export const Enrollment = z.object({
  id: z.string().describe('prefix enr_'),
  object: z.literal('enrollment'),
  program: z.string(),
  entity: z.string(),
  status: z.enum(ENROLLMENT_STATUSES),
  standing: z.enum(STANDINGS),
  grace_ends_at: isoTime.nullable(),
  evaluation: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('the evaluation that produced the standing: trigger, evaluated_at, qualified, requirements'),
  evaluated_at: isoTime.nullable(),
  tier: z
    .object({ id: z.string(), name: z.string(), rate_bps: z.number().int(), metric: z.string(), threshold: z.number(), value: z.number() })
    .nullable()
    .describe(
      "the highest rung of the program's tier ladder whose threshold the metric's sum over the current period meets; evaluation.tiers shows every rung",
    ),
  livemode: z.boolean(),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicEnrollment = z.output<typeof Enrollment>;

export function presentEnrollment(row: EnrollmentRow): PublicEnrollment {
  return {
    id: row.id,
    object: 'enrollment',
    program: row.programId,
    entity: row.entityId,
    status: row.status as PublicEnrollment['status'],
    standing: row.standing as PublicEnrollment['standing'],
    grace_ends_at: row.graceEndsAt?.toISOString() ?? null,
    evaluation: (row.evaluation as Record<string, unknown> | null) ?? null,
    evaluated_at: row.evaluatedAt?.toISOString() ?? null,
    tier: (row.tier as PublicEnrollment['tier']) ?? null,
    livemode: true,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
