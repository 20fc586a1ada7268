import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { Logger } from 'pino';
import { systemClock, type Clock } from './clock.ts';
import type { Config } from './config.ts';
import { openDatabase, type Database } from './db/database.ts';
import type { Deps } from './domain/context.ts';
import { DomainError } from './domain/errors.ts';
import { KillSwitch } from './domain/operator/kill-switch.ts';
import { CredentialCache } from './domain/token/credential-cache.ts';
import { bootstrapIfEmpty, type DevCredentials, type ServiceUrls } from './domain/organization/bootstrap.ts';
import { createGraphQL } from './graphql/yoga.ts';
import { directJsonPost } from './graphql/direct.ts';
import { attachGraphQLWebSocket } from './graphql/ws.ts';
import { startMaintenance } from './workers/maintenance.ts';
import { Sequencer } from './domain/event/sequencer.ts';
import { EventStream } from './domain/event/stream.ts';
import { WebhookWorker } from './workers/webhook-delivery.ts';
import { PlatformGate } from './domain/platform/request-auth.ts';
import { TokenBuckets } from './domain/platform/rate-limit.ts';
import { platformPipeline } from '../rest/platform/pipeline.ts';
import { webhookEndpointRoutes } from '../rest/platform/webhook-endpoints.ts';
import { eventRoutes } from '../rest/platform/events.ts';
import { webhookDeliveryRoutes } from '../rest/platform/webhook-deliveries.ts';
import { assertionRoutes } from '../rest/platform/assertions.ts';
import { programRoutes } from '../rest/platform/programs.ts';
import { enrollmentRoutes } from '../rest/platform/enrollments.ts';
import { StandingScheduler } from './domain/enrollment/due-evaluation.ts';
import { operatorEventRoutes } from '../rest/operator/events.ts';
import { operatorWalletRoutes } from '../rest/operator/wallet.ts';
import { operationRoutes } from '../rest/platform/operations.ts';
import { distributionRoutes } from '../rest/platform/distributions.ts';
import { OperationsRunner } from './workers/operations.ts';
import { distributionHandlers } from './domain/distribution/handlers.ts';
import { createLogger } from './logger.ts';
import { answerClientError } from '../rest/http/client-error.ts';
import { createApiServer, isClientAbort, type ApiServer } from './http/server-limits.ts';
import { envelopeKindOf, errorEnvelope, writeError } from '../rest/http/envelope.ts';
import { restInputGuard } from '../rest/http/input-guard.ts';
import { requestContext } from '../rest/http/request-id.ts';
import { exactRouter, mount, type RouteDef } from '../rest/http/route.ts';
import { surfaceARoutes } from '../rest/surface-a/routes.ts';
import { tokenRoutes } from '../rest/dashboard/tokens.ts';
import { operatorRoutes } from '../rest/operator/operator.ts';
import { serviceRoutes } from '../rest/service/routes.ts';

export interface App {
  deps: Deps;
  killSwitch: KillSwitch;
  gate: PlatformGate;
  sequencer: Sequencer;
  stream: EventStream;
  /** The operations worker; tests drive it with `operations.drain()`. */
  operations: OperationsRunner;
  webhooks: WebhookWorker;
  koa: Koa;
  server: Server;
  /** Open connections per budget (plain requests, live streams) and how many were refused. */
  connections: ApiServer['counts'];
  /** Resolved after start(): the URLs and, on a fresh embedded database, the bootstrap credentials. */
  urls: ServiceUrls;
  credentials?: DevCredentials;
  start(): Promise<App>;
  stop(): Promise<void>;
}

