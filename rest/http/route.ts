import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import type { Action } from '../../src/domain/action/action.ts';
import { DomainError, missingScope } from '../../src/domain/errors.ts';

/**
 * A REST route as one declaration: the spec's table row (method, path,
 * scope), the input schemas the domain validates with, and the handler. The
 * router and the OpenAPI document are both built from these, so the document
 * cannot drift from what the routes accept.
 */
export type Auth = 'none' | 'platform' | 'user' | 'operator' | 'publishable';

export interface RouteDef {
  method: 'GET' | 'POST' | 'DELETE';
  /** Koa path, e.g. `/webhook_endpoints/:id`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: Auth;
  scope?: string;
  /** The action this route binds (rest/platform/answer.ts `actionRoute`): `mount()` enforces its scope. */
  action?: Action;
  body?: z.ZodType;
  query?: z.ZodType;
  /** Documents the `Idempotency-Key` header. */
  idempotent?: boolean;
  deprecatedBodyFields?: Record<string, string>;
  /** `contentType` other than JSON (a CSV export): documented with `schema` (a string). */
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string };
  /** Documented responses that are neither the success nor the surface's error envelope. */
  otherResponses?: { status: number; description: string; schema: z.ZodType }[];
  errors: number[];
  handler: (ctx: Context) => Promise<void>;
}

/**
 * Every router matches paths exactly, like Stripe's: case-sensitive, a
 * trailing slash is a different path, and nothing is decoded or normalized
 * before matching (`%65vents`, `//`, `..` match no route). Koa's own
 * defaults are case-insensitive with an optional trailing slash, and a
 * router whose routes and middleware disagree on that runs a handler
 * without its pipeline: no router is built any other way.
 */
export function exactRouter(prefix?: string): Router {
  return new Router({ prefix, sensitive: true, strict: true });
}

export function mount(router: Router, routes: RouteDef[]): void {
  const byPath = new Map<string, string[]>();
  for (const r of routes) {
    const handlers = r.action ? [scoped(r.action.scope), r.handler] : [r.handler];
    router[r.method.toLowerCase() as 'get' | 'post' | 'delete'](r.path, ...handlers);
    byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method]);
  }
  // A known path with the wrong method is 405 with Allow, in the surface's envelope.
  for (const [path, methods] of byPath) {
    router.all(path, async () => {
      throw new DomainError('method_not_allowed', `Use ${methods.join(' or ')} for this path`, null, { allow: methods.join(', ') });
    });
  }
}

/**
 * The scope check of an action's route, before its handler reads the query or body (the caller is the platform
 * pipeline's). A middleware of its own, so the route's stack still holds the handler itself (pipeline.ts looks for it).
 */
function scoped(scope: string): Middleware {
  return async (ctx, next) => {
    if (!(ctx.state.caller as { scopes: ReadonlySet<string> }).scopes.has(scope)) throw missingScope(scope);
    return next();
  };
}
