import { Prisma } from '../../db/database.ts';
import { z } from 'zod';
import type { Reader } from '../action/action.ts';
import { isoTime } from '../shape.ts';

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

interface HealthRow {
  hour_attempts: number;
  hour_succeeded: number;
  hour_p50: number | null;
  hour_p99: number | null;
  day_attempts: number;
  day_succeeded: number;
  day_p50: number | null;
  day_p99: number | null;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  last_failure_status: number | null;
  last_failure_error: string | null;
}

export async function webhookEndpointHealth(db: Reader, endpointId: string, now: Date): Promise<PublicWebhookEndpointHealth> {
  const hour = new Date(now.getTime() - WINDOWS.last_hour);
  const day = new Date(now.getTime() - WINDOWS.last_day);
  const ok = Prisma.sql`status_code BETWEEN 200 AND 299`;
  const [r] = await db.$queryRaw<HealthRow[]>`
    WITH a AS (
      SELECT started_at > ${hour}::timestamptz AS recent, ${ok} AS ok, duration_ms FROM webhook_attempt
      WHERE endpoint_id = ${endpointId} AND started_at > ${day}::timestamptz AND started_at <= ${now}::timestamptz
    ), agg AS (
      SELECT count(*) FILTER (WHERE recent)::int AS hour_attempts, count(*) FILTER (WHERE recent AND ok)::int AS hour_succeeded,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE recent) AS hour_p50,
        percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) FILTER (WHERE recent) AS hour_p99,
        count(*)::int AS day_attempts, count(*) FILTER (WHERE ok)::int AS day_succeeded,
        percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS day_p50,
        percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS day_p99
      FROM a
    )
    SELECT agg.*, s.started_at AS last_success_at, f.started_at AS last_failure_at, f.status_code AS last_failure_status,
      f.error AS last_failure_error
    FROM agg
    LEFT JOIN LATERAL (SELECT started_at FROM webhook_attempt WHERE endpoint_id = ${endpointId} AND started_at <= ${now}::timestamptz AND ${ok}
      ORDER BY started_at DESC LIMIT 1) s ON true
    LEFT JOIN LATERAL (SELECT started_at, status_code, error FROM webhook_attempt
      WHERE endpoint_id = ${endpointId} AND started_at <= ${now}::timestamptz AND (status_code IS NULL OR NOT ${ok})
      ORDER BY started_at DESC LIMIT 1) f ON true`;
  const row = r!;
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
