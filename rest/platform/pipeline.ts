import type { Context, Middleware } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError, missingScope } from '../../src/domain/errors.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, requestCost } from '../../src/domain/platform/rate-limit.ts';
import type { PlatformGate, SurfaceBCaller } from '../../src/domain/platform/request-auth.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import { setRateLimitHeaders } from '../http/rate-limit.ts';

/**
 * Surface B request pipeline for REST: authenticate (kill switch, test mode,
 * bearer, key, rate limit, brand) before anything else so no id is ever
 * resolved for an unauthenticated caller, then expose helpers for the routes.
 */
export function platformPipeline(gate: PlatformGate): Middleware {
  return async (ctx, next) => {
    const cost = requestCost(listItemsOf(ctx));
    const caller = await gate.authorize({ bearer: bearer(ctx), brand: ctx.get('service-brand') || undefined }, cost);
    setRateLimitHeaders(ctx, caller.rateLimit);
    ctx.state.caller = caller;
    await next();
  };
}

/** The list items a REST request asks for: its `limit` (validated later by the route; one outside 1..100 is a 400, not charged), else the default page. */
function listItemsOf(ctx: Context): number {
  const limit = Number(ctx.query.limit);
  return Number.isInteger(limit) && limit > 0 && limit <= MAX_LIST_LIMIT ? limit : DEFAULT_LIST_LIMIT;
}

export function callerWith(ctx: Context, scope: string): SurfaceBCaller {
  const caller = ctx.state.caller as SurfaceBCaller;
  if (!caller.scopes.has(scope)) throw missingScope(scope);
  return caller;
}

const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Accepts snake_case and camelCase keys (`enabledEvents` or `enabled_events`); the same key twice is refused. */
function snakeKeys(obj: Record<string, unknown>, where: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    const key = snake(k);
    if (Object.hasOwn(out, key)) throw new DomainError('invalid_request', `${key} was given twice in the ${where}`, key);
    out[key] = v;
  }
  return out;
}

export function platformQuery(ctx: Context): Record<string, unknown> {
  for (const [k, v] of Object.entries(ctx.query)) {
    if (Array.isArray(v)) throw new DomainError('invalid_request', `Query parameter ${k} was given more than once`, snake(k));
  }
  return snakeKeys(ctx.query as Record<string, unknown>, 'query string');
}

export async function platformBody(deps: Deps, ctx: Context): Promise<Record<string, unknown>> {
  const raw = await readJsonBody(ctx, deps.config.bodyLimitBytes);
  if (raw === undefined) return {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new DomainError('invalid_request', 'The request body must be a JSON object');
  return snakeKeys(raw as Record<string, unknown>, 'body');
}

export const idempotencyKeyOf = (ctx: Context) => ctx.get('idempotency-key') || undefined;
