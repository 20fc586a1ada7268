import { z } from 'zod';
import type { ConnectSession } from '../../db/generated/client.ts';
import type { Deps } from '../context.ts';
import { DomainError } from '../errors.ts';
import { newId } from '../id.ts';
import { fingerprint, runIdempotentValue, validateIdempotencyKey } from '../idempotency/idempotency.ts';
import { constantTimeEqual, generateSecret, hashSecret, hasValidChecksum } from '../secret.ts';
import { parseInput } from '../validation.ts';
import type { Reader } from '../action/action.ts';
import {
  CreateConnectionInput,
  Connection,
  type ConnectionStatus,
  createConnection,
  type PublicConnection,
} from '../connection/connection.ts';
import { ensureEntity, lockEntity } from '../entity/entity.ts';
import { ensureEnrollment } from '../enrollment/enrollment.ts';
import { ENROLLMENT_STATUSES, STANDINGS, type Standing } from '../enrollment/presenter.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { ensureRelationship } from '../relationship/relationship.ts';
import { RELATIONSHIP_STATUSES, type RelationshipStatus } from '../relationship/states.ts';
import { connectConfigOf, deleteSessionsBefore, insertSessionRow, sessionByHash } from './store.ts';
import { latestRelationship } from '../relationship/store.ts';
import { entityConnections } from '../connection/store.ts';
import { enrollmentSummaryIn } from '../enrollment/store.ts';
import { HANDOFF_MAX_LENGTH, redeemHandoff, verifyHandoff } from './handoff.ts';

/**
 * The partner-connect flow of a publishable key (`pk_live_`), in its brand:
 * `join` verifies and redeems a signed handoff (handoff.ts), finds or creates
 * the entity it names (identity: `sub` + the issuer's id), its relationship
 * with the brand and a pending enrollment in the brand's `default_program`,
 * all in one transaction, and answers a connect session (`cs_...`, 30 min,
 * only its hash stored, bound to the key, the brand and the entity). `status`
 * and `connect` take that session: what they show and change is that one
 * entity's, in that brand. Joining again with a new handoff for the same user
 * finds the same entity, relationship and enrollment (a new session).
 * A session works only with the key it was issued to while that key is
 * active, so revoking the key ends its sessions.
 */
type EnrollmentStatus = (typeof ENROLLMENT_STATUSES)[number];

export const SESSION_PREFIX = 'cs_';
export const SESSION_TTL_MS = 30 * 60_000;

/** The `connect` caller: the publishable key's organization, key id and brand (a SurfaceBCaller with no scopes). */
export type ConnectCaller = SurfaceBCaller;

export const JoinInput = z.strictObject({
  handoff: z.string().min(1).max(HANDOFF_MAX_LENGTH).describe('the compact JWS the partner site signed with a handoff issuer'),
});
export const ConnectInput = CreateConnectionInput.pick({ provider: true, account_id: true, grants: true });

export const ConnectStatus = z.object({
  object: z.literal('connect_status'),
  brand: z.object({
    id: z.string(),
    display_name: z.string().nullable(),
    primary_color: z.string().nullable(),
    accent_color: z.string().nullable(),
    required_assertions: z.array(z.string()),
  }),
  entity: z.string().describe('prefix ent_: the joined user'),
  relationship: z.object({ id: z.string(), status: z.enum(RELATIONSHIP_STATUSES) }).nullable(),
  enrollment: z
    .object({ id: z.string(), program: z.string(), status: z.enum(ENROLLMENT_STATUSES), standing: z.enum(STANDINGS) })
    .nullable()
    .describe("the enrollment in the brand's default program"),
  connections: z.array(Connection.pick({ id: true, provider: true, account_id: true, status: true })),
  session_expires_at: z.string(),
});
export type PublicConnectStatus = z.output<typeof ConnectStatus>;

export const JoinAnswer = z.object({
  session: z.string().describe('cs_...: send it as the Connect-Session header; shown once, valid 30 minutes'),
  status: ConnectStatus,
});

export async function joinConnect(deps: Deps, caller: ConnectCaller, raw: unknown): Promise<z.output<typeof JoinAnswer>> {
  const input = parseInput(JoinInput, raw);
  const handoff = await verifyHandoff(
    deps,
    deps.db.prisma,
    { organizationId: caller.organization.id, brandId: caller.brand.id },
    input.handoff,
  );
  const config = await connectConfigOf(deps.db.prisma, caller.brand.id);
  const programId = config?.defaultProgramId;
  if (!programId) {
    throw new DomainError('connect_not_configured', 'This brand has no default program for partner connect (POST /connect_config)');
  }
  const secret = generateSecret(SESSION_PREFIX);
  const session = await deps.db.transaction(async (tx) => {
    await redeemHandoff(deps, tx, handoff);
    const subject = { kind: 'external' as const, externalUserId: handoff.externalUserId, issuer: handoff.issuer.id };
    const entity = await ensureEntity(deps, tx, caller.organization.id, subject);
    await lockEntity(tx, entity.id); // two joins of one user converge on one relationship and one enrollment
    await ensureRelationship(deps, tx, caller, entity.id);
    await ensureEnrollment(deps, tx, caller, programId, entity.id);
    const now = deps.clock.now();
    return insertSessionRow(tx, {
      id: newId('connectSession'),
      tokenHash: hashSecret(secret),
      organizationId: caller.organization.id,
      brandId: caller.brand.id,
      entityId: entity.id,
      keyId: caller.tokenId,
      expiresAt: new Date(now.getTime() + SESSION_TTL_MS),
      createdAt: now,
    });
  });
  return { session: secret, status: await connectStatus(deps.db.prisma, session) };
}

