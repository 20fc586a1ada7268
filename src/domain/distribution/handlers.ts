import type { Deployment, Distribution } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { appendEvent, type NewEvent } from '../event/event.ts';
import { holdFor, type BatchedStep, type OperationHandler, type StepContext } from '../operation/engine.ts';
import { childStatusesStatement, liveChildOperations } from '../operation/store.ts';
import { enqueueBatched, isTerminal, settleOperation, targetSettlement } from '../operation/operation.ts';
import { releaseAll, releaseStatements, reserveStatements, spendStatements } from '../wallet/wallet.ts';
import { walletForReserve } from '../wallet/store.ts';
import { deploymentEvent, deploymentEventOf, distributionEvent, distributionEventOf } from './distribution.ts';
import { TransientProviderError, providerFor, type ProvisionResult, type TeardownResult } from './provider.ts';
import { LIVE_DEPLOYMENT_STATUSES } from './states.ts';
import {
  deploymentById,
  deploymentByIdOrThrow,
  deploymentIdsOf,
  deploymentStatusesStatement,
  deploymentsOf,
  deploymentsToProvisionStatement,
  distributionById,
  distributionOf,
  distributionReadStatement,
  setDeploymentStatus,
  setDeploymentStatusStatement,
  setDistributionStatusStatement,
  startProvisioningStatement,
  updateDistribution,
} from './store.ts';

/**
 * The operation kinds of the distribution family. Each step reads, calls the
 * provider outside any transaction, then commits its changes, its events and
 * the operation's next status together (StepContext.commit).
 */
type Progress = Record<string, unknown> & { phase?: string };
const progressOf = (ctx: StepContext) => ctx.op.progress as Progress;

const dist = (tx: Tx, ctx: StepContext) => distributionById(tx, ctx.op.subjectId);

async function setDistribution(deps: Deps, tx: Tx, d: Distribution, status: string, extra: { pausedFrom?: string | null } = {}) {
  return updateDistribution(tx, d.id, { status, ...extra, updatedAt: deps.clock.now() });
}

async function setDeployment(
  deps: Deps,
  tx: Tx,
  dep: Deployment,
  status: string,
  event: string | null,
  opId: string,
  extra: Record<string, unknown> = {},
) {
  const row = await setDeploymentStatus(tx, dep.id, status, deps.clock.now());
  if (event) await deploymentEvent(deps, tx, event, row, opId, extra);
  return row;
}

const moneyOf = (d: Distribution, opId: string) => ({
  organizationId: d.organizationId,
  brandId: d.brandId,
  distributionId: d.id,
  operationId: opId,
});

const releasedEvent = (d: Distribution, opId: string, amount: number, reason: string): NewEvent => ({
  organizationId: d.organizationId,
  type: 'budget.released',
  subject: { type: 'distribution', id: d.id },
  data: { amount, brand: d.brandId, distribution: d.id, reason },
  operationId: opId,
  brandId: d.brandId,
});

/** Returns the distribution's unspent hold to the wallet, with `budget.released` when there was any. */
async function release(deps: Deps, tx: Tx, d: Distribution, opId: string, reason: string) {
  const released = await releaseAll(deps, tx, moneyOf(d, opId));
  if (released) await appendEvent(deps, tx, releasedEvent(d, opId, released, reason));
}

/** Sets the distribution's status (batched): the statement, and the row as it then is, for its event. */
function setDistributionBatched(deps: Deps, d: Distribution, status: string) {
  const now = deps.clock.now();
  return {
    statement: setDistributionStatusStatement(d.id, status, now),
    row: { ...d, status, updatedAt: now },
  };
}

