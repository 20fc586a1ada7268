import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import type { App } from '../../src/app.ts';
import { appendEvent } from '../../src/domain/event/event.ts';
import type { Tx } from '../../src/db/database.ts';

/**
 * Live event stream helpers: the real graphql-ws client over `ws`, an SSE
 * reader over fetch, and event appenders. Every wait is bounded.
 */

export const EVENTS_SUBSCRIPTION = /* GraphQL */ `
  subscription Events($types: [String!], $startingAfter: String) {
    events(types: $types, startingAfter: $startingAfter) { id type seq subject { type id } data livemode createdAt }
  }
`;

export interface StreamedEvent {
  id: string;
  type: string;
  seq: number;
  subject: { type: string; id: string };
  data: any;
}

export interface GraphQLErrorLike {
  message: string;
  extensions?: Record<string, any>;
}

export function wsUrl(t: { origin: string }): string {
  return `${t.origin.replace(/^http/, 'ws')}/graphql`;
}

/** A graphql-ws client; `authorization` null sends no connection params at all. */
export function wsClient(t: { origin: string }, authorization: string | null, extra: Record<string, unknown> = {}): Client {
  return createClient({
    url: wsUrl(t),
    webSocketImpl: WebSocket,
    lazy: true,
    retryAttempts: 0,
    connectionParams: authorization === null ? undefined : { authorization, ...extra },
  });
}

