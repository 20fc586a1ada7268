import type { Deps } from '../domain/context.ts';
import type { EventStream, StreamSink, StreamUntil, StreamView } from '../runtime/event-stream.ts';
import type { SurfaceBCaller } from '../domain/platform/request-auth.ts';
import type { PlatformGate } from '../runtime/platform-gate.ts';
import type { StreamGrant } from '../runtime/stream-authority.ts';

/** Per-operation GraphQL context; built by the same pipeline as Surface B REST. */
export interface GraphQLContext {
  deps: Deps;
  gate: PlatformGate;
  stream: EventStream;
  caller: SurfaceBCaller;
  /** What authorized the operation; a subscription ends when it would no longer (src/graphql/stream-authority.ts). */
  grant: StreamGrant;
  requestId: string;
  /** `Last-Event-ID` of an SSE request: resume the events subscription after that seq. */
  lastEventId?: string;
  /** The seq of the event the events subscription resolved last (the SSE `id:`, src/graphql/sse.ts). */
  streamCursor?: { seq?: string };
  /** A graphql-ws subscription's multiplexed delivery (src/graphql/live.ts): the events subscription passes it to the stream. */
  live?: LiveDelivery;
  /** `Idempotency-Key` header of the HTTP request, for single-mutation operations. */
  idempotencyKey?: string;
  /** A keyed mutation replayed its stored answer: the HTTP response carries `Idempotent-Replayed: true` (src/graphql/koa.ts). */
  markReplayed(): void;
}

/** A graphql-ws subscription's multiplexed delivery (src/graphql/live.ts builds its view, src/graphql/ws.ts its sink). */
export interface LiveDelivery {
  view: StreamView<string>;
  sink: StreamSink<string>;
  /** Ends the subscription when its access ends (src/runtime/stream-authority.ts), without a wrapper. */
  until: StreamUntil;
  /** The subscription the events resolver made with this delivery: the transport holds it itself (src/graphql/ws.ts). */
  source?: AsyncIterator<never>;
}
