import type { IncomingMessage } from 'node:http';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import type { Context } from 'graphql-ws';
import { getOperationAST, GraphQLError, type ExecutionArgs } from 'graphql';
import { isAsyncIterable } from 'graphql-yoga';
import type { WebSocket } from 'ws';
import { isDomainError } from '../domain/errors.ts';
import { crossOriginRefusal } from '../http/cors.ts';
import type { ApiServer } from '../http/server-limits.ts';
import { newRequestId } from '../domain/id.ts';
import type { ClientKey } from '../domain/token/failed-authentication.ts';
import type { ClientAddresses } from '../http/client-address.ts';
import { toGraphQLError, withRequestId } from './errors.ts';
import type { GraphQLContext, LiveDelivery } from './context.ts';
import { liveView } from './live.ts';
import { maskGraphQLError, type Yoga } from './yoga.ts';

/**
 * graphql-ws on the same path as HTTP GraphQL. Operations go through
 * `yoga.getEnveloped`, so WebSocket and HTTP share one pipeline and one
 * context factory (auth from `connectionParams.authorization`).
 */
type EnvelopedRoot = {
  execute: (a: ExecutionArgs) => unknown;
  subscribe: (a: ExecutionArgs) => unknown;
  hold: (source: AsyncIterator<never>) => HeldOperation;
};
type WsContext = Context<Record<string, unknown> | undefined, { socket: WebSocket; request: unknown }>;

/**
 * What graphql-ws holds for a running events subscription that took its
 * multiplexed delivery (the stream writes its frames): the socket's context,
 * the operation id and the stream's subscription. graphql-ws's loop awaits a
 * `next()` that never settles and holds nothing else: that promise, its
 * loop's frame and the message it was handling are unreachable from anything
 * but each other, so they are collected while the subscription runs. The end
 * is sent from here: the error (through `failed`, graphql-ws's onError
 * hook, as its loop would have) or `complete`; a `complete` from the client,
 * or the socket closing, returns it as graphql-ws returns any operation.
 */
class HeldOperation {
  constructor(
    private readonly ctx: WsContext,
    private readonly id: string,
    private readonly source: AsyncIterator<never>,
    private readonly failed: (ctx: WsContext, id: string, errors: readonly GraphQLError[]) => unknown,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<never> {
    this.source.next().then(
      () => this.end({ id: this.id, type: 'complete' }),
      (err: unknown) => {
        if (this.ctx.subscriptions[this.id] !== this) return;
        const error = err instanceof Error ? err : new Error(String(err));
        this.end({
          id: this.id,
          type: 'error',
          payload: this.failed(this.ctx, this.id, [new GraphQLError(error.message, { originalError: error })]),
        });
      },
    );
    return new Promise<never>(() => {});
  }

  return(): Promise<IteratorResult<never>> {
    requestIds(this.ctx).delete(this.id);
    return this.source.return!();
  }

  private end(message: object): void {
    if (this.ctx.subscriptions[this.id] !== this) return; // completed by the client, or the socket closed
    delete this.ctx.subscriptions[this.id];
    requestIds(this.ctx).delete(this.id);
    const socket = this.ctx.extra.socket;
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  }
}

/**
 * Close codes when a socket's credentials stop working mid-stream (4401 like
 * HTTP 401, 4503 like 503 for the kill switch); clients resume with a valid
 * token and `startingAfter`.
 */
const ACCESS_ENDED_CLOSE: Record<string, number> = { invalid_token: 4401, developer_access_paused: 4503 };
const closing = new WeakSet<object>();

const operationRequestIds = new WeakMap<object, Map<string, string>>();
function requestIds(ctx: object): Map<string, string> {
  let ids = operationRequestIds.get(ctx);
  if (!ids) operationRequestIds.set(ctx, (ids = new Map()));
  return ids;
}

/**
 * A graphql-ws subscription's events go around graphql-ws's per-operation
 * loop: the stream renders each one once per group (src/graphql/live.ts) and
 * this sink wraps the shared payload in the operation's `next` frame. The
 * socket is corked across the frames of one pull, so they leave in one
 * write. The frame's write callback is the backpressure signal.
 */
class WsFrames {
  constructor(
    private readonly socket: WebSocket,
    /** `{"id":<op id>,"type":"next","payload":` */
    private readonly prefix: Buffer,
  ) {}

