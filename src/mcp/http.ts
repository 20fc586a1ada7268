import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type Koa from 'koa';
import { bearer, readJsonBody } from '../../rest/http/body.ts';
import { writeError } from '../../rest/http/envelope.ts';
import { writeJson } from '../http/json-body.ts';
import { rateLimitHeaders } from '../http/rate-limit-headers.ts';
import type { Deps } from '../domain/context.ts';
import { DomainError } from '../domain/errors.ts';
import type { PlatformRequestHeaders, SurfaceBCaller } from '../domain/platform/request-auth.ts';
import { type ApiServer, noStreamRoom } from '../http/server-limits.ts';
import type { EventStream } from '../runtime/event-stream.ts';
import type { PlatformGate } from '../runtime/platform-gate.ts';
import { answerJson, asDomainError } from './call.ts';
import { JsonRequestTransport, plainRequest } from './json-request.ts';
import { WAIT_TOOL } from './operation-wait.ts';
import { notifyFeed } from './resources.ts';
import { mcpServer } from './server.ts';
import { type McpSession, McpSessions } from './session.ts';

/** `/mcp`'s read-only header: any value but `0`/`false` hides every mutation for this request. */
export const READ_ONLY_HEADER = 'mcp-read-only';
export const MCP_PATH = '/mcp';

export interface McpRouteOptions {
  version: string;
  /** The live event stream: a session's GET stream hears of new events from it (resource subscriptions). */
  stream: EventStream;
  /** Who the request is: Surface B's pipeline by default; a test of the protocol alone may fix a caller. */
  authorize?: (h: PlatformRequestHeaders) => Promise<SurfaceBCaller>;
}

/**
 * `/mcp`, the Streamable HTTP transport of the MCP front, in Surface B's
 * order: the `Host` allow-list (DNS rebinding; the app's cross-origin policy
 * has already refused a foreign `Origin`), then the pipeline's checks with
 * its codes and envelope (503 kill switch, 400 test-mode key, 401 missing or
 * invalid key with `WWW-Authenticate: Bearer`, 403 publishable key, 429 rate
 * limit, charged 1 per request as a REST request is), then the body (the
 * body limit and input guard of REST), then the session. The SDK answers the
 * JSON-RPC itself, one transport per request over the session the database
 * holds (src/mcp/session.ts), so any process serves any session: a plain
 * request (src/mcp/json-request.ts) through a transport that hands the SDK's
 * protocol the parsed message, everything else through the SDK's Streamable
 * HTTP transport.
 */
export function mcpRoute(deps: Deps, gate: PlatformGate, http: ApiServer, opts: McpRouteOptions): Koa.Middleware {
  const sessions = new McpSessions(deps);
  const authorize = opts.authorize ?? ((h: PlatformRequestHeaders) => gate.authorize(h, 1));
  return (ctx, next) => (ctx.path === MCP_PATH ? answer(ctx) : next());

  async function answer(ctx: Koa.Context): Promise<void> {
    ctx.state.route = MCP_PATH;
    try {
      await serve(ctx);
    } catch (e) {
      const err = asDomainError(deps, e, ctx.state.requestId);
      if (err.code === 'platform_token_required' || err.code === 'invalid_token')
        ctx.set('WWW-Authenticate', `Bearer realm="mcp"${err.code === 'invalid_token' ? ', error="invalid_token"' : ''}`);
      writeError(ctx, 'surface_b', err);
    }
  }

  async function serve(ctx: Koa.Context): Promise<void> {
    const asOf = performance.now();
    if (!hostAllowed(ctx, deps))
      throw new DomainError('origin_not_allowed', `Host ${ctx.get('host') || '(none)'} is not this server's`, 'Host');
    if (!['GET', 'POST', 'DELETE'].includes(ctx.method))
      throw new DomainError('method_not_allowed', 'Use GET, POST or DELETE for /mcp', null, { allow: 'GET, POST, DELETE' });
    const headers = { bearer: bearer(ctx), brand: ctx.get('service-brand') || undefined };
    const caller = await authorize({ ...headers, client: ctx.state.client });
    ctx.set(rateLimitHeaders(caller.rateLimit));
    ctx.state.caller = caller;
    const body = ctx.method === 'POST' ? await readJsonBody(ctx, deps.config.bodyLimitBytes) : undefined;
    if (ctx.method === 'POST' && body === undefined) throw new DomainError('invalid_request', 'A JSON-RPC message is required');
    const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];

    let session: McpSession | undefined;
    const named = ctx.get('mcp-session-id');
    if (ctx.method === 'POST' && messages.length === 1 && methodOf(messages[0]) === 'initialize' && isInitializeRequest(messages[0])) {
      session = await sessions.open(caller, messages[0].params.protocolVersion);
    } else if (!named) {
      return jsonRpcError(ctx, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    } else {
      session = await sessions.find(named, caller, asOf);
      if (!session) return jsonRpcError(ctx, 404, -32001, 'Session not found');
    }
    if (ctx.method === 'DELETE') {
      await sessions.end(session.id);
      ctx.status = 200;
      return;
    }
    // A session that set a log level hears of its calls: their log messages travel on the call's stream.
    const streaming = ctx.method === 'GET' || messages.some((m) => streams(m) || (session.logLevel !== null && isToolCall(m)));
    if (streaming && !http.streamRoom(ctx.req.socket)) throw noStreamRoom();
    const readOnly = !['', '0', 'false'].includes(ctx.get(READ_ONLY_HEADER).toLowerCase());
    const call = { deps, caller, readOnly, sessionId: session.id, requestId: ctx.state.requestId as string, logLevel: session.logLevel };
    const server = mcpServer(call, { version: opts.version, sessions, stream: opts.stream });
    const plain = streaming ? undefined : plainRequest(plainHeaders(ctx), messages);
    if (plain) {
      const transport = new JsonRequestTransport(plain);
      await server.connect(transport);
      transport.deliver();
      const answer = await transport.answer;
      ctx.set('Mcp-Session-Id', session.id);
      ctx.status = 200;
      ctx.set('Content-Type', 'application/json');
      writeJson(ctx, answerJson(answer));
      return;
    }
    // JSON answers, except where the answer is a stream: the session's GET stream, and a call that waits or reports progress.
    const transport = new WebStandardStreamableHTTPServerTransport({ enableJsonResponse: !streaming });
    await server.connect(transport);
    const response = await transport.handleRequest(webRequest(ctx), { parsedBody: body });
    ctx.set('Mcp-Session-Id', session.id);
    ctx.status = response.status;
    response.headers.forEach((value, key) => {
      if (key !== 'content-length') ctx.set(key, value);
    });
    if (!response.headers.get('content-type')?.includes('text/event-stream')) {
      // Whole once written: every handler of the request has returned, so the server and transport are left to the
      // garbage collector, not closed. Its bytes as they are (decoding them to text would only have them encoded
      // again); an empty body is '', not null: Koa would turn a 202 into a 204.
      ctx.body = response.body ? await bytesOf(response.body as unknown as WebReadableStream<Uint8Array>) : '';
      return;
    }
    // An open stream is a use of the key: it ends when a new request with it would be refused (revoked, expired, paused).
    const stops = [gate.streams.watch({ headers, caller }, () => void transport.close())];
    if (ctx.method === 'GET') stops.push(notifyFeed(opts.stream, call, sessions, server, () => void transport.close()));
    http.admitStream(ctx.res);
    ctx.res.once('close', () => {
      for (const stop of stops) stop();
      // Ends what still runs for the stream (a wait whose client went away).
      void server.close();
    });
    ctx.body = Readable.fromWeb(response.body as unknown as WebReadableStream);
  }
}