/** distribution.launch: reserve the budget and fan out one provisioning child per deployment (one transaction), settle on their outcome. */
const launch: OperationHandler = {
  kind: 'distribution.launch',
  async step(ctx) {
    const { deps, op } = ctx;
    switch (progressOf(ctx).phase ?? 'reserve') {
      // Reserving and fanning out are one transaction (launches stored mid-way by an older version resume at fan_out).
      // Children this process has room for are enqueued leased to it and start as the transaction commits.
      case 'reserve':
      case 'fan_out':
        return ctx.commitBatched(
          [distributionReadStatement(op.subjectId), walletForReserve(op.subjectId), deploymentsToProvisionStatement(op.subjectId)],
          (fresh, [dist, wallet, todo], take) => {
            const d = distributionOf(dist![0]!);
            const p = fresh.progress as Progress;
            const statements: Prisma.Sql[] = [];
            const events: NewEvent[] = [];
            let reserved = p.reserved;
            if (p.phase !== 'fan_out') {
              const need = Math.max(0, Number(d.budget - d.reserved - d.spent));
              const budgetEvent = (type: string, data: Record<string, unknown>): NewEvent => ({
                organizationId: d.organizationId,
                type,
                subject: { type: 'distribution', id: d.id },
                data: { amount: need, brand: d.brandId, distribution: d.id, ...data },
                operationId: op.id,
                brandId: d.brandId,
              });
              if (need > 0) {
                // The wallet row is locked since the first round trip: the balance read is the one the reservation moves.
                const balance = Number(wallet![0]?.balance ?? 0);
                if (balance < need) {
                  return {
                    // Announced once, on entering the wait; rechecks while still short stay quiet.
                    events:
                      fresh.waitingReason !== 'funding_required' ? [budgetEvent('budget.reserve_failed', { wallet_balance: balance })] : [],
                    outcome: {
                      status: 'waiting',
                      reason: 'funding_required',
                      progress: { phase: 'reserve', required: need, wallet_balance: balance },
                    },
                  };
                }
                statements.push(...reserveStatements(deps, moneyOf(d, op.id), need));
                events.push(budgetEvent('budget.reserved', {}));
              }
              reserved = need;
            }
            const ids = todo!.map((r) => r.id as string);
            const now = deps.clock.now();
            if (ids.length) {
              statements.push(startProvisioningStatement(ids, now));
            }
            const children = todo!.map((dep) => {
              const slot = take();
              const child = enqueueBatched(deps, {
                organizationId: d.organizationId,
                brandId: d.brandId,
                subject: { type: 'deployment', id: dep.id as string },
                kind: 'deployment.provision',
                parentOperationId: op.id,
                slot,
              });
              // A child run here starts at this commit, on the deployment as this transaction leaves it: no read before its provider call.
              if (slot) holdFor(child.row, { deployment: { ...dep, status: 'provisioning', providerState: {}, updatedAt: now } });
              return child;
            });
            return {
              statements: [...statements, ...children.flatMap((c) => c.statements)],
              events,
              afterCommit: children.map((c) => c.committed),
              outcome: {
                status: 'waiting',
                reason: 'awaiting_children_settle',
                progress: { phase: 'children', reserved, deployments: { total: ids.length, settled: 0 } },
              },
            };
          },
        );
      default: {
        // Read by the child whose settlement handed this run on, in that commit: used when they show every child
        // settled (settled is final); otherwise read again, after a sibling that settled since.
        const held = ctx.held?.reads as Record<string, unknown>[][] | undefined;
        return ctx.commitBatched(
          finishReads(op.id, op.subjectId),
          (fresh, [children, dist, deployments]) => {
            const ok = children!.filter((c) => c.status === 'succeeded').length;
            const settled = children!.filter((c) => isTerminal(c.status as string)).length;
            const progress = { ...(fresh.progress as Progress), deployments: { total: children!.length, settled, succeeded: ok } };
            if (settled < children!.length) return { outcome: { status: 'waiting', reason: 'awaiting_children_settle', progress } };
            const done = finishLaunch(
              deps,
              distributionOf(dist![0]!),
              op.id,
              ok,
              children!.length,
              deployments!.map((x) => x.status as string),
            );
            return { ...done, outcome: { ...done.outcome, progress } };
          },
          held?.[0]?.every((c) => isTerminal(c.status as string)) ? held : undefined,
        );
      }
    }
  },
  /** A canceled launch supersedes its live children; the cancel operation then tears down what they left. */
  cancel: (ctx) =>
    ctx.commit(async (tx) => {
      const live = await liveChildOperations(tx, ctx.op.id);
      for (const child of live) {
        await settleOperation(ctx.deps, tx, child.id, {
          status: 'canceled',
          canceledAs: 'operation.superseded',
          result: { superseded_by: ctx.op.cancelRequestedBy },
        });
      }
      return { status: 'canceled', result: { canceled_by: ctx.op.cancelRequestedBy } };
    }),
};

