import { z } from 'zod';
import { UNIT_STATUSES } from '../../src/domain/unit/unit.ts';

/** Response shapes of Surface A and token management, for the OpenAPI document. */
const nullableTime = z.string().nullable();

export const ScopeEntry = z.object({
  scope: z.string(),
  category: z.string(),
  description: z.string(),
  mode: z.enum(['read', 'create', 'update', 'delete']),
});
export const ScopesResponse = z.object({ scopes: z.array(ScopeEntry) });

export const Unit = z.object({
  id: z.string(),
  object: z.literal('unit'),
  type: z.string(),
  caption: z.string(),
  production_id: z.string().nullable(),
  status: z.enum(UNIT_STATUSES),
  published_at: nullableTime,
  livemode: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

export const ExecResponse = z.object({
  ok: z.boolean(),
  scope: ScopeEntry,
  mode: z.string(),
  object: z.record(z.string(), z.unknown()),
  token_id: z.string(),
});
export const SmokeResponse = z.object({
  ok: z.boolean(),
  org_id: z.string(),
  org_name: z.string(),
  org_slug: z.string(),
  scopes: z.array(z.string()),
  mode: z.string(),
  object: z.null(),
});
export const UnitsListResponse = z.object({ units: z.array(Unit), page: z.number(), per_page: z.number(), has_more: z.boolean() });
export const UnitCreateResponse = z.object({ unit: Unit, duplicate: z.boolean() });
export const OkResponse = z.object({ ok: z.boolean(), success: z.boolean() });

export const PlatformToken = z.object({
  id: z.string(),
  name: z.string(),
  token_prefix: z.string(),
  kind: z.enum(['secret', 'publishable']).describe('secret: sk_<brand>_live_; publishable: pk_live_ (partner connect only)'),
  brand: z.string().nullable().describe('the brand a publishable key is bound to; null for a secret key'),
  scopes: z.array(z.string()).describe('empty for a publishable key'),
  status: z.enum(['active', 'revoked', 'expired']),
  last_used_at: nullableTime,
  expires_at: nullableTime,
  revoked_at: nullableTime,
  created_at: z.string(),
});
export const TokensResponse = z.object({ tokens: z.array(PlatformToken) });
export const TokenWithSecret = z.object({ token: PlatformToken, secret: z.string() });

export const ErrorResponse = {
  type: 'object',
  properties: {
    error: { type: 'string', description: 'Stable error code; branch on it' },
    message: { type: 'string' },
    required_scope: { type: 'string' },
    param: { type: 'string' },
    request_id: { type: 'string' },
  },
};
