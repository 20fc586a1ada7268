import { randomUUID } from 'node:crypto';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../domain/context.ts';
import {
  changeMcpSubscription,
  deleteMcpSession,
  insertMcpSession,
  type McpSession,
  mcpSessionById,
  setMcpSessionLogLevel,
  touchMcpSession,
} from '../domain/mcp/store.ts';
import type { SurfaceBCaller } from '../domain/platform/request-auth.ts';
import { MCP_SESSION_TOUCH_MS } from '../domain/mcp/expiry.ts';

export type { McpSession };

/**
 * MCP sessions live in the database, not in the process that opened them:
 * the SDK's transport serves each request on its own (stateless) and this
 * module gives the requests of one session what they share (the key that
 * opened it, the negotiated revision, the log level, the subscriptions).
 * So any API process serves any session, and a restart loses none.
 *
 * A session belongs to the token that opened it: another key naming its id
 * is told it does not exist, as an unknown id is. An idle session expires
 * (src/domain/mcp/expiry.ts).
 */
export class McpSessions {
  constructor(private readonly deps: Deps) {}

  /** The revision `initialize` settles on: the client's when the SDK speaks it, else the newest (the SDK's own rule). */
  static negotiated(requested: unknown): string {
    return typeof requested === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
  }

  async open(caller: SurfaceBCaller, requestedVersion: unknown): Promise<McpSession> {
    const now = this.deps.clock.now();
    return insertMcpSession(this.deps.db.prisma, {
      createdAt: now,
      lastSeenAt: now,
      id: randomUUID(),
      organizationId: caller.organization.id,
      tokenId: caller.tokenId,
      protocolVersion: McpSessions.negotiated(requestedVersion),
    });
  }

  /** The session of that id opened by this caller's token, else undefined (unknown, ended, or another key's). */
  async find(id: string, caller: SurfaceBCaller): Promise<McpSession | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    const row = await mcpSessionById(this.deps.db.prisma, id);
    if (!row || row.tokenId !== caller.tokenId || row.organizationId !== caller.organization.id) return undefined;
    const now = this.deps.clock.now();
    if (now.getTime() - row.lastSeenAt.getTime() >= MCP_SESSION_TOUCH_MS) await touchMcpSession(this.deps.db.prisma, id, now);
    return row;
  }

  /** Re-reads a session (its subscriptions may have changed in another process). */
  async reload(id: string): Promise<McpSession | undefined> {
    return (await mcpSessionById(this.deps.db.prisma, id)) ?? undefined;
  }

  setLogLevel(id: string, level: string): Promise<void> {
    return setMcpSessionLogLevel(this.deps.db.prisma, id, level);
  }

  subscribe(id: string, uri: string, subscribed: boolean): Promise<void> {
    return changeMcpSubscription(this.deps.db.prisma, id, uri, subscribed);
  }

  end(id: string): Promise<void> {
    return deleteMcpSession(this.deps.db.prisma, id);
  }
}
