import { z } from 'zod';
import type { Reader } from '../action/action.ts';
import { isoTime } from '../shape.ts';
import { endpointHealthRow } from './store.ts';

/**
 * An endpoint's health summary (`GET /webhook_endpoints/{id}`, GraphQL
 * `WebhookEndpoint.health`): success rate and attempt latency over the last
 * hour and day, the last success and the last failure. Read on demand by one
 * statement over the attempt log: the last day is one range of the
 * (endpoint_id, started_at) index, the last success and failure one backward
 * probe each. The delivery path writes nothing for it (each attempt row
 * carries its endpoint), so delivery costs the same whether anyone looks.
 */
const WINDOWS = { last_hour: 3600_000, last_day: 86_400_000 } as const;

export const WebhookHealthWindow = z.object({
  attempts: z.number().int().describe('attempts started in the window'),
  succeeded: z.number().int().describe('of which answered 2xx'),
  success_rate: z.number().nullable().describe('succeeded / attempts, 0..1; null without attempts'),
  p50_ms: z.number().int().nullable().describe('median attempt duration; null without attempts'),
  p99_ms: z.number().int().nullable().describe('99th percentile attempt duration; null without attempts'),
});

export const WebhookEndpointHealth = z.object({
  last_hour: WebhookHealthWindow,
  last_day: WebhookHealthWindow,
  last_success_at: isoTime.nullable().describe('start of the latest 2xx attempt, however old'),
  last_failure: z
    .object({
      at: isoTime,
      status_code: z.number().int().nullable().describe('null when no response arrived'),
      error: z.string().nullable(),
    })
    .nullable()
    .describe('the latest failed attempt, however old'),
});
export type PublicWebhookEndpointHealth = z.output<typeof WebhookEndpointHealth>;

export async function webhookEndpointHealth(db: Reader, endpointId: string, now: Date): Promise<PublicWebhookEndpointHealth> {
  const hour = new Date(now.getTime() - WINDOWS.last_hour);
  const day = new Date(now.getTime() - WINDOWS.last_day);
  const row = await endpointHealthRow(db, endpointId, now, hour, day);
  const window = (attempts: number, succeeded: number, p50: number | null, p99: number | null) => ({
    attempts,
    succeeded,
    success_rate: attempts ? succeeded / attempts : null,
    p50_ms: p50 === null ? null : Math.round(Number(p50)),
    p99_ms: p99 === null ? null : Math.round(Number(p99)),
  });
  return {
    last_hour: window(row.hour_attempts, row.hour_succeeded, row.hour_p50, row.hour_p99),
    last_day: window(row.day_attempts, row.day_succeeded, row.day_p50, row.day_p99),
    last_success_at: row.last_success_at ? new Date(row.last_success_at).toISOString() : null,
    last_failure: row.last_failure_at
      ? { at: new Date(row.last_failure_at).toISOString(), status_code: row.last_failure_status, error: row.last_failure_error }
      : null,
  };
}
