import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { Connection } from '../../src/domain/connection/connection.ts';
import { ConnectOrigins } from '../../src/domain/connect/origins.ts';
import {
  ConnectInput,
  ConnectStatus,
  type ConnectCaller,
  JoinAnswer,
  JoinInput,
  connectAccount,
  connectSession,
  connectStatus,
  joinConnect,
  refuseJoinIdempotencyKey,
} from '../../src/domain/connect/session.ts';
import { TokenBuckets } from '../../src/domain/platform/rate-limit.ts';
import { selectBrand } from '../../src/domain/platform/request-auth.ts';
import type { PlatformGate } from '../../src/runtime/platform-gate.ts';
import { classifyKey } from '../../src/domain/token/key-kind.ts';
import { authenticatePublishableKey } from '../../src/domain/token/platform-token.ts';
import { allowOrigin, answerPreflight } from '../../src/http/cors.ts';
import { bearer } from '../http/body.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';
import { exactRouter, mount, type RouteDef } from '../http/route.ts';
import { idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';

/**
 * Partner connect, the only routes a publishable key (`pk_live_`) reaches:
 * `POST /v1/platform/connect/join`, `GET /v1/platform/connect/status`,
 * `POST /v1/platform/connect/connect` (src/domain/connect/session.ts).
 * Their own pipeline, before Surface B's: kill switch, test-mode keys, a
 * bearer that is a publishable key (a secret key is 403
 * `secret_key_not_allowed`: it must never sit in a browser), the key
 * (unknown, revoked, expired: 401), then the key's and the client IP's rate
 * limits and the request's `Origin` against the key's brand's
 * `allowed_origins` (CORS: echoed in `Access-Control-Allow-Origin` when
 * allowed; another origin is refused 403 `origin_not_allowed` before
 * anything runs, so a join from it never redeems its handoff; a request
 * without `Origin`, from a server, is not a CORS request): the `connect`
 * policy of src/http/cors.ts, which writes the headers. A preflight
 * (`OPTIONS`, no key) is answered 204 for an origin some brand allows, else
 * 403 without CORS headers. The connect session travels in the
 * `Connect-Session` header; one in the query string is refused 400.
 */
export const CONNECT_PREFIX = '/v1/platform/connect';
const PATHS = ['/join', '/status', '/connect'];
/** The routes that declare the `connect` cross-origin policy (src/http/cors.ts); every other route is `same-origin`. */
export const CONNECT_CORS_PATHS: ReadonlySet<string> = new Set(PATHS.map((p) => CONNECT_PREFIX + p));

export function connectRouter(deps: Deps, gate: PlatformGate) {
  const origins = new ConnectOrigins(deps);
  const limits = deps.config.connectRateLimits;
  const now = () => deps.clock.now().getTime();
  const perKey = new TokenBuckets('connect key', limits.key.perSecond, limits.key.burst, now);
  const perIp = new TokenBuckets('connect address', limits.ip.perSecond, limits.ip.burst, now);

  async function admit(ctx: Context): Promise<ConnectCaller> {
    const asOf = performance.now();
    ctx.vary('Origin');
    const origin = ctx.get('origin') || undefined;
    if (await gate.killSwitch.engaged(asOf)) {
      throw new DomainError('developer_access_paused', 'Developer access is paused by the operator; retry later');
    }
    const key = bearer(ctx);
    const kind = key ? classifyKey(key, deps.config.keyBrand) : undefined; // test-mode prefixes: 400 before anything else
    if (!key) throw new DomainError('platform_token_required', 'Authorization: Bearer pk_live_... (a publishable key) is required');
    if (kind === 'secret') {
      throw new DomainError(
        'secret_key_not_allowed',
        'Partner connect takes a publishable key (pk_live_); a secret key must never reach a browser',
      );
    }
    const ip = await perIp.take(`ip:${(ctx.state.client as () => string)()}`);
    const caller = await authenticatePublishableKey(deps, key, asOf, ctx.state.client);
    const rateLimit = await perKey.take(caller.tokenId);
    ctx.set(rateLimitHeaders(rateLimit.remaining <= ip.remaining ? rateLimit : ip));
    if (origin !== undefined) {
      if (!(await origins.allowedFor(caller.brandId, origin, asOf))) {
        throw new DomainError(
          'origin_not_allowed',
          `Origin ${origin} is not in this brand's allowed_origins (connect configuration)`,
          'Origin',
        );
      }
      allowOrigin(ctx, origin);
    }
    const brand = await selectBrand(deps, caller.organization.id, caller.brandId, asOf);
    const connectCaller: ConnectCaller = { ...caller, brand, rateLimit };
    ctx.state.caller = connectCaller;
    if (ctx.querystring.includes('cs_')) {
      throw new DomainError(
        'invalid_request',
        'A connect session goes in the Connect-Session header, never in the query string (URLs are logged)',
        'Connect-Session',
      );
    }
    return connectCaller;
  }

  /**
   * A refusal is readable by a browser on an origin that would be admitted: one that the key's brand allows (set by
   * `admit`) or, when the key was never resolved (401, 429, ...), one that some brand allows (the preflight's rule).
   */
  const readable =
    (handler: (ctx: Context) => Promise<void>) =>
    async (ctx: Context): Promise<void> => {
      try {
        await handler(ctx);
      } catch (e) {
        const origin = ctx.get('origin');
        const refused = e instanceof DomainError && e.code === 'origin_not_allowed';
        if (
          origin &&
          !refused &&
          !ctx.response.get('Access-Control-Allow-Origin') &&
          (await origins.allowedByAnyBrand(origin).catch(() => false))
        )
          allowOrigin(ctx, origin);
        throw e;
      }
    };

  const session = (ctx: Context, caller: ConnectCaller) => connectSession(deps, caller, ctx.get('connect-session') || undefined);
  const noQuery = (ctx: Context) => {
    const [name] = Object.keys(platformQuery(ctx));
    if (name) throw new DomainError('invalid_request', `Unknown parameter: ${name}`, name);
  };

  const common = { tag: 'Partner connect', auth: 'publishable' as const, errors: [400, 401, 403, 409, 429, 503] };
  const routes: RouteDef[] = [
    {
      ...common,
      method: 'POST',
      path: '/join',
      operationId: 'connectJoin',
      summary:
        "Redeem a signed handoff: finds or creates the partner's entity, its relationship with the key's brand and a pending enrollment in the default program; answers a connect session (cs_..., 30 min) and the status",
      body: JoinInput,
      success: { status: 200, description: 'The connect session (shown once) and the status', schema: JoinAnswer },
      handler: readable(async (ctx) => {
        const caller = await admit(ctx);
        noQuery(ctx);
        refuseJoinIdempotencyKey(idempotencyKeyOf(ctx));
        ctx.body = await joinConnect(deps, caller, await platformBody(deps, ctx));
      }),
    },
    {
      ...common,
      method: 'GET',
      path: '/status',
      operationId: 'connectStatus',
      summary: "The session's partner: relationship and enrollment status, connections, and the brand's display configuration",
      success: { status: 200, description: 'The status', schema: ConnectStatus },
      handler: readable(async (ctx) => {
        const caller = await admit(ctx);
        noQuery(ctx);
        ctx.body = await connectStatus(deps.db.prisma, await session(ctx, caller));
      }),
    },
    {
      ...common,
      method: 'POST',
      path: '/connect',
      operationId: 'connectAccount',
      summary: "Record the session's partner's account at a provider (a connection in the key's brand)",
      body: ConnectInput,
      idempotent: true,
      success: {
        status: 201,
        description: 'The connection (a replayed Idempotency-Key answers the stored one, with Idempotent-Replayed: true)',
        schema: Connection,
      },
      handler: readable(async (ctx) => {
        const caller = await admit(ctx);
        noQuery(ctx);
        const current = await session(ctx, caller);
        const out = await connectAccount(deps, caller, current, await platformBody(deps, ctx), idempotencyKeyOf(ctx));
        if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
        ctx.body = out.value;
        ctx.status = 201;
      }),
    },
  ];

  /** Preflight: no key, so admitted for an origin some brand allows; otherwise 403 with no CORS headers. */
  const preflight = async (ctx: Context): Promise<void> => {
    ctx.vary('Origin');
    const origin = ctx.get('origin');
    if (!origin || !(await origins.allowedByAnyBrand(origin))) {
      throw new DomainError('origin_not_allowed', `Origin ${origin || '(none)'} is not allowed for partner connect`, 'Origin');
    }
    answerPreflight(ctx, origin);
  };

  for (const path of PATHS) {
    routes.push({
      tag: 'Partner connect',
      auth: 'none',
      method: 'OPTIONS',
      path,
      operationId: `connectPreflight${path[1]!.toUpperCase()}${path.slice(2)}`,
      summary:
        'CORS preflight (no key): 204 with Access-Control-Allow-Origin/-Methods/-Headers/-Max-Age for an origin some brand allows in its allowed_origins, else 403 origin_not_allowed without CORS headers',
      success: { status: 204, description: 'Preflight admitted' },
      errors: [403],
      handler: preflight,
    });
  }
  const router = exactRouter(CONNECT_PREFIX);
  mount(router, routes);
  return { router, routes };
}
