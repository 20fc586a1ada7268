import type { DomainError } from '../domain/errors.ts';
import type { RateLimitState } from '../domain/platform/rate-limit.ts';

/** The RateLimit-* headers of an admitted request, the same on REST and GraphQL over HTTP. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Limit': String(state.limit),
    'RateLimit-Remaining': String(state.remaining),
    'RateLimit-Reset': String(state.resetSeconds),
  };
}

/** What a refusal adds to its status: `Retry-After` when it has one, and a rate limit's own RateLimit-* (nothing left). */
export function refusalHeaders(err: DomainError): Record<string, string> {
  const retryAfter = err.details.retry_after;
  if (typeof retryAfter !== 'number') return {};
  const headers: Record<string, string> = { 'Retry-After': String(retryAfter) };
  if (err.code === 'rate_limited' && typeof err.details.limit === 'number')
    Object.assign(headers, rateLimitHeaders({ limit: err.details.limit, remaining: 0, resetSeconds: retryAfter }));
  return headers;
}
