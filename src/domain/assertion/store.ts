import { Prisma, type Tx } from '../../db/database.ts';
import type { AssertionClaim, AssertionEvent, PrismaClient } from '../../db/generated/client.ts';

/**
 * The assertion capability's SQL. History is the append-only assertion_event table; assertion_claim is the
 * projection of the newest event per claim.
 */
type Reader = Tx | PrismaClient;

/** The current claim with its newest event, read after the entity lock; `entityId` is an SQL expression for the entity. */
export function currentClaimStatement(entityId: Prisma.Sql, claimKey: string): Prisma.Sql {
  return Prisma.sql`
    SELECT json_build_object('present', c.present, 'value', c.value, 'expiresAt', c.expires_at, 'event', row_to_json(e)) AS claim
    FROM assertion_claim c JOIN assertion_event e ON e.id = c.event_id
    WHERE c.entity_id = ${entityId} AND c.key = ${claimKey}`;
}

/** Appends the history row and moves the claim projection to it. */
export function writeClaimStatements(row: AssertionEvent): Prisma.Sql[] {
  const { id, organizationId, entityId, key: claimKey, action, value, expiresAt, createdAt: now } = row;
  return [
    Prisma.sql`INSERT INTO assertion_event (id, organization_id, entity_id, key, action, value, expires_at, effective_at, created_at)
      VALUES (${id}, ${organizationId}, ${entityId}, ${claimKey}, ${action}, ${value}::float8, ${expiresAt}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)`,
    Prisma.sql`INSERT INTO assertion_claim (entity_id, key, organization_id, event_id, present, value, expires_at, updated_at)
      VALUES (${entityId}, ${claimKey}, ${organizationId}, ${id}, ${action === 'asserted'}, ${value}::float8, ${expiresAt}::timestamptz, ${now}::timestamptz)
      ON CONFLICT (entity_id, key) DO UPDATE SET event_id = EXCLUDED.event_id, present = EXCLUDED.present, value = EXCLUDED.value,
        expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at`,
  ];
}

export function assertionEventOf(db: Reader, organizationId: string, id: string, entityId?: string): Promise<AssertionEvent | null> {
  return db.assertionEvent.findFirst({ where: { id, organizationId, ...(entityId === undefined ? {} : { entityId }) } });
}

export function assertionEventsByIds(db: Reader, ids: string[]): Promise<AssertionEvent[]> {
  return db.assertionEvent.findMany({ where: { id: { in: ids } } });
}

/**
 * Up to `take` of the entity's present claims ordered by key: one key, or those after `afterKey`, or both;
 * expired ones only with `includeExpired`.
 */
export function presentClaims(
  db: Reader,
  q: { entityId: string; includeExpired: boolean; key?: string; afterKey?: string; now: Date; take: number },
): Promise<AssertionClaim[]> {
  return db.assertionClaim.findMany({
    where: {
      entityId: q.entityId,
      present: true,
      ...(q.includeExpired ? {} : { OR: [{ expiresAt: null }, { expiresAt: { gt: q.now } }] }),
      key: q.key !== undefined ? q.key : q.afterKey !== undefined ? { gt: q.afterKey } : undefined,
      ...(q.key !== undefined && q.afterKey !== undefined ? { AND: [{ key: { gt: q.afterKey } }] } : {}),
    },
    orderBy: { key: 'asc' },
    take: q.take,
  });
}

/** The keys of the entities' live claims (present, not expired at `now`), by entity then key. */
export function liveClaimKeys(db: Reader, entityIds: string[], now: Date): Promise<{ entityId: string; key: string }[]> {
  return db.assertionClaim.findMany({
    where: { entityId: { in: entityIds }, present: true, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    select: { entityId: true, key: true },
    orderBy: [{ entityId: 'asc' }, { key: 'asc' }],
  });
}
