import { z } from 'zod';
import { OPERATION_STATUSES, WAITING_REASONS } from './operation.ts';

/** An operation as both fronts show it (the response schema of presentOperation, operation.ts). */
const time = z.string().describe('ISO 8601 timestamp');

export const Operation = z.object({
  id: z.string().describe('prefix op_'),
  object: z.literal('operation'),
  subject: z.object({ type: z.string(), id: z.string() }),
  kind: z.string().describe('e.g. distribution.launch'),
  status: z.enum(OPERATION_STATUSES),
  waiting_reason: z.enum(WAITING_REASONS).nullable().describe('set exactly when status is waiting'),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  result: z.record(z.string(), z.unknown()),
  progress: z.record(z.string(), z.unknown()),
  target_operation_id: z.string().nullable().describe('on a cancel: the operation it supersedes'),
  parent_operation_id: z.string().nullable().describe('on a fan-out child: the operation that spawned it'),
  livemode: z.boolean(),
  created_at: time,
  updated_at: time,
  completed_at: time.nullable(),
});
