/**
 * Retry policy (after stripe-node's RequestSender and svix's request.ts).
 *
 * A request is retried when the failure says nothing happened or the retry
 * cannot double an effect:
 * - 429 always (the server refused before doing anything);
 * - 5xx and network failures only when the request is replayable: a GET, a
 *   DELETE, or a mutation carrying an Idempotency-Key (the same key is sent on
 *   every attempt, so the server answers a retry with the stored result).
 *
 * The wait is exponential backoff with jitter, unless the server sent
 * `Retry-After`, which wins; every wait is clamped to `maxDelayMs` so a
 * misbehaving header cannot park the caller for an hour.
 */
import { parseRetryAfter } from './shared/retry-after.ts';

export interface RetryPolicy {
  maxRetries: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 20_000 };

export type AttemptOutcome = { kind: 'response'; status: number } | { kind: 'network' };

export function shouldRetry(outcome: AttemptOutcome, replayable: boolean, attempt: number, policy: RetryPolicy): boolean {
  if (attempt >= policy.maxRetries) return false;
  if (outcome.kind === 'network') return replayable;
  if (outcome.status === 429) return true;
  return outcome.status >= 500 && replayable;
}

export { parseRetryAfter };

/** Sleep before retry number `attempt + 1` (attempt counts from 0). */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, policy: RetryPolicy, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxDelayMs);
  const backoff = Math.min(policy.initialDelayMs * 2 ** attempt, policy.maxDelayMs);
  // Full-range-ish jitter: between 50 % and 100 % of the backoff, so a herd of clients spreads out.
  return Math.round(backoff * (0.5 + random() * 0.5));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