/** What the launch's last step reads: its children's statuses, the distribution, its deployments' statuses. */
const finishReads = (launchId: string, distributionId: string) => [
  childStatusesStatement(launchId),
  distributionReadStatement(distributionId),
  deploymentStatusesStatement(distributionId),
];

/** The launch's last step, once every child settled: release what is left when done, and the distribution's new status. */
function finishLaunch(deps: Deps, d: Distribution, opId: string, ok: number, total: number, deploymentStatuses: string[]): BatchedStep {
  const released = (reason: string) => {
    const value = Number(d.reserved);
    return {
      statements: releaseStatements(deps, moneyOf(d, opId), value),
      events: value > 0 ? [releasedEvent(d, opId, value, reason)] : [],
      d: value > 0 ? { ...d, reserved: 0n } : d,
    };
  };
  if (ok === 0) {
    const r = released('launch_failed');
    const set = setDistributionBatched(deps, r.d, 'failed');
    return {
      statements: [...r.statements, set.statement],
      events: [...r.events, distributionEventOf('distribution.failed', set.row, opId)],
      outcome: {
        status: 'failed',
        error: { code: 'all_deployments_failed', message: `None of the ${total} deployments came up` },
        result: { distribution_status: 'failed' },
      },
    };
  }
  if (ok === total && deploymentStatuses.every((x) => x === 'completed')) {
    const r = released('completed');
    const set = setDistributionBatched(deps, r.d, 'completed');
    return {
      statements: [...r.statements, set.statement],
      events: [...r.events, distributionEventOf('distribution.completed', set.row, opId)],
      outcome: { status: 'succeeded', result: { distribution_status: 'completed', deployments_succeeded: ok, deployments_total: total } },
    };
  }
  const status = ok === total ? 'active' : 'partially_active';
  const set = setDistributionBatched(deps, d, status);
  const result = { distribution_status: status, deployments_succeeded: ok, deployments_total: total };
  return {
    statements: [set.statement],
    events: [distributionEventOf('distribution.live', set.row, opId, { partial: ok < total })],
    outcome:
      ok === total
        ? { status: 'succeeded', result }
        : {
            status: 'partial',
            result,
            error: { code: 'some_deployments_failed', message: `${total - ok} of ${total} deployments did not come up` },
          },
  };
}

/** deployment.provision: one deployment through its provider; may wait on the provider's review. */
const provision: OperationHandler = {
  kind: 'deployment.provision',
  async step(ctx) {
    const { deps } = ctx;
    const [dep] = ctx.held?.deployment ? [ctx.held.deployment as Deployment] : [await deploymentById(deps.db.sql, ctx.op.subjectId)];
    if (!dep) throw new Error(`deployment ${ctx.op.subjectId} not found`);
    const adapter = providerFor(dep.provider);
    const opId = ctx.op.id;
    const fail = (status: 'failed' | 'rejected', event: string | null, code: string, message: string) =>
      ctx.commit(async (tx) => {
        await setDeployment(deps, tx, dep, status, event, opId, { reason: message });
        return { status: 'failed', error: { code, message } };
      });
    if (dep.status === 'in_review') {
      const decision = adapter.review(dep);
      if (!decision) return ctx.commit(async () => ({ status: 'waiting', reason: 'provider_review' }));
      if (decision === 'reject')
        return fail('rejected', 'deployment.rejected', 'provider_rejected', 'The provider rejected the placement after review');
    }
    let result: ProvisionResult;
    try {
      result = await adapter.provision(dep, ctx.op.attempts);
    } catch (e) {
      if (!(e instanceof TransientProviderError)) throw e;
      if (ctx.op.attempts >= ctx.op.maxAttempts)
        return fail('failed', null, 'provider_unavailable', `${e.message}; gave up after ${ctx.op.attempts} attempts`);
      return ctx.commit(async () => ({ status: 'retry', error: { code: 'provider_unavailable', message: e.message } }));
    }
    if (result.state === 'failed') return fail('failed', null, 'provider_failed', result.reason);
    if (result.state === 'review') {
      return ctx.commit(async (tx) => {
        await setDeployment(deps, tx, dep, 'in_review', null, opId);
        return { status: 'waiting', reason: 'provider_review' };
      });
    }
    const active = result;
    return ctx.commitBatched([], (fresh) => {
      const now = deps.clock.now();
      const row = { ...dep, status: 'active', updatedAt: now };
      const status = active.complete ? 'completed' : 'active';
      const events = [deploymentEventOf('deployment.activated', row, fresh.brandId, opId)];
      if (active.drifted)
        events.push(
          deploymentEventOf('deployment.drifted', row, fresh.brandId, opId, {
            detail: 'The live placement differs from the requested config',
          }),
        );
      if (active.complete) events.push(deploymentEventOf('deployment.completed', { ...row, status }, fresh.brandId, opId));
      const money = { organizationId: dep.organizationId, brandId: fresh.brandId!, distributionId: dep.distributionId, operationId: opId };
      return {
        statements: [setDeploymentStatusStatement(dep.id, status, now), ...spendStatements(deps, money, active.spend)],
        events,
        outcome: { status: 'succeeded', result: { deployment_status: status, spent: active.spend } },
        // The launch this may hand on to reads these next: read here, after this settlement, its step commits in one batch.
        handOn: fresh.parentOperationId ? finishReads(fresh.parentOperationId, dep.distributionId) : undefined,
      };
    });
  },
};

