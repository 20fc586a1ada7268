import { z } from 'zod';
import type { AssertionEvent } from '../../db/generated/client.ts';
import { isoTime } from '../shape.ts';

export const ASSERTION_ACTIONS = ['asserted', 'revoked'] as const;

/** One assertion event as both fronts show it. */
export const Assertion = z.object({
  id: z.string().describe('prefix asrt_; addresses one event, never the claim'),
  object: z.literal('assertion'),
  entity: z.string().describe('prefix ent_'),
  key: z.string(),
  action: z.enum(ASSERTION_ACTIONS),
  value: z.number().nullable().describe('booleans are stored as 1 or 0; null on a revocation'),
  expires_at: isoTime.nullable(),
  effective_at: isoTime,
  livemode: z.boolean(),
  created_at: isoTime,
});
export type PublicAssertion = z.output<typeof Assertion>;

export function presentAssertion(row: AssertionEvent): PublicAssertion {
  return {
    id: row.id,
    object: 'assertion',
    entity: row.entityId,
    key: row.key,
    action: row.action as PublicAssertion['action'],
    value: row.value,
    expires_at: row.expiresAt?.toISOString() ?? null,
    effective_at: row.effectiveAt.toISOString(),
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
  };
}
