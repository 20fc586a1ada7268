import type Koa from 'koa';
import type { Database } from '../src/db/database.ts';
import type { Deps } from '../src/domain/context.ts';
import { DomainError } from '../src/domain/errors.ts';
import type { KillSwitch } from '../src/runtime/kill-switch.ts';
import { TokenBuckets } from '../src/domain/platform/rate-limit.ts';
import type { PlatformGate } from '../src/runtime/platform-gate.ts';
import type { ServiceUrls } from '../src/domain/organization/bootstrap.ts';
import type { Metrics } from '../src/metrics.ts';
import { graphiqlPage } from '../src/graphql/graphiql.ts';
import { tokenRoutes } from './dashboard/tokens.ts';
import { errorEnvelope } from './http/envelope.ts';
import { publicRateLimit } from './http/public-rate-limit.ts';
import { restInputGuard } from './http/input-guard.ts';
import { exactRouter, mount, routesOf, type RouteDef } from './http/route.ts';
import { operatorEventRoutes } from './operator/events.ts';
import { metricsRoute } from './operator/metrics.ts';
import { operatorRoutes } from './operator/operator.ts';
import { operatorWalletRoutes } from './operator/wallet.ts';
import { operatorWebhookRoutes } from './operator/webhooks.ts';
import { restActionRoutes } from './platform/bindings.ts';
import { payoutExportRoute } from './platform/payout-export.ts';
import { platformPipeline } from './platform/pipeline.ts';
import { connectRouter } from './platform/connect.ts';
import { consolePage } from './service/console.ts';
import { docsPage } from './service/docs.ts';
import { serviceRoutes } from './service/routes.ts';
import { surfaceARoutes } from './surface-a/routes.ts';

export interface RestOptions {
  db: Database;
  killSwitch: KillSwitch;
  gate: PlatformGate;
  urls: () => ServiceUrls;
  specVersion: string;
  metrics: Metrics;
}

/**
 * Surface B's routes in the order they match: the route outside the seam (rest/outside-seam.ts) first, as
 * `/payouts/exports` must match before `/payouts/:id`; then every action REST carries, walked from the registry.
 */
export const surfaceBRoutes = (deps: Deps): RouteDef[] => [payoutExportRoute(deps), ...restActionRoutes(deps)];

/** Mounts route declarations under a prefix. */
function surface(prefix: string, routes: RouteDef[]) {
  const router = exactRouter(prefix);
  mount(router, routes);
  return router;
}

/**
 * Every REST surface on Koa, after the error envelope, the unauthenticated
 * routes' per-address bucket and the input guard:
 * Surface A under `/api`, token management, operator and service routes at the
 * root, Surface B under `/v1/platform` behind its pipeline, the pages
 * (/docs, /console, GraphiQL), and a 404 in the
 * envelope of the surface a path belongs to for anything else.
 */
export function mountRest(koa: Koa, deps: Deps, opts: RestOptions): void {
  const { config, log } = deps;
  // Surface A and token management: their own per-credential buckets, apart from Surface B's.
  const surfaceABuckets = new TokenBuckets('surface-a token', config.surfaceARateLimitPerSecond, config.surfaceARateLimitBurst, () =>
    deps.clock.now().getTime(),
  );
  const surfaceA = surfaceARoutes(deps, { tokens: surfaceABuckets, organizations: opts.gate.organizations });
  const tokens = tokenRoutes(deps, surfaceABuckets);
  const operator = [
    ...operatorRoutes(deps, opts.killSwitch),
    ...operatorEventRoutes(deps),
    ...operatorWalletRoutes(deps),
    ...operatorWebhookRoutes(deps),
  ];
  const platform = surfaceBRoutes(deps);
  // Partner connect (pk_live_): its own pipeline, mounted before Surface B's; documented with Surface B.
  const connect = connectRouter(deps, opts.gate);
  const service = serviceRoutes(opts.db, {
    urls: opts.urls,
    surfaceA,
    platform: [...platform, ...connect.routes.map((r) => ({ ...r, path: `/connect${r.path}` }))],
    dashboard: [...tokens, ...operator],
    specVersion: opts.specVersion,
  });

  koa.use(errorEnvelope(log, opts.db));
  koa.use(publicRateLimit(config, () => deps.clock.now().getTime()));
  koa.use(restInputGuard());
  koa.use(metricsRoute(deps, opts.metrics));
  koa.use(routesOf(surface('/api', surfaceA)));
  koa.use(routesOf(surface('', [...tokens, ...operator, ...service])));
  // Surface B: the pipeline runs for every path under the prefix, known or not,
  // so even a 404 is only answered to an authenticated caller.
  koa.use(routesOf(connect.router));
  const surfaceB = exactRouter('/v1/platform');
  surfaceB.use(platformPipeline(opts.gate));
  mount(surfaceB, platform);
  surfaceB.all('/{*rest}', async (ctx) => {
    throw new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`);
  });
  koa.use(routesOf(surfaceB));
  koa.use(docsPage());
  koa.use(consolePage());
  koa.use(graphiqlPage());
  // Anything unmatched: a 404 in the envelope of the surface the path belongs to.
  koa.use(async (ctx) => {
    throw new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`);
  });
}
