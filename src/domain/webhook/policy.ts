import { z } from 'zod';
import type { WebhookConfig } from '../../config.ts';
import { DomainError } from '../errors.ts';

/**
 * An endpoint's own delivery policy: a per-attempt timeout, a retry schedule,
 * a cap on requests in flight and a rate limit. Each is optional; left out
 * (or null) it is the deployment's setting. Bounds are the operator's
 * (WEBHOOK_POLICY_MAX_*, and WEBHOOK_ENDPOINT_CONCURRENCY for max_in_flight).
 * Stored as one JSONB column with the schedule in milliseconds; shown with
 * the schedule as durations (`5m`), every key present (null = default).
 */
// A type, not an interface: Prisma's JSON input takes it as it is.
export type EndpointPolicy = {
  timeout_ms?: number;
  retry_schedule_ms?: number[];
  max_in_flight?: number;
  rate_limit_per_second?: number;
};

/** Fixed lower bounds: a timeout shorter than this cannot cover a TLS handshake; a faster retry is a hammer. */
export const POLICY_MIN_TIMEOUT_MS = 100;
export const POLICY_MIN_RETRY_DELAY_MS = 1000;
export const POLICY_MIN_RATE_PER_SECOND = 0.1;

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1000],
  ['ms', 1],
];
const duration = z
  .string()
  .regex(/^\d{1,9}(\.\d{1,3})?(ms|s|m|h|d)$/, 'expected a duration like 30s, 5m, 2h or 1d')
  .transform((v) => {
    const m = /^([\d.]+)(ms|s|m|h|d)$/.exec(v)!;
    return Math.round(Number(m[1]) * Object.fromEntries(UNITS)[m[2]!]!);
  });
/** Milliseconds in the largest unit that divides them: 300000 → `5m`. */
export const formatDuration = (ms: number) => {
  const [unit, size] = UNITS.find(([, size]) => ms % size === 0 && ms >= size) ?? ['ms', 1];
  return `${ms / size}${unit}`;
};

/** The input: every key optional; null clears it (update) back to the deployment's setting. */
export const WebhookEndpointPolicyInput = z.strictObject({
  timeout_ms: z.number().int().nullable().optional(),
  retry_schedule: z.array(duration).nullable().optional(),
  max_in_flight: z.number().int().nullable().optional(),
  rate_limit_per_second: z.number().nullable().optional(),
});
export type PolicyInput = z.output<typeof WebhookEndpointPolicyInput>;

export const WebhookEndpointPolicy = z
  .object({
    timeout_ms: z.number().int().nullable().describe('per attempt; null: WEBHOOK_TIMEOUT_MS'),
    retry_schedule: z
      .array(z.string())
      .nullable()
      .describe('delay before each retry after the first attempt (its length is the number of retries); null: WEBHOOK_RETRY_SCHEDULE'),
    max_in_flight: z
      .number()
      .int()
      .nullable()
      .describe('requests in flight at once, per process; null: adaptive up to WEBHOOK_ENDPOINT_CONCURRENCY'),
    rate_limit_per_second: z.number().nullable().describe('attempts started per second, per process; null: no limit'),
  })
  .describe("the endpoint's own delivery policy; a null field is the deployment's setting");
export type PublicWebhookEndpointPolicy = z.output<typeof WebhookEndpointPolicy>;

export function presentPolicy(stored: unknown): PublicWebhookEndpointPolicy {
  const p = (stored ?? {}) as EndpointPolicy;
  return {
    timeout_ms: p.timeout_ms ?? null,
    retry_schedule: p.retry_schedule_ms?.map(formatDuration) ?? null,
    max_in_flight: p.max_in_flight ?? null,
    rate_limit_per_second: p.rate_limit_per_second ?? null,
  };
}

function outOfBounds(field: string, message: string): never {
  throw new DomainError('invalid_request', `Invalid policy.${field}: ${message}`, `policy.${field}`);
}

/**
 * The stored policy after `input` (null clears every key, a null key clears
 * that one, a missing key keeps it), checked against the operator's bounds;
 * null when nothing is left (every setting is the deployment's).
 */
export function mergePolicy(cfg: WebhookConfig, stored: unknown, input: PolicyInput | null): EndpointPolicy | null {
  const b = cfg.policyBounds;
  const out: EndpointPolicy = input === null ? {} : { ...((stored ?? {}) as EndpointPolicy) };
  const set = <K extends keyof EndpointPolicy>(key: K, v: EndpointPolicy[K] | null | undefined) => {
    if (v === null) delete out[key];
    else if (v !== undefined) out[key] = v;
  };
  const i = input ?? {};
  const within = (v: number | null | undefined, min: number, max: number) => v === null || v === undefined || (v >= min && v <= max);
  if (!within(i.timeout_ms, POLICY_MIN_TIMEOUT_MS, b.maxTimeoutMs))
    outOfBounds('timeout_ms', `must be between ${POLICY_MIN_TIMEOUT_MS} and ${b.maxTimeoutMs}`);
  if (i.retry_schedule && i.retry_schedule.length > b.maxRetries) outOfBounds('retry_schedule', `at most ${b.maxRetries} retries`);
  if (i.retry_schedule?.some((d) => !within(d, POLICY_MIN_RETRY_DELAY_MS, b.maxRetryDelayMs)))
    outOfBounds(
      'retry_schedule',
      `each delay must be between ${formatDuration(POLICY_MIN_RETRY_DELAY_MS)} and ${formatDuration(b.maxRetryDelayMs)}`,
    );
  if (!within(i.max_in_flight, 1, cfg.endpointConcurrency))
    outOfBounds('max_in_flight', `must be between 1 and ${cfg.endpointConcurrency}`);
  if (!within(i.rate_limit_per_second, POLICY_MIN_RATE_PER_SECOND, b.maxRatePerSecond))
    outOfBounds('rate_limit_per_second', `must be between ${POLICY_MIN_RATE_PER_SECOND} and ${b.maxRatePerSecond}`);
  set('timeout_ms', i.timeout_ms);
  set('retry_schedule_ms', i.retry_schedule);
  set('max_in_flight', i.max_in_flight);
  set('rate_limit_per_second', i.rate_limit_per_second);
  return Object.keys(out).length ? out : null;
}

/** The delays before each attempt for an endpoint: the deployment's first delay, then the endpoint's retries (or the deployment's schedule). */
export function scheduleOf(cfg: WebhookConfig, policy: EndpointPolicy | null): readonly number[] {
  return policy?.retry_schedule_ms ? [cfg.retryScheduleMs[0] ?? 0, ...policy.retry_schedule_ms] : cfg.retryScheduleMs;
}

/** A rate limit's bucket: one second's worth of attempts, at least one. The lease statement caps an unknown endpoint's first batch by the same rule. */
export const rateBurst = (perSecond: number) => Math.max(1, Math.floor(perSecond));