/** What `plainRequest` reads of the request's headers. */
function plainHeaders(ctx: Koa.Context) {
  const h = ctx.req.headers;
  const version = h['mcp-protocol-version'];
  return { accept: h.accept, contentType: h['content-type'], protocolVersion: Array.isArray(version) ? version.join(', ') : version };
}

/** A JSON answer's bytes as the transport encoded them: its one chunk as it is (no copy), else the chunks joined. */
async function bytesOf(body: WebReadableStream<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  const reader = body.getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
  const [only] = chunks;
  return chunks.length === 1 && only ? Buffer.from(only.buffer, only.byteOffset, only.byteLength) : Buffer.concat(chunks);
}

/**
 * A message's method, read without a schema: these checks only choose the path (a stream or a JSON answer); the SDK
 * validates the message whichever path it takes.
 */
const methodOf = (m: unknown): unknown => (typeof m === 'object' && m !== null ? (m as { method?: unknown }).method : undefined);
const isToolCall = (m: JSONRPCMessage): boolean => methodOf(m) === 'tools/call' && 'id' in m;

/** A call answered as a stream: `wait_for_operation` (kept alive while it waits), or any call that asks for progress. */
function streams(m: JSONRPCMessage): boolean {
  if (!isToolCall(m)) return false;
  const params = (m as { params?: unknown }).params as { name?: unknown; _meta?: { progressToken?: unknown } } | null | undefined;
  return params?.name === WAIT_TOOL || params?._meta?.progressToken !== undefined;
}

/** A JSON-RPC error outside any request (the session is missing or unknown), as the SDK's transport answers it. */
function jsonRpcError(ctx: Koa.Context, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.body = { jsonrpc: '2.0', error: { code, message }, id: null };
}

/**
 * The headers of the web Request the SDK's transport reads (its Host and Origin checks are off: `hostAllowed` and the
 * app's cross-origin policy answer for them; the body is passed parsed). The rest are not copied: no handler reads them.
 */
const TRANSPORT_HEADERS = ['accept', 'content-type', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'] as const;

function webRequest(ctx: Koa.Context): Request {
  const headers = new Headers();
  for (const k of TRANSPORT_HEADERS) {
    const v = ctx.req.headers[k];
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return new Request(`http://localhost${ctx.url}`, { method: ctx.method, headers });
}

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

/**
 * DNS rebinding: a page on another site whose name resolves to this server
 * sends its own name as `Host` (and as `Origin`, so the same-origin check
 * alone cannot tell). `/mcp` answers only the names it is known by:
 * PUBLIC_ORIGIN's host, the loopback names of the port it was reached on, the
 * address it listens on, and MCP_ALLOWED_HOSTS.
 */
function hostAllowed(ctx: Koa.Context, deps: Deps): boolean {
  const host = ctx.get('host').toLowerCase();
  if (!host) return false;
  const { config } = deps;
  if (config.mcp?.allowedHosts.includes(host)) return true;
  if (config.publicOrigin && new URL(config.publicOrigin).host === host) return true;
  const port = ctx.req.socket.localPort;
  const names = [...LOOPBACK, config.host.includes(':') ? `[${config.host}]` : config.host];
  return names.some((n) => host === `${n}:${port}` || (port === 80 && host === n));
}
