import type { Tx } from '../../db/database.ts';
import type { ConnectConfig, ConnectSession, HandoffIssuer, Prisma, PrismaClient } from '../../db/generated/client.ts';

/** The connect capability's SQL: connect configuration, handoff issuers and redemptions, connect sessions. */
type Reader = Tx | PrismaClient;

/** The brand's configuration row, or null when never configured. */
export function connectConfigOf(db: Reader, brandId: string): Promise<ConnectConfig | null> {
  return db.connectConfig.findUnique({ where: { brandId } });
}

/** Writes the fields given (creating the row on first write). */
export function upsertConnectConfig(
  tx: Tx,
  key: { brandId: string; organizationId: string },
  createdAt: Date,
  data: Omit<Prisma.ConnectConfigUncheckedCreateInput, 'brandId' | 'organizationId' | 'createdAt'>,
): Promise<ConnectConfig> {
  return tx.connectConfig.upsert({
    where: { brandId: key.brandId },
    create: { brandId: key.brandId, organizationId: key.organizationId, createdAt, ...data },
    update: data,
  });
}

export async function allowedOriginsOf(db: PrismaClient, brandId: string): Promise<unknown> {
  return (await db.connectConfig.findUnique({ where: { brandId }, select: { allowedOrigins: true } }))?.allowedOrigins;
}

/** Whether some brand lists `origin` in its allowed_origins. */
export async function anyBrandAllows(db: PrismaClient, origin: string): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`
      SELECT 1 FROM connect_config WHERE allowed_origins @> ${JSON.stringify([origin])}::jsonb LIMIT 1`;
  return rows.length > 0;
}

export function issuerOfBrand(db: Reader, organizationId: string, brandId: string, id: string): Promise<HandoffIssuer | null> {
  return db.handoffIssuer.findFirst({ where: { id, organizationId, brandId } });
}

export function insertIssuerRow(tx: Tx, row: Prisma.HandoffIssuerUncheckedCreateInput): Promise<HandoffIssuer> {
  return tx.handoffIssuer.create({ data: row });
}

export function updateIssuerRow(tx: Tx, id: string, data: Prisma.HandoffIssuerUncheckedUpdateInput): Promise<HandoffIssuer> {
  return tx.handoffIssuer.update({ where: { id }, data });
}

export async function deleteIssuerRow(tx: Tx, id: string): Promise<void> {
  await tx.handoffIssuer.delete({ where: { id } });
}

/** Up to `take` of the brand's issuers below a cursor, newest first. */
export function issuersPage(
  db: Reader,
  organizationId: string,
  brandId: string,
  below: { id?: { lt: string } },
  take: number,
): Promise<HandoffIssuer[]> {
  return db.handoffIssuer.findMany({ where: { organizationId, brandId, ...below }, orderBy: { id: 'desc' }, take });
}

/** Drops the (issuer, jti) redemption if it expired before `before` (its token can no longer verify). */
export async function deleteSpentRedemption(tx: Tx, issuerId: string, jti: string, before: Date): Promise<void> {
  await tx.handoffRedemption.deleteMany({ where: { issuerId, jti, expiresAt: { lt: before } } });
}

/** Records the redemption; a second one of (issuer, jti) is a unique violation (it waits for the first to commit). */
export async function insertRedemption(
  tx: Tx,
  row: { issuerId: string; jti: string; organizationId: string; expiresAt: Date; createdAt: Date },
): Promise<void> {
  await tx.handoffRedemption.create({ data: row });
}

export async function deleteRedemptionsBefore(db: PrismaClient, before: Date): Promise<number> {
  return (await db.handoffRedemption.deleteMany({ where: { expiresAt: { lt: before } } })).count;
}

export function insertSessionRow(
  tx: Tx,
  row: Pick<ConnectSession, 'id' | 'tokenHash' | 'organizationId' | 'brandId' | 'entityId' | 'keyId' | 'expiresAt' | 'createdAt'>,
): Promise<ConnectSession> {
  return tx.connectSession.create({ data: row });
}

export function sessionByHash(db: PrismaClient, tokenHash: string): Promise<ConnectSession | null> {
  return db.connectSession.findUnique({ where: { tokenHash } });
}

export async function deleteSessionsBefore(db: PrismaClient, before: Date): Promise<number> {
  return (await db.connectSession.deleteMany({ where: { expiresAt: { lt: before } } })).count;
}
