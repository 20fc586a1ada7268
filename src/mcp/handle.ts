import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol, type RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ErrorCode, McpError, type ServerNotification, type ServerRequest, type ServerResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** The schema Protocol reads a handler's method from, built once per method: a server is built per request. */
const methods = new Map<string, z.ZodObject<{ method: z.ZodLiteral<string> }>>();
const methodSchema = (method: string) => {
  let schema = methods.get(method);
  if (!schema) methods.set(method, (schema = z.looseObject({ method: z.literal(method) })));
  return schema;
};

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
  Protocol.prototype.setRequestHandler.call(server, methodSchema(method), (req, extra) => {
    const parsed = schema.safeParse(req);
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid ${method} request: ${z.prettifyError(parsed.error)}`);
    return run(parsed.data, extra);
  });
}
