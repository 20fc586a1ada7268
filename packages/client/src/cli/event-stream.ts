import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { PlatformError, toCamelCase, type PlatformEvent } from '../index.ts';

/**
 * The live event stream over graphql-ws (`subscription events` on /graphql),
 * for `platform events tail` and `platform listen`. Yields events in the wire
 * (snake_case) shape that `GET /events` and webhook deliveries use; callers
 * camelCase for display.
 *
 * A dropped connection is resumed with `startingAfter` = the last seq seen,
 * so the server replays the gap: nothing is missed or repeated. So is a
 * subscription the server ended as resumable (`subscriber_too_slow`: this
 * client fell behind; `service_unavailable`: the server is shutting down).
 * Any other GraphQL error (missing scope, bad type, revoked token) ends the
 * stream with a PlatformError.
 */
const RESUMABLE = new Set(['subscriber_too_slow', 'service_unavailable']);
export interface WireEvent {
  id: string;
  object: 'event';
  type: string;
  seq: number;
  subject: { type: string; id: string };
  data: Record<string, unknown>;
  operation: string | null;
  brand: string | null;
  livemode: boolean;
  created_at: string;
}

const SUBSCRIPTION = /* GraphQL */ `
  subscription Events($types: [String!], $brands: [String!], $subjectTypes: [String!], $subjectId: String, $startingAfter: String) {
    events(types: $types, brands: $brands, subjectTypes: $subjectTypes, subjectId: $subjectId, startingAfter: $startingAfter) {
      id type seq subject { type id } data operation brand livemode createdAt
    }
  }
`;

const MAX_RECONNECTS = 5;

export interface StreamOptions {
  origin: string;
  apiKey: string;
  types?: string[];
  /** Brand ids or slugs; subject types; one subject id (src/domain/event/filter.ts). */
  brands?: string[];
  subjectTypes?: string[];
  subjectId?: string;
  startingAfter?: string;
  /** Called when the stream (re)connects. */
  onConnected?: () => void;
}

export interface EventStream {
  /** Resolves when the stream ends: rejects on an error, resolves after close(). */
  done: Promise<void>;
  close(): void;
}

export function streamEvents(opts: StreamOptions, onEvent: (e: WireEvent) => void | Promise<void>): EventStream {
  let client: Client | undefined;
  let closed = false;
  let last = opts.startingAfter;
  let finish!: () => void;
  let fail!: (e: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  // Events are handled one at a time, in seq order, even when onEvent is async.
  let chain = Promise.resolve();

  const connect = (attempt: number) => {
    client = createClient({
      url: `${opts.origin.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${opts.apiKey}` },
      on: { connected: () => opts.onConnected?.() },
    });
    client.subscribe<{ events: Record<string, any> }>(
      {
        query: SUBSCRIPTION,
        variables: {
          types: opts.types?.length ? opts.types : null,
          brands: opts.brands ?? null,
          subjectTypes: opts.subjectTypes ?? null,
          subjectId: opts.subjectId ?? null,
          startingAfter: last ?? null,
        },
      },
      {
        next: (msg) => {
          if (msg.errors?.length) return fail(graphQLError(msg.errors));
          const e = msg.data?.events;
          if (!e) return;
          last = String(e.seq);
          const wire: WireEvent = {
            id: e.id,
            object: 'event',
            type: e.type,
            seq: e.seq,
            subject: e.subject,
            data: e.data,
            operation: e.operation ?? null,
            brand: e.brand ?? null,
            livemode: e.livemode,
            created_at: e.createdAt,
          };
          chain = chain.then(() => onEvent(wire)).catch(fail);
        },
        error: (err) => {
          if (closed) return;
          if (Array.isArray(err) && !RESUMABLE.has(err[0]?.extensions?.code)) return fail(graphQLError(err));
          void client?.dispose();
          if (attempt >= MAX_RECONNECTS)
            return fail(
              new PlatformError({
                code: 'connection_error',
                message: `The event stream at ${opts.origin}/graphql is unreachable: ${describe(err)}`,
              }),
            );
          setTimeout(() => !closed && connect(attempt + 1), Math.min(250 * 2 ** attempt, 5000));
        },
        complete: () => {
          if (!closed) fail(new PlatformError({ code: 'stream_ended', message: 'The server ended the event stream' }));
        },
      },
    );
  };
  connect(0);

  return {
    done,
    close() {
      closed = true;
      void client?.dispose();
      chain.then(finish, fail);
    },
  };
}

/** The camelCased event, as the client library gives it from the feed and from webhooks.verify. */
export function clientEvent(e: WireEvent): PlatformEvent {
  return toCamelCase<PlatformEvent>(e);
}

function graphQLError(errors: readonly { message: string; extensions?: Record<string, any> }[]): PlatformError {
  const first = errors[0]!;
  const x = first.extensions ?? {};
  return new PlatformError({
    code: typeof x.code === 'string' ? x.code : 'graphql_error',
    message: first.message,
    param: x.param ?? null,
    requestId: x.request_id ?? null,
  });
}

function describe(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && 'reason' in err)
    return `closed with ${(err as { code: number }).code} ${(err as { reason: string }).reason}`.trim();
  return (err as Error)?.message ?? String(err);
}
