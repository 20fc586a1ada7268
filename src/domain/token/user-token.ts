import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { newId } from '../id.ts';
import { authenticateFrom, type ClientKey } from './failed-authentication.ts';
import { insertUserToken, userTokenByHash } from './store.ts';
import { constantTimeEqual, displayPrefix, generateSecret, hashSecret, hasValidChecksum } from '../secret.ts';

/** Dashboard user tokens (`ut_...`) authenticate token management. */
export const USER_TOKEN_PREFIX = 'ut_';

export interface UserCaller {
  /** The user token's id: token management is rate-limited per user token. */
  tokenId: string;
  userId: string;
  organizationId: string;
}

export async function issueUserToken(tx: Tx, userId: string, now: Date): Promise<string> {
  const secret = generateSecret(USER_TOKEN_PREFIX);
  await insertUserToken(tx, {
    id: newId('userToken'),
    userId,
    tokenHash: hashSecret(secret),
    tokenPrefix: displayPrefix(secret, USER_TOKEN_PREFIX),
    createdAt: now,
  });
  return secret;
}

/** `client`: whose failed-authentication bucket a bad token spends from. */
export function authenticateUserToken(deps: Deps, secret: string, client?: ClientKey): Promise<UserCaller> {
  return authenticateFrom(deps, client, secret, (hash) => lookUpUserToken(deps, secret, hash));
}

async function lookUpUserToken(deps: Deps, secret: string, hash: string): Promise<UserCaller> {
  const invalid = new DomainError('invalid_token', 'The user token is unknown or revoked');
  if (!hasValidChecksum(secret, USER_TOKEN_PREFIX)) throw invalid;
  const row = await userTokenByHash(deps.db.prisma, hash);
  if (!row || row.revokedAt || !constantTimeEqual(row.tokenHash, hash)) throw invalid;
  return { tokenId: row.id, userId: row.userId, organizationId: row.user.organizationId };
}