/** The session a `Connect-Session` header names, issued to this key in its brand and not expired; 401 otherwise. */
export async function connectSession(deps: Deps, caller: ConnectCaller, presented: string | undefined): Promise<ConnectSession> {
  const refuse = () =>
    new DomainError('invalid_token', 'The connect session is missing, unknown, expired or not this key’s', 'Connect-Session');
  if (!presented || !hasValidChecksum(presented, SESSION_PREFIX)) throw refuse();
  const hash = hashSecret(presented);
  const row = await sessionByHash(deps.db.prisma, hash);
  if (
    !row ||
    !constantTimeEqual(row.tokenHash, hash) ||
    row.keyId !== caller.tokenId ||
    row.brandId !== caller.brand.id ||
    row.expiresAt <= deps.clock.now()
  )
    throw refuse();
  return row;
}

/** That session's user, in that brand: relationship, enrollment in the default program, connections; nothing about anyone else. */
export async function connectStatus(db: Reader, session: ConnectSession): Promise<PublicConnectStatus> {
  const [config, relationship, connections] = await Promise.all([
    connectConfigOf(db, session.brandId),
    latestRelationship(db, session.brandId, session.entityId),
    entityConnections(db, session.brandId, session.entityId),
  ]);
  const enrollment = config?.defaultProgramId ? await enrollmentSummaryIn(db, config.defaultProgramId, session.entityId) : null;
  return {
    object: 'connect_status',
    brand: {
      id: session.brandId,
      display_name: config?.displayName ?? null,
      primary_color: config?.primaryColor ?? null,
      accent_color: config?.accentColor ?? null,
      required_assertions: (config?.requiredAssertions as string[] | undefined) ?? [],
    },
    entity: session.entityId,
    relationship: relationship ? { id: relationship.id, status: relationship.status as RelationshipStatus } : null,
    enrollment: enrollment
      ? {
          id: enrollment.id,
          program: enrollment.programId,
          status: enrollment.status as EnrollmentStatus,
          standing: enrollment.standing as Standing,
        }
      : null,
    connections: connections.map((c) => ({
      id: c.id,
      provider: c.provider,
      account_id: c.accountId,
      status: c.status as ConnectionStatus,
    })),
    session_expires_at: session.expiresAt.toISOString(),
  };
}

/**
 * Records a connection of the session's entity in the brand (the connections domain's rules and answers). An
 * `Idempotency-Key` is remembered per session: a browser retrying after a lost answer gets the same connection back
 * (`replayed`), not a 409 for the account it has just connected; the same key with another body is refused.
 */
export async function connectAccount(
  deps: Deps,
  caller: ConnectCaller,
  session: ConnectSession,
  raw: unknown,
  idempotencyKey?: string,
): Promise<{ value: PublicConnection; replayed: boolean }> {
  const key = validateIdempotencyKey(idempotencyKey);
  const input = parseInput(ConnectInput, raw);
  return runIdempotentValue(
    deps,
    key ? { namespace: `connect:${session.id}`, key, fingerprint: fingerprint('connect.connect', input) } : undefined,
    (tx) => createConnection(deps, tx, caller, { ...input, entity: session.entityId }),
  );
}

/**
 * A join takes no `Idempotency-Key`: its handoff is redeemed once, and the session secret it answers is shown once and
 * never stored, so there is nothing a retry could be given back. After a lost answer the partner site mints a new
 * handoff. Refused rather than ignored, so that a client never believes its retries are safe.
 */
export function refuseJoinIdempotencyKey(idempotencyKey: string | undefined): void {
  if (idempotencyKey === undefined) return;
  throw new DomainError(
    'invalid_request',
    'POST /connect/join takes no Idempotency-Key: a handoff is redeemed once and the session it answers is shown once, never stored; after a lost answer, get a new handoff from the partner site',
    'Idempotency-Key',
  );
}

/** Housekeeping (src/workers/maintenance.ts): expired sessions. */
export async function purgeExpiredSessions(deps: Deps): Promise<number> {
  return deleteSessionsBefore(deps.db.prisma, deps.clock.now());
}
