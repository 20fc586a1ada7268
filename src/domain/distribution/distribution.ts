import { z } from 'zod';
import type { Deployment as DeploymentRow, Distribution as DistributionRow } from '../../db/generated/client.ts';
import type { Prisma, Tx } from '../../db/database.ts';
import type { BatchSend } from '../../db/sql-port.ts';
import { capability, batchedMutation, mutation, read, type BatchedRun, type Reader } from '../action/action.ts';
import { listOf, newestFirst } from '../action/list.ts';
import type { Deps, OperationSlot } from '../context.ts';
import { appendEvent, insertEvents, type NewEvent } from '../event/event.ts';
import { DomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import {
  enqueueBatched,
  enqueueOperation,
  inlineSlots,
  liveOperation,
  Operation,
  operationConflict,
  presentOperation,
  requestCancel,
  wakeOperations,
} from '../operation/operation.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { amount, walletBalance } from '../wallet/wallet.ts';
import { providerFor } from './provider.ts';
import { listLimit } from '../platform/rate-limit.ts';
import { DISTRIBUTION_STATUSES } from './states.ts';
import { brandConnections, brandConnectionsStatement, type NamedConnection } from '../connection/store.ts';
import {
  brandDeployments,
  brandDistribution,
  distributionBrand,
  distributionsPage,
  insertDeploymentsStatement,
  insertDistributionStatement,
  updateDistribution,
} from './store.ts';
import { Deployment, Distribution, presentDeployment, presentDistribution } from './presenter.ts';
export {
  Deployment,
  Distribution,
  presentDeployment,
  presentDistribution,
  type PublicDeployment,
  type PublicDistribution,
} from './presenter.ts';

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
    .array(
      z.strictObject({
        provider: z.string().min(1).max(64),
        config: z.record(z.string(), z.unknown()).optional(),
        connection: z.string().min(1).max(128).optional().describe('a conn_ connection of the brand at the same provider'),
      }),
    )
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

/** What every distribution verb answers: the operation doing the work, and the distribution as it is now. */
export const DistributionOperation = z.object({ operation: Operation, distribution: Distribution });
export type PublicDistributionOperation = z.output<typeof DistributionOperation>;

export const DistributionValidation = z.object({
  object: z.literal('distribution_validation'),
  valid: z.literal(true),
  brand: z.string(),
  budget: z.number().int(),
  planned_spend: z.number().int(),
  deployments: z.number().int(),
  wallet_balance: z.number().int(),
  funding_sufficient: z.boolean(),
});

/** A distribution or deployment event carrying the object's public form. */
export function distributionEventOf(
  type: string,
  row: DistributionRow,
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
  row: DeploymentRow,
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
  row: DistributionRow,
  operationId: string | null,
  extra: Record<string, unknown> = {},
) {
  await appendEvent(deps, tx, distributionEventOf(type, row, operationId, extra));
}
export async function deploymentEvent(
  deps: Deps,
  tx: Tx,
  type: string,
  row: DeploymentRow,
  operationId: string | null,
  extra: Record<string, unknown> = {},
) {
  await appendEvent(deps, tx, deploymentEventOf(type, row, await distributionBrand(tx, row.distributionId), operationId, extra));
}

/** Checks a create request without touching anything: shared by create and the dry-run validate. */
function checkCreate(input: CreateDistribution) {
  const deployments = input.deployments.map((d, i) => {
    const provider = providerFor(d.provider, `deployments.${i}.provider`);
    return { provider: provider.name, config: provider.parseConfig(d.config, `deployments.${i}.config`), adapter: provider };
  });
  const planned = deployments.reduce((sum, d) => sum + d.adapter.plannedSpend(d.config), 0);
  if (planned > input.budget) {
    throw new DomainError('invalid_request', `The deployments plan to spend ${planned}, more than the budget of ${input.budget}`, 'budget');
  }
  return { deployments, planned };
}

/** The brand's connections the deployments name, read with `fetch` (create reads them on the batched port, validate with Prisma). */
async function checkConnections(input: CreateDistribution, fetch: (ids: string[]) => Promise<NamedConnection[]>): Promise<void> {
  const ids = [...new Set(input.deployments.flatMap((d) => (d.connection === undefined ? [] : [d.connection])))];
  if (!ids.length) return;
  const found = new Map((await fetch(ids.filter((id) => isId('connection', id)))).map((c) => [c.id, c]));
  input.deployments.forEach((d, i) => {
    if (d.connection === undefined) return;
    const param = `deployments.${i}.connection`;
    const c = found.get(d.connection);
    if (!c) throw missing('connection', d.connection, param);
    if (c.status !== 'active')
      throw new DomainError('resource_conflict', `Connection ${c.id} is ${c.status}; only an active one can place`, param);
    if (c.provider !== d.provider)
      throw new DomainError('invalid_request', `Connection ${c.id} is at provider ${c.provider}, not ${d.provider}`, param);
  });
}

/** Dry run: the same checks as create, plus whether the brand's wallet would fund it. Creates nothing, moves no money. */
async function validateDistribution(db: Reader, caller: SurfaceBCaller, input: CreateDistribution) {
  const { deployments, planned } = checkCreate(input);
  await checkConnections(input, (ids) => brandConnections(db, caller.organization.id, caller.brand.id, ids));
  const balance = await walletBalance(db, caller.brand.id);
  return {
    object: 'distribution_validation' as const,
    valid: true as const,
    brand: caller.brand.id,
    budget: input.budget,
    planned_spend: planned,
    deployments: deployments.length,
    wallet_balance: balance,
    funding_sufficient: balance >= input.budget,
  };
}

/** A distribution of the caller's brand; another brand's, another organization's or a bad id is 404 alike. */
async function findDistribution(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null) {
  const row = isId('distribution', id) ? await brandDistribution(db, caller, id) : null;
  if (!row) throw missing('distribution', id, param);
  return row;
}

async function startLaunch(deps: Deps, tx: Tx, dist: DistributionRow) {
  const op = await enqueueOperation(deps, tx, {
    organizationId: dist.organizationId,
    brandId: dist.brandId,
    subject: { type: 'distribution', id: dist.id },
    kind: 'distribution.launch',
    progress: { phase: 'reserve' },
  });
  // A distribution created for this launch is launching already.
  const row =
    dist.status === 'launching' ? dist : await updateDistribution(tx, dist.id, { status: 'launching', updatedAt: deps.clock.now() });
  await distributionEvent(deps, tx, 'distribution.launching', row, op.id);
  return { op, row };
}

/**
 * Create and launch on the batched SQL port: the distribution, its deployments, the launch operation and their
 * events travel in the idempotency record's transaction, one round trip before the commit. When this process's
 * worker has a free slot, the launch is inserted already leased to it and starts right after the commit.
 */
async function createAndLaunch(
  deps: Deps,
  send: BatchSend,
  caller: SurfaceBCaller,
  input: CreateDistribution,
  take: () => OperationSlot | undefined,
): Promise<BatchedRun<PublicDistributionOperation>> {
  const { deployments } = checkCreate(input);
  await checkConnections(input, async (ids) =>
    ids.length ? ((await send([brandConnectionsStatement(caller.organization.id, caller.brand.id, ids)]))[0] as NamedConnection[]) : [],
  );
  const now = deps.clock.now();
  const org = caller.organization.id;
  const dist: DistributionRow = {
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
  const deps_: DeploymentRow[] = deployments.map((d, i) => ({
    id: newId('deployment'),
    organizationId: org,
    distributionId: dist.id,
    provider: d.provider,
    config: d.config as Prisma.JsonObject,
    connectionId: input.deployments[i]!.connection ?? null,
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
  await send([
    insertDistributionStatement({ id: dist.id, organizationId: org, brandId: dist.brandId, name: dist.name, budget: input.budget, now }),
    ...launch.statements,
    insertDeploymentsStatement(deps_),
    insertEvents(deps, events),
  ]);
  return {
    value: { operation: presentOperation(op), distribution: presentDistribution(dist) },
    finish: [],
    appended: true,
    committed: launch.committed,
  };
}

/**
 * Launch again. While a launch waits on funding, relaunching reuses that
 * operation (and nudges it to retry its reservation); any other live
 * mutation is a conflict. Only a failed distribution has anything to launch.
 */
async function relaunch(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<PublicDistributionOperation> {
  const dist = await findDistribution(tx, caller, id);
  const subject = { type: 'distribution', id: dist.id };
  const live = await liveOperation(tx, subject);
  if (live) {
    if (live.kind !== 'distribution.launch' || live.waitingReason !== 'funding_required') throw operationConflict(subject);
    await wakeOperations(deps, tx, { id: live.id });
    return { operation: presentOperation(live), distribution: presentDistribution(dist) };
  }
  if (dist.status !== 'failed')
    throw new DomainError(
      'resource_conflict',
      `A ${dist.status} distribution cannot be launched; only a failed one can be launched again`,
      null,
    );
  const { op, row } = await startLaunch(deps, tx, dist);
  return { operation: presentOperation(op), distribution: presentDistribution(row) };
}

const PAUSE_RESUME = {
  pause: { from: ['active', 'partially_active'], kind: 'distribution.pause' },
  resume: { from: ['paused'], kind: 'distribution.resume' },
} as const;

async function pauseOrResume(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  id: string,
  verb: 'pause' | 'resume',
): Promise<PublicDistributionOperation> {
  const dist = await findDistribution(tx, caller, id);
  const subject = { type: 'distribution', id: dist.id };
  if (await liveOperation(tx, subject)) throw operationConflict(subject);
  const rule = PAUSE_RESUME[verb];
  if (!(rule.from as readonly string[]).includes(dist.status)) {
    throw new DomainError('resource_conflict', `A ${dist.status} distribution cannot be ${verb}d`, null);
  }
  const op = await enqueueOperation(deps, tx, { organizationId: dist.organizationId, brandId: dist.brandId, subject, kind: rule.kind });
  return { operation: presentOperation(op), distribution: presentDistribution(dist) };
}

/**
 * Cancel runs on the control plane: it may coexist with the live mutation it
 * targets. It records the request on the target (which settles `canceled` at
 * its next step) and then tears the deployments down. A second cancel while
 * one is live returns that one.
 */
async function cancel(deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string): Promise<PublicDistributionOperation> {
  const dist = await findDistribution(tx, caller, id);
  const subject = { type: 'distribution', id: dist.id };
  const running = await liveOperation(tx, subject, 'control');
  if (running) return { operation: presentOperation(running), distribution: presentDistribution(dist) };
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
  if (target) await requestCancel(deps, tx, target, op);
  return { operation: presentOperation(op), distribution: presentDistribution(dist) };
}

async function findDeployment(db: Reader, caller: SurfaceBCaller, id: string, param: string | null = null) {
  const [row] = isId('deployment', id) ? await brandDeployments(db, caller, { id }, 1) : [];
  if (!row) throw missing('deployment', id, param);
  return row;
}

/** A verb on one distribution: it records intent and answers the operation doing the work; the key also dedupes the operation. */
const verb = (
  summary: string,
  run: (deps: Deps, tx: Tx, caller: SurfaceBCaller, id: string) => Promise<PublicDistributionOperation>,
  scope?: string,
) =>
  mutation({
    summary,
    scope,
    params: ['id'],
    input: NoDistributionInput,
    output: DistributionOperation,
    outcome: 'accepted',
    run: ({ deps, caller, params, db }) => run(deps, db, caller, params.id),
  });

/** The distribution actions (src/domain/action/action.ts): each verb's scope is declared here, once. */
export const distributions = capability({ name: 'distributions', title: 'Distributions', resource: 'distributions' })({
  /** Needs distributions:launch and distributions:write; creates and launches on the batched SQL port. */
  create: batchedMutation({
    summary:
      'Create a distribution and launch it (needs distributions:write and distributions:launch); answers the distribution.launch operation',
    scope: 'distributions:launch',
    alsoNeeds: ['distributions:write'],
    input: CreateDistributionInput,
    output: DistributionOperation,
    outcome: 'accepted',
    within: inlineSlots,
    run: ({ deps, caller, input, send, hold }) => createAndLaunch(deps, send, caller, input, hold),
  }),
  validate: read({
    summary: 'Dry run of create: the same checks and whether the wallet would fund it; creates nothing, moves no money',
    scope: 'distributions:write',
    input: CreateDistributionInput,
    output: DistributionValidation,
    run: ({ caller, input, db }) => validateDistribution(db, caller, input),
  }),
  /** The selected brand's distributions, newest first. */
  list: read({
    summary: "List the selected brand's distributions, newest first",
    input: ListDistributionsInput,
    output: listOf(Distribution),
    run: async ({ caller, input, db }) => {
      const page = await newestFirst(
        input,
        (id, param) => findDistribution(db, caller, id, param),
        (below, take) => distributionsPage(db, caller, input.status, below, take),
      );
      return { ...page, data: page.data.map(presentDistribution) };
    },
  }),
  retrieve: read({
    summary: 'Retrieve a distribution',
    params: ['id'],
    retrieves: 'distribution',
    input: NoDistributionInput,
    output: Distribution,
    run: async ({ caller, params, db }) => presentDistribution(await findDistribution(db, caller, params.id)),
  }),
  launch: verb(
    'Launch a failed distribution again; while a launch waits on funding, answers that same operation',
    relaunch,
    'distributions:launch',
  ),
  pause: verb('Pause an active distribution', (deps, tx, caller, id) => pauseOrResume(deps, tx, caller, id, 'pause')),
  resume: verb('Resume a paused distribution', (deps, tx, caller, id) => pauseOrResume(deps, tx, caller, id, 'resume')),
  cancel: verb('Cancel a distribution (control plane: may run beside the live launch it cancels)', cancel),
});

export const deployments = capability({ name: 'deployments', title: 'Deployments', resource: 'deployments' })({
  /** Newest first, optionally of one distribution. */
  list: read({
    summary: 'List deployments, newest first, optionally of one distribution',
    input: ListDeploymentsInput,
    output: listOf(Deployment),
    run: async ({ caller, input, db }) => {
      const dist = input.distribution ? await findDistribution(db, caller, input.distribution, 'distribution') : undefined;
      const page = await newestFirst(
        input,
        (id, param) => findDeployment(db, caller, id, param),
        (below, take) => brandDeployments(db, caller, { distributionId: dist?.id, below: below.id?.lt }, take),
      );
      return { ...page, data: page.data.map(presentDeployment) };
    },
  }),
  retrieve: read({
    summary: 'Retrieve a deployment',
    params: ['id'],
    retrieves: 'deployment',
    input: NoDistributionInput,
    output: Deployment,
    run: async ({ caller, params, db }) => presentDeployment(await findDeployment(db, caller, params.id)),
  }),
});
