import type { Operation, Prisma } from '../../db/generated/client.ts';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { LIVE_STATUSES, settleOperation, type OperationError, type Settlement, type WaitingReason } from './operation.ts';

/**
 * How an operation moves. A worker CLAIMS one due operation by taking its
 * lease (`FOR UPDATE SKIP LOCKED`, so N processes never claim the same row;
 * embedded PGlite runs transactions one at a time anyway), runs its kind's
 * handler, and every write the handler makes goes through `commit`, which
 * first re-checks in the same transaction that this worker still holds a
 * live lease. A worker that dies leaves the lease to expire and the next
 * claim resumes the operation (a new attempt); a worker whose lease was
 * taken over can no longer commit. So an operation is never run twice at
 * once and never lost.
 *
 * Due means: pending with `run_after` passed (new, or retrying after
 * backoff); waiting with `run_after` passed (woken by the domain event that
 * clears its blocker, or by the periodic recheck that backs those up);
 * running with an expired lease.
 */
export type StepOutcome =
  | ({ status: Settlement['status'] } & Omit<Settlement, 'status'>)
  | { status: 'waiting'; reason: WaitingReason; progress?: Record<string, unknown> }
  /** Keep the lease and run the next step at once. */
  | { status: 'continue'; progress?: Record<string, unknown> }
  /** A transient failure: back off and try again (a new attempt). */
  | { status: 'retry'; error: OperationError };

export interface StepContext {
  deps: Deps;
  op: Operation;
  /** Runs `fn` in a transaction fenced by this worker's lease and applies the outcome it returns in that same transaction. */
  commit(fn: (tx: Tx) => Promise<StepOutcome>): Promise<StepOutcome>;
}

export interface OperationHandler {
  kind: string;
  step(ctx: StepContext): Promise<StepOutcome>;
  /** What a cancel requested against this operation does; by default it settles `canceled`. */
  cancel?(ctx: StepContext): Promise<StepOutcome>;
}

export class LeaseLost extends Error {}

/** Exponential backoff without jitter (deterministic under an injected clock): base, 2×base, 4×base... capped. */
export function retryDelayMs(deps: Deps, attempt: number): number {
  const { retryBaseMs, retryMaxMs } = deps.config.operations;
  return Math.min(retryBaseMs * 2 ** Math.max(0, attempt - 1), retryMaxMs);
}

/** Claims the most overdue operation for `owner`, or undefined when none is due. */
export async function claimOperation(deps: Deps, owner: string): Promise<Operation | undefined> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.operations.leaseMs);
  const rows = await deps.db.transaction(
    (tx) => tx.$queryRaw<{ id: string }[]>`
      UPDATE "operation" o SET
        lease_owner = ${owner}, lease_expires_at = ${leaseUntil}, updated_at = ${now},
        status = CASE WHEN o.status = 'waiting' THEN 'waiting' ELSE 'running' END,
        attempts = CASE WHEN o.status = 'waiting' THEN o.attempts ELSE o.attempts + 1 END
      WHERE o.id = (
        SELECT id FROM "operation"
        WHERE (status IN ('pending', 'waiting') AND run_after <= ${now} AND (lease_expires_at IS NULL OR lease_expires_at < ${now}))
           OR (status = 'running' AND lease_expires_at < ${now})
        ORDER BY run_after, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED)
      RETURNING o.id`,
  );
  if (!rows[0]) return undefined;
  const op = await deps.db.prisma.operation.findUnique({ where: { id: rows[0].id } });
  if (op) deps.operations?.changed(op.id);
  return op ?? undefined;
}

