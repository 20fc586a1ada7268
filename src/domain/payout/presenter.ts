import { z } from 'zod';
import { isoTime } from '../shape.ts';

/**
 * The public payout object: its own module, free of event imports, so the event payload schemas
 * (src/domain/event/payload.ts) describe `payout.*` with it without an import cycle.
 */
export const PAYOUT_STATUSES = ['created', 'in_review', 'settled', 'failed'] as const;
/** A payout in flight: created (not yet paid), or held by the provider for review. Its hold stays reserved. */
export const IN_FLIGHT_STATUSES = ['created', 'in_review'] as const;

export const PayoutObject = z.object({
  id: z.string().describe('prefix po_'),
  object: z.literal('payout'),
  amount: z.number().int().describe('integer minor units'),
  entity: z.string(),
  program: z.string().nullable().describe('the run’s program; null: a run over every program of the brand'),
  status: z.enum(PAYOUT_STATUSES),
  failure_reason: z.string().nullable(),
  period_end: isoTime.describe('the run’s period_end: entries payable in periods ending by it'),
  entries: z.array(z.string()).describe('the ledger entries (le_) it pays'),
  operation: z.string().describe('the payout.run operation'),
  created_at: isoTime,
  updated_at: isoTime,
});
export type PublicPayout = z.output<typeof PayoutObject>;
