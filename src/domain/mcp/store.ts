import type { McpSession, PrismaClient } from '../../db/generated/client.ts';

export type { McpSession };

/**
 * The MCP sessions' SQL (src/mcp/session.ts holds the rules): one row per
 * session, so whichever API process a request lands on can serve it.
 */
export function insertMcpSession(
  db: PrismaClient,
  row: Pick<McpSession, 'id' | 'organizationId' | 'tokenId' | 'protocolVersion' | 'createdAt' | 'lastSeenAt'>,
): Promise<McpSession> {
  return db.mcpSession.create({ data: row });
}

export function mcpSessionById(db: PrismaClient, id: string): Promise<McpSession | null> {
  return db.mcpSession.findUnique({ where: { id } });
}

export async function setMcpSessionLogLevel(db: PrismaClient, id: string, level: string): Promise<void> {
  await db.mcpSession.updateMany({ where: { id }, data: { logLevel: level } });
}

/** Adds (once) or removes a subscribed resource URI, in one statement: two processes may change one session at once. */
export async function changeMcpSubscription(db: PrismaClient, id: string, uri: string, subscribed: boolean): Promise<void> {
  if (subscribed)
    await db.$executeRaw`UPDATE mcp_session SET subscriptions = array_append(array_remove(subscriptions, ${uri}), ${uri}) WHERE id = ${id}`;
  else await db.$executeRaw`UPDATE mcp_session SET subscriptions = array_remove(subscriptions, ${uri}) WHERE id = ${id}`;
}

export async function deleteMcpSession(db: PrismaClient, id: string): Promise<void> {
  await db.mcpSession.deleteMany({ where: { id } });
}

/** Marks a session used now (the caller does so at most every few minutes: an idle session is pruned by its age). */
export async function touchMcpSession(db: PrismaClient, id: string, now: Date): Promise<void> {
  await db.mcpSession.updateMany({ where: { id }, data: { lastSeenAt: now } });
}

/** Deletes the sessions not used since `before`; returns how many. */
export async function deleteIdleMcpSessions(db: PrismaClient, before: Date): Promise<number> {
  return (await db.mcpSession.deleteMany({ where: { lastSeenAt: { lt: before } } })).count;
}
