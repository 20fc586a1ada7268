import type { Tx } from './database.ts';
import type { PrismaClient } from './generated/client.ts';

/** NOTIFY on `channel` (PostgreSQL only): in a transaction, delivered to every listener at its commit. */
export async function notify(db: Tx | PrismaClient, channel: string, payload: string): Promise<void> {
  await db.$queryRaw`SELECT pg_notify(${channel}, ${payload})::text`;
}
