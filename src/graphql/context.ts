import type { Deps } from '../domain/context.ts';
import type { KillSwitch } from '../domain/operator/kill-switch.ts';
import type { SurfaceBCaller } from '../domain/platform/request-auth.ts';

/** Per-operation GraphQL context; built by the same pipeline as Surface B REST. */
export interface GraphQLContext {
  deps: Deps;
  killSwitch: KillSwitch;
  caller: SurfaceBCaller;
  requestId: string;
  /** `Idempotency-Key` header of the HTTP request, for single-mutation operations. */
  idempotencyKey?: string;
}
