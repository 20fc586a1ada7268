import type { Tx } from '../../db/database.ts';
import type { Organization, PlatformToken, PrismaClient, User, UserToken } from '../../db/generated/client.ts';

/** The token capability's SQL: platform tokens (secret and publishable keys) and dashboard user tokens. */
type Reader = Tx | PrismaClient;

export function insertUserToken(
  tx: Tx,
  row: Pick<UserToken, 'id' | 'userId' | 'tokenHash' | 'tokenPrefix' | 'createdAt'>,
): Promise<UserToken> {
  return tx.userToken.create({ data: row });
}

export function userTokenByHash(db: Reader, tokenHash: string): Promise<(UserToken & { user: User }) | null> {
  return db.userToken.findUnique({ where: { tokenHash }, include: { user: true } });
}

export type NewPlatformToken = Pick<
  PlatformToken,
  | 'id'
  | 'organizationId'
  | 'name'
  | 'tokenHash'
  | 'tokenPrefix'
  | 'scopes'
  | 'kind'
  | 'brandId'
  | 'expiresAt'
  | 'createdByUserId'
  | 'replacesTokenId'
  | 'createdAt'
>;

export function insertPlatformTokenRow(tx: Tx, row: NewPlatformToken): Promise<PlatformToken> {
  return tx.platformToken.create({ data: row });
}

/** Tokens of a kind that still authenticate (neither revoked nor expired at `now`): what the organization's caps count. */
export function countActiveTokens(tx: Tx, organizationId: string, kind: string, now: Date): Promise<number> {
  return tx.platformToken.count({
    where: { organizationId, kind, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
  });
}

/** The organization's tokens, newest first. */
export function platformTokensOf(db: Reader, organizationId: string): Promise<PlatformToken[]> {
  return db.platformToken.findMany({ where: { organizationId }, orderBy: { id: 'desc' } });
}

export function platformTokenOf(db: Reader, organizationId: string, id: string): Promise<PlatformToken | null> {
  return db.platformToken.findFirst({ where: { id, organizationId } });
}

export async function revokeToken(tx: Tx, id: string, at: Date): Promise<void> {
  await tx.platformToken.update({ where: { id }, data: { revokedAt: at } });
}

/** Conditional on the token not being revoked yet: 1 when this call revoked it, 0 when another had. */
export async function revokeTokenIfLive(tx: Tx, id: string, at: Date): Promise<number> {
  return (await tx.platformToken.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: at } })).count;
}

export function platformTokenByHash(
  db: Reader,
  tokenHash: string,
): Promise<(PlatformToken & { organization: Pick<Organization, 'id' | 'slug' | 'name'> }) | null> {
  return db.platformToken.findUnique({
    where: { tokenHash },
    include: { organization: { select: { id: true, slug: true, name: true } } },
  });
}

export function stampLastUsed(db: Reader, id: string, at: Date): Promise<PlatformToken> {
  return db.platformToken.update({ where: { id }, data: { lastUsedAt: at } });
}
