import { createHash } from 'node:crypto';
import {
  type CallToolResult,
  ErrorCode,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  type ServerNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { invoke } from '../domain/action/action.ts';
import type { Deps } from '../domain/context.ts';
import { toDomainError } from '../../rest/http/envelope.ts';
import { DomainError, missingScope } from '../domain/errors.ts';
import type { SurfaceBCaller } from '../domain/platform/request-auth.ts';
import { IDEMPOTENCY_KEY, type Tool, toolNamed, visible } from './tools.ts';

/** Who calls a tool, and through which session and request. */
export interface McpCall {
  deps: Deps;
  caller: SurfaceBCaller;
  /** Read-only mode: every mutation is hidden. */
  readOnly: boolean;
  sessionId: string;
  /** The HTTP request's `Request-Id`, named in every error. */
  requestId: string;
  /** The session's log level (`logging/setLevel`); none set, no log message is sent. */
  logLevel: string | null;
}

/** Sends a log message to the client when `level` is at or above the session's. */
export type McpLog = (level: LoggingLevel, message: string, fields?: Record<string, unknown>) => Promise<void>;

/**
 * The session's log, sent with a request's answer (its notifications travel on
 * the request's stream: src/mcp/http.ts answers a call as a stream once a
 * level is set). A message names the tool, codes and ids, never a call's
 * arguments or its answer: no secret reaches a log line.
 */
export function sessionLog(c: McpCall, send: (n: ServerNotification) => Promise<void>): McpLog {
  const severity = (level: string) => LoggingLevelSchema.options.indexOf(level as LoggingLevel);
  const floor = c.logLevel ? severity(c.logLevel) : -1;
  return async (level, message, fields = {}) => {
    if (floor < 0 || severity(level) < floor) return;
    const data = { message, ...fields, request_id: c.requestId };
    // A client gone meanwhile loses its log, not its answer.
    await send({ method: 'notifications/message', params: { level, logger: 'platform', data } }).catch(() => {});
  };
}

const noLog: McpLog = async () => {};

/** An error as a tool result: Surface B's envelope (`code`, `message`, `param`, `request_id`) and what else belongs to it. */
export function errorResult(
  err: DomainError | { code: string; message: string; param?: string | null },
  requestId: string,
  extra: object = {},
): CallToolResult {
  const error = { code: err.code, message: err.message, param: err.param ?? null, request_id: requestId };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error, ...extra }) }], _meta: { error } };
}

/** A failure as the API's error: REST's own mapping (rest/http/envelope.ts), so a lost database is the same 503. */
export const asDomainError = (deps: Deps, e: unknown, requestId: string): DomainError => toDomainError(e, deps.log, deps.db, requestId);

/**
 * The key of a mutating call: the caller's, else one derived from the
 * session and the JSON-RPC request id, so a transport-level resend of the
 * same request (same session, same id) replays the first answer.
 */
export function idempotencyKeyOf(args: Record<string, unknown>, sessionId: string, rpcId: string | number): string {
  const given = args[IDEMPOTENCY_KEY];
  if (given !== undefined) {
    if (typeof given !== 'string') throw new DomainError('invalid_request', `${IDEMPOTENCY_KEY} must be a string`, IDEMPOTENCY_KEY);
    return given;
  }
  const id = createHash('sha256').update(JSON.stringify(rpcId)).digest('base64url').slice(0, 22);
  return `mcp_${sessionId}_${id}`;
}

/**
 * Runs the action behind a tool through the same runner as REST and GraphQL (scope, idempotency, admission), and
 * logs what it did: each call (debug), an operation a change started (info), a refusal or a replay (warning).
 */
