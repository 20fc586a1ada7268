import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type JSONRPCMessage, type JSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The message of a POST that the SDK's Streamable HTTP transport would take exactly as it is and answer with one JSON
 * object: a single JSON-RPC request (no initialize, no `_meta`), both media types accepted, a JSON body, a supported
 * protocol revision or none. Anything else, its refusals included, is the SDK transport's to answer (src/mcp/http.ts).
 */
export function plainRequest(headers: { accept?: string; contentType?: string; protocolVersion?: string }, messages: unknown[]) {
  if (messages.length !== 1) return undefined;
  const m = messages[0] as Record<string, unknown> | null;
  if (typeof m !== 'object' || m === null || Array.isArray(m)) return undefined;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || m.method === 'initialize') return undefined;
  if (typeof m.id !== 'string' && !Number.isInteger(m.id)) return undefined;
  const params = m.params as Record<string, unknown> | undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params) || params._meta !== undefined))
    return undefined;
  for (const k in m) if (!REQUEST_KEYS.has(k)) return undefined; // the SDK's request schema is strict
  const accept = headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (!isJsonContentType(headers.contentType ?? null)) return undefined;
  if (headers.protocolVersion !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(headers.protocolVersion)) return undefined;
  return m as unknown as JSONRPCRequest;
}

/**
 * An SDK transport for one plain request (`plainRequest`): the SDK's `Protocol` still does the JSON-RPC (dispatch, the
 * method's schema, errors as JSON-RPC errors); this only hands it the message and takes back its answer, without the
 * web Request and Response, the text encoding and the stream read back that the SDK's HTTP transport spends on a JSON
 * answer (about a quarter of a tool call's extra CPU over REST, bench/HISTORY.md).
 */
export class JsonRequestTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  /** The request's answer: its result or its JSON-RPC error. */
  readonly answer: Promise<JSONRPCMessage>;
  private settle!: (message: JSONRPCMessage) => void;

  constructor(private readonly request: JSONRPCRequest) {
    this.answer = new Promise((resolve) => (this.settle = resolve));
  }

  async start(): Promise<void> {}

  /** Hands the request to the connected protocol. */
  deliver(): void {
    this.onmessage?.(this.request);
  }

  /** The answer settles the request; a notification on the way (a JSON answer carries none) is dropped, as the SDK does. */
  async send(message: JSONRPCMessage): Promise<void> {
    if (('result' in message || 'error' in message) && message.id === this.request.id) this.settle(message);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}
