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
 *
 * Each process keeps the rows it read, so a call costs no database read: a
 * session's end and a change of its log level announce themselves as a
 * credential change does (src/runtime/credential-cache.ts), and a row is
 * trusted only under the rule of that cache (fresh as of the request's
 * arrival, read in the current generation), so an end on one process is seen
 * by the next request on any other. (The key itself is authorized on every
 * request before its session is looked up.)
 */
export class McpSessions {
  private readonly rows = new Map<string, { row: McpSession; generation: number; at: number }>();

  constructor(private readonly deps: Deps) {
    deps.credentials?.subscribe(() => this.rows.clear());
  }

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

  /**
   * The session of that id opened by this caller's token, else undefined (unknown, ended, or another key's); `asOf`
   * (performance.now()) is the request's arrival: every end committed before it is seen.
   */
  async find(id: string, caller: SurfaceBCaller, asOf: number): Promise<McpSession | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    const row = await this.row(id, asOf);
    if (!row || row.tokenId !== caller.tokenId || row.organizationId !== caller.organization.id) return undefined;
    const now = this.deps.clock.now();
    if (now.getTime() - row.lastSeenAt.getTime() >= MCP_SESSION_TOUCH_MS) {
      await touchMcpSession(this.deps.db.prisma, id, now);
      row.lastSeenAt = now;
    }
    return row;
  }

  /** The row, from this process's copy when the credential cache vouches for it (see the class comment). */
  private async row(id: string, asOf: number): Promise<McpSession | undefined> {
    const cache = this.deps.credentials;
    if (!cache) return (await mcpSessionById(this.deps.db.prisma, id)) ?? undefined;
    const fresh = await cache.fresh(asOf);
    const hit = this.rows.get(id);
    if (fresh && hit && hit.generation === cache.current && Date.now() - hit.at < ROW_MAX_AGE_MS) return hit.row;
    const generation = cache.current;
    const row = (await mcpSessionById(this.deps.db.prisma, id)) ?? undefined;
    if (row && fresh && generation === cache.current) {
      if (this.rows.size >= MAX_ROWS) this.rows.clear();
      this.rows.set(id, { row, generation, at: Date.now() });
    }
    return row;
  }

  /** Re-reads a session (its subscriptions may have changed in another process). */
  async reload(id: string): Promise<McpSession | undefined> {
    return (await mcpSessionById(this.deps.db.prisma, id)) ?? undefined;
  }

  /** Every process's copy of the session changes with it (the level filters the log messages of its calls). */
  async setLogLevel(id: string, level: string): Promise<void> {
    await setMcpSessionLogLevel(this.deps.db.prisma, id, level);
    await this.announce();
  }

  subscribe(id: string, uri: string, subscribed: boolean): Promise<void> {
    return changeMcpSubscription(this.deps.db.prisma, id, uri, subscribed);
  }

  /** Ends the session on every process: the next request naming it, wherever it lands, is told it does not exist. */
  async end(id: string): Promise<void> {
    await deleteMcpSession(this.deps.db.prisma, id);
    await this.announce();
  }

  private async announce(): Promise<void> {
    await this.deps.credentials?.announce(this.deps.db.prisma);
  }
}

/** Bounds of this process's copies: as many sessions as the credential cache keeps keys, and its backstop age. */
const MAX_ROWS = 10_000;
const ROW_MAX_AGE_MS = 60_000;
