import type { Tx } from '../../db/database.ts';
import type { Prisma, PrismaClient, SystemSetting } from '../../db/generated/client.ts';

/** The operator capability's SQL: process-wide settings (the kill switch, the generated operator token's hash). */
export function systemSetting(db: Tx | PrismaClient, key: string): Promise<SystemSetting | null> {
  return db.systemSetting.findUnique({ where: { key } });
}

/** Stores a setting; `updatedAt` absent leaves the column to its default on insert and untouched on update. */
export async function writeSystemSetting(
  db: Tx | PrismaClient,
  key: string,
  value: Prisma.InputJsonValue,
  updatedAt?: Date,
): Promise<void> {
  await db.systemSetting.upsert({
    where: { key },
    create: { key, value, updatedAt },
    update: { value, updatedAt },
  });
}
