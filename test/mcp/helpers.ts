import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';

/** The API error a failed tool call carries in its text (src/mcp/call.ts `errorResult`). */
export interface ToolError {
  code: string;
  message: string;
  param: string | null;
  request_id: string;
}

export interface McpClientOptions {
  readOnly?: boolean;
  headers?: Record<string, string>;
}

/** An official SDK client over Streamable HTTP to `origin`'s `/mcp`, with `token` as its bearer key. */
export async function connectMcp(origin: string, token: string, opts: McpClientOptions = {}): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...opts.headers };
  if (opts.readOnly) headers['mcp-read-only'] = '1';
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', origin), { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

/** The structured value of a successful call. */
export function toolValue(r: CallToolResult | Record<string, unknown>): any {
  const res = r as CallToolResult;
  expect(res.isError, JSON.stringify(res.content)).toBeFalsy();
  return res.structuredContent;
}

/** The API error of a failed call (isError, Surface B's fields). */
export function toolError(r: CallToolResult | Record<string, unknown>): ToolError & Record<string, unknown> {
  const res = r as CallToolResult;
  expect(res.isError, JSON.stringify(res.content)).toBe(true);
  const first = res.content[0];
  if (first?.type !== 'text') throw new Error('an error result starts with its JSON text');
  const body = JSON.parse(first.text) as { error: ToolError };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'request_id']);
  expect(body.error.request_id).toMatch(/^req_/);
  return { ...body.error, body };
}
