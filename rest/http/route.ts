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
  /** OPTIONS: a CORS preflight (partner connect), documented like any route. */
  method: 'GET' | 'POST' | 'DELETE' | 'OPTIONS';
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
  /** Never rate limited (the health probes: a limited probe would take a healthy process out of rotation). */
  unlimited?: true;
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
  const router = new Router({ prefix, sensitive: true, strict: true });
  indexLayers(router);
  return router;
}

/**
 * The router's middleware, skipped outright when no route of it can match
 * the path: the router's own dispatch would read the host, test its layers
 * and, finding no route (its middleware alone runs only before a route),
 * call `next`.
 */
export function routesOf(router: Router): Middleware {
  const dispatch = router.routes() as unknown as Middleware;
  const gated: Middleware = (ctx, next) => (routeMayMatch(router, ctx.path) ? dispatch(ctx, next) : next());
  // As the library's own dispatch does, the middleware names its router.
  return Object.assign(gated, { router });
}

type Layer = Router['stack'][number];
interface LayerIndex {
  /** The stack it was built from (rebuilt when layers are added). */
  size: number;
  /** Paths are bucketed by their first `depth` segments. */
  depth: number;
  /** Layers whose path has fewer literal leading segments (middleware, wildcards), in stack order. */
  always: Layer[];
  /** Every layer that could match a path with these first segments, in stack order. */
  buckets: Map<string, Layer[]>;
}

const indexes = new WeakMap<Router, LayerIndex>();
/** Characters that make a path segment a pattern (path-to-regexp's syntax, and the regexp a middleware layer's path becomes). */
const PATTERN = /[:*{}()[\]?+!^$|\\]/;

/** A path's first `depth` segments (`/v1/platform/assertions` of `/v1/platform/assertions/asrt_1` at depth 3); the whole path when shorter. */
function headOf(path: string, depth: number): string {
  let at = 0;
  for (let i = 0; i < depth; i++) {
    at = path.indexOf('/', at + 1);
    if (at === -1) return path;
  }
  return path.slice(0, at);
}

/** A layer's bucket at `depth`: its first `depth` segments when all are literal, else none (it is tested for every path). */
function layerHead(path: string, depth: number): string | undefined {
  const segments = path.split('/');
  if (segments[0] !== '' || segments.length <= depth) return undefined;
  for (let i = 1; i <= depth; i++) if (PATTERN.test(segments[i]!)) return undefined;
  return segments.slice(0, depth + 1).join('/');
}

function buildIndex(stack: Layer[]): LayerIndex {
  let best: LayerIndex | undefined;
  let bestCost = Infinity;
  for (let depth = 1; depth <= 4; depth++) {
    const always: Layer[] = [];
    const buckets = new Map<string, Layer[]>();
    for (const layer of stack) {
      const head = typeof layer.path === 'string' ? layerHead(layer.path, depth) : undefined;
      if (head === undefined) always.push(layer);
      else buckets.set(head, [...(buckets.get(head) ?? []), layer]);
    }
    // Merged once here, so a request takes one ready list: every layer a path under this head could match, in stack order.
    for (const [head, layers] of buckets)
      buckets.set(
        head,
        stack.filter((l) => always.includes(l) || layers.includes(l)),
      );
    const cost = always.length + Math.max(0, ...[...buckets.values()].map((l) => l.length - always.length));
    if (cost < bestCost) [best, bestCost] = [{ size: stack.length, depth, always, buckets }, cost];
  }
  return best!;
}

/** Whether any route (a layer with methods, not `router.use` middleware) of `router` could match `path`. */
export const routeMayMatch = (router: Router, path: string): boolean => candidatesOf(router, path).some((l) => l.methods.length > 0);

function candidatesOf(router: Router, path: string): Layer[] {
  let index = indexes.get(router);
  if (!index || index.size !== router.stack.length) indexes.set(router, (index = buildIndex(router.stack)));
  return index.buckets.get(headOf(path, index.depth)) ?? index.always;
}

/**
 * @koa/router tests every layer's regexp against every request (over 200
 * layers across the app's routers, the largest cost of routing a request).
 * A path can only match a layer whose leading literal segments it starts
 * with (routers here are case-sensitive and strict, and match the raw path),
 * so each router tests only the layers bucketed under the path's first
 * segments, plus those with patterns there, in stack order: the same match
 * as the library's own loop (test/http/router-index.test.ts compares them).
 */
function indexLayers(router: Router): void {
  router.match = function match(path: string, method: string) {
    const result: ReturnType<Router['match']> = { path: [], pathAndMethod: [], route: false };
    const wanted = method.toUpperCase();
    for (const layer of candidatesOf(router, path)) {
      if (!layer.match(path)) continue;
      result.path.push(layer);
      if (layer.methods.length === 0 || layer.methods.includes(wanted)) {
        result.pathAndMethod.push(layer);
        if (layer.methods.length > 0) result.route = true;
      }
    }
    return result;
  };
}

export function mount(router: Router, routes: RouteDef[]): void {
  const byPath = new Map<string, string[]>();
  for (const r of routes) {
    const handlers = r.action ? [scoped(r.action.scope), r.handler] : [r.handler];
    router[r.method.toLowerCase() as 'get' | 'post' | 'delete' | 'options'](r.path, ...handlers);
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
  return (ctx, next) => {
    if (!(ctx.state.caller as { scopes: ReadonlySet<string> }).scopes.has(scope)) throw missingScope(scope);
    return next();
  };
}
