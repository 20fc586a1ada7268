import type { BatchSend } from '../../db/sql-port.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import {
  fingerprint,
  runIdempotent,
  runIdempotentBatched,
  validateIdempotencyKey,
  type BatchedResult,
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

/**
 * The same for a hot-path mutation written on the batched SQL port
 * (src/db/sql-port.ts). A provisional caller (request-auth.ts) commits only
 * if its admission held; otherwise the transaction rolls back, the caller is
 * confirmed outside it (a refusal is thrown: nothing was changed) and the
 * mutation runs once more.
 */
export async function runBatchedMutation(
  deps: Deps,
  caller: SurfaceBCaller,
  req: MutationRequest,
  effect: (send: BatchSend) => Promise<BatchedResult>,
): Promise<StoredResponse & { replayed: boolean }> {
  const key = idempotency(caller, req);
  const held = caller.admissionHeld;
  if (!held || !caller.confirm) return runIdempotentBatched(deps, key, effect);
  try {
    return await runIdempotentBatched(deps, key, effect, async () => {
      if (!(await held())) throw admissionChanged;
    });
  } catch (e) {
    if (e !== admissionChanged) throw e;
    await caller.confirm();
    return runIdempotentBatched(deps, key, effect);
  }
}

const admissionChanged = new Error('credentials changed since the request was admitted');

/** The request's key in the caller's organization, fingerprinted by the mutation's name, target and raw input (also used by src/domain/action/action.ts). */
export function idempotency(caller: SurfaceBCaller, req: MutationRequest): IdempotencyRequest | undefined {
  const key = validateIdempotencyKey(req.idempotencyKey);
  return key
    ? { namespace: `b:${caller.organization.id}`, key, fingerprint: fingerprint(req.name, req.target ?? null, req.input ?? null) }
    : undefined;
}
