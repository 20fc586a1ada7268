import { z } from 'zod';

/** Response shapes of Surface B, for the OpenAPI document. */
const time = z.string().describe('ISO 8601 timestamp');

export const Event = z.object({
  id: z.string().describe('prefix evt_'),
  object: z.literal('event'),
  type: z.string(),
  seq: z.number().int().describe('monotonically increasing; defines order'),
  subject: z.object({ type: z.string(), id: z.string() }),
  data: z.record(z.string(), z.unknown()),
  operation: z.string().nullable().describe('op_ id of the causing operation'),
  brand: z.string().nullable().describe('brand_ id the causing request selected (Service-Brand, else the oldest brand); null for organization-level events (assertion.*, operations without a brand, operator test events)'),
  livemode: z.boolean(),
  created_at: time,
});
export const EventList = z.object({ object: z.literal('list'), data: z.array(Event), has_more: z.boolean() });

export const ErrorEnvelope = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'param', 'request_id'],
      properties: {
        code: { type: 'string', description: 'Stable error code; branch on it, never on the message' },
        message: { type: 'string' },
        param: { type: ['string', 'null'] },
        request_id: { type: 'string', description: 'Also in the Request-Id header' },
      },
    },
  },
};
