import { z } from 'zod';
import { lockBrand } from '../brand/store.ts';
import type { Operation as OperationRow, Payout as PayoutRow } from '../../db/generated/client.ts';
import { execute, type Tx } from '../../db/database.ts';
import { findOperationOf, operationById } from '../operation/store.ts';
import type { Deps } from '../context.ts';
import { DomainError, isUniqueViolation, missing } from '../errors.ts';
import { insertEvents, type NewEvent } from '../event/event.ts';
import { isId, newId } from '../id.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import type { OperationHandler, StepOutcome } from '../operation/engine.ts';
import {
  enqueueOperation,
  liveOperation,
  Operation,
  operationConflict,
  presentOperation,
  requestCancel,
  settleOperation,
  targetSettlement,
  type PublicOperation,
} from '../operation/operation.ts';
import { findProgram } from '../program/program.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { timestamp } from '../validation.ts';
import { creditWallet, debitWallet, insertMovement, insertMovements, lockWallet } from '../wallet/store.ts';
import {
  brandPayout,
  countRunPayouts,
  findRun,
  insertPayouts,
  insertRun,
  movePayouts,
  payoutItems,
  payoutsPage,
  runPayoutsIn,
  unpaidByEntity,
} from './store.ts';
import { PAYOUT_STATUSES, PayoutObject, type PublicPayout } from './presenter.ts';
import { type PayoutDecision, sandboxPayoutProvider } from './provider.ts';

export { PAYOUT_STATUSES, PayoutObject, type PublicPayout };

/**
 * Payout runs (ADR 0009). `POST /payouts/runs {program?, period_end}` starts a
 * `payout.run` operation, one per (brand, program or the whole brand,
 * period_end): a repeat answers the same operation. Its first step, under the
 * brand's lock, groups the unpaid entries payable in periods ending by
 * `period_end` per entity, reserves the total from the brand's wallet (waiting
 * `funding_required` when short; a top-up wakes it), and creates one payout
 * per entity with a positive total (`payout.created`), linking its entries.
 * Later steps pay the created payouts through the payout provider, a batch per
 * transaction: settled spends the payout's hold (`payout.settled`), failed
 * returns it to the wallet (`payout.failed`) and so its entries to unpaid; a
 * payout the provider holds for review is `in_review` (in flight, hold kept)
 * and the run waits `provider_review` until the provider decides it. A
 * payout moves from each status once (a conditional update), so a run resumed
 * after a crash pays nothing twice; the provider call is idempotent per payout
 * id. A cancel (control plane) fails what is not yet paid and releases its
 * hold; payouts in review settle or fail on their own before the run settles.
 */
export const RUN_KIND = 'payout.run';
export const RUN_CANCEL_KIND = 'payout.run_cancel';
export const DEFAULT_PAY_BATCH = 500;

export const RunPayoutsInput = z.strictObject({
  program: z.string().min(1).optional().describe("prog_ id of the caller's brand; omitted: every program of the brand"),
  period_end: timestamp().describe('pays entries payable in periods ending at or before it; now or in the past'),
});

export const ListPayoutsInput = z.strictObject({
  status: z.enum(PAYOUT_STATUSES).optional(),
  entity: z.string().min(1).optional(),
  operation: z.string().min(1).optional(),
  ...ListInput.shape,
});
export const NoPayoutInput = z.strictObject({});

async function entriesOf(db: Reader, ids: string[]): Promise<Map<string, string[]>> {
  const items = await payoutItems(db, ids);
  const out = new Map<string, string[]>();
  for (const i of items) out.set(i.payoutId, [...(out.get(i.payoutId) ?? []), i.entryId]);
  return out;
}

const presentPayout = (p: PayoutRow, entries: string[]): PublicPayout => ({
  id: p.id,
  object: 'payout',
  amount: Number(p.amount),
  entity: p.entityId,
  program: p.programId,
  status: p.status as PublicPayout['status'],
  failure_reason: p.failureReason,
  period_end: p.periodEnd.toISOString(),
  entries,
  operation: p.operationId,
  created_at: p.createdAt.toISOString(),
  updated_at: p.updatedAt.toISOString(),
});

/** The payouts of a run's scope: a program's, or the brand's (a run naming no program). */
const scopeOf = (brandId: string, programId: string | null) =>
  programId ? { type: 'payouts', id: programId } : { type: 'payouts', id: brandId };

