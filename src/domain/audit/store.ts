import type { Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient } from '../../db/generated/client.ts';

/** The audit capability's SQL (docs/architecture.md, "Stores"). */
export async function insertAuditRecord(db: Tx | PrismaClient, row: Prisma.AuditRecordUncheckedCreateInput): Promise<void> {
  await db.auditRecord.create({ data: row });
}
