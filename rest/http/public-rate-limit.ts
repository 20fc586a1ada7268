import type { Context, Middleware, Next } from 'koa';
import type { Config } from '../../src/config.ts';
import { DomainError, isDomainError } from '../../src/domain/errors.ts';
import { TokenBuckets } from '../../src/domain/platform/rate-limit.ts';
import { GRAPHIQL_ASSETS, wantsGraphiQL } from '../../src/graphql/graphiql.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';

/**
 * The routes anyone may call without a credential, each a bucket per client address (PUBLIC_RATE_LIMIT_*;
 * docs/security.md, "Unauthenticated pages and assets"): the scope registry, the three OpenAPI documents, and the
 * pages with their files (/docs, /console, GraphiQL), and partner connect's CORS preflights. Nothing else spends from it: the health probes never (a
 * prober must always learn the truth), and every other route has a credential's bucket of its own.
 */
const PUBLIC_PATHS = new Set(['/api/scopes', '/openapi.json', '/api/openapi.json', '/v1/platform/openapi.json', '/docs', '/console']);
const PUBLIC_PREFIXES = ['/docs/', '/console/', GRAPHIQL_ASSETS];

const isPublic = (method: string, path: string) =>
  PUBLIC_PATHS.has(path) ||
  PUBLIC_PREFIXES.some((p) => path.startsWith(p)) ||
  (method === 'OPTIONS' && path.startsWith('/v1/platform/connect/'));

export function publicRateLimit(config: Pick<Config, 'publicRateLimit'>, now: () => number): Middleware {
  const limit = config.publicRateLimit;
  if (!limit) return (_ctx, next) => next();
  const buckets = new TokenBuckets('public', limit.perSecond, limit.burst, now);
  return (ctx, next) => (isPublic(ctx.method, ctx.path) || wantsGraphiQL(ctx) ? limited(ctx, next) : next());

  async function limited(ctx: Context, next: Next): Promise<void> {
    try {
      // The client's key from src/http/client-address.ts, computed once per request (src/app.ts).
      ctx.set(rateLimitHeaders(await buckets.take((ctx.state.client as () => string)())));
    } catch (e) {
      if (!isDomainError(e) || e.code !== 'rate_limited') throw e;
      const retryAfter = e.details.retry_after as number;
      throw new DomainError('rate_limited', `Too many requests from this address; retry after ${retryAfter} s`, null, e.details);
    }
    return next();
  }
}