export async function callTool(
  c: McpCall,
  name: string,
  args: Record<string, unknown>,
  rpcId: string | number,
  log: McpLog = noLog,
): Promise<CallToolResult> {
  const tool = toolNamed(name);
  if (!tool || (c.readOnly && tool.mutation)) return unknownTool(name, c);
  await log('debug', `${name} called`, { tool: name });
  try {
    // A tool the key cannot use is refused as REST refuses its route: missing_scope, before the input is read.
    if (!visible(tool, c.caller.scopes, false)) {
      const lacking = [tool.action.scope, ...(tool.action.alsoNeeds ?? [])].find((s) => !c.caller.scopes.has(s))!;
      throw missingScope(lacking);
    }
    const params: Record<string, string> = {};
    for (const p of tool.action.params) {
      const v = args[p];
      if (typeof v !== 'string' || v === '') throw new DomainError('invalid_request', `${p} is required (a string)`, p);
      params[p] = v;
    }
    const input = Object.fromEntries(Object.entries(args).filter(([k]) => !tool.action.params.includes(k) && k !== IDEMPOTENCY_KEY));
    const key = tool.mutation ? idempotencyKeyOf(args, c.sessionId, rpcId) : undefined;
    const out = await invoke({ deps: c.deps, caller: c.caller, idempotencyKey: key }, tool.action, { params, input });
    const value = out.value as Record<string, unknown>;
    const op = startedOperation(value);
    if (out.replayed)
      await log('warning', `${name} replayed: its idempotency key answered the first call again; nothing was done twice`, {
        tool: name,
        idempotency_key: key,
      });
    else if (tool.mutation && op)
      await log('info', `${name} started operation ${op.id} (${op.kind}): ${op.status}; wait_for_operation follows it`, {
        tool: name,
        operation: op.id,
      });
    return success(c, tool, value, { key, replayed: out.replayed });
  } catch (e) {
    const err = asDomainError(c.deps, e, c.requestId);
    await log('warning', `${name} refused: ${err.code}`, { tool: name, code: err.code, param: err.param ?? null });
    return errorResult(err, c.requestId);
  }
}

/** The operation an answer carries (the operation itself, or beside the object it works on), if any. */
function startedOperation(value: Record<string, unknown>): { id: string; kind: string; status: string } | undefined {
  const op = (value.object === 'operation' ? value : value.operation) as Record<string, unknown> | undefined;
  return op?.object === 'operation' ? (op as { id: string; kind: string; status: string }) : undefined;
}

/** A name that is no tool of this session's: a protocol error (-32602), as MCP specifies for an unknown tool. */
function unknownTool(name: string, c: McpCall): never {
  throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}${c.readOnly ? ' (read-only mode hides every change)' : ''}`);
}

/** A tool result's structured content and the JSON text its first content already holds (`answerJson`). */
const serialized = new WeakMap<object, string>();
/** Stands for the structured content while the rest of an answer is serialized: no stored text holds U+0000. */
const HOLE = '\u0000structuredContent\u0000';
const HOLE_JSON = JSON.stringify(HOLE);

/**
 * A JSON-RPC answer as JSON.stringify writes it, the structured content of a tool result spliced in from the text
 * already made of it: MCP asks for a result twice, as structured content and as its JSON text, and serializing a
 * page of 100 events once more cost a tool call about a tenth of its CPU.
 */
export function answerJson(message: unknown): string {
  const result = (message as { result?: { structuredContent?: object } }).result;
  const text = result?.structuredContent && serialized.get(result.structuredContent);
  if (text === undefined) return JSON.stringify(message);
  const json = JSON.stringify({ ...(message as object), result: { ...result, structuredContent: HOLE } });
  const at = json.lastIndexOf(HOLE_JSON);
  return json.slice(0, at) + text + json.slice(at + HOLE_JSON.length);
}

function success(c: McpCall, tool: Tool, value: Record<string, unknown>, run: { key?: string; replayed: boolean }): CallToolResult {
  const withheld: string[] = [];
  let shown = value;
  if (tool.action.revealsSecret && !c.deps.config.mcp?.exposeSecrets) {
    shown = { ...value };
    for (const field of tool.action.revealsSecret)
      if (shown[field] !== undefined && shown[field] !== null) {
        shown[field] = null;
        withheld.push(field);
      }
  }
  const notes: string[] = [];
  if (withheld.length)
    notes.push(
      `${withheld.join(', ')} withheld from this transcript (shown once): read it where this answer is not recorded, by calling ${tool.action.name} through REST, GraphQL or the \`platform\` CLI, or ask the operator to set MCP_EXPOSE_SECRETS=1.`,
    );
  if (run.key)
    notes.push(`idempotency_key: ${run.key}${run.replayed ? ' (replayed: the first answer)' : ''}; pass it again to retry this call.`);
  const text = JSON.stringify(shown);
  serialized.set(shown, text);
  return {
    content: [{ type: 'text', text }, ...notes.map((text) => ({ type: 'text' as const, text }))],
    structuredContent: shown,
    ...(run.key || withheld.length
      ? {
          _meta: {
            ...(run.key ? { idempotency_key: run.key, replayed: run.replayed } : {}),
            ...(withheld.length ? { withheld } : {}),
          },
        }
      : {}),
  };
}
