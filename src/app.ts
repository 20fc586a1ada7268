import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { DestinationType, Transport } from './domain/destination/transport.ts';
import { DomainError } from './domain/errors.ts';
import { bootstrapIfEmpty, type DevCredentials, type ServiceUrls } from './domain/organization/bootstrap.ts';
import { createGraphQL } from './graphql/yoga.ts';
import { graphqlRoute } from './graphql/koa.ts';
import { attachGraphQLWebSocket } from './graphql/ws.ts';
import { createLogger } from './logger.ts';
import { mcpRoute } from './mcp/http.ts';
import { Metrics } from './metrics.ts';
import { metricsListener } from '../rest/operator/metrics.ts';
import { buildServices, type Services } from './runtime/services.ts';
import { answerClientError, overCapacity } from '../rest/http/client-error.ts';
import { type ClientAddresses, clientAddresses } from './http/client-address.ts';
import { createApiServer, isClientAbort, type ApiServer } from './http/server-limits.ts';
import { envelopeKindOf, writeError } from '../rest/http/envelope.ts';
import { requestContext } from '../rest/http/request-id.ts';
import { mountRest } from '../rest/mount.ts';
import { CONNECT_CORS_PATHS } from '../rest/platform/connect.ts';
import { crossOriginRefusal } from './http/cors.ts';
import { startTracing, tracing } from './tracing.ts';

/** A process: its services (the operations worker is driven by tests with `operations.drain()`), Koa and the HTTP server. */
export interface App extends Omit<Services, 'runtime'> {
  /** The one per-address key function (connection shares, request buckets), built once per process from TRUSTED_PROXIES. */
  clientAddresses: ClientAddresses;
  koa: Koa;
  server: Server;
  /** Open connections per budget (plain requests, live streams) and how many were refused. */
  connections: ApiServer['counts'];
  /** Resolved after start(): the URLs and, on a fresh embedded database, the bootstrap credentials. */
  urls: ServiceUrls;
  credentials?: DevCredentials;
  /** This app's Prometheus registry and metrics (src/metrics.ts). */
  metrics: Metrics;
  /** Resolved after start() when METRICS_LISTEN is set: the separate metrics listener's `/metrics` URL. */
  metricsUrl?: string;
  start(): Promise<App>;
  stop(): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  /** An already-open database (tests share one per file); otherwise opened from config. */
  db?: Database;
  /** The event destinations' transports (default: src/domain/destination/transports/, loaded on first use). */
  transports?: Record<DestinationType, Transport>;
}

export const SPEC_VERSION = '0.3.3';

function urlsFor(origin: string): ServiceUrls {
  return {
    base_url: `${origin}/api`,
    dashboard_base_url: origin,
    api_origin: origin,
    graphql_url: `${origin}/graphql`,
  };
}

