import { z } from 'zod';
import { ENROLLMENT_STATUSES } from '../../src/domain/enrollment/enrollment.ts';
import { STANDINGS } from '../../src/domain/enrollment/standing.ts';

/** Response shapes of enrollments, for the OpenAPI document (programs and assertions declare theirs in the domain). */
const time = z.string().describe('ISO 8601 timestamp');
const list = <T extends z.ZodType>(item: T) => z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() });

export const Enrollment = z.object({
  id: z.string().describe('prefix enr_'),
  object: z.literal('enrollment'),
  program: z.string(),
  entity: z.string(),
  status: z.enum(ENROLLMENT_STATUSES),
  standing: z.enum(STANDINGS),
  grace_ends_at: time.nullable(),
  evaluation: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe('the evaluation that produced the standing: trigger, evaluated_at, qualified, requirements'),
  evaluated_at: time.nullable(),
  livemode: z.boolean(),
  created_at: time,
  updated_at: time,
});
export const EnrollmentList = list(Enrollment);
