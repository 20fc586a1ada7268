import { compactVerify, decodeProtectedHeader, type JWK } from 'jose';
import type { HandoffIssuer } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Reader } from '../action/action.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation } from '../errors.ts';
import { isId } from '../id.ts';
import { externalPart } from '../entity/entity.ts';
import { isStorableText } from '../input-guard.ts';
import { deleteRedemptionsBefore, deleteSpentRedemption, insertRedemption, issuerOfBrand } from './store.ts';

/**
 * Signed handoffs: a partner site identifies its user to the connect flow
 * with a compact JWS (a JWT) signed by one of the brand's handoff issuers
 * (handoff-issuer.ts), verified with `jose`:
 * - the header's `alg` is the issuer's algorithm (HS256 with its current
 *   secret, or the previous one within its 24 h rotation overlap; EdDSA with
 *   its Ed25519 public key, or the previous one likewise);
 * - `iss` is the issuer's id, an issuer of the publishable key's brand: an
 *   issuer of another brand (of the same organization or not) is refused
 *   exactly as an unknown one, before anything is redeemed, so its `jti`
 *   stays unspent for its own brand's key;
 * - `sub` is the partner's user id (an external user id: 1 to 255 characters,
 *   no NUL);
 * - `exp` is required and at most 10 minutes after `iat` (when present) and
 *   after now; `nbf` and `iat` may not lie in the future;
 * - `jti` is required and single use: redeeming inserts (issuer, jti) with
 *   the token's expiry in the caller's transaction, so of two joins with one
 *   handoff exactly one commits and the other is 409 `handoff_replayed`.
 * Every time comparison tolerates 30 s of clock skew between the partner's
 * clock and ours. A failure says which rule failed, never which part of a
 * signature was wrong: `handoff_invalid` (anything malformed, unverifiable or
 * out of rule), `handoff_expired` (`exp` passed), `handoff_replayed`.
 */
export const HANDOFF_MAX_LIFETIME_S = 600;
export const HANDOFF_CLOCK_SKEW_S = 30;
/** Longer than any honest handoff (an EdDSA one is ~300 characters): refused before any parsing. */
export const HANDOFF_MAX_LENGTH = 4096;
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface VerifiedHandoff {
  issuer: HandoffIssuer;
  /** The partner's user id (`sub`). */
  externalUserId: string;
  jti: string;
  expiresAt: Date;
}

const invalid = (why: string) => new DomainError('handoff_invalid', `The handoff is invalid: ${why}`, 'handoff');

