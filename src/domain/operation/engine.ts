import type { Operation } from '../../db/generated/client.ts';
import { queryEach, type Prisma, type Tx } from '../../db/database.ts';
import type { Deps, OperationSlot } from '../context.ts';
import { tracing } from '../../tracing.ts';
import { appendEvent, insertEvents, type NewEvent } from '../event/event.ts';
import {
  inlineSlots,
  operationTransition,
  settleStatement,
  settledRow,
  settledEvent,
  type OperationError,
  type Settlement,
  type WaitingReason,
} from './operation.ts';
import {
  assertFenceStatement,
  claimDueOperations,
  claimDueOperationsStatement,
  continueStatement,
  fenceOperation,
  fenceStatement,
  findLeasedOperation,
  isLeaseLost,
  operationById,
  renewLease,
  retryStatement,
  waitStatement,
  type Fenced,
  type SettleRow,
} from './store.ts';

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
  /** Parked until woken, or `until` (a time the handler knows something is due, e.g. a provider's decision), or the recheck. */
  | { status: 'waiting'; reason: WaitingReason; progress?: Record<string, unknown>; until?: Date }
  /** Keep the lease and run the next step at once. */
  | { status: 'continue'; progress?: Record<string, unknown> }
  /** A transient failure: back off and try again (a new attempt). */
  | { status: 'retry'; error: OperationError };

/** What a step commits on the batched SQL port: its outcome, its writes and events, and what to run after the commit. */
export interface BatchedStep {
  outcome: StepOutcome;
  statements?: Prisma.Sql[];
  events?: NewEvent[];
  afterCommit?: (() => void)[];
  /**
   * Reads for the parent a settling child hands on (its next step's reads), run after the settlement in the same
   * batch: the handed parent's first step gets their rows as `ctx.held.reads` and may commit in one batch.
   */
  handOn?: Prisma.Sql[];
}

export interface StepContext {
  deps: Deps;
  op: Operation;
  /** Rows handed to this run by the commit that made it (`holdFor`), first step only: what it need not read again. */
  held?: Record<string, unknown>;
  /** Runs `fn` in a transaction fenced by this worker's lease and applies the outcome it returns in that same transaction. */
  commit(fn: (tx: Tx) => Promise<StepOutcome>): Promise<StepOutcome>;
  /**
   * The same on the batched SQL port, in two round trips: the fence with `reads` (their rows go to `fn` with the
   * fresh operation), then `fn`'s writes, its events and the outcome with the COMMIT; with no reads, in one (the
   * fence, which then aborts the batch when the lease is lost, the writes and the COMMIT). For hot paths whose writes
   * do not depend on what a write returns. `take` gives operations it enqueues a local slot (NewOperation.slot); the
   * first is this run's own, since a commit that enqueues ends the run.
   */
  commitBatched(
    reads: Prisma.Sql[],
    fn: (op: Operation, rows: Record<string, unknown>[][], take: () => OperationSlot | undefined) => BatchedStep,
    /** The rows of `reads` already read for this run (`ctx.held.reads`, handed on by a settling child): one round trip. */
    held?: Record<string, unknown>[][],
  ): Promise<StepOutcome>;
}

export interface OperationHandler {
  kind: string;
  step(ctx: StepContext): Promise<StepOutcome>;
  /** What a cancel requested against this operation does; by default it settles `canceled`. */
  cancel?(ctx: StepContext): Promise<StepOutcome>;
}

export class LeaseLost extends Error {}

const heldRows = new WeakMap<Operation, Record<string, unknown>>();
/**
 * Hands `rows` to the run of `op` (a row enqueued under a local slot): its first step gets them as `ctx.held`
 * instead of reading them again. For rows the enqueuing transaction read and wrote, which nobody else may change
 * before the run starts.
 */
export function holdFor(op: Operation, rows: Record<string, unknown>): void {
  heldRows.set(op, rows);
}

/** Exponential backoff without jitter (deterministic under an injected clock): base, 2×base, 4×base... capped. */
export function retryDelayMs(deps: Deps, attempt: number): number {
  const { retryBaseMs, retryMaxMs } = deps.config.operations;
  return Math.min(retryBaseMs * 2 ** Math.max(0, attempt - 1), retryMaxMs);
}

/** Claims up to `limit` due operations for `owner` (most overdue first); each row's `leaseOwner` is its run's fence. */
export async function claimOperations(deps: Deps, owner: string, limit: number): Promise<Operation[]> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.operations.leaseMs);
  const ops = await claimDueOperations(deps.db.sql, owner, now, leaseUntil, limit);
  for (const op of ops) deps.operations?.changed(op.id);
  return ops;
}

/**
 * A step's outcome as statements for its transaction (the same for both commit paths): the row update or the
 * settlement, its event, and what to do after the commit given the statements' rows. For `continue`, `next` is the
 * index of the statement returning the row the next step runs on.
 */
interface OutcomePlan {
  statements: Prisma.Sql[];
  events: NewEvent[];
  next?: number;
  after: (rows: Record<string, unknown>[][], hold?: Record<string, unknown>) => void;
}

