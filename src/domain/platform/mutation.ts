import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import {
  fingerprint,
  runIdempotent,
  validateIdempotencyKey,
  type IdempotencyRequest,
  type StoredResponse,
} from '../idempotency/idempotency.ts';
import type { SurfaceBCaller } from './request-auth.ts';

/**
 * Every Surface B mutation, from REST or GraphQL, runs through here: the
 * idempotency record and the effect share one transaction, and the key is
 * fingerprinted by the mutation's name and its canonical input, so a key
 * replays the same way whichever transport sent it.
 */
export interface MutationRequest {
  /** Stable mutation name, e.g. `webhook_endpoints.create`. */
  name: string;
  /** The object the mutation addresses, if any (path id). */
  target?: string;
  input: unknown;
  idempotencyKey?: string;
}

export async function runMutation(
  deps: Deps,
  caller: SurfaceBCaller,
  req: MutationRequest,
  effect: (tx: Tx) => Promise<StoredResponse>,
): Promise<StoredResponse & { replayed: boolean }> {
  return runIdempotent(deps, idempotency(caller, req), effect);
}

/** The request's key in the caller's organization, fingerprinted by the mutation's name, target and raw input (also used by src/domain/action/action.ts). */
export function idempotency(caller: SurfaceBCaller, req: MutationRequest): IdempotencyRequest | undefined {
  const key = validateIdempotencyKey(req.idempotencyKey);
  return key
    ? { namespace: `b:${caller.organization.id}`, key, fingerprint: fingerprint(req.name, req.target ?? null, req.input ?? null) }
    : undefined;
}
