import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type Action, invoke } from '../domain/action/action.ts';
import { eventTypes } from '../domain/event/catalogue.ts';
import { events } from '../domain/event/event.ts';
import type { EventStream } from '../runtime/event-stream.ts';
import { asDomainError, type McpCall } from './call.ts';
import { handle } from './handle.ts';
import type { McpSessions } from './session.ts';

/**
 * The event log as MCP resources (scope events:read, the feed's): each public
 * event type, its JSON Schema and example, at `platform://event_types/<type>`;
 * the feed at `platform://events`, and any page of it by cursor through the
 * template `platform://events{?starting_after}` (a seq, as REST's
 * `starting_after`). Both read through the actions REST binds. A session
 * subscribed to the feed gets `notifications/resources/updated` when new
 * events are sequenced: from the live stream, at most one per 250 ms.
 */
export const FEED_URI = 'platform://events';
export const FEED_TEMPLATE = 'platform://events{?starting_after}';
const TYPE_PREFIX = 'platform://event_types/';
const JSON_TYPE = 'application/json';
/** Least time between two notifications of one session's feed subscription. */
export const NOTIFY_EVERY_MS = 250;

async function run(c: McpCall, action: Action, req: { params?: Record<string, string>; input?: unknown }): Promise<unknown> {
  try {
    return (await invoke({ deps: c.deps, caller: c.caller }, action, req)).value;
  } catch (e) {
    // A resource answers in JSON-RPC: the API's error rides in the error's data.
    const err = asDomainError(c.deps, e, c.requestId);
    const code = err.code === 'resource_missing' ? -32002 : ErrorCode.InvalidParams;
    throw new McpError(code, err.message, { code: err.code, param: err.param, request_id: c.requestId });
  }
}

export function serveResources(server: Server, c: McpCall, sessions: McpSessions): void {
  const reads = c.caller.scopes.has(events.list.scope);
  handle(server, ListResourcesRequestSchema, async () => {
    if (!reads) return { resources: [] };
    const catalogue = (await run(c, eventTypes.list, {})) as { data: { type: string; description: string }[] };
    return {
      resources: [
        {
          uri: FEED_URI,
          name: 'events',
          title: 'Event feed',
          description: 'The oldest page of the feed; subscribe to hear of new events',
          mimeType: JSON_TYPE,
        },
        ...catalogue.data.map((t) => ({
          uri: TYPE_PREFIX + t.type,
          name: t.type,
          title: `Event type ${t.type}`,
          description: t.description,
          mimeType: JSON_TYPE,
        })),
      ],
    };
  });
  handle(server, ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: reads
      ? [
          {
            uriTemplate: FEED_TEMPLATE,
            name: 'events-after',
            title: 'Event feed after a cursor',
            description: 'The page of the feed after starting_after (a seq), oldest first, as GET /v1/platform/events',
            mimeType: JSON_TYPE,
          },
        ]
      : [],
  }));
  handle(server, ReadResourceRequestSchema, async (req) => {
    const { uri } = req.params;
    const value = await read(c, uri);
    return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] };
  });
  handle(server, SubscribeRequestSchema, async (req) => {
    if (req.params.uri !== FEED_URI) throw new McpError(ErrorCode.InvalidParams, `Only ${FEED_URI} changes; it is the one to subscribe to`);
    if (!reads) throw new McpError(ErrorCode.InvalidParams, `missing_scope:${events.list.scope}`);
    await sessions.subscribe(c.sessionId, FEED_URI, true);
    return {};
  });
  handle(server, UnsubscribeRequestSchema, async (req) => {
    await sessions.subscribe(c.sessionId, req.params.uri, false);
    return {};
  });
}

function read(c: McpCall, uri: string): Promise<unknown> {
  if (uri.startsWith(TYPE_PREFIX))
    return run(c, eventTypes.retrieve, { params: { type: decodeURIComponent(uri.slice(TYPE_PREFIX.length)) } });
  if (uri === FEED_URI || uri.startsWith(`${FEED_URI}?`)) {
    const query = Object.fromEntries(new URLSearchParams(uri.slice(FEED_URI.length + 1)));
    return run(c, events.list, { input: query });
  }
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
}

/**
 * For the life of a session's GET stream: the organization's live stream (the
 * cross-process wake-ups reach it) tells when events are sequenced; the
 * session's subscriptions, read again from the database (another process may
 * have changed them), say whether to tell the client, at most once per
 * NOTIFY_EVERY_MS: an event inside the window is told at its end.
 */
export function notifyFeed(stream: EventStream, c: McpCall, sessions: McpSessions, server: Server, ended: () => void): () => void {
  // Subscribed whatever the scopes: the live stream's end (shutdown) also ends the session's GET stream.
  const live = stream.subscribe(c.caller.organization.id, {});
  const reads = c.caller.scopes.has(events.list.scope);
  let last = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  /** An event arrived while a notification was being sent: another is due once the window allows. */
  let pending = false;
  let stopped = false;
  const schedule = () => {
    if (!stopped) timer = setTimeout(() => void tell(), Math.max(0, last + NOTIFY_EVERY_MS - performance.now()));
  };
  const tell = async () => {
    pending = false;
    try {
      const session = await sessions.reload(c.sessionId);
      if (session?.subscriptions.includes(FEED_URI)) await server.sendResourceUpdated({ uri: FEED_URI });
    } catch {
      // The stream went away meanwhile: nothing to tell.
    } finally {
      // The window counts from the send.
      last = performance.now();
      timer = undefined;
      if (pending) schedule();
    }
  };
  void (async () => {
    for await (const _ of live) {
      if (!reads) continue;
      if (timer) pending = true;
      else schedule();
    }
  })()
    .catch(() => {})
    .finally(ended);
  return () => {
    stopped = true;
    clearTimeout(timer);
    void live.return?.();
  };
}