  write(payload: string, _seq: string, done: () => void): void {
    const socket = this.socket;
    if (socket.readyState !== socket.OPEN) {
      done();
      return;
    }
    cork(socket);
    socket.send(Buffer.concat([this.prefix, encoded(payload), SUFFIX]), { binary: false }, done);
  }
}

const SUFFIX = Buffer.from('}');
/** The group's payload is encoded once: its members are written one after the other with the same string. */
let lastPayload: string | undefined;
let lastEncoded: Buffer = Buffer.alloc(0);
function encoded(payload: string): Buffer {
  if (payload !== lastPayload) {
    lastEncoded = Buffer.from(payload);
    lastPayload = payload;
  }
  return lastEncoded;
}

const corked = new Set<{ cork(): void; uncork(): void }>();
function cork(socket: WebSocket): void {
  const raw = (socket as unknown as { _socket?: { cork(): void; uncork(): void } })._socket;
  if (!raw || corked.has(raw)) return;
  raw.cork();
  if (corked.size === 0) process.nextTick(uncorkAll);
  corked.add(raw);
}
function uncorkAll(): void {
  for (const raw of corked) raw.uncork();
  corked.clear();
}

function liveFrames(socket: WebSocket, id: string, query: string, args: Omit<ExecutionArgs, 'rootValue'>): LiveDelivery {
  const { gate, grant } = args.contextValue as GraphQLContext;
  return {
    view: liveView(query, args),
    sink: new WsFrames(socket, Buffer.from(`{"id":${JSON.stringify(id)},"type":"next","payload":`)),
    until: (end) => gate.streams.watch(grant, end),
  };
}

export function attachGraphQLWebSocket(
  http: ApiServer,
  yoga: Yoga,
  addresses: ClientAddresses,
  opts: { publicOrigin?: string; path?: string } = {},
) {
  // Upgrades come through the server's admission (src/http/server-limits.ts): an upgrade over the stream budget
  // or its address's share is answered 503 there and never reaches `ws`.
  const wss = new WebSocketServer({
    noServer: true,
    path: opts.path ?? '/graphql',
    // Same-origin (src/http/cors.ts): a browser on another site never opens a stream with a key it holds; the
    // handshake is refused 403 before the upgrade. Clients without `Origin` (servers, the CLI) are not browsers.
    verifyClient: ({ req }, done) => {
      const refused = crossOriginRefusal(req, opts.publicOrigin);
      if (refused) done(false, 403, refused.message, { 'Content-Type': 'text/plain; charset=utf-8' });
      else done(true);
    },
  });
  http.onUpgrade((req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
  let mask: ReturnType<typeof maskGraphQLError> | undefined;
  const disposable = useServer(
    {
      execute: (args) => (args.rootValue as EnvelopedRoot).execute(args) as never,
      subscribe: async (args) => {
        const context = args.contextValue as GraphQLContext;
        const root = args.rootValue as EnvelopedRoot;
        const result = await root.subscribe(args);
        const source = context.live?.source;
        // graphql-ws keeps these arguments (and the message) for as long as the operation lasts: let go of the
        // pipeline, the document and the context once the subscription runs (idle memory per subscriber).
        args.rootValue = args.contextValue = args.document = args.variableValues = undefined as never;
        context.live = undefined;
        if (!source || !isAsyncIterable(result)) return result as never;
        // The events subscription took its multiplexed delivery: its events never pass through the pipeline's
        // iterators, so graphql-ws holds the stream's own subscription instead, which watches its access itself
        // (the pipeline's chain, its closures and the context are dropped, never returned: that would end the
        // source). The error that ends it is masked in onError, as the pipeline would have.
        mask ??= maskGraphQLError(context.deps.log, context.deps.db);
        return root.hold(source) as never;
      },
      onConnect: (ctx) => {
        // The upgrade request (headers, streams' state) is not read after the handshake: credentials come in
        // connectionParams. graphql-ws would keep it for the socket's life.
        // Its client's address key is kept instead: failed authentications spend from that address's bucket.
        const extra = ctx.extra as { request?: IncomingMessage; client?: ClientKey };
        const key = extra.request ? addresses.requestKey(extra.request) : 'unknown';
        extra.client = () => key;
        extra.request = undefined;
      },
      onSubscribe: async (ctx, id, params) => {
        // One request id per operation, in its context (and logs) and on every error it gets.
        const requestId = newRequestId();
        requestIds(ctx).set(id, requestId);
        const { schema, execute, subscribe, contextFactory, parse, validate } = yoga.getEnveloped({
          ...ctx,
          socket: ctx.extra.socket,
          params,
          requestId,
          client: (ctx.extra as { client?: ClientKey }).client,
        });
        // The limits (src/graphql/limits.ts) refuse a document by throwing from parse or validate.
        let document;
        let errors: readonly GraphQLError[];
        try {
          document = parse(params.query);
          errors = validate(schema, document);
        } catch (e) {
          return [isDomainError(e) ? toGraphQLError(e, requestId) : withRequestId(e as GraphQLError, requestId)];
        }
        if (errors.length) return errors.map((e) => withRequestId(e, requestId));
        let contextValue;
        try {
          contextValue = await contextFactory();
        } catch (e) {
          return [withRequestId(e as GraphQLError, requestId)];
        }
        const args = { schema, operationName: params.operationName, document, variableValues: params.variables, contextValue };
        // A subscription's events are rendered once per group of alike subscribers and written straight to the socket.
        if (getOperationAST(document, params.operationName)?.operation === 'subscription') {
          (contextValue as unknown as GraphQLContext).live = liveFrames(ctx.extra.socket, id, params.query, args);
        }
        const hold = (source: AsyncIterator<never>) => new HeldOperation(ctx as WsContext, id, source, failed);
        return { ...args, rootValue: { execute, subscribe, hold } };
      },
      onError: (ctx, id, _payload, errors) => failed(ctx as WsContext, id, errors),
      onComplete: (ctx, id) => {
        requestIds(ctx).delete(id);
      },
    },
    wss,
  );
  /** graphql-ws's onError: the error frame's payload of an operation that failed (also sent by HeldOperation). */
  function failed(ctx: WsContext, id: string, errors: readonly GraphQLError[]) {
    const requestId = requestIds(ctx).get(id) ?? 'unknown';
    requestIds(ctx).delete(id); // an error ends the operation
    // An error that ended a subscription held without the pipeline (see subscribe) is masked here, as the
    // pipeline's masking would have: graphql-ws wrapped it as it was thrown.
    const masked = errors.map((e) =>
      e.originalError && !(e.originalError instanceof GraphQLError) && mask
        ? (mask(e.originalError, 'Unexpected error.') as GraphQLError)
        : e,
    );
    const stamped = masked.map((e) => withRequestId(e, requestId).toJSON());
    // Access ended (src/graphql/stream-authority.ts): every subscription of the socket shares its credentials
    // and gets its error in this same turn; the socket closes after them, with the code for the reason.
    const code = ACCESS_ENDED_CLOSE[String(stamped[0]?.extensions?.code)];
    if (code && !closing.has(ctx.extra.socket)) {
      closing.add(ctx.extra.socket);
      setImmediate(() => ctx.extra.socket.close(code, String(stamped[0]!.extensions!.code)));
    }
    return stamped;
  }
  return {
    /**
     * Shutdown: every client gets close code 1001 (Going away), which
     * graphql-ws clients treat as retryable (resume with startingAfter), and
     * closing a socket returns its operations' iterators, releasing their
     * listeners. Clients that do not finish the close handshake within
     * `graceMs` are cut off, so stopping never waits on a peer.
     */
    close: async (graceMs = 1000) => {
      const disposed = Promise.resolve(disposable.dispose()); // resolves once every socket is gone
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        disposed.then(() => false),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
      ]);
      clearTimeout(timer);
      if (late) for (const client of wss.clients) client.terminate();
      await disposed;
    },
  };
}
