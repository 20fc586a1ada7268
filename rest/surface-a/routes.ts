import type { Context } from 'koa';
import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { isDomainError } from '../../src/domain/errors.ts';
import type { Quota } from '../../src/domain/scope/create-rate-limit.ts';
import { ExecInput, executeScope, executeScopeRequest, scopeRegistry, type ExecuteResult } from '../../src/domain/scope/executor.ts';
import { CreateUnitInput, ListUnitsInput, UnitIdInput } from '../../src/domain/unit/unit.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { surfaceARequest, type SurfaceABudgets } from './auth.ts';
import * as S from './schemas.ts';

/** Surface A, base `{base_url}` = `<origin>/api`. */
const DEPRECATED = { token: 'Deprecated: send Authorization: Bearer instead' };
const DEPRECATED_WITH_KEY = { ...DEPRECATED, idempotency_key: 'Deprecated: send the Idempotency-Key header instead' };

function setQuotaHeaders(ctx: Context, quota: Quota | undefined) {
  if (!quota) return;
  ctx.set('X-RateLimit-Limit', String(quota.limit));
  ctx.set('X-RateLimit-Remaining', String(quota.remaining));
  ctx.set('X-RateLimit-Reset', String(Math.ceil(quota.resetAt.getTime() / 1000)));
}

/** Runs an execution: `Idempotent-Replayed` on a replay, and the X-RateLimit-* headers of a create, also when the limit refuses it. */
async function withExecutionHeaders(ctx: Context, run: () => Promise<ExecuteResult>): Promise<ExecuteResult> {
  try {
    const out = await run();
    if (out.duplicate) ctx.set('Idempotent-Replayed', 'true');
    setQuotaHeaders(ctx, out.quota);
    return out;
  } catch (e) {
    if (isDomainError(e) && e.code === 'create_rate_limit_exceeded') setQuotaHeaders(ctx, e.details.quota as Quota);
    throw e;
  }
}

/** The `/units/*` routes are sugar over the scope executor: same checks, same audit. */
function unitRoute(deps: Deps, buckets: SurfaceABudgets, scope: string, ctx: Context) {
  return async () => {
    const { caller, input, idempotencyKey } = await surfaceARequest(deps, buckets, ctx);
    const out = await withExecutionHeaders(ctx, () =>
      executeScope(deps, caller, { scope, data: input, idempotencyKey, requestId: ctx.state.requestId }),
    );
    ctx.body = out.result;
  };
}

/** `buckets`: the per-token request rate limit of Surface A and the organizations' budget (429 is an extension: the spec lists 400, 401 and 403). */
export function surfaceARoutes(deps: Deps, buckets: SurfaceABudgets): RouteDef[] {
  return [
    {
      method: 'GET',
      path: '/scopes',
      operationId: 'listScopes',
      summary: 'The registry of executable scopes',
      tag: 'Scopes',
      auth: 'none',
      success: { status: 200, description: 'Every executable scope', schema: S.ScopesResponse },
      errors: [],
      handler: async (ctx) => {
        ctx.body = { scopes: scopeRegistry() };
      },
    },
    {
      method: 'POST',
      path: '/scopes_exec',
      operationId: 'executeScope',
      summary: 'Execute one scope (verified, audited, create-rate-limited)',
      tag: 'Scopes',
      auth: 'platform',
      body: ExecInput,
      idempotent: true,
      deprecatedBodyFields: DEPRECATED_WITH_KEY,
      success: { status: 200, description: 'The scope result; `object` is what the scope produced', schema: S.ExecResponse },
      errors: [400, 401, 403, 429],
      handler: async (ctx) => {
        const { caller, input, idempotencyKey } = await surfaceARequest(deps, buckets, ctx);
        const out = await withExecutionHeaders(ctx, () =>
          executeScopeRequest(deps, caller, input, { idempotencyKey, requestId: ctx.state.requestId }),
        );
        ctx.body = { ok: true, scope: out.entry, mode: out.entry.mode, object: out.result, token_id: caller.tokenId };
      },
    },
    {
      method: 'POST',
      path: '/smoke',
      operationId: 'smokeTest',
      summary: 'Check a token: answers its organization and scopes',
      tag: 'Scopes',
      auth: 'platform',
      body: z.strictObject({}),
      deprecatedBodyFields: DEPRECATED,
      success: { status: 200, description: 'The token works', schema: S.SmokeResponse },
      errors: [400, 401, 403, 429],
      handler: async (ctx) => {
        const { caller, input } = await surfaceARequest(deps, buckets, ctx);
        parseInput(z.strictObject({}), input);
        ctx.body = {
          ok: true,
          org_id: caller.organization.id,
          org_name: caller.organization.name,
          org_slug: caller.organization.slug,
          scopes: [...caller.scopes].sort(),
          mode: 'live',
          object: null,
        };
      },
    },
    {
      method: 'POST',
      path: '/units/list',
      operationId: 'listUnits',
      summary: 'List units, newest first',
      tag: 'Units',
      auth: 'platform',
      scope: 'units:read',
      body: ListUnitsInput,
      deprecatedBodyFields: DEPRECATED,
      success: { status: 200, description: 'A page of units', schema: S.UnitsListResponse },
      errors: [400, 401, 403, 429],
      handler: (ctx) => unitRoute(deps, buckets, 'units:read', ctx)(),
    },
    {
      method: 'POST',
      path: '/units/create',
      operationId: 'createUnit',
      summary: 'Create a draft unit (idempotent, create-rate-limited)',
      tag: 'Units',
      auth: 'platform',
      scope: 'units:create',
      body: CreateUnitInput,
      idempotent: true,
      deprecatedBodyFields: DEPRECATED_WITH_KEY,
      success: { status: 200, description: 'The unit; `duplicate` is true on an idempotent replay', schema: S.UnitCreateResponse },
      errors: [400, 401, 403, 429],
      handler: (ctx) => unitRoute(deps, buckets, 'units:create', ctx)(),
    },
    {
      method: 'POST',
      path: '/units/delete',
      operationId: 'deleteUnit',
      summary: 'Delete a draft unit',
      tag: 'Units',
      auth: 'platform',
      scope: 'units:delete',
      body: UnitIdInput,
      deprecatedBodyFields: DEPRECATED,
      success: { status: 200, description: 'Deleted', schema: S.OkResponse },
      errors: [400, 401, 403, 404, 429],
      handler: (ctx) => unitRoute(deps, buckets, 'units:delete', ctx)(),
    },
  ];
}