/** The status a step's outcome leaves the operation in. */
function resultingStatus(op: Operation, out: StepOutcome): string {
  if (out.status === 'continue') return 'running';
  if (out.status === 'retry') return op.attempts >= op.maxAttempts ? 'failed' : 'pending';
  return out.status;
}

/** A step's plan, whose commit also counts and logs the transition it makes (a step that keeps running is none). */
function planOutcome(deps: Deps, op: Operation, out: StepOutcome, take?: () => OperationSlot | undefined): OutcomePlan {
  const plan = planStep(deps, op, out, take);
  const to = resultingStatus(op, out);
  if (to === op.status) return plan;
  return {
    ...plan,
    after: (rows, hold) => {
      plan.after(rows, hold);
      operationTransition(deps, op, op.status, to);
    },
  };
}

function planStep(deps: Deps, op: Operation, out: StepOutcome, take?: () => OperationSlot | undefined): OutcomePlan {
  const now = deps.clock.now();
  const ops = deps.config.operations;
  const changed = () => deps.operations?.changed(op.id);
  const progress = 'progress' in out && out.progress ? JSON.stringify(out.progress) : null;
  const settle = (st: Settlement): OutcomePlan => {
    // The run's slot is handed on in the settling transaction: a child's to the parent it wakes (its next step runs
    // at once), on PostgreSQL any other's to the next due operation, claimed in the same batch, with no kick and no
    // claim round trip between. Embedded PGlite has no round trip to save, and there a claim made at once would
    // queue the next run's transactions ahead of requests on its one connection: the kick claims after pending I/O.
    const slot = take?.();
    const claim = slot && !op.parentOperationId && deps.db.kind === 'postgres';
    return {
      statements: [
        settleStatement(deps, op.id, st, now, op.parentOperationId ? slot?.owner : undefined),
        ...(claim ? [claimDueOperationsStatement(slot.owner, now, new Date(now.getTime() + ops.leaseMs), 1)] : []),
      ],
      events: [settledEvent(settledRow(op, st, now), st)],
      after: ([rows, claimed], hold) => {
        const settled = (rows ?? []) as SettleRow[];
        const handed = settled.find((r) => r.role === 'handed');
        const next = claim ? (claimed?.[0] as Operation | undefined) : undefined;
        if (handed && slot) {
          const { role: _, woken: __, notified: ___, ...parent } = handed;
          if (hold) holdFor(parent, hold);
          slot.run(parent);
        } else if (next && slot) {
          deps.operations?.changed(next.id);
          slot.run(next);
        }
        // The handed parent runs on this slot; anyone else it woke (a cancel or teardown targeting it) needs the
        // worker: this process ignores its own NOTIFY.
        if ((settled.find((r) => r.role === 'settled')?.woken ?? 0) > (handed ? 1 : 0)) deps.operations?.kick();
        changed();
      },
    };
  };
  switch (out.status) {
    case 'continue':
      return {
        statements: [continueStatement(op.id, progress, new Date(now.getTime() + ops.leaseMs), now)],
        events: [],
        next: 0,
        after: changed,
      };
    case 'waiting': {
      const recheck = now.getTime() + ops.recheckMs;
      const runAfter = new Date(out.until ? Math.min(out.until.getTime(), recheck) : recheck);
      return {
        statements: [waitStatement(op.id, out.reason, progress, runAfter, now)],
        events: [],
        // A known due time: this process looks then, not at the next poll.
        after: () => {
          if (out.until) deps.operations?.wakeAt(runAfter);
          changed();
        },
      };
    }
    case 'retry': {
      if (op.attempts >= op.maxAttempts) return settle({ status: 'failed', error: { ...out.error, attempts: op.attempts } });
      const runAfter = new Date(now.getTime() + retryDelayMs(deps, op.attempts));
      return {
        statements: [retryStatement(op.id, JSON.stringify({ ...(op.progress as object), last_error: out.error }), runAfter, now)],
        events: [],
        // This process knows when the retry is due: it looks then, not at the next poll.
        after: () => {
          deps.operations?.wakeAt(runAfter);
          changed();
        },
      };
    }
    default:
      return settle(out);
  }
}

/** Applies a step's outcome in its Prisma transaction; for `continue`, returns the row the next step runs on. */
async function applyOutcome(
  deps: Deps,
  tx: Tx,
  op: Operation,
  out: StepOutcome,
  take?: () => OperationSlot | undefined,
): Promise<Operation | undefined> {
  const plan = planOutcome(deps, op, out, take);
  const rows = await queryEach(tx, plan.statements);
  for (const e of plan.events) await appendEvent(deps, tx, e);
  deps.db.afterCommit(tx, () => plan.after(rows));
  return plan.next === undefined ? undefined : (rows[plan.next]![0] as unknown as Operation);
}

/** The run's row with what the fence read merged in (undefined: the lease is lost). */
const freshen = (op: Operation, fenced: Fenced | undefined): Operation | undefined => fenced && { ...op, ...fenced };

async function fence(deps: Deps, tx: Tx, op: Operation, owner: string): Promise<Operation | undefined> {
  return freshen(op, await fenceOperation(tx, op.id, owner, deps.clock.now()));
}

