import { z } from 'zod';
import type { PlatformToken } from '../../db/generated/client.ts';
import type { Deps, KeyCaller } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { ALL_SCOPES, effectiveScopes, isScope } from '../scope/catalogue.ts';
import { constantTimeEqual, displayPrefix, generateSecret, hashSecret, hasValidChecksum } from '../secret.ts';
import { parseInput, timestamp } from '../validation.ts';
import { PUBLISHABLE_KEY_PREFIX, secretKeyPrefix } from './key-kind.ts';
import type { Tx } from '../../db/database.ts';
import { lockOrganization } from '../organization/organization.ts';
import { authenticateFrom, type ClientKey } from './failed-authentication.ts';
import { brandByIdOrSlug } from '../brand/store.ts';
import {
  countActiveTokens,
  insertPlatformTokenRow,
  platformTokenByHash,
  platformTokenOf,
  platformTokensOf,
  revokeToken,
  revokeTokenIfLive,
  stampLastUsed,
} from './store.ts';

export type TokenStatus = 'active' | 'revoked' | 'expired';
/** `secret`: sk_<KEY_BRAND>_live_, holds scopes. `publishable`: pk_live_, bound to one brand, no scopes (partner connect only). */
export const TOKEN_KINDS = ['secret', 'publishable'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

export type { KeyCaller };

export interface PublicPlatformToken {
  id: string;
  name: string;
  token_prefix: string;
  kind: TokenKind;
  brand: string | null;
  scopes: string[];
  status: TokenStatus;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  created_at: string;
}

export const CreatePlatformTokenInput = z.strictObject({
  name: z.string().trim().min(1).max(100),
  kind: z
    .enum(TOKEN_KINDS)
    .optional()
    .describe('secret (default): sk_<brand>_live_ with scopes; publishable: pk_live_ bound to one brand, no scopes, partner connect only'),
  brand: z.string().min(1).max(128).optional().describe('publishable keys only, required: the brand (id or slug) the key is bound to'),
  // Checked against the catalogue in createPlatformToken (400 `unknown_scope` naming each one).
  scopes: z
    .array(z.string().min(1).max(100))
    .min(1, 'at least one scope is required')
    .max(ALL_SCOPES.length)
    .optional()
    .describe('secret keys only, required'),
  expires_at: timestamp().optional(),
});
export type CreatePlatformTokenInput = z.output<typeof CreatePlatformTokenInput>;

export const TokenIdInput = z.strictObject({ token_id: z.string().min(1) });

export function tokenStatus(t: Pick<PlatformToken, 'revokedAt' | 'expiresAt'>, now: Date): TokenStatus {
  if (t.revokedAt) return 'revoked';
  if (t.expiresAt && t.expiresAt <= now) return 'expired';
  return 'active';
}

export function presentPlatformToken(t: PlatformToken, now: Date): PublicPlatformToken {
  return {
    id: t.id,
    name: t.name,
    token_prefix: t.tokenPrefix,
    kind: t.kind as TokenKind,
    brand: t.brandId,
    scopes: t.scopes,
    status: tokenStatus(t, now),
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
    expires_at: t.expiresAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
    created_at: t.createdAt.toISOString(),
  };
}

/** Inserts a token and returns it with its secret, the only time the secret exists outside the caller. */
export async function insertPlatformToken(
  deps: Deps,
  tx: Tx,
  args: {
    organizationId: string;
    name: string;
    scopes: string[];
    /** A publishable key's brand (its kind is publishable); absent for a secret key. */
    brandId?: string | null;
    expiresAt?: Date | null;
    userId?: string | null;
    replacesTokenId?: string;
  },
): Promise<{ token: PublicPlatformToken; secret: string }> {
  const kind: TokenKind = args.brandId ? 'publishable' : 'secret';
  const prefix = kind === 'publishable' ? PUBLISHABLE_KEY_PREFIX : secretKeyPrefix(deps.config.keyBrand);
  const secret = generateSecret(prefix);
  const row = await insertPlatformTokenRow(tx, {
    id: newId('platformToken'),
    organizationId: args.organizationId,
    name: args.name,
    tokenHash: hashSecret(secret),
    tokenPrefix: displayPrefix(secret, prefix),
    scopes: [...new Set(args.scopes)],
    kind,
    brandId: args.brandId ?? null,
    expiresAt: args.expiresAt ?? null,
    createdByUserId: args.userId ?? null,
    replacesTokenId: args.replacesTokenId ?? null,
    createdAt: deps.clock.now(),
  });
  deps.failedAuthentication?.issued(secret);
  return { token: presentPlatformToken(row, deps.clock.now()), secret };
}

export async function createPlatformToken(deps: Deps, organizationId: string, userId: string, raw: unknown) {
  const input = parseInput(CreatePlatformTokenInput, raw);
  if (input.kind === 'publishable') {
    if (input.scopes !== undefined) throw new DomainError('invalid_request', 'A publishable key holds no scopes: omit scopes', 'scopes');
    if (input.brand === undefined)
      throw new DomainError('invalid_request', 'A publishable key is bound to one brand: brand is required', 'brand');
  } else {
    if (input.brand !== undefined) throw new DomainError('invalid_request', 'Only a publishable key takes a brand', 'brand');
    if (input.scopes === undefined) throw new DomainError('invalid_request', 'Invalid scopes: at least one scope is required', 'scopes');
  }
  const scopes = input.scopes ?? [];
  const unknown = scopes.filter((s) => !isScope(s));
  if (unknown.length) {
    throw new DomainError(
      'unknown_scope',
      `Unknown scope${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}; GET /api/scopes and the token documentation list the valid ones`,
      'scopes',
    );
  }
  if (input.expires_at && input.expires_at <= deps.clock.now()) {
    throw new DomainError('invalid_request', 'expires_at must be in the future', 'expires_at');
  }
  const kind = input.kind ?? 'secret';
  return deps.db.transaction(async (tx) => {
    const brandId = input.brand === undefined ? null : await brandOf(tx, organizationId, input.brand);
    // Only a creation is capped: a rotation revokes one and issues one, and one over the cap keeps what it has.
    await lockOrganization(tx, organizationId);
    const cap = kind === 'publishable' ? deps.config.organizationCaps.publishableKeys : deps.config.organizationCaps.secretTokens;
    if ((await countActiveTokens(tx, organizationId, kind, deps.clock.now())) >= cap) {
      throw new DomainError(
        'token_limit_reached',
        `This organization already has ${cap} active ${kind === 'publishable' ? 'publishable keys' : 'secret tokens'}, its limit: revoke one (or rotate it) instead`,
      );
    }
    return insertPlatformToken(deps, tx, { organizationId, userId, name: input.name, scopes, brandId, expiresAt: input.expires_at });
  });
}

/** A brand of the organization by id or slug; 400 `brand_not_found` on `brand`, alike whether it is another organization's or nowhere. */
async function brandOf(tx: Tx, organizationId: string, wanted: string): Promise<string> {
  const brand = await brandByIdOrSlug(tx, organizationId, wanted);
  if (!brand) throw new DomainError('brand_not_found', `No brand '${wanted}' in this organization`, 'brand');
  return brand.id;
}

export async function listPlatformTokens(deps: Deps, organizationId: string): Promise<PublicPlatformToken[]> {
  const rows = await platformTokensOf(deps.db.prisma, organizationId);
  const now = deps.clock.now();
  return rows.map((r) => presentPlatformToken(r, now));
}

async function findOwnedToken(tx: Tx, organizationId: string, tokenId: string) {
  const row = isId('platformToken', tokenId) ? await platformTokenOf(tx, organizationId, tokenId) : null;
  if (!row) throw missing('platform token', tokenId, 'token_id');
  return row;
}

/** Revoking is idempotent: an already revoked token keeps its original `revoked_at`. */
export async function revokePlatformToken(deps: Deps, organizationId: string, raw: unknown): Promise<void> {
  const { token_id } = parseInput(TokenIdInput, raw);
  await deps.db.transaction(async (tx) => {
    const row = await findOwnedToken(tx, organizationId, token_id);
    if (!row.revokedAt) await revokeToken(tx, row.id, deps.clock.now());
    await deps.credentials?.announce(tx);
  });
}

/** Rotation revokes the old token and issues a replacement with the same scopes and expiry. */
export async function rotatePlatformToken(deps: Deps, organizationId: string, userId: string, raw: unknown) {
  const { token_id } = parseInput(TokenIdInput, raw);
  return deps.db.transaction(async (tx) => {
    const row = await findOwnedToken(tx, organizationId, token_id);
    const now = deps.clock.now();
    const status = tokenStatus(row, now);
    if (status !== 'active') {
      throw new DomainError('invalid_request', `Token ${row.id} is ${status} and cannot be rotated`, 'token_id');
    }
    // Conditional update: two concurrent rotations cannot both succeed.
    if ((await revokeTokenIfLive(tx, row.id, now)) !== 1)
      throw new DomainError('invalid_request', `Token ${row.id} is revoked and cannot be rotated`, 'token_id');
    const issued = await insertPlatformToken(deps, tx, {
      organizationId,
      userId,
      name: row.name,
      scopes: row.scopes,
      brandId: row.brandId,
      expiresAt: row.expiresAt,
      replacesTokenId: row.id,
    });
    await deps.credentials?.announce(tx);
    return issued;
  });
}

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Resolves a presented secret key to its caller, or throws 401 `invalid_token`
 * for anything unknown, revoked or expired (one answer for all three, so a
 * probe learns nothing).
 */
export function authenticatePlatformSecret(deps: Deps, secret: string, asOf = performance.now(), client?: ClientKey): Promise<KeyCaller> {
  return authenticateKey(deps, secret, 'secret', asOf, client);
}

/** Resolves a presented publishable key (pk_live_) to its caller and brand; 401 `invalid_token` like a secret key. */
export function authenticatePublishableKey(
  deps: Deps,
  key: string,
  asOf = performance.now(),
  client?: ClientKey,
): Promise<KeyCaller & { brandId: string }> {
  return authenticateKey(deps, key, 'publishable', asOf, client) as Promise<KeyCaller & { brandId: string }>;
}

/**
 * One lookup for both kinds, through the credential cache. `last_used_at` is
 * written at most once a minute per token to keep authentication read-only on
 * the hot path.
 */
function authenticateKey(deps: Deps, secret: string, kind: TokenKind, asOf: number, client: ClientKey | undefined): Promise<KeyCaller> {
  return authenticateFrom(deps, client, secret, (hash) => lookUpKey(deps, secret, hash, kind, asOf));
}

async function lookUpKey(deps: Deps, secret: string, hash: string, kind: TokenKind, asOf: number): Promise<KeyCaller> {
  const prefix = kind === 'publishable' ? PUBLISHABLE_KEY_PREFIX : secretKeyPrefix(deps.config.keyBrand);
  // Built only when thrown: an Error captures a stack trace, which the hot path should not pay for.
  const invalid = () => new DomainError('invalid_token', 'The platform token is unknown, revoked or expired');
  if (!hasValidChecksum(secret, prefix)) throw invalid();
  const now = deps.clock.now();
  const cache = deps.credentials;
  const hit = cache && (await cache.fresh(asOf)) ? cache.token(hash, Date.now()) : undefined;
  if (hit) {
    if (hit.caller.kind !== kind || (hit.expiresAt && hit.expiresAt <= now)) throw invalid();
    if (!hit.lastUsedAt || now.getTime() - hit.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
      hit.lastUsedAt = now;
      await touchLastUsed(deps, hit.caller.tokenId, now);
    }
    return hit.caller;
  }
  const generation = cache?.current ?? 0;
  const row = await platformTokenByHash(deps.db.prisma, hash);
  if (!row || row.kind !== kind || !constantTimeEqual(row.tokenHash, hash) || tokenStatus(row, now) !== 'active') throw invalid();
  let lastUsedAt = row.lastUsedAt;
  if (!lastUsedAt || now.getTime() - lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    lastUsedAt = now;
    await touchLastUsed(deps, row.id, now);
  }
  const caller: KeyCaller = {
    organization: row.organization,
    tokenId: row.id,
    scopes: effectiveScopes(row.scopes),
    expiresAt: row.expiresAt,
    kind,
    brandId: row.brandId,
  };
  cache?.storeToken(generation, hash, { caller, expiresAt: row.expiresAt, lastUsedAt });
  return caller;
}

function touchLastUsed(deps: Deps, tokenId: string, now: Date): Promise<unknown> {
  return stampLastUsed(deps.db.prisma, tokenId, now).catch(() => {});
}
