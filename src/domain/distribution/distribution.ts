import { z } from 'zod';
import type { Deployment, Distribution } from '../../db/generated/client.ts';
import { Prisma, type Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { appendEvent, insertEvents, type NewEvent } from '../event/event.ts';
import { DomainError, missing, missingScope } from '../errors.ts';
import { isId, newId } from '../id.ts';
import type { StoredResponse } from '../idempotency/idempotency.ts';
import {
  enqueueBatched,
  enqueueOperation,
  inlineSlots,
  liveOperation,
  operationConflict,
  presentOperation,
  wakeOperations,
} from '../operation/operation.ts';
import { runBatchedMutation, runMutation } from '../platform/mutation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { parseInput } from '../validation.ts';
import { amount, walletBalance } from '../wallet/wallet.ts';
import { providerFor } from './provider.ts';
import { listLimit } from '../platform/rate-limit.ts';
import { DISTRIBUTION_STATUSES, type DeploymentStatus, type DistributionStatus } from './states.ts';

/**
 * Distributions: a brand's budgeted campaign, placed through provider
 * deployments. Every verb that does real work (launch, pause, resume,
 * cancel) only records intent and returns an operation (202); the
 * operations engine does the work (handlers.ts).
 *
 * Statuses: see states.ts.
 */
export const DEPLOYMENTS_MAX = 20;

export const CreateDistributionInput = z.strictObject({
  name: z.string().min(1).max(200),
  budget: amount,
  deployments: z
    .array(z.strictObject({ provider: z.string().min(1).max(64), config: z.record(z.string(), z.unknown()).optional() }))
    .min(1)
    .max(DEPLOYMENTS_MAX),
});
export type CreateDistribution = z.output<typeof CreateDistributionInput>;

export const NoDistributionInput = z.strictObject({});

export const ListDistributionsInput = z.strictObject({
  status: z.enum(DISTRIBUTION_STATUSES).optional(),
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export const ListDeploymentsInput = z.strictObject({
  distribution: z.string().min(1).optional(),
  limit: listLimit,
  starting_after: z.string().min(1).optional(),
});

export interface PublicDistribution {
  id: string;
  object: 'distribution';
  brand: string;
  name: string;
  status: DistributionStatus;
  budget: number;
  budget_reserved: number;
  budget_spent: number;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

export function presentDistribution(row: Distribution): PublicDistribution {
  return {
    id: row.id,
    object: 'distribution',
    brand: row.brandId,
    name: row.name,
    status: row.status as DistributionStatus,
    budget: Number(row.budget),
    budget_reserved: Number(row.reserved),
    budget_spent: Number(row.spent),
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

export interface PublicDeployment {
  id: string;
  object: 'deployment';
  distribution: string;
  provider: string;
  config: Record<string, unknown>;
  status: DeploymentStatus;
  livemode: boolean;
  created_at: string;
  updated_at: string;
}

export function presentDeployment(row: Deployment): PublicDeployment {
  return {
    id: row.id,
    object: 'deployment',
    distribution: row.distributionId,
    provider: row.provider,
    config: row.config as Record<string, unknown>,
    status: row.status as DeploymentStatus,
    livemode: row.livemode,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** A distribution or deployment event carrying the object's public form. */
export function distributionEventOf(
  type: string,
  row: Distribution,
  operationId: string | null,
  extra: Record<string, unknown> = {},
): NewEvent {
  return {
    organizationId: row.organizationId,
    type,
    subject: { type: 'distribution', id: row.id },
    data: { object: presentDistribution(row), ...extra },
    operationId,
    brandId: row.brandId,
  };
}
/** A deployment's event carries its distribution's brand (a deployment row has none of its own). */
export function deploymentEventOf(
  type: string,
  row: Deployment,
  brandId: string | null,
  operationId: string | null,
  extra: Record<string, unknown> = {},
): NewEvent {
  return {
    organizationId: row.organizationId,
    type,
    subject: { type: 'deployment', id: row.id },
    data: { object: presentDeployment(row), ...extra },
    operationId,
    brandId,
  };
}
export async function distributionEvent(
  deps: Deps,
  tx: Tx,
  type: string,
  row: Distribution,
  operationId: string | null,
  extra: Record<string, unknown> = {},
) {
  await appendEvent(deps, tx, distributionEventOf(type, row, operationId, extra));
}
export async function deploymentEvent(
  deps: Deps,
  tx: Tx,
  type: string,
  row: Deployment,
  operationId: string | null,
  extra: Record<string, unknown> = {},
) {
  const { brandId } = await tx.distribution.findUniqueOrThrow({ where: { id: row.distributionId }, select: { brandId: true } });
  await appendEvent(deps, tx, deploymentEventOf(type, row, brandId, operationId, extra));
}

/** Parses and checks a create request without touching anything: shared by create and the dry-run validate. */
function checkCreate(raw: unknown) {
  const input = parseInput(CreateDistributionInput, raw);
  const deployments = input.deployments.map((d, i) => {
    const provider = providerFor(d.provider, `deployments.${i}.provider`);
    return { provider: provider.name, config: provider.parseConfig(d.config, `deployments.${i}.config`), adapter: provider };
  });
  const planned = deployments.reduce((sum, d) => sum + d.adapter.plannedSpend(d.config), 0);
  if (planned > input.budget) {
    throw new DomainError('invalid_request', `The deployments plan to spend ${planned}, more than the budget of ${input.budget}`, 'budget');
  }
  return { input, deployments, planned };
}

function requireScope(caller: SurfaceBCaller, scope: string) {
  if (!caller.scopes.has(scope)) throw missingScope(scope);
}

/** Dry run: the same checks as create, plus whether the brand's wallet would fund it. Creates nothing, moves no money. */
export async function validateDistribution(deps: Deps, caller: SurfaceBCaller, raw: unknown) {
  requireScope(caller, 'distributions:write');
  const { input, deployments, planned } = checkCreate(raw);
  const balance = await walletBalance(deps.db.prisma, caller.brand.id);
  return {
    object: 'distribution_validation' as const,
    valid: true,
    brand: caller.brand.id,
    budget: input.budget,
    planned_spend: planned,
    deployments: deployments.length,
    wallet_balance: balance,
    funding_sufficient: balance >= input.budget,
  };
}

async function findDistribution(db: Tx | Deps['db']['prisma'], organizationId: string, id: string, param: string | null = null) {
  const row = isId('distribution', id) ? await db.distribution.findFirst({ where: { id, organizationId } }) : null;
  if (!row) throw missing('distribution', id, param);
  return row;
}

async function startLaunch(deps: Deps, tx: Tx, dist: Distribution) {
  const op = await enqueueOperation(deps, tx, {
    organizationId: dist.organizationId,
    brandId: dist.brandId,
    subject: { type: 'distribution', id: dist.id },
    kind: 'distribution.launch',
    progress: { phase: 'reserve' },
  });
  // A distribution created for this launch is launching already.
  const row =
    dist.status === 'launching'
      ? dist
      : await tx.distribution.update({ where: { id: dist.id }, data: { status: 'launching', updatedAt: deps.clock.now() } });
  await distributionEvent(deps, tx, 'distribution.launching', row, op.id);
  return { op, row };
}

/**
 * Create and launch on the batched SQL port: the distribution, its deployments, the launch operation and their
 * events travel in the idempotency record's transaction, one round trip before the commit. When this process's
 * worker has a free slot, the launch is inserted already leased to it and starts right after the commit.
 */
async function createAndLaunch(deps: Deps, caller: SurfaceBCaller, raw: unknown, idempotencyKey: string | undefined) {
  const { input, deployments } = checkCreate(raw);
  return inlineSlots(deps, async (take) => {
    let committed: (() => void) | undefined;
    const res = await runBatchedMutation(deps, caller, { name: 'distributions.create', input: raw, idempotencyKey }, async (send) => {
      const now = deps.clock.now();
      const org = caller.organization.id;
      const dist: Distribution = {
        id: newId('distribution'),
        organizationId: org,
        brandId: caller.brand.id,
        name: input.name,
        status: 'launching',
        budget: BigInt(input.budget),
        reserved: 0n,
        spent: 0n,
        pausedFrom: null,
        livemode: true,
        createdAt: now,
        updatedAt: now,
      };
      const deps_: Deployment[] = deployments.map((d) => ({
        id: newId('deployment'),
        organizationId: org,
        distributionId: dist.id,
        provider: d.provider,
        config: d.config as Prisma.JsonObject,
        status: 'pending',
        providerState: {},
        livemode: true,
        createdAt: now,
        updatedAt: now,
      }));
      const launch = enqueueBatched(deps, {
        organizationId: org,
        brandId: dist.brandId,
        subject: { type: 'distribution', id: dist.id },
        kind: 'distribution.launch',
        progress: { phase: 'reserve' },
        slot: take(),
      });
      const op = launch.row;
      const events = [
        distributionEventOf('distribution.launching', dist, op.id),
        ...deps_.map((d) => deploymentEventOf('deployment.created', d, dist.brandId, op.id)),
      ];
      const rows = deps_.map((d) => ({
        id: d.id,
        organization_id: org,
        distribution_id: dist.id,
        provider: d.provider,
        config: d.config,
        created_at: now,
        updated_at: now,
      }));
      await send([
        Prisma.sql`INSERT INTO distribution (id, organization_id, brand_id, name, status, budget, created_at, updated_at)
          VALUES (${dist.id}, ${org}, ${dist.brandId}, ${dist.name}, 'launching', ${input.budget}::bigint, ${now}::timestamptz, ${now}::timestamptz)`,
        ...launch.statements,
        Prisma.sql`INSERT INTO deployment (id, organization_id, distribution_id, provider, config, created_at, updated_at)
          SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
            AS x(id text, organization_id text, distribution_id text, provider text, config jsonb, created_at timestamptz, updated_at timestamptz)`,
        insertEvents(deps, events),
      ]);
      committed = launch.committed;
      return {
        response: { status: 202, body: { operation: presentOperation(op), distribution: presentDistribution(dist) } },
        finish: [],
        appended: true,
      };
    });
    if (!res.replayed) committed?.();
    return res;
  });
}

/**
 * Launch again. While a launch waits on funding, relaunching reuses that
 * operation (and nudges it to retry its reservation); any other live
 * mutation is a conflict. Only a failed distribution has anything to launch.
 */
async function relaunch(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<StoredResponse> {
  const dist = await findDistribution(tx, caller.organization.id, id);
  const subject = { type: 'distribution', id: dist.id };
  const live = await liveOperation(tx, subject);
  if (live) {
    if (live.kind !== 'distribution.launch' || live.waitingReason !== 'funding_required') throw operationConflict(subject);
    await wakeOperations(deps, tx, { id: live.id });
    return { status: 202, body: { operation: presentOperation(live), distribution: presentDistribution(dist) } };
  }
  if (dist.status !== 'failed')
    throw new DomainError(
      'resource_conflict',
      `A ${dist.status} distribution cannot be launched; only a failed one can be launched again`,
      null,
    );
  const { op, row } = await startLaunch(deps, tx, dist);
  return { status: 202, body: { operation: presentOperation(op), distribution: presentDistribution(row) } };
}

const PAUSE_RESUME = {
  pause: { from: ['active', 'partially_active'], kind: 'distribution.pause' },
  resume: { from: ['paused'], kind: 'distribution.resume' },
} as const;

async function pauseOrResume(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string, verb: 'pause' | 'resume'): Promise<StoredResponse> {
  const dist = await findDistribution(tx, caller.organization.id, id);
  const subject = { type: 'distribution', id: dist.id };
  if (await liveOperation(tx, subject)) throw operationConflict(subject);
  const rule = PAUSE_RESUME[verb];
  if (!(rule.from as readonly string[]).includes(dist.status)) {
    throw new DomainError('resource_conflict', `A ${dist.status} distribution cannot be ${verb}d`, null);
  }
  const op = await enqueueOperation(deps, tx, { organizationId: dist.organizationId, brandId: dist.brandId, subject, kind: rule.kind });
  return { status: 202, body: { operation: presentOperation(op), distribution: presentDistribution(dist) } };
}

/**
 * Cancel runs on the control plane: it may coexist with the live mutation it
 * targets. It records the request on the target (which settles `canceled` at
 * its next step) and then tears the deployments down. A second cancel while
 * one is live returns that one.
 */
async function cancel(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<StoredResponse> {
  const dist = await findDistribution(tx, caller.organization.id, id);
  const subject = { type: 'distribution', id: dist.id };
  const running = await liveOperation(tx, subject, 'control');
  if (running) return { status: 202, body: { operation: presentOperation(running), distribution: presentDistribution(dist) } };
  if (['canceled', 'completed'].includes(dist.status)) {
    throw new DomainError('resource_conflict', `A ${dist.status} distribution cannot be canceled`, null);
  }
  const target = await liveOperation(tx, subject);
  const op = await enqueueOperation(deps, tx, {
    organizationId: dist.organizationId,
    brandId: dist.brandId,
    subject,
    kind: 'distribution.cancel',
    plane: 'control',
    targetOperationId: target?.id ?? null,
    progress: { phase: 'target' },
  });
  if (target) {
    const marked = await tx.operation.update({ where: { id: target.id }, data: { cancelRequestedBy: op.id, updatedAt: deps.clock.now() } });
    await wakeOperations(deps, tx, { id: target.id });
    await appendEvent(deps, tx, {
      organizationId: dist.organizationId,
      type: 'operation.cancel_requested',
      subject,
      data: { object: presentOperation(marked), canceled_by: op.id },
      operationId: op.id,
      brandId: dist.brandId,
    });
  }
  return { status: 202, body: { operation: presentOperation(op), distribution: presentDistribution(dist) } };
}

export type DistributionMutation =
  | { op: 'create'; input: unknown }
  | { op: 'launch' | 'pause' | 'resume' | 'cancel'; id: string; input?: unknown };

const SCOPES: Record<DistributionMutation['op'], string[]> = {
  create: ['distributions:write', 'distributions:launch'],
  launch: ['distributions:launch'],
  pause: ['distributions:write'],
  resume: ['distributions:write'],
  cancel: ['distributions:write'],
};

/** Every distribution verb, from REST or GraphQL: scopes, then the idempotent mutation (the key also dedupes the operation). */
export async function mutateDistribution(deps: Deps, caller: SurfaceBCaller, m: DistributionMutation, idempotencyKey: string | undefined) {
  for (const s of SCOPES[m.op]) requireScope(caller, s);
  if (m.op === 'create') return createAndLaunch(deps, caller, m.input, idempotencyKey);
  parseInput(NoDistributionInput, m.input ?? {});
  return runMutation(deps, caller, { name: `distributions.${m.op}`, target: m.id, input: null, idempotencyKey }, (tx) => {
    switch (m.op) {
      case 'launch':
        return relaunch(deps, tx, caller, m.id);
      case 'cancel':
        return cancel(deps, tx, caller, m.id);
      default:
        return pauseOrResume(deps, tx, caller, m.id, m.op);
    }
  });
}

export async function retrieveDistribution(deps: Deps, organizationId: string, id: string) {
  return presentDistribution(await findDistribution(deps.db.prisma, organizationId, id));
}

/** The selected brand's distributions, newest first. */
export async function listDistributions(deps: Deps, caller: SurfaceBCaller, raw: unknown) {
  const input = parseInput(ListDistributionsInput, raw);
  const cursor = input.starting_after
    ? await findDistribution(deps.db.prisma, caller.organization.id, input.starting_after, 'starting_after')
    : undefined;
  const rows = await deps.db.prisma.distribution.findMany({
    where: {
      organizationId: caller.organization.id,
      brandId: caller.brand.id,
      ...(input.status ? { status: input.status } : {}),
      ...(cursor ? { id: { lt: cursor.id } } : {}),
    },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
  });
  return { object: 'list' as const, data: rows.slice(0, input.limit).map(presentDistribution), has_more: rows.length > input.limit };
}

async function findDeployment(db: Deps['db']['prisma'], organizationId: string, id: string, param: string | null = null) {
  const row = isId('deployment', id) ? await db.deployment.findFirst({ where: { id, organizationId } }) : null;
  if (!row) throw missing('deployment', id, param);
  return row;
}

export async function retrieveDeployment(deps: Deps, organizationId: string, id: string) {
  return presentDeployment(await findDeployment(deps.db.prisma, organizationId, id));
}

/** Deployments, newest first, optionally of one distribution. */
export async function listDeployments(deps: Deps, organizationId: string, raw: unknown) {
  const input = parseInput(ListDeploymentsInput, raw);
  const dist = input.distribution ? await findDistribution(deps.db.prisma, organizationId, input.distribution, 'distribution') : undefined;
  const cursor = input.starting_after
    ? await findDeployment(deps.db.prisma, organizationId, input.starting_after, 'starting_after')
    : undefined;
  const rows = await deps.db.prisma.deployment.findMany({
    where: { organizationId, ...(dist ? { distributionId: dist.id } : {}), ...(cursor ? { id: { lt: cursor.id } } : {}) },
    orderBy: { id: 'desc' },
    take: input.limit + 1,
  });
  return { object: 'list' as const, data: rows.slice(0, input.limit).map(presentDeployment), has_more: rows.length > input.limit };
}