async function runPayouts(deps: Deps, tx: Tx, caller: SurfaceBCaller, input: z.output<typeof RunPayoutsInput>): Promise<PublicOperation> {
  const program = input.program === undefined ? null : await findProgram(tx, caller, input.program, 'program');
  if (input.period_end > deps.clock.now())
    throw new DomainError('invalid_request', 'period_end must be now or in the past: only closed periods are paid', 'period_end');
  const brandId = caller.brand.id;
  const programId = program?.id ?? null;
  const same = await findRun(tx, { brandId, programId, periodEnd: input.period_end });
  if (same) return presentOperation(await operationById(tx, same.operationId));
  const runId = newId('payoutRun');
  const op = await enqueueOperation(deps, tx, {
    organizationId: caller.organization.id,
    brandId,
    subject: scopeOf(brandId, programId),
    kind: RUN_KIND,
    progress: { phase: 'reserve', run: runId, period_end: input.period_end.toISOString(), program: programId },
  });
  try {
    await insertRun(tx, {
      id: runId,
      organizationId: caller.organization.id,
      brandId,
      programId,
      periodEnd: input.period_end,
      operationId: op.id,
    });
  } catch (e) {
    // A concurrent run of the same scope and period_end: the operation index answered first, or this one does.
    if (isUniqueViolation(e)) throw operationConflict(scopeOf(brandId, programId));
    throw e;
  }
  return presentOperation(op);
}

interface RunProgress {
  phase: 'reserve' | 'pay';
  run: string;
  period_end: string;
  program: string | null;
  required?: number;
  wallet_balance?: number;
  payouts?: number;
  amount?: number;
  settled?: number;
  failed?: number;
  amount_settled?: number;
  amount_failed?: number;
  /** Payouts the provider holds for review (the run waits provider_review while any are). */
  in_review?: number;
}

/** A payout event: the payout (its entries are on GET /payouts/{id}) and, on the event, the run's operation. */
const payoutEvent = (type: string, p: PayoutRow, opId: string): NewEvent => {
  const { entries: _, ...object } = presentPayout(p, []);
  return {
    organizationId: p.organizationId,
    type,
    subject: { type: 'payout', id: p.id },
    data: { object },
    operationId: opId,
    brandId: p.brandId,
  };
};

/**
 * The reserve step, under the brand's lock (runs of one brand group entries one at a time): the unpaid entries
 * payable by period_end grouped per entity, the total reserved from the wallet, one payout per entity.
 */
async function reserve(deps: Deps, tx: Tx, op: OperationRow, p: RunProgress): Promise<StepOutcome> {
  await lockBrand(tx, op.brandId!);
  const wallet = await lockWallet(tx, op.brandId!);
  const groups = await unpaidByEntity(tx, op.brandId!, p.period_end, p.program);
  const total = groups.reduce((s, g) => s + BigInt(g.amount), 0n);
  const balance = BigInt(wallet?.balance ?? '0');
  if (balance < total)
    return { status: 'waiting', reason: 'funding_required', progress: { ...p, required: Number(total), wallet_balance: Number(balance) } };
  const now = deps.clock.now();
  const rows = groups.map((g) => ({ id: newId('payout'), entity_id: g.entity_id, amount: g.amount, entries: g.entries }));
  if (rows.length) {
    await debitWallet(tx, op.brandId!, String(total), now);
    await insertMovement(tx, {
      id: newId('walletMovement'),
      organizationId: op.organizationId,
      brandId: op.brandId!,
      kind: 'reserve',
      amount: String(total),
      operationId: op.id,
      createdAt: deps.clock.now(),
    });
    await insertPayouts(
      tx,
      {
        organizationId: op.organizationId,
        brandId: op.brandId,
        programId: p.program,
        runId: p.run,
        operationId: op.id,
        periodEnd: p.period_end,
        now,
      },
      rows,
    );
    const events = rows.map((r) =>
      payoutEvent(
        'payout.created',
        {
          id: r.id,
          organizationId: op.organizationId,
          brandId: op.brandId!,
          programId: p.program,
          runId: p.run,
          operationId: op.id,
          entityId: r.entity_id,
          amount: BigInt(r.amount),
          status: 'created',
          failureReason: null,
          periodEnd: new Date(p.period_end),
          createdAt: now,
          updatedAt: now,
        },
        op.id,
      ),
    );
    await execute(tx, [insertEvents(deps, events)]);
    deps.db.afterCommit(tx, () => deps.sequencer.kick());
  }
  const progress: RunProgress = {
    ...p,
    phase: 'pay',
    payouts: rows.length,
    amount: Number(total),
    settled: 0,
    failed: 0,
    amount_settled: 0,
    amount_failed: 0,
  };
  delete progress.required;
  delete progress.wallet_balance;
  return { status: 'continue', progress: progress as unknown as Record<string, unknown> };
}