export interface AppOptions {
  clock?: Clock;
  log?: Logger;
  /** An already-open database (tests share one per file); otherwise opened from config. */
  db?: Database;
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

/** Mounts route declarations under a prefix. */
function surface(prefix: string, routes: RouteDef[]) {
  const router = exactRouter(prefix);
  mount(router, routes);
  return router;
}

/**
 * A GraphQL POST body, read here with the body limit (`undefined` once an
 * error is answered; `''` without a body). Left as the request stream, the
 * fetch adapter would wrap it in a web ReadableStream and read it chunk by
 * chunk, the main reason a POST cost more than the same query as a GET.
 */
async function graphqlBody(ctx: Koa.Context, limit: number): Promise<string | undefined> {
  // JSON only, as on REST: Yoga answers other bodies (text/plain...) with an empty 204. (`is` is null without a body.)
  if (ctx.is('application/json', '+json') === false) {
    ctx.status = 415;
    ctx.body = { errors: [{ message: 'GraphQL POST bodies must be JSON (Content-Type: application/json)', extensions: { code: 'unsupported_media_type', request_id: ctx.state.requestId } }] };
    return undefined;
  }
  try {
    return await getRawBody(ctx.req, { length: ctx.request.length, limit, encoding: 'utf8' });
  } catch (e) {
    const tooLarge = (e as { type?: string }).type === 'entity.too.large';
    ctx.status = tooLarge ? 413 : 400;
    ctx.body = { errors: [{ message: tooLarge ? `Request body exceeds ${limit} bytes` : 'Could not read the request body', extensions: { code: tooLarge ? 'payload_too_large' : 'invalid_request', request_id: ctx.state.requestId } }] };
    return undefined;
  }
}

export async function buildApp(config: Config, opts: AppOptions = {}): Promise<App> {
  const log = opts.log ?? createLogger(config.logLevel);
  const db = opts.db ?? (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const base = { db, clock: opts.clock ?? systemClock, config, log };
  // Roles (ADR 0006): an API process runs no background loop, a worker serves no request but the health probes.
  const serves = config.role !== 'worker';
  const background = config.role !== 'api';
  const delivers = background && config.webhook.worker;
  // Every role sequences what it appends, right after commit. The fan-out is woken by this process's sequencer
  // and by other processes' NOTIFY (a higher position than this process sequenced), never left to its poll.
  let sequencedHere = 0n;
  const stream = new EventStream(base, (position) => {
    if (delivers && position > sequencedHere) webhooks.kick();
  });
  const sequencer = new Sequencer(base, (max) => {
    sequencedHere = max;
    stream.pull(max);
    if (delivers) webhooks.kick();
  });
  const credentials = new CredentialCache(base);
  const deps: Deps = { ...base, sequencer, credentials };
  const webhooks = new WebhookWorker(deps);
  // A retry requested on an API process is picked up by a worker's poll.
  if (delivers) deps.webhooks = webhooks;
  const operations = new OperationsRunner(deps, distributionHandlers);
  deps.operations = operations;
  const killSwitch = new KillSwitch(deps);
  const gate = new PlatformGate(deps, killSwitch);
  const yoga = createGraphQL(deps, gate, stream, log);
  const directPost = directJsonPost(yoga);
  const standing = new StandingScheduler(deps);

  const koa = new Koa({ proxy: false });
  // koa.callback() composes the middleware present when called: resolve it lazily.
  let handler: ReturnType<Koa['callback']> | undefined;
  const http = createApiServer(config.http, log, (req, res) => (handler ??= koa.callback())(req, res));
  http.server.on('clientError', answerClientError(log));
  const { server } = http;
  const app: App = {
    deps,
    killSwitch,
    gate,
    sequencer,
    stream,
    operations,
    webhooks,
    koa,
    server,
    connections: http.counts,
    urls: urlsFor(config.publicOrigin ?? `http://${config.host}:${config.port}`),
    start,
    stop,
  };

  // Surface A and token management: their own per-credential buckets, apart from Surface B's.
  const surfaceABuckets = new TokenBuckets(config.surfaceARateLimitPerSecond, config.surfaceARateLimitBurst, () => deps.clock.now().getTime());
  const surfaceA = surfaceARoutes(deps, surfaceABuckets);
  const tokens = tokenRoutes(deps, surfaceABuckets);
  const operator = [...operatorRoutes(deps, killSwitch), ...operatorEventRoutes(deps), ...operatorWalletRoutes(deps)];
  const platform = [
    ...webhookEndpointRoutes(deps),
    ...webhookDeliveryRoutes(deps),
    ...eventRoutes(deps),
    ...operationRoutes(deps),
    ...distributionRoutes(deps),
    ...assertionRoutes(deps),
    ...programRoutes(deps),
    ...enrollmentRoutes(deps),
  ];
  const service = serviceRoutes(db, { urls: () => app.urls, surfaceA, platform, dashboard: [...tokens, ...operator], specVersion: SPEC_VERSION });

  koa.on('error', (err: NodeJS.ErrnoException) => {
    if (isClientAbort(err)) log.debug({ err: { code: err.code, message: err.message } }, 'client went away mid-request');
    else log.error({ err }, 'unhandled Koa error');
  });
  koa.use(requestContext(log));
  // A worker answers its probes and nothing else: every other path is 404 before any surface sees it.
  if (!serves) {
    koa.use(async (ctx, next) => {
      if (ctx.path === '/healthz' || ctx.path === '/readyz') return next();
      writeError(ctx, envelopeKindOf(ctx.path), new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`));
    });
  }
  koa.use(async (ctx, next) => {
    // Exact, like every REST route: `/GraphQL` and `/graphql/` are 404 below.
    if (ctx.path !== '/graphql') return next();
    // An SSE subscription is refused before it starts when the stream budget is full. (Clients that merely
    // accept multipart for @defer are not turned away; a multipart response still moves to the stream budget.)
    if (ctx.get('accept').includes('text/event-stream') && !http.streamRoom()) {
      ctx.status = 503;
      ctx.body = { errors: [{ message: 'Too many live streams on this server; retry later', extensions: { code: 'service_unavailable', request_id: ctx.state.requestId } }] };
      return;
    }
    let request = ctx.req;
    if (ctx.method === 'POST') {
      const body = await graphqlBody(ctx, config.bodyLimitBytes);
      if (body === undefined) return;
      // A JSON POST is answered without the fetch adapter when it can be (src/graphql/direct.ts).
      const direct = config.graphqlDirect && (await directPost({ method: ctx.method, url: ctx.url, headers: ctx.req.headers, body, serverContext: { req: ctx.req, res: ctx.res, requestId: ctx.state.requestId } }));
      if (direct) {
        ctx.status = direct.status;
        ctx.set(direct.headers);
        ctx.body = direct.body;
        return;
      }
      // Yoga reads the method, URL and headers from `req`; an empty body stays absent.
      request = Object.assign(Object.create(ctx.req) as typeof ctx.req, { req: ctx.req, body: body === '' ? undefined : body });
    }
    const response = await yoga.handleNodeRequestAndResponse(request, ctx.res, { requestId: ctx.state.requestId });
    ctx.status = response.status;
    response.headers.forEach((value, key) => ctx.append(key, value));
    // A single JSON result is sent as one string; only streams (SSE, multipart) stay streams.
    const type = response.headers.get('content-type') ?? '';
    if (!response.body) ctx.body = null;
    else if (type.includes('json')) ctx.body = await response.text();
    else {
      http.admitStream(ctx.res);
      ctx.body = response.body as unknown as NodeJS.ReadableStream;
    }
  });
  koa.use(errorEnvelope(log));
  koa.use(restInputGuard());
  for (const r of [surface('/api', surfaceA), surface('', [...tokens, ...operator, ...service])]) {
    koa.use(r.routes());
  }
  // Surface B: the pipeline runs for every path under the prefix, known or not,
  // so even a 404 is only answered to an authenticated caller.
  const surfaceB = exactRouter('/v1/platform');
  surfaceB.use(platformPipeline(gate));
  mount(surfaceB, platform);
  surfaceB.all('/{*rest}', async (ctx) => {
    throw new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`);
  });
  koa.use(surfaceB.routes());
  // Anything unmatched: a 404 in the envelope of the surface the path belongs to.
  koa.use(async (ctx) => {
    throw new DomainError('route_not_found', `No route ${ctx.method} ${ctx.path}`);
  });

  let started = false;
  let ws: ReturnType<typeof attachGraphQLWebSocket> | undefined;
  let maintenance: ReturnType<typeof startMaintenance> | undefined;
  async function start(): Promise<App> {
    const applied = await db.migrate();
    if (applied.length) log.info({ migrations: applied }, 'migrations applied');
    await stream.start({ tail: serves });
    if (serves) await credentials.start();
    sequencer.start();
    sequencer.kick(); // events a previous run committed but did not sequence
    if (background) {
      standing.start();
      if (config.webhook.worker) webhooks.start();
      maintenance = startMaintenance(deps);
      await operations.start();
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    started = true;
    if (serves) ws = attachGraphQLWebSocket(server, yoga);
    const { port } = server.address() as AddressInfo;
    app.urls = urlsFor(config.publicOrigin ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`);
    if (config.bootstrap) app.credentials = await bootstrapIfEmpty(deps, app.urls);
    return app;
  }

  async function stop(): Promise<void> {
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
    maintenance?.stop();
    await operations.stop();
    await webhooks.stop();
    await standing.stop();
    await sequencer.stop();
    gate.streams.stop();
    await stream.stop();
    await credentials.stop();
    if (!opts.db) await db.close();
  }

  return app;
}