export async function buildApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.logLevel);
  if (config.tracesEndpoint) await startTracing(config.tracesEndpoint, log); // before anything records a span
  const db = opts.db ?? (await openDatabase(config));
  const metrics = new Metrics(log);
  const { runtime, ...services } = buildServices({ db, clock: opts.clock ?? systemClock, config, log, metrics }, config, opts.transports);
  const { deps, gate, stream } = services;
  const addresses = clientAddresses(config.clientAddress);
  const serves = config.role !== 'worker'; // a worker serves no request but the health probes (ADR 0006)

  const koa = new Koa({ proxy: false });
  // koa.callback() composes the middleware present when called: resolve it lazily.
  let handler: ReturnType<Koa['callback']> | undefined;
  const http = createApiServer(config.http, addresses, log, (req, res) => (handler ??= koa.callback())(req, res), overCapacity);
  http.server.on('clientError', answerClientError(log));
  const { server } = http;
  const app: App = {
    ...services,
    clientAddresses: addresses,
    koa,
    server,
    connections: http.counts,
    metrics,
    urls: urlsFor(config.publicOrigin ?? `http://${config.host}:${config.port}`),
    start,
    stop,
  };
  const yoga = createGraphQL(deps, gate, stream, log);

  koa.on('error', (err: NodeJS.ErrnoException) => {
    if (isClientAbort(err)) log.debug({ err: { code: err.code, message: err.message } }, 'client went away mid-request');
    else log.error({ err }, 'unhandled Koa error');
  });
  koa.use(requestContext(log, metrics));
  // The one per-address policy of this process (src/http/client-address.ts). Each request carries its client's key,
  // computed only when asked for: failed-authentication throttling spends from that address's bucket.
  koa.use((ctx, next) => {
    let key: string | undefined;
    ctx.state.client = () => (key ??= addresses.requestKey(ctx.req));
    return next();
  });
  // One cross-origin policy (src/http/cors.ts): partner connect's routes declare `connect` and admit their brands'
  // origins themselves; every other route, GraphQL and the pages included, is same-origin.
  koa.use((ctx, next) => {
    const refused = CONNECT_CORS_PATHS.has(ctx.path) ? undefined : crossOriginRefusal(ctx.req, config.publicOrigin);
    if (refused) return writeError(ctx, envelopeKindOf(ctx.path), refused);
    return next();
  });
  if (!serves) {
    koa.use(async (ctx, next) => {
      if (ctx.path === '/healthz' || ctx.path === '/readyz' || ctx.path === '/metrics') return next();
      writeError(ctx, envelopeKindOf(ctx.path), new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`));
    });
  }
  koa.use(mcpRoute(deps, gate, http, { version: SPEC_VERSION, stream }));
  koa.use(graphqlRoute(yoga, http, config));
  mountRest(koa, deps, {
    db,
    killSwitch: services.killSwitch,
    gate,
    metrics,
    urls: () => app.urls,
    specVersion: SPEC_VERSION,
  });
  const metricsServer = config.metricsListen ? createServer(metricsListener(metrics)) : undefined;

  let started = false;
  let ws: ReturnType<typeof attachGraphQLWebSocket> | undefined;
  async function start(): Promise<App> {
    const applied = await db.migrate();
    // One short line at start; the names (27 and growing on a fresh database) only at debug level.
    if (applied.length) {
      log.info({ count: applied.length, latest: applied.at(-1) }, `${applied.length} migrations applied`);
      log.debug({ migrations: applied }, 'migrations applied');
    } else log.info('database schema up to date (no migration to apply)');
    await runtime.start();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: config.port, host: config.host, backlog: config.http.listenBacklog }, () => resolve());
    });
    started = true;
    if (metricsServer && config.metricsListen) {
      const { host, port } = config.metricsListen;
      await new Promise<void>((resolve, reject) => {
        metricsServer.once('error', reject);
        metricsServer.listen(port, host, () => resolve());
      });
      const bound = metricsServer.address() as AddressInfo;
      app.metricsUrl = `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}/metrics`;
    }
    if (serves) ws = attachGraphQLWebSocket(http, yoga, addresses, { publicOrigin: config.publicOrigin });
    const { port } = server.address() as AddressInfo;
    app.urls = urlsFor(config.publicOrigin ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
    if (config.bootstrap) app.credentials = await bootstrapIfEmpty(deps, app.urls);
    return app;
  }

  async function stop(): Promise<void> {
    if (metricsServer?.listening) {
      metricsServer.closeAllConnections();
      await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
    }
    await ws?.close();
    stream.endSubscriptions(); // open SSE responses would otherwise hold server.close() for the grace period
    if (started) {
      await new Promise<void>((resolve) => {
        // A keep-alive connection whose response ends after close() (an SSE stream just ended) goes idle: close it then, not after keepAliveTimeout.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => (clearInterval(sweep), resolve()));
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs).unref();
      });
    }
    await runtime.stop();
    if (!opts.db) await db.close();
    await tracing.flush();
  }

  return app;
}
