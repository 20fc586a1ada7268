import type { Context, Middleware } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, requestCost } from '../../src/domain/platform/rate-limit.ts';
import type { PlatformGate } from '../../src/runtime/platform-gate.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';

/**
 * Surface B request pipeline for REST: authenticate (kill switch, test mode,
 * bearer, key, rate limit, brand) before anything else so no id is ever
 * resolved for an unauthenticated caller, then expose helpers for the routes.
 */
export function platformPipeline(gate: PlatformGate): Middleware {
  return async (ctx, next) => {
    const cost = requestCost(listItemsOf(ctx));
    const headers = { bearer: bearer(ctx), brand: ctx.get('service-brand') || undefined, client: ctx.state.client };
    const confirming = confirmsBeforeCommit(ctx);
    if (!confirming) {
      const caller = await gate.authorize(headers, cost);
      ctx.set(rateLimitHeaders(caller.rateLimit));
      ctx.state.caller = caller;
      return next();
    }
    const caller = await gate.authorizeProvisionally(headers, cost, confirming === 'read');
    ctx.set(rateLimitHeaders(caller.rateLimit));
    ctx.state.caller = caller;
    // Nothing is answered before the admission is confirmed; a refusal replaces whatever the route said or threw.
    try {
      await next();
    } catch (e) {
      await caller.confirm?.();
      throw e;
    }
    await caller.confirm?.();
  };
}

/** Handlers that confirm a provisional caller (`authorizeProvisionally`) before they commit, or after they read. */
const confirmingHandlers = new WeakMap<(ctx: Context) => Promise<void>, 'read' | 'write'>();

/**
 * Marks a route handler as one that awaits `caller.confirm()` before its
 * commit (the batched writes: the idempotent runner does), so the pipeline
 * admits its request from the credential cache and the freshness round trip
 * runs beside the write's first batch instead of before it.
 */
export function confirmsAdmission(kind: 'read' | 'write', handler: (ctx: Context) => Promise<void>): (ctx: Context) => Promise<void> {
  confirmingHandlers.set(handler, kind);
  return handler;
}

/** How the route this request matched (the first layer for its method) confirms, if it is marked. */
function confirmsBeforeCommit(ctx: Context): 'read' | 'write' | undefined {
  const layers = (ctx as Context & { matched?: { methods: string[]; stack: unknown[] }[] }).matched ?? [];
  const route = layers.find((l) => l.methods.includes(ctx.method));
  for (const h of route?.stack ?? []) {
    const kind = confirmingHandlers.get(h as (ctx: Context) => Promise<void>);
    if (kind) return kind;
  }
  return undefined;
}

/** The list items a REST request asks for: its `limit` (validated later by the route; one outside 1..100 is a 400, not charged), else the default page. */
function listItemsOf(ctx: Context): number {
  const limit = Number(ctx.query.limit);
  return Number.isInteger(limit) && limit > 0 && limit <= MAX_LIST_LIMIT ? limit : DEFAULT_LIST_LIMIT;
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
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new DomainError('invalid_request', 'The request body must be a JSON object');
  return snakeKeys(raw as Record<string, unknown>, 'body');
}

export const idempotencyKeyOf = (ctx: Context) => ctx.get('idempotency-key') || undefined;
