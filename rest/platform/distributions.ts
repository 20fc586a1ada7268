import type { Deps } from '../../src/domain/context.ts';
import { deployments, distributions } from '../../src/domain/distribution/distribution.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/**
 * Distributions and their deployments. Every verb that does real work
 * answers 202 with the operation to poll; the distribution is brand-scoped
 * (Service-Brand), its wallet is the brand's.
 */
export function distributionRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Distributions', errors: [400, 401, 403, 404, 409, 429, 503] };
  const accepted = 'The operation doing the work, and the distribution';
  const verb = (name: 'launch' | 'pause' | 'resume' | 'cancel', summary: string) =>
    actionRoute(deps, distributions[name], {
      ...common,
      method: 'POST',
      path: `/distributions/:id/${name}`,
      operationId: `${name}Distribution`,
      summary,
      description: accepted,
    });

  return [
    actionRoute(deps, distributions.create, {
      ...common,
      method: 'POST',
      path: '/distributions',
      operationId: 'createDistribution',
      summary:
        'Create a distribution and launch it (needs distributions:write and distributions:launch); answers the distribution.launch operation',
      description: accepted,
    }),
    actionRoute(deps, distributions.validate, {
      ...common,
      method: 'POST',
      path: '/distributions/validate',
      operationId: 'validateDistribution',
      summary: 'Dry run of create: the same checks and whether the wallet would fund it; creates nothing, moves no money',
      description: 'The request would be accepted',
    }),
    actionRoute(deps, distributions.list, {
      ...common,
      method: 'GET',
      path: '/distributions',
      operationId: 'listDistributions',
      summary: "List the selected brand's distributions, newest first",
      description: 'A page of distributions',
    }),
    actionRoute(deps, distributions.retrieve, {
      ...common,
      method: 'GET',
      path: '/distributions/:id',
      operationId: 'retrieveDistribution',
      summary: 'Retrieve a distribution',
      description: 'The wrapped distribution',
      envelope: 'distribution',
    }),
    verb('launch', 'Launch a failed distribution again; while a launch waits on funding, answers that same operation'),
    verb('pause', 'Pause an active distribution'),
    verb('resume', 'Resume a paused distribution'),
    verb('cancel', 'Cancel a distribution (control plane: may run beside the live launch it cancels)'),
    actionRoute(deps, deployments.list, {
      ...common,
      tag: 'Deployments',
      method: 'GET',
      path: '/deployments',
      operationId: 'listDeployments',
      summary: 'List deployments, newest first, optionally of one distribution',
      description: 'A page of deployments',
    }),
    actionRoute(deps, deployments.retrieve, {
      ...common,
      tag: 'Deployments',
      method: 'GET',
      path: '/deployments/:id',
      operationId: 'retrieveDeployment',
      summary: 'Retrieve a deployment',
      description: 'The wrapped deployment',
      envelope: 'deployment',
    }),
  ];
}
