import type { Deps } from '../context.ts';
import { deleteIdleMcpSessions } from './store.ts';

/**
 * An MCP session unused for MCP_SESSION_IDLE_MS is deleted by the maintenance loop: a client that comes back gets
 * 404 for its session id and initializes again, as the protocol says. A use records itself at most every
 * MCP_SESSION_TOUCH_MS (the session's read is on every call; its write is not).
 */
export const MCP_SESSION_IDLE_MS = 24 * 3_600_000;
export const MCP_SESSION_TOUCH_MS = 5 * 60_000;

/** Deletes the sessions idle for longer than MCP_SESSION_IDLE_MS; returns how many. */
export const pruneIdleMcpSessions = (deps: Deps): Promise<number> =>
  deleteIdleMcpSessions(deps.db.prisma, new Date(deps.clock.now().getTime() - MCP_SESSION_IDLE_MS));
