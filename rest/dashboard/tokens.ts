import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import {
  CreatePlatformTokenInput,
  TokenIdInput,
  createPlatformToken,
  listPlatformTokens,
  revokePlatformToken,
  rotatePlatformToken,
} from '../../src/domain/token/platform-token.ts';
import type { TokenBuckets } from '../../src/domain/platform/rate-limit.ts';
import { authenticateUserToken, type UserCaller } from '../../src/domain/token/user-token.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';
import type { RouteDef } from '../http/route.ts';
import { OkResponse, TokenWithSecret, TokensResponse } from '../surface-a/schemas.ts';

/**
 * Token management, base `{dashboard_base_url}`, authenticated by a dashboard
 * user token and rate-limited per user token (429 is an extension to the spec).
 */
export function tokenRoutes(deps: Deps, buckets: TokenBuckets): RouteDef[] {
  async function userCaller(ctx: Context): Promise<UserCaller> {
    const key = bearer(ctx);
    if (!key) throw new DomainError('user_token_required', 'Authorization: Bearer <user token> is required');
    const user = await authenticateUserToken(deps, key, ctx.state.client);
    ctx.state.caller = user; // for the request's log line
    ctx.set(rateLimitHeaders(await buckets.take(user.tokenId)));
    return user;
  }
  async function authedBody(ctx: Context) {
    const user = await userCaller(ctx); // authenticate before reading or validating anything
    return { user, body: await readJsonBody(ctx, deps.config.bodyLimitBytes) };
  }
  const common = { tag: 'Platform tokens', auth: 'user' as const };
  return [
    {
      ...common,
      method: 'GET',
      path: '/platform/tokens',
      operationId: 'listPlatformTokens',
      summary: 'List platform tokens (metadata only, never secrets)',
      success: { status: 200, description: 'Tokens, newest first', schema: TokensResponse },
      errors: [401, 429],
      handler: async (ctx) => {
        const user = await userCaller(ctx);
        ctx.body = { tokens: await listPlatformTokens(deps, user.organizationId) };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/platform/tokens/create',
      operationId: 'createPlatformToken',
      summary: 'Create a platform token; the secret is shown once',
      body: CreatePlatformTokenInput,
      success: { status: 200, description: 'The token and its secret', schema: TokenWithSecret },
      errors: [400, 401, 429],
      handler: async (ctx) => {
        const { user, body } = await authedBody(ctx);
        ctx.body = await createPlatformToken(deps, user.organizationId, user.userId, body);
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/platform/tokens/revoke',
      operationId: 'revokePlatformToken',
      summary: 'Revoke a platform token; later use answers 401',
      body: TokenIdInput,
      success: { status: 200, description: 'Revoked (idempotent)', schema: OkResponse },
      errors: [400, 401, 404, 429],
      handler: async (ctx) => {
        const { user, body } = await authedBody(ctx);
        await revokePlatformToken(deps, user.organizationId, body);
        ctx.body = { ok: true, success: true };
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/platform/tokens/rotate',
      operationId: 'rotatePlatformToken',
      summary: 'Revoke a token and issue a replacement with the same scopes',
      body: TokenIdInput,
      success: { status: 200, description: 'The replacement and its secret', schema: TokenWithSecret },
      errors: [400, 401, 404, 429],
      handler: async (ctx) => {
        const { user, body } = await authedBody(ctx);
        ctx.body = await rotatePlatformToken(deps, user.organizationId, user.userId, body);
      },
    },
  ];
}
