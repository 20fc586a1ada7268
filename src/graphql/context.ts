import type { Deps } from '../domain/context.ts';
import type { EventStream } from '../domain/event/stream.ts';
import type { PlatformGate, SurfaceBCaller } from '../domain/platform/request-auth.ts';

/** Per-operation GraphQL context; built by the same pipeline as Surface B REST. */
export interface GraphQLContext {
  deps: Deps;
  gate: PlatformGate;
  stream: EventStream;
  caller: SurfaceBCaller;
  requestId: string;
  /** `Idempotency-Key` header of the HTTP request, for single-mutation operations. */
  idempotencyKey?: string;
}
