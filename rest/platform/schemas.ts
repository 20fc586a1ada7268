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

export const WebhookAttempt = z.object({
  number: z.number().int().describe('1 for the first attempt'),
  started_at: time,
  duration_ms: z.number().int(),
  status_code: z.number().int().nullable().describe('null when no response arrived'),
  error: z.string().nullable().describe('short reason: timeout, connection refused, refused address, HTTP status'),
  response_excerpt: z.string().nullable().describe('at most the first 1 KiB of the response body'),
});
export const WebhookDelivery = z.object({
  id: z.string().describe('prefix msg_'),
  object: z.literal('webhook_delivery'),
  endpoint_id: z.string(),
  event_id: z.string().describe('also the webhook-id header'),
  event_type: z.string().nullable(),
  status: z.enum(['pending', 'failing', 'succeeded', 'exhausted']),
  attempts: z.number().int(),
  next_attempt_at: time.nullable().describe('null once succeeded or exhausted'),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  created_at: time,
  completed_at: time.nullable(),
  attempt_log: z.array(WebhookAttempt),
});
export const WebhookDeliveryEnvelope = z.object({ webhook_delivery: WebhookDelivery });
export const WebhookDeliveryList = z.object({ object: z.literal('list'), data: z.array(WebhookDelivery), has_more: z.boolean() });
