import type { GraphQLResolveInfo } from 'graphql';
import {
  listDeployments,
  listDistributions,
  mutateDistribution,
  retrieveDeployment,
  retrieveDistribution,
  validateDistribution,
  type DistributionMutation,
  type PublicDeployment,
  type PublicDistribution,
} from '../../domain/distribution/distribution.ts';
import type { PublicOperation } from '../../domain/operation/operation.ts';
import { builder } from '../builder.ts';
import type { GraphQLContext } from '../context.ts';
import { listAsConnection, Operation } from './operation.ts';
import { graphqlIdempotencyKey } from '../idempotency.ts';
import { DeploymentStatus, DistributionStatus } from './enums.ts';
import { Node } from './node.ts';

/** Distributions and deployments in GraphQL: the same domain verbs as REST; each mutation returns the operation doing the work. */
const Distribution = builder.objectRef<PublicDistribution>('Distribution').implement({
  description: "A brand's budgeted campaign, placed through deployments",
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    name: t.exposeString('name'),
    status: t.expose('status', { type: DistributionStatus }),
    budget: t.exposeInt('budget', { description: 'minor units' }),
    budgetReserved: t.exposeInt('budget_reserved'),
    budgetSpent: t.exposeInt('budget_spent'),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const Deployment = builder.objectRef<PublicDeployment>('Deployment').implement({
  description: 'One placement of a distribution, run by a provider adapter',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    distribution: t.exposeString('distribution'),
    provider: t.exposeString('provider'),
    config: t.field({ type: 'JSON', resolve: (d) => d.config }),
    status: t.expose('status', { type: DeploymentStatus }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

type Accepted = { operation: PublicOperation; distribution: PublicDistribution };
const DistributionOperation = builder.objectRef<Accepted>('DistributionOperation').implement({
  description: 'What a distribution mutation answers: the operation doing the work and the distribution as it is now',
  fields: (t) => ({
    operation: t.field({ type: Operation, resolve: (x) => x.operation }),
    distribution: t.field({ type: Distribution, resolve: (x) => x.distribution }),
  }),
});

type Validation = Awaited<ReturnType<typeof validateDistribution>>;
const DistributionValidation = builder.objectRef<Validation>('DistributionValidation').implement({
  description: 'The dry run of a createDistribution: the same checks, nothing created',
  fields: (t) => ({
    valid: t.exposeBoolean('valid'),
    brand: t.exposeString('brand'),
    budget: t.exposeInt('budget'),
    plannedSpend: t.exposeInt('planned_spend'),
    deployments: t.exposeInt('deployments'),
    walletBalance: t.exposeInt('wallet_balance'),
    fundingSufficient: t.exposeBoolean('funding_sufficient'),
  }),
});

const DeploymentInput = builder.inputType('DeploymentInput', {
  description: 'One deployment of a new distribution: a provider and its config',
  fields: (t) => ({ provider: t.string({ required: true }), config: t.field({ type: 'JSON' }) }),
});

builder.queryField('distribution', (t) =>
  t.field({
    type: Distribution,
    description: 'One distribution by dist_ id (scope distributions:read)',
    authScopes: { scope: 'distributions:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveDistribution(ctx.deps, ctx.caller.organization.id, String(a.id)),
  }),
);

builder.queryField('distributions', (t) =>
  t.connection({
    type: Distribution,
    description: "The selected brand's distributions, newest first",
    authScopes: { scope: 'distributions:read' },
    args: { status: t.arg({ type: DistributionStatus }) },
    resolve: (_r, a, ctx) => listAsConnection(a, { status: a.status }, (input) => listDistributions(ctx.deps, ctx.caller, input)),
  }),
);

builder.queryField('deployment', (t) =>
  t.field({
    type: Deployment,
    description: 'One deployment by dep_ id (scope deployments:read)',
    authScopes: { scope: 'deployments:read' },
    args: { id: t.arg.id({ required: true }) },
    resolve: (_r, a, ctx) => retrieveDeployment(ctx.deps, ctx.caller.organization.id, String(a.id)),
  }),
);

builder.queryField('deployments', (t) =>
  t.connection({
    type: Deployment,
    description: 'Deployments, newest first, optionally of one distribution (scope deployments:read). Cursors are dep_ ids.',
    authScopes: { scope: 'deployments:read' },
    args: { distribution: t.arg.string() },
    resolve: (_r, a, ctx) =>
      listAsConnection(a, { distribution: a.distribution }, (input) => listDeployments(ctx.deps, ctx.caller.organization.id, input)),
  }),
);

const IDEMPOTENCY_KEY = { description: 'Overrides the Idempotency-Key header' };

async function mutate(ctx: GraphQLContext, info: GraphQLResolveInfo, m: DistributionMutation, key: string | null | undefined) {
  return (await mutateDistribution(ctx.deps, ctx.caller, m, graphqlIdempotencyKey(ctx, info, key))).body as Accepted;
}

/** REST's create body from GraphQL arguments (omitted stays omitted). */
const createInput = (a: { name: string; budget: number; deployments: { provider: string; config?: unknown }[] }) => ({
  name: a.name,
  budget: a.budget,
  deployments: a.deployments.map((d) => (d.config == null ? { provider: d.provider } : { provider: d.provider, config: d.config })),
});

builder.mutationField('createDistribution', (t) =>
  t.field({
    type: DistributionOperation,
    description: 'Create and launch (needs distributions:write and distributions:launch); returns the distribution.launch operation',
    authScopes: { scope: 'distributions:launch' },
    args: {
      name: t.arg.string({ required: true }),
      budget: t.arg.int({ required: true }),
      deployments: t.arg({ type: [DeploymentInput], required: true }),
      idempotencyKey: t.arg.string(IDEMPOTENCY_KEY),
    },
    resolve: (_r, a, ctx, info) => mutate(ctx, info, { op: 'create', input: createInput(a) }, a.idempotencyKey),
  }),
);

builder.mutationField('validateDistribution', (t) =>
  t.field({
    type: DistributionValidation,
    description: 'Dry run of createDistribution: creates nothing, moves no money',
    authScopes: { scope: 'distributions:write' },
    args: {
      name: t.arg.string({ required: true }),
      budget: t.arg.int({ required: true }),
      deployments: t.arg({ type: [DeploymentInput], required: true }),
    },
    resolve: (_r, a, ctx) => validateDistribution(ctx.deps, ctx.caller, createInput(a)),
  }),
);

const VERBS = {
  launchDistribution: ['launch', 'distributions:launch'],
  pauseDistribution: ['pause', 'distributions:write'],
  resumeDistribution: ['resume', 'distributions:write'],
  cancelDistribution: ['cancel', 'distributions:write'],
} as const;

for (const [field, [op, scope]] of Object.entries(VERBS)) {
  builder.mutationField(field, (t) =>
    t.field({
      type: DistributionOperation,
      description: `${op[0]!.toUpperCase()}${op.slice(1)} a distribution (scope ${scope}); returns the distribution.${op} operation`,
      authScopes: { scope },
      args: { id: t.arg.id({ required: true }), idempotencyKey: t.arg.string(IDEMPOTENCY_KEY) },
      resolve: (_r, a, ctx, info) => mutate(ctx, info, { op, id: String(a.id) }, a.idempotencyKey),
    }),
  );
}
