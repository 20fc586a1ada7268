import type { IncomingMessage } from 'node:http';
import type { Context } from 'koa';
import { DomainError } from '../domain/errors.ts';

/**
 * The one cross-origin policy (docs/security.md, "Cross-origin requests"), declared per route and the only writer of
 * `Access-Control-*` headers:
 *
 * - `same-origin` (every route but three): secret-key routes (REST, GraphQL over HTTP and SSE), the pages (/docs,
 *   /console, GraphiQL) and the graphql-ws handshake. A browser request from another origin is refused, 403
 *   `origin_not_allowed`, preflights included, and nothing ever names an origin in `Access-Control-Allow-Origin`:
 *   a secret key must never be usable from a page on another site. Same origin is the `Origin` whose host is the
 *   `Host` the request came to, or PUBLIC_ORIGIN (a proxy may rewrite `Host`). A request without `Origin` (a server,
 *   the CLI, a navigation) is not a cross-origin request and passes.
 * - `connect`: the three partner-connect routes (rest/platform/connect.ts), reached from partner sites with a
 *   publishable key. Their own pipeline admits an origin from the key's brand's `allowed_origins` (a preflight, which
 *   carries no key, from any brand's) and answers it with `allowOrigin` / `answerPreflight` below.
 */
export type CorsPolicy = 'same-origin' | 'connect';

/** What a `connect` route lets a partner's page send and read. */
const CONNECT = {
  methods: 'GET, POST, OPTIONS',
  headers: 'Authorization, Content-Type, Connect-Session, Idempotency-Key',
  exposed: 'Request-Id, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Idempotent-Replayed',
  preflightMaxAgeSeconds: 600,
};

/** Whether `origin` (an `Origin` header) is this server's own: the host the request came to, or PUBLIC_ORIGIN. */
export function isOwnOrigin(origin: string, req: IncomingMessage, publicOrigin: string | undefined): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // `null` (a sandboxed frame, a file) or garbage: never this server
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (publicOrigin !== undefined && url.origin === new URL(publicOrigin).origin) return true;
  // Compared by host and port only: behind a TLS-terminating proxy the scheme the browser used is not visible here.
  const host = req.headers.host;
  return host !== undefined && url.host === host.toLowerCase();
}

/** The refusal of a request from a foreign origin on a `same-origin` route; undefined when it may go on. */
export function crossOriginRefusal(req: IncomingMessage, publicOrigin: string | undefined): DomainError | undefined {
  const origin = req.headers.origin;
  if (origin === undefined || isOwnOrigin(origin, req, publicOrigin)) return undefined;
  return new DomainError(
    'origin_not_allowed',
    'This route answers only its own origin; cross-origin use is partner connect only',
    'Origin',
  );
}

/** Lets `origin` read a `connect` answer (the caller decided it is admitted). */
export function allowOrigin(ctx: Context, origin: string): void {
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Expose-Headers', CONNECT.exposed);
}

/** Answers an admitted `connect` preflight: 204 with what the routes take. */
export function answerPreflight(ctx: Context, origin: string): void {
  allowOrigin(ctx, origin);
  ctx.set('Access-Control-Allow-Methods', CONNECT.methods);
  ctx.set('Access-Control-Allow-Headers', CONNECT.headers);
  ctx.set('Access-Control-Max-Age', String(CONNECT.preflightMaxAgeSeconds));
  ctx.status = 204;
}
