import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  PingRequestSchema,
  SetLevelRequestSchema,
  type Tool as SdkTool,
} from '@modelcontextprotocol/sdk/types.js';
import { callTool, type McpCall, sessionLog } from './call.ts';
import { WAIT_TOOL, waitForOperation, waitTool } from './operation-wait.ts';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { EventStream } from '../runtime/event-stream.ts';
import { handle } from './handle.ts';
import { serveResources } from './resources.ts';
import type { McpSessions } from './session.ts';
import { type Tool, toolsFor } from './tools.ts';

export interface McpServerOptions {
  /** The server's version in `initialize` (the spec's). */
  version: string;
  sessions: McpSessions;
  /** The live event stream (an operation settled in any process ends a wait for it). */
  stream?: EventStream;
}

const INSTRUCTIONS =
  'The platform API as tools: one per action your key may use (its scopes decide which exist). ' +
  'Errors are tool results with isError and the API error {code, message, param, request_id}. ' +
  'Every change takes an optional idempotency_key: pass the same key when you retry a call.';

/**
 * One validator for every server this process builds: the SDK would compile a new Ajv (with its formats) for each,
 * and a server is built per request.
 */
const validator = new AjvJsonSchemaValidator();

const listed = (t: Omit<Tool, 'action' | 'mutation'>): SdkTool => ({
  name: t.name,
  title: t.annotations.title,
  description: t.description,
  inputSchema: t.inputSchema,
  outputSchema: t.outputSchema,
  annotations: t.annotations,
});

/**
 * One SDK server for one request of a session (src/mcp/http.ts) or for the
 * life of a stream: every handler reads the session and the caller it is
 * given, never state of its own, so any process can build it.
 */
export function mcpServer(c: McpCall, opts: McpServerOptions): Server {
  const server = new Server(
    { name: 'platform-api', title: 'Platform API', version: opts.version },
    {
      capabilities: { tools: { listChanged: false }, resources: { subscribe: true, listChanged: false }, logging: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: validator,
    },
  );
  handle(server, PingRequestSchema, () => ({}));
  serveResources(server, c, opts.sessions);
  const waits = c.caller.scopes.has(waitTool.scope);
  handle(server, ListToolsRequestSchema, () => ({
    tools: [...toolsFor(c.caller.scopes, c.readOnly).map(listed), ...(waits ? [listed(waitTool)] : [])],
  }));
  handle(server, CallToolRequestSchema, (req, extra): Promise<CallToolResult> => {
    const args = req.params.arguments ?? {};
    if (req.params.name === WAIT_TOOL && waits)
      return waitForOperation(c, args, {
        signal: extra.signal,
        progressToken: req.params._meta?.progressToken,
        sendNotification: extra.sendNotification,
        stream: opts.stream,
      });
    return callTool(c, req.params.name, args, extra.requestId, sessionLog(c, extra.sendNotification));
  });
  // The level is the session's (any process sends its log messages), so it is kept with it.
  handle(server, SetLevelRequestSchema, async (req) => {
    await opts.sessions.setLogLevel(c.sessionId, req.params.level);
    return {};
  });
  return server;
}
