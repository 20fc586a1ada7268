import type { Context } from 'koa';
import type { RateLimitState } from '../../src/domain/platform/rate-limit.ts';

/** The RateLimit-* headers of an admitted request (a refused one gets them from writeError). */
export function setRateLimitHeaders(ctx: Context, state: RateLimitState): void {
  ctx.set('RateLimit-Limit', String(state.limit));
  ctx.set('RateLimit-Remaining', String(state.remaining));
  ctx.set('RateLimit-Reset', String(state.resetSeconds));
}
