import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol, type RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type ServerNotification, type ServerRequest, type ServerResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Registers the handler of one request method: the request is parsed against
 * the SDK's schema of it, and one that does not parse is a JSON-RPC error
 * -32602 (invalid params), not the SDK's -32603 (internal error: it lets the
 * parse's exception through). Registered as Protocol registers it: Server's
 * own registration would parse a tools/call answer again, which call.ts has
 * built from the action's declared output.
 */
export function handle<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(
  server: Server,
  schema: S,
  run: (req: z.output<S>, extra: HandlerExtra) => ServerResult | Promise<ServerResult>,
): void {
  const method = schema.shape.method.value;
  Protocol.prototype.setRequestHandler.call(server, z.looseObject({ method: z.literal(method) }), (req, extra) => {
    const parsed = schema.safeParse(req);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid ${method} request: ${z.prettifyError(parsed.error)}`);
    return run(parsed.data, extra);
  });
}
