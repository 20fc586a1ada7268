import { z } from 'zod';
import { ASSERTION_ACTIONS } from '../../src/domain/assertion/assertion.ts';

/** Response shapes of assertions, for the OpenAPI document (programs and enrollments declare theirs in the domain). */
const time = z.string().describe('ISO 8601 timestamp');
const list = <T extends z.ZodType>(item: T) => z.object({ object: z.literal('list'), data: z.array(item), has_more: z.boolean() });

export const Assertion = z.object({
  id: z.string().describe('prefix asrt_; addresses one event, never the claim'),
  object: z.literal('assertion'),
  entity: z.string().describe('prefix ent_'),
  key: z.string(),
  action: z.enum(ASSERTION_ACTIONS),
  value: z.number().nullable().describe('booleans are stored as 1 or 0; null on a revocation'),
  expires_at: time.nullable(),
  effective_at: time,
  livemode: z.boolean(),
  created_at: time,
});
export const AssertionList = list(Assertion);
export const AssertionRevocation = z.object({
  object: z.literal('assertion_revocation'),
  entity: z.string().nullable(),
  key: z.string(),
  revoked: z.boolean().describe('true when a revoked event was appended (201); false when the claim was already absent (200)'),
  assertion: Assertion.nullable(),
});