/** distribution.pause and distribution.resume: every placement through its provider, then the distribution. */
function pauseResume(kind: 'distribution.pause' | 'distribution.resume'): OperationHandler {
  const pausing = kind === 'distribution.pause';
  return {
    kind,
    async step(ctx) {
      const { deps } = ctx;
      const deps_ = await deploymentsOf(deps.db.prisma, ctx.op.subjectId, pausing ? 'active' : 'paused');
      for (const dep of deps_) await (pausing ? providerFor(dep.provider).pause(dep) : providerFor(dep.provider).resume(dep));
      return ctx.commit(async (tx) => {
        for (const dep of deps_) {
          await setDeployment(
            deps,
            tx,
            dep,
            pausing ? 'paused' : 'active',
            pausing ? 'deployment.paused' : 'deployment.activated',
            ctx.op.id,
            pausing ? {} : { resumed: true },
          );
        }
        const d = await dist(tx, ctx);
        const row = pausing
          ? await setDistribution(deps, tx, d, 'paused', { pausedFrom: d.status })
          : await setDistribution(deps, tx, d, d.pausedFrom ?? 'active', { pausedFrom: null });
        await distributionEvent(deps, tx, pausing ? 'distribution.paused' : 'distribution.resumed', row, ctx.op.id);
        return { status: 'succeeded', result: { distribution_status: row.status, deployments: deps_.length } };
      });
    },
  };
}

/**
 * distribution.cancel (control plane): wait for the targeted mutation to
 * settle (awaiting_target_settle), ask every placement to tear down
 * (awaiting_cleanup while a provider is still at it), release the unspent
 * budget and mark the distribution canceled. Failed teardowns make it partial.
 */
