import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Middleware } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { authenticateOperator } from '../../src/domain/operator/operator-token.ts';
import type { Metrics } from '../../src/metrics.ts';
import { bearer } from '../http/body.ts';

/**
 * `GET /metrics`: the Prometheus text exposition, guarded by the operator
 * token (401 in the operator routes' envelope otherwise). Not in the OpenAPI
 * documents: its body is Prometheus text, not JSON, and it is for scrapers.
 */
export function metricsRoute(deps: Deps, metrics: Metrics): Middleware {
  return (ctx, next) => (ctx.path === '/metrics' ? serve(ctx) : next());

  async function serve(ctx: Context): Promise<void> {
    ctx.state.route = '/metrics';
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new DomainError('method_not_allowed', 'Use GET for this path', null, { allow: 'GET' });
    await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
    ctx.type = metrics.contentType;
    ctx.body = await metrics.text();
  }
}

/** The separate metrics listener (METRICS_LISTEN): `GET /metrics` without credentials, 404 for anything else. */
export function metricsListener(metrics: Metrics) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: this listener serves only GET /metrics\n');
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  };
}
