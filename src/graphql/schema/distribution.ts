import {
  CreateDistributionInput,
  DistributionOperation as OperationShape,
  DistributionValidation as ValidationShape,
  deployments,
  distributions,
} from '../../domain/distribution/distribution.ts';
import { Deployment as DeploymentShape, Distribution as DistributionShape } from '../../domain/distribution/presenter.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { inputType, objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Distributions and deployments in GraphQL: the same actions as REST; each verb returns the operation doing the work. */
const Distribution = objectType('Distribution', DistributionShape, {
  description: "A brand's budgeted campaign, placed through deployments",
  interfaces: [Node],
});

const Deployment = objectType('Deployment', DeploymentShape, {
  description: 'One placement of a distribution, run by a provider adapter',
  interfaces: [Node],
});

const DistributionOperation = objectType('DistributionOperation', OperationShape, {
  description: 'What a distribution mutation answers: the operation doing the work and the distribution as it is now',
});

const DistributionValidation = objectType('DistributionValidation', ValidationShape, {
  description: 'The dry run of a createDistribution: the same checks, nothing created',
});

inputType('DeploymentInput', CreateDistributionInput.shape.deployments.element, {
  description: 'One deployment of a new distribution: a provider, its config, and optionally the conn_ connection it places through',
});

queryAction('distribution', distributions.retrieve, {
  type: Distribution,
  description: 'One distribution by dist_ id (scope distributions:read)',
});

connectionAction('distributions', distributions.list, {
  type: Distribution,
  description: "The selected brand's distributions, newest first",
});

queryAction('deployment', deployments.retrieve, {
  type: Deployment,
  description: 'One deployment by dep_ id (scope deployments:read)',
});

connectionAction('deployments', deployments.list, {
  type: Deployment,
  description: 'Deployments, newest first, optionally of one distribution (scope deployments:read). Cursors are dep_ ids.',
});

mutationAction('createDistribution', distributions.create, {
  type: DistributionOperation,
  description: 'Create and launch (needs distributions:write and distributions:launch); returns the distribution.launch operation',
});

mutationAction('validateDistribution', distributions.validate, {
  type: DistributionValidation,
  description: 'Dry run of createDistribution: creates nothing, moves no money',
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
  });
}