async function applyOutcome(deps: Deps, tx: Tx, op: Operation, out: StepOutcome): Promise<void> {
  const now = deps.clock.now();
  const ops = deps.config.operations;
  const progress = 'progress' in out && out.progress ? { progress: out.progress as Prisma.InputJsonObject } : {};
  switch (out.status) {
    case 'continue':
      await tx.operation.update({
        where: { id: op.id },
        data: { status: 'running', waitingReason: null, ...progress, leaseExpiresAt: new Date(now.getTime() + ops.leaseMs), updatedAt: now },
      });
      break;
    case 'waiting':
      await tx.operation.update({
        where: { id: op.id },
        data: {
          status: 'waiting',
          waitingReason: out.reason,
          ...progress,
          runAfter: new Date(now.getTime() + ops.recheckMs),
          leaseOwner: null,
          leaseExpiresAt: null,
          updatedAt: now,
        },
      });
      break;
    case 'retry':
      if (op.attempts >= op.maxAttempts) {
        await settleOperation(deps, tx, op.id, { status: 'failed', error: { ...out.error, attempts: op.attempts } });
        break;
      }
      await tx.operation.update({
        where: { id: op.id },
        data: {
          status: 'pending',
          waitingReason: null,
          progress: { ...(op.progress as object), last_error: out.error } as Prisma.InputJsonObject,
          runAfter: new Date(now.getTime() + retryDelayMs(deps, op.attempts)),
          leaseOwner: null,
          leaseExpiresAt: null,
          updatedAt: now,
        },
      });
      break;
    default: {
      await settleOperation(deps, tx, op.id, out);
    }
  }
  deps.db.afterCommit(tx, () => deps.operations?.changed(op.id));
}

/**
 * Runs one claimed operation until it settles, waits, backs off or loses its
 * lease. The lease is renewed while a step is in flight, so a slow provider
 * call does not hand the operation to another worker.
 */
export async function runClaimed(deps: Deps, handlers: ReadonlyMap<string, OperationHandler>, claimed: Operation, owner: string): Promise<void> {
  let op = claimed;
  const ops = deps.config.operations;
  const heartbeat = setInterval(() => {
    void deps.db.prisma.operation
      .updateMany({ where: { id: op.id, leaseOwner: owner, status: { in: [...LIVE_STATUSES] } }, data: { leaseExpiresAt: new Date(deps.clock.now().getTime() + ops.leaseMs) } })
      .catch(() => {});
  }, Math.max(50, Math.floor(ops.leaseMs / 3)));
  heartbeat.unref();
  try {
    for (let steps = 0; steps < 100; steps++) {
      const handler = handlers.get(op.kind);
      const ctx: StepContext = {
        deps,
        op,
        commit: (fn) =>
          deps.db.transaction(async (tx) => {
            const fence = await tx.operation.updateMany({
              where: { id: op.id, leaseOwner: owner, status: { in: [...LIVE_STATUSES] } },
              data: { updatedAt: deps.clock.now() },
            });
            if (!fence.count) throw new LeaseLost(op.id);
            const fresh = await tx.operation.findUniqueOrThrow({ where: { id: op.id } });
            ctx.op = fresh;
            const out = await fn(tx);
            await applyOutcome(deps, tx, fresh, out);
            return out;
          }),
      };
      let out: StepOutcome;
      if (!handler) {
        out = await ctx.commit(async () => ({ status: 'failed', error: { code: 'unknown_operation_kind', message: `No handler for ${op.kind}` } }));
      } else if (op.cancelRequestedBy) {
        out = await (handler.cancel ? handler.cancel(ctx) : ctx.commit(async () => ({ status: 'canceled' })));
      } else {
        out = await handler.step(ctx);
      }
      if (out.status !== 'continue') return;
      op = await deps.db.prisma.operation.findUniqueOrThrow({ where: { id: op.id } });
    }
  } catch (e) {
    if (e instanceof LeaseLost) {
      deps.log.warn({ operation: op.id }, 'operation lease lost; another worker owns it now');
      return;
    }
    // An unexpected error is transient until attempts run out; the lease is given back with a backoff.
    deps.log.error({ err: e, operation: op.id }, 'operation step failed');
    await deps.db
      .transaction(async (tx) => {
        const fresh = await tx.operation.findFirst({ where: { id: op.id, leaseOwner: owner, status: { in: [...LIVE_STATUSES] } } });
        if (fresh) await applyOutcome(deps, tx, fresh, { status: 'retry', error: { code: 'internal_error', message: 'The operation hit an internal error and will be retried' } });
      })
      .catch((err) => deps.log.error({ err, operation: op.id }, 'could not release a failed operation'));
  } finally {
    clearInterval(heartbeat);
  }
}