/** The payout provider (src/domain/payout/provider.ts): the built-in sandbox. */
const provider = sandboxPayoutProvider;

/** One payout's move: from created (paid, refused, or held for review) or from in_review (the provider decided). */
interface Move {
  payout: PayoutRow;
  from: 'created' | 'in_review';
  to: 'settled' | 'failed' | 'in_review';
  reason?: string;
}

const moveOf = (payout: PayoutRow, from: Move['from'], d: PayoutDecision | { state: 'review' }): Move =>
  d.state === 'review'
    ? { payout, from, to: 'in_review' }
    : d.state === 'settled'
      ? { payout, from, to: 'settled' }
      : { payout, from, to: 'failed', reason: d.reason };

/**
 * Applies the moves whose payout is still in its `from` status (one conditional statement: a resumed run's repeats
 * move nothing): settled spends its hold, failed returns it to the wallet, each with its event; a payout held for
 * review keeps its hold and emits nothing (its `payout.created` went out; the vocabulary has no review event).
 */
async function finishPayouts(
  deps: Deps,
  tx: Tx,
  op: OperationRow,
  moves: Move[],
): Promise<{ settled: number; failed: number; amountSettled: bigint; amountFailed: bigint }> {
  const now = deps.clock.now();
  const out = { settled: 0, failed: 0, amountSettled: 0n, amountFailed: 0n };
  if (!moves.length) return out;
  const wanted = moves.map((m) => ({ id: m.payout.id, from: m.from, status: m.to, reason: m.reason ?? null }));
  const moved = new Set(await movePayouts(tx, wanted, now));
  const done = moves.filter((m) => moved.has(m.payout.id) && m.to !== 'in_review');
  if (!done.length) return out;
  const movements = done.map((m) => ({
    id: newId('walletMovement'),
    kind: m.to === 'settled' ? ('spend' as const) : ('release' as const),
    amount: String(m.payout.amount),
  }));
  for (const m of done) {
    if (m.to === 'settled') {
      out.settled++;
      out.amountSettled += m.payout.amount;
    } else {
      out.failed++;
      out.amountFailed += m.payout.amount;
    }
  }
  if (out.amountFailed > 0n) await creditWallet(tx, op.brandId!, String(out.amountFailed), now);
  await insertMovements(tx, { organizationId: op.organizationId, brandId: op.brandId!, operationId: op.id, createdAt: now }, movements);
  const events = done.map((m) =>
    payoutEvent(`payout.${m.to}`, { ...m.payout, status: m.to, failureReason: m.reason ?? null, updatedAt: now }, op.id),
  );
  await execute(tx, [insertEvents(deps, events)]);
  deps.db.afterCommit(tx, () => deps.sequencer.kick());
  return out;
}

const addTo = (p: RunProgress, d: Awaited<ReturnType<typeof finishPayouts>>): RunProgress => ({
  ...p,
  settled: (p.settled ?? 0) + d.settled,
  failed: (p.failed ?? 0) + d.failed,
  amount_settled: (p.amount_settled ?? 0) + Number(d.amountSettled),
  amount_failed: (p.amount_failed ?? 0) + Number(d.amountFailed),
});

const runResult = (p: RunProgress) => ({
  run: p.run,
  payouts: p.payouts ?? 0,
  amount: p.amount ?? 0,
  settled: p.settled ?? 0,
  failed: p.failed ?? 0,
  amount_settled: p.amount_settled ?? 0,
  amount_failed: p.amount_failed ?? 0,
});

/**
 * Asks the provider about up to `batch` payouts of the run it holds for review (outside any transaction): the moves of
 * those decided, and the earliest time it named for the others.
 */
