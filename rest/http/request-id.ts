import { newRequestId } from '../../src/domain/id.ts';
import type { Context, Middleware } from 'koa';
import type { Logger } from 'pino';
import type { Metrics } from '../../src/metrics.ts';
import { tracing, type SpanHandle } from '../../src/tracing.ts';

/** What a request's handlers leave on `ctx.state` for its log line and metrics. */
export interface RequestState {
  requestId: string;
  /** The route template when no router matched it (GraphQL, /metrics). */
  route?: string;
  /** The error code answered, when the request failed (rest/http/envelope.ts). */
  errorCode?: string;
  /** The authenticated caller: a platform caller (organization, tokenId) or a user caller (organizationId, tokenId). */
  caller?: { organization?: { id: string }; organizationId?: string; tokenId?: string };
  /** The client's address key (set in src/app.ts): failed authentications spend from its bucket. */
  client?: () => string;
}

interface MatchedLayer {
  path: string;
  methods: string[];
}

/**
 * The route template of a request: the first route (not middleware, not a catch-all) of the routers that matched
 * it that takes its method (or a 405 fallback: same template); `unmatched` when no route did. Never the raw path.
 */
export function routeTemplate(ctx: Context): string {
  const state = ctx.state as RequestState;
  if (state.route) return state.route;
  const matched = (ctx as Context & { matched?: MatchedLayer[] }).matched;
  if (matched) {
    for (const layer of matched) {
      if (layer.methods.length && !layer.path.includes('{*') && layer.methods.includes(ctx.method)) return layer.path;
    }
  }
  return 'unmatched';
}

/**
 * Every response carries `Request-Id`; the same id is in error bodies and logs. Each request is logged once and
 * counted, and (tracing on) is a server span named `<method> <route template>`, a child of an incoming `traceparent`.
 */
export function requestContext(log: Logger, metrics?: Metrics): Middleware {
  return (ctx, next) =>
    tracing.span(ctx.method, { 'http.request.method': ctx.method, 'url.path': ctx.path }, (span) => handle(ctx, next, span), {
      kind: 'server',
      carrier: ctx.headers,
    });

  async function handle(ctx: Context, next: () => Promise<unknown>, span: SpanHandle): Promise<void> {
    const requestId = newRequestId();
    ctx.state.requestId = requestId;
    ctx.set('Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      const state = ctx.state as RequestState;
      const route = routeTemplate(ctx);
      const status = String(ctx.status);
      metrics?.httpRequests.labels(ctx.method, route, status).inc();
      metrics?.httpDuration.labels(ctx.method, route, status).observe(ms / 1000);
      const caller = state.caller;
      // Path only: query strings may carry cursors but never secrets; headers are not logged, a token only by its id.
      log.info(
        {
          request_id: requestId,
          method: ctx.method,
          path: ctx.path,
          route,
          status: ctx.status,
          ms: Math.round(ms),
          organization_id: caller?.organization?.id ?? caller?.organizationId,
          token_id: caller?.tokenId,
          error: state.errorCode,
        },
        'request',
      );
      span.updateName(`${ctx.method} ${route}`);
      span.setAttributes({
        'http.route': route,
        'http.response.status_code': ctx.status,
        'platform.request_id': requestId,
        'platform.organization_id': caller?.organization?.id ?? caller?.organizationId,
        'platform.error_code': state.errorCode,
      });
      if (ctx.status >= 500) span.fail(state.errorCode);
    }
  }
}