const cancel: OperationHandler = {
  kind: 'distribution.cancel',
  async step(ctx) {
    const { deps, op } = ctx;
    const phase = progressOf(ctx).phase ?? 'target';
    if (phase === 'target') {
      return ctx.commit(async (tx) => {
        const settled = await targetSettlement(tx, op);
        if (!settled) return { status: 'waiting', reason: 'awaiting_target_settle', progress: { phase } };
        return { status: 'continue', progress: { phase: 'teardown', ...settled } };
      });
    }
    if (phase === 'teardown') {
      return ctx.commit(async (tx) => {
        const todo = await deploymentsOf(tx, op.subjectId, LIVE_DEPLOYMENT_STATUSES);
        for (const dep of todo) await setDeployment(deps, tx, dep, 'canceling', 'deployment.cancel_requested', op.id);
        return { status: 'continue', progress: { ...progressOf(ctx), phase: 'cleanup' } };
      });
    }
    const canceling = await deploymentsOf(deps.db.prisma, op.subjectId, 'canceling');
    const results: [Deployment, TeardownResult][] = [];
    for (const dep of canceling) results.push([dep, await providerFor(dep.provider).teardown(dep)]);
    return ctx.commit(async (tx) => {
      for (const [dep, r] of results) {
        if (r.state === 'done') await setDeployment(deps, tx, dep, 'canceled', 'deployment.canceled', op.id);
        if (r.state === 'failed')
          await setDeployment(deps, tx, dep, 'cleanup_failed', 'deployment.cleanup_failed', op.id, { reason: r.reason });
      }
      const pending = results.filter(([, r]) => r.state === 'pending').length;
      const progress = { ...progressOf(ctx), cleanup_pending: pending };
      if (pending) return { status: 'waiting', reason: 'awaiting_cleanup', progress };
      const d = await dist(tx, ctx);
      await release(deps, tx, d, op.id, 'canceled');
      const row = await setDistribution(deps, tx, await dist(tx, ctx), 'canceled');
      await distributionEvent(deps, tx, 'distribution.canceled', row, op.id);
      const failed = await deploymentIdsOf(tx, d.id, 'cleanup_failed');
      const p = progressOf(ctx);
      const result = {
        target_operation_id: op.targetOperationId,
        target_outcome: p.target_outcome ?? null,
        target_finished_first: p.target_finished_first ?? null,
        cleanup_failed: failed,
      };
      if (!failed.length) return { status: 'succeeded', result, progress };
      return {
        status: 'partial',
        result,
        progress,
        error: {
          code: 'cleanup_failed',
          message: `Teardown failed for ${failed.length} deployment(s); they may still be live at the provider`,
        },
      };
    });
  },
};

/**
 * deployment.teardown (control plane), started by revoking the connection a
 * live deployment places through: wait for the provision running on it, if
 * any (awaiting_target_settle), mark it canceling, then ask its provider
 * to tear it down (awaiting_cleanup while the provider is still at it). The
 * distribution and its budget are untouched: only this placement ends. A
 * deployment something else already ended (a distribution cancel) settles
 * as it is.
 */
const teardown: OperationHandler = {
  kind: 'deployment.teardown',
  async step(ctx) {
    const { deps, op } = ctx;
    const phase = progressOf(ctx).phase ?? 'request';
    const load = (db: Tx | Deps['db']['prisma']) => deploymentByIdOrThrow(db, op.subjectId);
    const settled = (dep: Deployment) => ({ status: 'succeeded' as const, result: { deployment_status: dep.status } });
    if (phase === 'request') {
      return ctx.commit(async (tx) => {
        if (!(await targetSettlement(tx, op))) return { status: 'waiting', reason: 'awaiting_target_settle', progress: progressOf(ctx) };
        const dep = await load(tx);
        if (!(LIVE_DEPLOYMENT_STATUSES as readonly string[]).includes(dep.status)) {
          return dep.status === 'canceling' ? { status: 'continue', progress: { ...progressOf(ctx), phase: 'cleanup' } } : settled(dep);
        }
        await setDeployment(deps, tx, dep, 'canceling', 'deployment.cancel_requested', op.id);
        return { status: 'continue', progress: { ...progressOf(ctx), phase: 'cleanup' } };
      });
    }
    const dep = await load(deps.db.prisma);
    if (dep.status !== 'canceling') return ctx.commit(async () => settled(dep));
    const r = await providerFor(dep.provider).teardown(dep);
    return ctx.commit(async (tx) => {
      if (r.state === 'pending') return { status: 'waiting', reason: 'awaiting_cleanup', progress: progressOf(ctx) };
      if (r.state === 'done') return settled(await setDeployment(deps, tx, dep, 'canceled', 'deployment.canceled', op.id));
      const row = await setDeployment(deps, tx, dep, 'cleanup_failed', 'deployment.cleanup_failed', op.id, { reason: r.reason });
      return {
        status: 'failed',
        result: { deployment_status: row.status },
        error: { code: 'cleanup_failed', message: 'Teardown failed; the deployment may still be live at the provider' },
      };
    });
  },
};

export const distributionHandlers: OperationHandler[] = [
  teardown,
  launch,
  provision,
  pauseResume('distribution.pause'),
  pauseResume('distribution.resume'),
  cancel,
];