async function askReviews(deps: Deps, p: RunProgress, batch: number): Promise<{ moves: Move[]; asked: number; until?: Date }> {
  const held = await runPayoutsIn(deps.db.prisma, p.run, 'in_review', batch);
  const moves: Move[] = [];
  let until: Date | undefined;
  for (const payout of held) {
    const r = await provider.review(deps, payout);
    if (r.state !== 'review') moves.push(moveOf(payout, 'in_review', r));
    else if (r.until && (!until || r.until < until)) until = r.until;
  }
  return { moves, asked: held.length, until };
}

/**
 * After the run's last batch: while the provider holds payouts for review the run waits `provider_review` (until the
 * earliest decision it announced, else the recheck); then it settles: succeeded, partial or failed as its payouts
 * ended, or canceled (settling its cancel in the same transaction).
 */
async function waitOrSettle(deps: Deps, tx: Tx, op: OperationRow, progress: RunProgress, until?: Date): Promise<StepOutcome> {
  const inReview = await countRunPayouts(tx, progress.run, 'in_review');
  const out = { ...progress, in_review: inReview } as unknown as Record<string, unknown>;
  if (inReview) return { status: 'waiting', reason: 'provider_review', progress: out, until };
  const result = runResult(progress);
  if (op.cancelRequestedBy) {
    // The run settles its cancel in the same transaction: the cancel never depends on being woken at the right
    // moment (a cancel step still in flight commits first: this update waits for it, then settles it).
    await settleOperation(deps, tx, op.cancelRequestedBy, {
      status: 'succeeded',
      result: { target_operation_id: op.id, target_outcome: 'canceled', target_finished_first: false },
    });
    return { status: 'canceled', progress: out, result: { ...result, canceled_by: op.cancelRequestedBy } };
  }
  if (!result.failed) return { status: 'succeeded', progress: out, result };
  if (!result.settled && result.payouts)
    return { status: 'failed', progress: out, result, error: { code: 'payouts_failed', message: `All ${result.failed} payouts failed` } };
  return {
    status: 'partial',
    progress: out,
    result,
    error: { code: 'some_payouts_failed', message: `${result.failed} of ${result.payouts} payouts failed` },
  };
}

const run: OperationHandler = {
  kind: RUN_KIND,
  async step(ctx) {
    const { deps } = ctx;
    const p = ctx.op.progress as unknown as RunProgress;
    if (p.phase === 'reserve') return ctx.commit((tx) => reserve(deps, tx, ctx.op, p));
    const batch = deps.config.payouts?.batch ?? DEFAULT_PAY_BATCH;
    const todo = await runPayoutsIn(deps.db.prisma, p.run, 'created', batch);
    // The provider is called outside any transaction; a crash before the commit repeats the call (idempotent per payout).
    const moves: Move[] = [];
    // When the provider expects to decide on the payouts it holds for review from this batch: the run, waiting on
    // them, looks then (askReviews only sees payouts already in review, not the ones this step moves there).
    let held: Date | undefined;
    for (const payout of todo) {
      const paid = await provider.pay(deps, payout);
      if (paid.state === 'review' && paid.until && (!held || paid.until < held)) held = paid.until;
      moves.push(moveOf(payout, 'created', paid));
    }
    // Once every payout is sent, the ones held for review are asked about.
    const reviews = todo.length < batch ? await askReviews(deps, p, batch) : { moves: [], asked: 0 };
    const until = [held, reviews.until].filter((d): d is Date => !!d).sort((x, y) => x.getTime() - y.getTime())[0];
    return ctx.commit(async (tx) => {
      const progress = addTo(p, await finishPayouts(deps, tx, ctx.op, [...moves, ...reviews.moves]));
      if (todo.length === batch || (reviews.asked === batch && reviews.moves.length))
        return { status: 'continue', progress: progress as unknown as Record<string, unknown> };
      return waitOrSettle(deps, tx, ctx.op, progress, until);
    });
  },
  /**
   * A canceled run stops paying: every payout still created fails (`run_canceled`) and its hold returns to the wallet;
   * what is settled stays paid. The run cannot take back what the provider holds for review: it waits
   * `provider_review` until those settle or fail on their own, then settles canceled.
   */
  async cancel(ctx) {
    const p = ctx.op.progress as unknown as RunProgress;
    const reviews = p.phase === 'pay' ? await askReviews(ctx.deps, p, Number.MAX_SAFE_INTEGER) : { moves: [], asked: 0 };
    return ctx.commit(async (tx) => {
      const open = await runPayoutsIn(tx, p.run, 'created');
      const moves = [...open.map((payout): Move => ({ payout, from: 'created', to: 'failed', reason: 'run_canceled' })), ...reviews.moves];
      const progress = addTo(p, await finishPayouts(ctx.deps, tx, ctx.op, moves));
      return waitOrSettle(ctx.deps, tx, ctx.op, progress, reviews.until);
    });
  },
};

