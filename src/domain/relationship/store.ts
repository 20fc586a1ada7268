import type { Tx } from '../../db/database.ts';
import type { PrismaClient, Relationship } from '../../db/generated/client.ts';

/** The relationship capability's SQL. */
type Reader = Tx | PrismaClient;

export function relationshipOfBrand(db: Reader, organizationId: string, brandId: string, id: string): Promise<Relationship | null> {
  return db.relationship.findFirst({ where: { id, organizationId, brandId } });
}

export function relationshipById(tx: Tx, id: string): Promise<Relationship> {
  return tx.relationship.findUniqueOrThrow({ where: { id } });
}

export function insertRelationshipRow(
  tx: Tx,
  row: Pick<Relationship, 'id' | 'organizationId' | 'brandId' | 'entityId' | 'createdAt' | 'updatedAt'>,
): Promise<Relationship> {
  return tx.relationship.create({ data: row });
}

/** The entity's relationship with the brand that has not ended, if any (at most one: a partial unique index). */
export function liveRelationship(tx: Tx, brandId: string, entityId: string): Promise<Relationship | null> {
  return tx.relationship.findFirst({ where: { brandId, entityId, status: { not: 'ended' } } });
}

/** The entity's newest relationship with the brand, whatever its status. */
export function latestRelationship(db: Reader, brandId: string, entityId: string): Promise<Pick<Relationship, 'id' | 'status'> | null> {
  return db.relationship.findFirst({ where: { brandId, entityId }, orderBy: { id: 'desc' }, select: { id: true, status: true } });
}

export function moveRelationshipRow(tx: Tx, id: string, status: string, at: Date, endedAt?: Date): Promise<Relationship> {
  return tx.relationship.update({ where: { id }, data: { status, updatedAt: at, ...(endedAt ? { endedAt } : {}) } });
}

/** Up to `take` of the brand's relationships below a cursor, newest first, optionally of one entity and status. */
export function relationshipsPage(
  db: Reader,
  q: { organizationId: string; brandId: string; entityId?: string; status?: string },
  below: { id?: { lt: string } },
  take: number,
): Promise<Relationship[]> {
  return db.relationship.findMany({
    where: {
      organizationId: q.organizationId,
      brandId: q.brandId,
      ...(q.entityId ? { entityId: q.entityId } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...below,
    },
    orderBy: { id: 'desc' },
    take,
  });
}

/** The entities' relationships with the brand, newest first. */
export function brandRelationshipsOf(
  db: Reader,
  entityIds: string[],
  brandId: string,
): Promise<Pick<Relationship, 'id' | 'entityId' | 'brandId' | 'status'>[]> {
  return db.relationship.findMany({
    where: { entityId: { in: entityIds }, brandId },
    select: { id: true, entityId: true, brandId: true, status: true },
    orderBy: { id: 'desc' },
  });
}
