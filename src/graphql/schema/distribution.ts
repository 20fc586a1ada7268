import {
  deployments,
  distributions,
  type PublicDeployment,
  type PublicDistribution,
  type PublicDistributionOperation,
} from '../../domain/distribution/distribution.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import type { z } from 'zod';
import { Operation } from './operation.ts';
import { DeploymentStatus, DistributionStatus } from './enums.ts';
import { Node } from './node.ts';

/** Distributions and deployments in GraphQL: the same actions as REST; each verb returns the operation doing the work. */
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
    connection: t.exposeString('connection', { nullable: true, description: 'The conn_ connection it places through, if any' }),
    status: t.expose('status', { type: DeploymentStatus }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

const DistributionOperation = builder.objectRef<PublicDistributionOperation>('DistributionOperation').implement({
  description: 'What a distribution mutation answers: the operation doing the work and the distribution as it is now',
  fields: (t) => ({
    operation: t.field({ type: Operation, resolve: (x) => x.operation }),
    distribution: t.field({ type: Distribution, resolve: (x) => x.distribution }),
  }),
});

const DistributionValidation = builder.objectRef<z.output<typeof distributions.validate.output>>('DistributionValidation').implement({
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
  description: 'One deployment of a new distribution: a provider, its config, and optionally the conn_ connection it places through',
  fields: (t) => ({ provider: t.string({ required: true }), config: t.field({ type: 'JSON' }), connection: t.string() }),
});

queryAction('distribution', distributions.retrieve, {
  type: Distribution,
  description: 'One distribution by dist_ id (scope distributions:read)',
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

connectionAction('distributions', distributions.list, {
  type: Distribution,
  description: "The selected brand's distributions, newest first",
  args: (arg) => ({ status: arg({ type: DistributionStatus }) }),
  input: (a) => ({ input: given({ status: a.status ?? undefined }) }),
});

queryAction('deployment', deployments.retrieve, {
  type: Deployment,
  description: 'One deployment by dep_ id (scope deployments:read)',
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

connectionAction('deployments', deployments.list, {
  type: Deployment,
  description: 'Deployments, newest first, optionally of one distribution (scope deployments:read). Cursors are dep_ ids.',
  args: (arg) => ({ distribution: arg.string() }),
  input: (a) => ({ input: given({ distribution: a.distribution ?? undefined }) }),
});

/** REST's create body from GraphQL arguments (omitted stays omitted). */
const createInput = (a: {
  name: string;
  budget: number;
  deployments: { provider: string; config?: unknown; connection?: string | null }[];
}) => ({
  name: a.name,
  budget: a.budget,
  deployments: a.deployments.map((d) =>
    given({ provider: d.provider, config: d.config ?? undefined, connection: d.connection ?? undefined }),
  ),
});

const createArgs = builder.args((t) => ({
  name: t.string({ required: true }),
  budget: t.int({ required: true }),
  deployments: t.field({ type: [DeploymentInput], required: true }),
}));

mutationAction('createDistribution', distributions.create, {
  type: DistributionOperation,
  description: 'Create and launch (needs distributions:write and distributions:launch); returns the distribution.launch operation',
  args: () => createArgs,
  input: (a) => ({ input: createInput(a) }),
});

mutationAction('validateDistribution', distributions.validate, {
  type: DistributionValidation,
  description: 'Dry run of createDistribution: creates nothing, moves no money',
  args: () => createArgs,
  input: (a) => ({ input: createInput(a) }),
});

const VERBS = {
  launchDistribution: distributions.launch,
  pauseDistribution: distributions.pause,
  resumeDistribution: distributions.resume,
  cancelDistribution: distributions.cancel,
};

for (const [field, action] of Object.entries(VERBS)) {
  const op = action.name.slice('distributions.'.length);
  mutationAction(field, action, {
    type: DistributionOperation,
    description: `${op[0]!.toUpperCase()}${op.slice(1)} a distribution (scope ${action.scope}); returns the distribution.${op} operation`,
    args: (arg) => ({ id: arg.id({ required: true }) }),
    input: (a) => ({ params: { id: String(a.id) }, input: {} }),
  });
}
