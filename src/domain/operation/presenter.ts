import { z } from 'zod';
import type { Operation as OperationRow } from '../../db/generated/client.ts';
import { isoTime } from '../shape.ts';

/** The public operation object and its vocabulary (no event or database dependency: src/domain/event/payload.ts builds on it). */
export const OPERATION_STATUSES = ['pending', 'running', 'waiting', 'succeeded', 'partial', 'failed', 'canceled'] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];
export const LIVE_STATUSES = ['pending', 'running', 'waiting'] as const satisfies readonly OperationStatus[];
export const TERMINAL_STATUSES = ['succeeded', 'partial', 'failed', 'canceled'] as const satisfies readonly OperationStatus[];

export const WAITING_REASONS = [
  'funding_required',
  'provider_review',
  'awaiting_target_settle',
  'awaiting_children_settle',
  'awaiting_cleanup',
  'awaiting_deliveries',
] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];

export interface OperationError {
  code: string;
  message: string;
  [k: string]: unknown;
}

/** The public operation object (the REST body, the GraphQL `Operation`, the `data.object` of `operation.*` events). */
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
  created_at: isoTime,
  updated_at: isoTime,
  completed_at: isoTime.nullable(),
});
export type PublicOperation = z.output<typeof Operation>;

export function presentOperation(row: OperationRow): PublicOperation {
  return {
    id: row.id,
    object: 'operation',
    subject: { type: row.subjectType, id: row.subjectId },
    kind: row.kind,
    status: row.status as OperationStatus,
    waiting_reason: row.status === 'waiting' ? (row.waitingReason as WaitingReason) : null,
    attempts: row.attempts,
    max_attempts: row.maxAttempts,
    error: (row.error as OperationError | null) ?? null,
    result: row.result as Record<string, unknown>,
    progress: row.progress as Record<string, unknown>,
    target_operation_id: row.targetOperationId,
    parent_operation_id: row.parentOperationId,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    completed_at: row.completedAt?.toISOString() ?? null,
  };
}