const runCancel: OperationHandler = {
  kind: RUN_CANCEL_KIND,
  step: (ctx) =>
    ctx.commit(async (tx) => {
      const settled = await targetSettlement(tx, ctx.op);
      if (!settled) return { status: 'waiting', reason: 'awaiting_target_settle' };
      return { status: 'succeeded', result: { target_operation_id: ctx.op.targetOperationId, ...settled } };
    }),
};

export const payoutHandlers: OperationHandler[] = [run, runCancel];

/** Cancels a live payout run (control plane); a second cancel while one is live answers that one. */
async function cancelRun(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<PublicOperation> {
  const found = isId('operation', id) ? await findOperationOf(tx, caller.organization.id, id) : null;
  const target = found?.kind === RUN_KIND && found.brandId === caller.brand.id ? found : null;
  if (!target) throw missing('payout run', id);
  const subject = { type: target.subjectType, id: target.subjectId };
  const running = await liveOperation(tx, subject, 'control');
  if (running) return presentOperation(running);
  if (!(await liveOperation(tx, subject))) throw new DomainError('resource_conflict', `The payout run ${id} has already settled`, null);
  const op = await enqueueOperation(deps, tx, {
    organizationId: target.organizationId,
    brandId: target.brandId,
    subject,
    kind: RUN_CANCEL_KIND,
    plane: 'control',
    targetOperationId: target.id,
  });
  await requestCancel(deps, tx, target, op);
  return presentOperation(op);
}

async function findPayout(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null): Promise<PayoutRow> {
  const row = isId('payout', id) ? await brandPayout(db, caller, id) : null;
  if (!row) throw missing('payout', id, param);
  return row;
}

/** One payout of the caller's brand with its entries (the action's read, and GraphQL `node(id:)`); 404 otherwise. */
export async function retrievePayout(deps: Deps, caller: SurfaceBCaller, id: string, db: Reader = deps.db.prisma): Promise<PublicPayout> {
  const p = await findPayout(db, caller, id);
  return presentPayout(p, (await entriesOf(db, [p.id])).get(p.id) ?? []);
}

/** The payout actions (src/domain/action/action.ts). */
export const payouts = capability({ name: 'payouts', title: 'Payouts', resource: 'payouts' })({
  run: mutation({
    summary:
      'Pay the unpaid entries payable by period_end, one payout per entity, as a payout.run operation (one per brand, program and period_end: a repeat answers the same operation)',
    input: RunPayoutsInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, input, db }) => runPayouts(deps, db, caller, input),
  }),
  cancelRun: mutation({
    summary: 'Cancel a live payout run (control plane): settled payouts stay paid, the rest fail and their holds return to the wallet',
    params: ['id'],
    input: NoPayoutInput,
    output: Operation,
    outcome: 'accepted',
    run: ({ deps, caller, params, db }) => cancelRun(deps, db, caller, params.id),
  }),
  list: read({
    summary: 'Payouts of the selected brand, newest first',
    input: ListPayoutsInput,
    output: listOf(PayoutObject),
    run: async ({ caller, input, db }) => {
      const filter = { status: input.status, entityId: input.entity, operationId: input.operation };
      const page = await newestFirst(
        input,
        (id, param) => findPayout(db, caller, id, param),
        (below, take) => payoutsPage(db, caller, filter, below, take),
      );
      const entries = await entriesOf(
        db,
        page.data.map((p) => p.id),
      );
      return { ...page, data: page.data.map((p) => presentPayout(p, entries.get(p.id) ?? [])) };
    },
  }),
  retrieve: read({
    summary: 'One payout, with the ledger entries it pays',
    params: ['id'],
    retrieves: 'payout',
    input: NoPayoutInput,
    output: PayoutObject,
    run: ({ deps, caller, params, db }) => retrievePayout(deps, caller, params.id, db),
  }),
});
