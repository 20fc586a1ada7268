import type { Context } from 'koa';
import type { Deps, PlatformCaller } from '../../src/domain/context.ts';
import { DomainError } from '../../src/domain/errors.ts';
import { validateIdempotencyKey } from '../../src/domain/idempotency/idempotency.ts';
import { TokenBuckets } from '../../src/domain/platform/rate-limit.ts';
import { authenticatePlatformKey } from '../../src/domain/token/authenticate.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import { rateLimitHeaders } from '../../src/http/rate-limit-headers.ts';

/**
 * Surface A requests: the bearer header is preferred; the deprecated body
 * fields `token` and `idempotency_key` are still honoured and removed from
 * the input before validation. Returns the caller and the remaining body.
 * Each request takes one token from the caller's Surface A bucket (not the
 * Surface B one) and one from its organization's budget (the one Surface B
 * and GraphQL charge too: more tokens, or another surface, never buy more
 * throughput): the body is read first, as it may carry the credential.
 */
export interface SurfaceARequest {
  caller: PlatformCaller;
  input: Record<string, unknown>;
  idempotencyKey?: string;
}

/** What a Surface A request is charged: its token's Surface A bucket and its organization's budget. */
export interface SurfaceABudgets {
  tokens: TokenBuckets;
  organizations: TokenBuckets;
}

export async function surfaceARequest(deps: Deps, budgets: SurfaceABudgets, ctx: Context): Promise<SurfaceARequest> {
  const raw = await readJsonBody(ctx, deps.config.bodyLimitBytes);
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) {
    throw new DomainError('invalid_request', 'The request body must be a JSON object');
  }
  const { token: bodyToken, idempotency_key: bodyKey, ...input } = (raw ?? {}) as Record<string, unknown>;
  const header = bearer(ctx);
  if (header === '') throw new DomainError('invalid_token', 'Authorization must be `Bearer <platform token>`');
  if (bodyToken !== undefined && typeof bodyToken !== 'string') throw new DomainError('invalid_request', 'token must be a string', 'token');
  if (bodyKey !== undefined && typeof bodyKey !== 'string')
    throw new DomainError('invalid_request', 'idempotency_key must be a string', 'idempotency_key');
  const key = header ?? (bodyToken as string | undefined);
  if (!key) throw new DomainError('invalid_token', 'A platform token is required: Authorization: Bearer sk_..._live_...');
  const caller = await authenticatePlatformKey(deps, key, undefined, ctx.state.client);
  ctx.state.caller = caller; // for the request's log line
  ctx.set(
    rateLimitHeaders(
      await TokenBuckets.takeAll(1, [
        [budgets.tokens, caller.tokenId],
        [budgets.organizations, caller.organization.id],
      ]),
    ),
  );
  const headerKey = ctx.get('idempotency-key') || undefined;
  const idempotencyKey = headerKey
    ? validateIdempotencyKey(headerKey)
    : validateIdempotencyKey(bodyKey as string | undefined, 'idempotency_key');
  return { caller, input, idempotencyKey };
}