/**
 * Runs one claimed operation until it settles, waits, backs off or loses its
 * lease. The lease is renewed while a step is in flight, so a slow provider
 * call does not hand the operation to another worker.
 */
export async function runClaimed(deps: Deps, handlers: ReadonlyMap<string, OperationHandler>, claimed: Operation): Promise<void> {
  let op = claimed;
  const owner = claimed.leaseOwner!;
  const ops = deps.config.operations;
  const heartbeat = setInterval(
    () => {
      void renewLease(deps.db.prisma, op.id, owner, new Date(deps.clock.now().getTime() + ops.leaseMs)).catch(() => {});
    },
    Math.max(50, Math.floor(ops.leaseMs / 3)),
  );
  heartbeat.unref();
  let held = heldRows.get(claimed);
  try {
    for (let steps = 0; steps < 100; steps++) {
      const handler = handlers.get(op.kind);
      let next: Operation | undefined;
      const ctx: StepContext = {
        deps,
        op,
        held,
        commit: (fn) =>
          inlineSlots(
            deps,
            (take) =>
              deps.db.transaction(async (tx) => {
                const fresh = await fence(deps, tx, op, owner);
                if (!fresh) throw new LeaseLost(op.id);
                ctx.op = fresh;
                const out = await fn(tx);
                next = await applyOutcome(deps, tx, fresh, out, take);
                return out;
              }),
            true,
          ),
        commitBatched: (reads, fn, held) =>
          inlineSlots(
            deps,
            async (take) => {
              let after: () => void = () => {};
              const out = await deps.db.sql.transaction(async (send) => {
                // With reads, the fence and the reads are the first round trip; without (or read already), the fence rides in
                // the writes' batch.
                const oneTrip = !reads.length || !!held;
                let fresh: Operation | undefined = op;
                let read: Record<string, unknown>[][] = held ?? [];
                if (!oneTrip) {
                  const [fenced, ...rest] = await send([fenceStatement(op.id, owner, deps.clock.now()), ...reads]);
                  fresh = freshen(op, fenced![0] as unknown as Fenced | undefined);
                  if (!fresh) throw new LeaseLost(op.id);
                  ctx.op = fresh;
                  read = rest;
                }
                const step = fn(fresh, read, take);
                const plan = planOutcome(deps, fresh, step.outcome, take);
                const events = [...(step.events ?? []), ...plan.events];
                const handOn = op.parentOperationId ? (step.handOn ?? []) : [];
                const writes = [
                  ...(oneTrip ? [assertFenceStatement(op.id, owner, deps.clock.now())] : []),
                  ...(step.statements ?? []),
                  ...plan.statements,
                  ...handOn,
                ];
                let rows: Record<string, unknown>[][];
                try {
                  rows = await send([...writes, ...(events.length ? [insertEvents(deps, events)] : [])], { commit: true });
                } catch (e) {
                  throw isLeaseLost(e) ? new LeaseLost(op.id) : e;
                }
                if (oneTrip) {
                  const { fenced: _, ...f } = rows.shift()![0] as Fenced & { fenced: number };
                  ctx.op = freshen(op, f)!;
                }
                const mine = (step.statements?.length ?? 0) + plan.statements.length;
                const own = rows.slice(step.statements?.length ?? 0, mine);
                const handed = rows.slice(mine, mine + handOn.length);
                if (plan.next !== undefined) next = own[plan.next]![0] as unknown as Operation;
                after = () => {
                  if (events.length) deps.sequencer.kick();
                  for (const f of step.afterCommit ?? []) f();
                  plan.after(own, handed.length ? { reads: handed } : undefined);
                };
                return step.outcome;
              });
              after();
              return out;
            },
            true,
          ),
      };
      const out: StepOutcome = await tracing.span(
        `operation.step ${op.kind}`,
        { 'operation.id': op.id, 'operation.kind': op.kind, 'operation.status': op.status, 'operation.attempt': op.attempts },
        async (span) => {
          const stepped = !handler
            ? await ctx.commit(async () => ({
                status: 'failed' as const,
                error: { code: 'unknown_operation_kind', message: `No handler for ${op.kind}` },
              }))
            : op.cancelRequestedBy
              ? await (handler.cancel ? handler.cancel(ctx) : ctx.commit(async () => ({ status: 'canceled' as const })))
              : await handler.step(ctx);
          span.setAttributes({ 'operation.outcome': stepped.status });
          return stepped;
        },
      );
      if (out.status !== 'continue') return;
      held = undefined;
      op = next ?? (await operationById(deps.db.prisma, op.id));
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
        const fresh = await findLeasedOperation(tx, op.id, owner);
        if (fresh)
          await applyOutcome(deps, tx, fresh, {
            status: 'retry',
            error: { code: 'internal_error', message: 'The operation hit an internal error and will be retried' },
          });
      })
      .catch((err) => deps.log.error({ err, operation: op.id }, 'could not release a failed operation'));
  } finally {
    clearInterval(heartbeat);
  }
}