/** Bounded wait: resolves when `cond()` holds, rejects with `what` after `ms`. */
export async function waitUntil(cond: () => boolean, what: string | (() => string), ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

/** One subscription, collecting what arrives. */
export class Subscription {
  readonly events: StreamedEvent[] = [];
  readonly errors: GraphQLErrorLike[] = [];
  completed = false;
  private unsubscribe: () => void;

  constructor(client: Client, variables: { types?: string[]; startingAfter?: string } = {}) {
    this.unsubscribe = client.subscribe<{ events: StreamedEvent }>(
      { query: EVENTS_SUBSCRIPTION, variables },
      {
        next: (r) => {
          if (r.errors?.length) this.errors.push(...(r.errors as GraphQLErrorLike[]));
          if (r.data?.events) this.events.push(r.data.events);
        },
        error: (err) => {
          if (Array.isArray(err)) this.errors.push(...err);
          else this.errors.push({ message: String((err as { reason?: string })?.reason ?? err), extensions: { close: err } });
          this.completed = true;
        },
        complete: () => {
          this.completed = true;
        },
      },
    );
  }

  get seqs(): number[] {
    return this.events.map((e) => e.seq);
  }

  waitForCount(n: number, ms = 15_000): Promise<void> {
    return waitUntil(
      () => this.events.length >= n || this.errors.length > 0,
      () => `${n} events (got ${JSON.stringify(this.seqs)})`,
      ms,
    ).then(() => {
      if (this.errors.length && this.events.length < n) throw new Error(`subscription errored: ${JSON.stringify(this.errors)}`);
    });
  }

  /** Resolves with the first error (or rejects when none arrives in time). */
  async firstError(ms = 15_000): Promise<GraphQLErrorLike> {
    await waitUntil(() => this.errors.length > 0, 'a subscription error', ms);
    return this.errors[0]!;
  }

  dispose(): void {
    this.unsubscribe();
  }
}

/** Subscribes and waits until the server has registered the live listener. */
export async function subscribeLive(
  t: { app: App },
  client: Client,
  variables: { types?: string[]; startingAfter?: string } = {},
  expectedListeners = t.app.stream.subscriberCount + 1,
): Promise<Subscription> {
  const sub = new Subscription(client, variables);
  await waitUntil(() => t.app.stream.subscriberCount >= expectedListeners || sub.errors.length > 0, 'the server-side listener');
  if (sub.errors.length) throw new Error(`subscription errored: ${JSON.stringify(sub.errors)}`);
  return sub;
}

export interface AppendSpec {
  type?: string;
  subjectId?: string;
  data?: Record<string, unknown>;
}

/**
 * Appends events through the domain (one transaction each, or all in one with
 * `oneTransaction`: hundreds of transactions take tens of seconds on a loaded
 * machine), sequenced on return; returns their ids.
 */
export async function appendEvents(
  app: App,
  organizationId: string,
  specs: AppendSpec[],
  opts: { oneTransaction?: boolean } = {},
): Promise<string[]> {
  const ids: string[] = [];
  const append = (tx: Tx, s: AppendSpec) =>
    appendEvent(app.deps, tx, {
      test: true,
      organizationId,
      type: s.type ?? 'operation.succeeded',
      subject: { type: 'operation', id: s.subjectId ?? `op_test_${ids.length}` },
      data: s.data ?? {},
    });
  if (opts.oneTransaction) {
    await app.deps.db.transaction(async (tx) => {
      for (const s of specs) ids.push(await append(tx, s));
    });
  } else {
    for (const s of specs) ids.push(await app.deps.db.transaction((tx) => append(tx, s)));
  }
  await app.sequencer.flush();
  return ids;
}

/** An SSE subscription over POST /graphql (Accept: text/event-stream), read from the fetch body. */
export class SseSubscription {
  readonly events: StreamedEvent[] = [];
  readonly errors: GraphQLErrorLike[] = [];
  /** The SSE event names received, in order (`next`, `complete`). */
  readonly frames: string[] = [];
  status = 0;
  contentType = '';
  /** The response's Retry-After (a refusal's). */
  retryAfter: string | null = null;
  ended = false;
  private readonly abort = new AbortController();
  readonly done: Promise<void>;

  /** The `id:` of each `next` (the event's seq). */
  readonly ids: (string | undefined)[] = [];
  private readonly onEvent: (e: StreamedEvent) => void;

  /** `opts.onEvent` sees each event as it arrives (the benchmarks time receipt with it). */
  constructor(
    origin: string,
    token: string | null,
    variables: { types?: string[]; startingAfter?: string } = {},
    opts: { query?: string; headers?: Record<string, string>; onEvent?: (e: StreamedEvent) => void } = {},
  ) {
    this.onEvent = opts.onEvent ?? (() => {});
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'text/event-stream', ...opts.headers };
    if (token) headers.authorization = `Bearer ${token}`;
    this.done = (async () => {
      try {
        const res = await fetch(`${origin}/graphql`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ query: opts.query ?? EVENTS_SUBSCRIPTION, variables }),
          signal: this.abort.signal,
        });
        this.status = res.status;
        this.contentType = res.headers.get('content-type') ?? '';
        this.retryAfter = res.headers.get('retry-after');
        const reader = res.body!.getReader();
        const decoder = new TextDecoder();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += decoder.decode(value, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            this.onMessage(buf.slice(0, i));
            buf = buf.slice(i + 2);
          }
        }
      } catch (err) {
        if ((err as Error).name !== 'AbortError') this.errors.push({ message: String(err) });
      } finally {
        this.ended = true;
      }
    })();
  }

  private onMessage(block: string) {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('id:')) id = line.slice(3).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length || event !== 'message') this.frames.push(event);
    if (event !== 'next' && event !== 'message') return;
    if (!data.length) return;
    this.ids.push(id);
    const r = JSON.parse(data.join('\n')) as { data?: { events?: StreamedEvent }; errors?: GraphQLErrorLike[] };
    if (r.errors?.length) this.errors.push(...r.errors);
    if (r.data?.events) {
      this.events.push(r.data.events);
      this.onEvent(r.data.events);
    }
  }

  get seqs(): number[] {
    return this.events.map((e) => e.seq);
  }

  close(): Promise<void> {
    this.abort.abort();
    return withTimeout(this.done, 3000, 'SSE reader to end');
  }
}

/**
 * An in-process subscriber of the organization's live stream whose sink records each event's seq, once it is
 * registered, and the stream's pulls counted from then on (`EventStream.pulls`). `close` ends it.
 */
export async function countingSubscriber(app: App, organizationId: string, key: string) {
  const got: string[] = [];
  const sub = app.stream.subscribe(organizationId, {
    view: { key, render: (e) => String(e.seq) },
    sink: { write: (p, _seq, done) => (got.push(p), done()) },
  });
  const end = sub.next();
  await waitUntil(() => app.stream.subscriberCount === 1, 'the subscriber');
  const { pulls } = app.stream;
  const [read0, inHand0] = [pulls.read, pulls.inHand];
  return {
    got,
    /** Pulls since the subscriber joined: the stream's own reads and the batches its sequencer read for it. */
    pulls: () => pulls.read - read0 + pulls.inHand - inHand0,
    /** The stream's own reads alone (round trips of its own). */
    reads: () => pulls.read - read0,
    close: async () => {
      await sub.return!();
      await end;
    },
  };
}
