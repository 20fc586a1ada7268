import { httpStatus } from '../http/error-status.ts';
import type Koa from 'koa';
import type { Config } from '../config.ts';
import { DomainError, isDomainError } from '../domain/errors.ts';
import type { RateLimitState } from '../domain/platform/rate-limit.ts';
import { rateLimitHeaders, refusalHeaders } from '../http/rate-limit-headers.ts';
import { writeJson } from '../http/json-body.ts';
import { readBodyText } from '../http/request-body.ts';
import { type ApiServer, noStreamRoom } from '../http/server-limits.ts';
import { directJson } from './direct.ts';
import { wantsGraphiQL } from './graphiql.ts';
import type { Yoga } from './yoga.ts';

/**
 * A GraphQL POST body, read here with the body limit (`undefined` once an
 * error is answered; `''` without a body). Left as the request stream, the
 * fetch adapter would wrap it in a web ReadableStream and read it chunk by
 * chunk, the main reason a POST cost more than the same query as a GET.
 */
async function graphqlBody(ctx: Koa.Context, limit: number): Promise<string | undefined> {
  // JSON only, as on REST: Yoga answers other bodies (text/plain...) with an empty 204. (`is` is null without a body.)
  if (ctx.is('application/json', '+json') === false) {
    writeError(ctx, new DomainError('unsupported_media_type', 'GraphQL POST bodies must be JSON (Content-Type: application/json)'));
    return undefined;
  }
  try {
    return await readBodyText(ctx.req, ctx.request.length, limit);
  } catch (e) {
    if (!isDomainError(e)) throw e;
    writeError(ctx, e);
    return undefined;
  }
}

/** A request refused before GraphQL runs: its status, its Retry-After when it has one, and GraphQL's error shape. */
function writeError(ctx: Koa.Context, e: DomainError): void {
  ctx.status = httpStatus(e);
  ctx.set(refusalHeaders(e));
  ctx.body = { errors: [{ message: e.message, extensions: { code: e.code, request_id: ctx.state.requestId } }] };
}

/** An admitted request's RateLimit-*, as REST sends them (a refusal's come with its error: src/graphql/errors.ts). */
function admitted(ctx: Koa.Context): void {
  const caller = ctx.state.caller as { rateLimit?: RateLimitState } | undefined;
  if (caller?.rateLimit) ctx.set(rateLimitHeaders(caller.rateLimit));
}

/** `/graphql` over HTTP (queries, mutations, SSE subscriptions) as Koa middleware; graphql-ws is attached to the server (src/graphql/ws.ts). */
export function graphqlRoute(yoga: Yoga, http: ApiServer, config: Pick<Config, 'bodyLimitBytes' | 'graphqlDirect'>): Koa.Middleware {
  const direct = directJson(yoga);
  // Exact, like every REST route: `/GraphQL` and `/graphql/` are 404 below.
  // GraphiQL's page is a static file served further down (src/graphql/graphiql.ts).
  return (ctx, next) => (ctx.path !== '/graphql' || wantsGraphiQL(ctx) ? next() : serve(ctx));

  async function serve(ctx: Koa.Context): Promise<void> {
    ctx.state.route = '/graphql'; // the metrics' and log's route template
    // An SSE subscription is refused before it starts when the stream budget is full. (Clients that merely
    // accept multipart for @defer are not turned away; a multipart response still moves to the stream budget.)
    if (ctx.get('accept').includes('text/event-stream') && !http.streamRoom(ctx.req.socket)) {
      writeError(ctx, noStreamRoom());
      return;
    }
    let request = ctx.req;
    let body: string | undefined;
    if (ctx.method === 'POST') {
      body = await graphqlBody(ctx, config.bodyLimitBytes);
      if (body === undefined) return;
    }
    // A JSON GET or POST is answered without the fetch adapter when it can be (src/graphql/direct.ts).
    const answered =
      config.graphqlDirect &&
      (await direct({
        method: ctx.method,
        url: ctx.url,
        headers: ctx.req.headers,
        body,
        serverContext: { req: ctx.req, res: ctx.res, requestId: ctx.state.requestId, koaState: ctx.state },
      }));
    if (answered) {
      ctx.status = answered.status;
      ctx.set(answered.headers);
      admitted(ctx);
      if (ctx.state.idempotentReplayed) ctx.set('Idempotent-Replayed', 'true');
      writeJson(ctx, answered.body);
      return;
    }
    // Yoga reads the method, URL and headers from `req`; an empty body stays absent.
    if (body !== undefined)
      request = Object.assign(Object.create(ctx.req) as typeof ctx.req, { req: ctx.req, body: body === '' ? undefined : body });
    const response = await yoga.handleNodeRequestAndResponse(request, ctx.res, { requestId: ctx.state.requestId, koaState: ctx.state });
    ctx.status = response.status;
    for (const [key, value] of response.headers) ctx.append(key, value);
    admitted(ctx);
    if (ctx.state.idempotentReplayed) ctx.set('Idempotent-Replayed', 'true');
    // A single JSON result is sent as one string; only streams (SSE, multipart) stay streams.
    const type = response.headers.get('content-type') ?? '';
    if (!response.body) ctx.body = null;
    else if (type.includes('json')) ctx.body = await response.text();
    else {
      http.admitStream(ctx.res);
      ctx.body = response.body as unknown as NodeJS.ReadableStream;
    }
  }
}
