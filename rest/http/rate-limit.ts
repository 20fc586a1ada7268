import type { Context } from 'koa';
import type { RateLimitState } from '../../src/domain/platform/rate-limit.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';

/** The RateLimit-* headers of an admitted request (a refused one gets them from writeError). */
export function setRateLimitHeaders(ctx: Context, state: RateLimitState): void {
  ctx.set(rateLimitHeaders(state));
}
