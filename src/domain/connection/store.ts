import { Prisma as PrismaSql, type Tx } from '../../db/database.ts';
import type { Connection, Prisma, PrismaClient } from '../../db/generated/client.ts';

/** The connection capability's SQL. */

/** A distribution's named connections, as create and validate check them (the brand's only). */
export type NamedConnection = Pick<Connection, 'id' | 'provider' | 'status'>;

/** The brand's connections among `ids`, as a statement of create's batch. */
export const brandConnectionsStatement = (organizationId: string, brandId: string, ids: string[]): Prisma.Sql =>
  PrismaSql.sql`SELECT id, provider, status FROM connection
    WHERE organization_id = ${organizationId} AND brand_id = ${brandId} AND id IN (${PrismaSql.join(ids)})`;

/** The brand's connections among `ids`: validate's read. */
export function brandConnections(db: Reader, organizationId: string, brandId: string, ids: string[]): Promise<NamedConnection[]> {
  return db.connection.findMany({
    where: { id: { in: ids }, organizationId, brandId },
    select: { id: true, provider: true, status: true },
  });
}
type Reader = Tx | PrismaClient;

export function connectionOfBrand(db: Reader, organizationId: string, brandId: string, id: string): Promise<Connection | null> {
  return db.connection.findFirst({ where: { id, organizationId, brandId } });
}

export function connectionById(tx: Tx, id: string): Promise<Connection> {
  return tx.connection.findUniqueOrThrow({ where: { id } });
}

export function insertConnectionRow(
  tx: Tx,
  row: Pick<Connection, 'id' | 'organizationId' | 'brandId' | 'entityId' | 'provider' | 'accountId' | 'createdAt' | 'updatedAt'> & {
    grants: Prisma.InputJsonValue;
  },
): Promise<Connection> {
  return tx.connection.create({ data: row });
}

/** Conditional on the status, so two concurrent revokes cannot both pass: 1 when this call revoked it, 0 otherwise. */
export async function revokeConnectionIfActive(tx: Tx, id: string, at: Date): Promise<number> {
  const { count } = await tx.connection.updateMany({
    where: { id, status: 'active' },
    data: { status: 'revoked', revokedAt: at, updatedAt: at },
  });
  return count;
}

/** Up to `take` of the brand's connections below a cursor, newest first, optionally of one entity, provider and status. */
export function connectionsPage(
  db: Reader,
  q: { organizationId: string; brandId: string; entityId?: string; provider?: string; status?: string },
  below: { id?: { lt: string } },
  take: number,
): Promise<Connection[]> {
  return db.connection.findMany({
    where: {
      organizationId: q.organizationId,
      brandId: q.brandId,
      ...(q.entityId ? { entityId: q.entityId } : {}),
      ...(q.provider ? { provider: q.provider } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...below,
    },
    orderBy: { id: 'desc' },
    take,
  });
}

/** The entity's newest 100 connections in the brand (the connect flow's status). */
export function entityConnections(
  db: Reader,
  brandId: string,
  entityId: string,
): Promise<Pick<Connection, 'id' | 'provider' | 'accountId' | 'status'>[]> {
  return db.connection.findMany({
    where: { brandId, entityId },
    orderBy: { id: 'desc' },
    take: 100,
    select: { id: true, provider: true, accountId: true, status: true },
  });
}
