import { createHash } from 'node:crypto';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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
}

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

/** Runs the action behind a tool through the same runner as REST and GraphQL (scope, idempotency, admission). */
export async function callTool(c: McpCall, name: string, args: Record<string, unknown>, rpcId: string | number): Promise<CallToolResult> {
  const tool = toolNamed(name);
  if (!tool || (c.readOnly && tool.mutation)) return unknownTool(name, c);
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
    return success(c, tool, out.value as Record<string, unknown>, { key, replayed: out.replayed });
  } catch (e) {
    return errorResult(asDomainError(c.deps, e, c.requestId), c.requestId);
  }
}

/** A name that is no tool of this session's: a protocol error (-32602), as MCP specifies for an unknown tool. */
function unknownTool(name: string, c: McpCall): never {
  throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}${c.readOnly ? ' (read-only mode hides every change)' : ''}`);
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
  return {
    content: [{ type: 'text', text: JSON.stringify(shown) }, ...notes.map((text) => ({ type: 'text' as const, text }))],
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