/** Verifies `token` for a publishable key of `brand` (nothing is redeemed: see redeemHandoff). */
export async function verifyHandoff(
  deps: Deps,
  db: Reader,
  brand: { organizationId: string; brandId: string },
  token: string,
): Promise<VerifiedHandoff> {
  if (token.length > HANDOFF_MAX_LENGTH || !COMPACT_JWS.test(token)) throw invalid('not a compact JWS (header.payload.signature)');
  let alg: unknown;
  let claims: Record<string, unknown>;
  try {
    alg = decodeProtectedHeader(token).alg;
    claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));
  } catch {
    throw invalid('the header or payload is not base64url JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw invalid('the payload is not a JSON object');
  const iss = claims.iss;
  const issuer =
    typeof iss === 'string' && isId('handoffIssuer', iss) ? await issuerOfBrand(db, brand.organizationId, brand.brandId, iss) : null;
  if (!issuer) throw invalid("iss is not a handoff issuer of this key's brand");
  if (alg !== issuer.algorithm) throw invalid(`alg must be the issuer's algorithm, ${issuer.algorithm}`);
  const now = deps.clock.now();
  if (!(await verifiesWithAny(token, issuer, now))) throw invalid('the signature does not verify');
  return { issuer, ...checkClaims(claims, now.getTime() / 1000) };
}

/** The keys the issuer verifies with now: its current one, and the one a rotation replaced while the overlap lasts. */
type VerifyKey = Uint8Array<ArrayBuffer> | JWK;
function keysOf(issuer: HandoffIssuer, now: Date): VerifyKey[] {
  const overlapping = issuer.previousExpiresAt !== null && issuer.previousExpiresAt > now;
  const material =
    issuer.algorithm === 'HS256'
      ? [issuer.secret, overlapping ? issuer.previousSecret : null].map((s) => (s ? new TextEncoder().encode(s) : null))
      : [issuer.publicKey, overlapping ? issuer.previousPublicKey : null].map((k) => (k ? (k as JWK) : null));
  return material.filter((k): k is VerifyKey => k !== null);
}

async function verifiesWithAny(token: string, issuer: HandoffIssuer, now: Date): Promise<boolean> {
  for (const key of keysOf(issuer, now)) {
    try {
      await compactVerify(token, key, { algorithms: [issuer.algorithm] });
      return true;
    } catch {
      // Any failure (signature, key, header): try the next key; which one failed is never told.
    }
  }
  return false;
}

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

function checkClaims(claims: Record<string, unknown>, now: number): Omit<VerifiedHandoff, 'issuer'> {
  const { sub, jti, exp, iat, nbf } = claims;
  if (!isTime(exp)) throw invalid('exp (seconds since the epoch) is required');
  if (iat !== undefined && !isTime(iat)) throw invalid('iat must be seconds since the epoch');
  if (nbf !== undefined && !isTime(nbf)) throw invalid('nbf must be seconds since the epoch');
  if (exp + HANDOFF_CLOCK_SKEW_S <= now) throw new DomainError('handoff_expired', 'The handoff has expired; sign a new one', 'handoff');
  if ((iat ?? now) > now + HANDOFF_CLOCK_SKEW_S || (nbf ?? now) > now + HANDOFF_CLOCK_SKEW_S) throw invalid('iat or nbf is in the future');
  if (
    exp - Math.max(now, iat ?? now) > HANDOFF_MAX_LIFETIME_S + HANDOFF_CLOCK_SKEW_S ||
    (iat !== undefined && exp - iat > HANDOFF_MAX_LIFETIME_S)
  )
    throw invalid(`exp may be at most ${HANDOFF_MAX_LIFETIME_S / 60} minutes after iat and now`);
  if (typeof sub !== 'string' || !externalPart.safeParse(sub).success || !isStorableText(sub))
    throw invalid('sub must be the user id: 1 to 255 characters, no NUL');
  if (typeof jti !== 'string' || jti.length < 1 || jti.length > 255 || !isStorableText(jti))
    throw invalid('jti (1 to 255 characters) is required');
  return { externalUserId: sub, jti, expiresAt: new Date(exp * 1000) };
}

/**
 * Redeems the handoff once, in the caller's transaction: a second redemption of (issuer, jti), sequential or
 * concurrent, is 409 `handoff_replayed` (the insert waits for the first transaction and then conflicts). A row whose
 * token can no longer verify is replaced, so pruning is never needed for correctness.
 */
export async function redeemHandoff(deps: Deps, tx: Tx, handoff: VerifiedHandoff): Promise<void> {
  const spentBefore = new Date(deps.clock.now().getTime() - HANDOFF_CLOCK_SKEW_S * 1000);
  await deleteSpentRedemption(tx, handoff.issuer.id, handoff.jti, spentBefore);
  try {
    await insertRedemption(tx, {
      issuerId: handoff.issuer.id,
      jti: handoff.jti,
      organizationId: handoff.issuer.organizationId,
      expiresAt: handoff.expiresAt,
      createdAt: deps.clock.now(),
    });
  } catch (e) {
    if (isUniqueViolation(e)) throw new DomainError('handoff_replayed', 'This handoff has been used already; sign a new one', 'handoff');
    throw e;
  }
}

/** Housekeeping (src/workers/maintenance.ts): redemptions of handoffs that can no longer verify. */
export async function purgeSpentHandoffs(deps: Deps): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - HANDOFF_CLOCK_SKEW_S * 1000);
  return deleteRedemptionsBefore(deps.db.prisma, before);
}
