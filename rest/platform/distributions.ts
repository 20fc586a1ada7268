import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import {
  CreateDistributionInput,
  ListDeploymentsInput,
  ListDistributionsInput,
  NoDistributionInput,
  listDeployments,
  listDistributions,
  mutateDistribution,
  retrieveDeployment,
  retrieveDistribution,
  validateDistribution,
  type DistributionMutation,
} from '../../src/domain/distribution/distribution.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { callerWith, idempotencyKeyOf, platformBody, platformQuery } from './pipeline.ts';
import {
  DeploymentEnvelope,
  DeploymentList,
  DistributionEnvelope,
  DistributionList,
  DistributionOperation,
  DistributionValidation,
} from './operation-schemas.ts';

/**
 * Distributions and their deployments. Every verb that does real work
 * answers 202 with the operation to poll; the distribution is brand-scoped
 * (Service-Brand), its wallet is the brand's.
 */
export function distributionRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Distributions', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };
  const accepted = { status: 202, description: 'The operation doing the work, and the distribution', schema: DistributionOperation };

  const mutate = async (ctx: Context, op: DistributionMutation['op'], scope: string) => {
    const caller = callerWith(ctx, scope);
    parseInput(NoDistributionInput, platformQuery(ctx));
    const input = await platformBody(deps, ctx);
    const m: DistributionMutation = op === 'create' ? { op, input } : { op, id: ctx.params.id!, input };
    const out = await mutateDistribution(deps, caller, m, idempotencyKeyOf(ctx));
    if (out.replayed) ctx.set('Idempotent-Replayed', 'true');
    ctx.status = out.status;
    ctx.body = out.body;
  };
  const verb = (name: 'launch' | 'pause' | 'resume' | 'cancel', scope: string, summary: string): RouteDef => ({
    ...common,
    method: 'POST',
    path: `/distributions/:id/${name}`,
    operationId: `${name}Distribution`,
    summary,
    scope,
    idempotent: true,
    success: accepted,
    handler: (ctx) => mutate(ctx, name, scope),
  });

  return [
    {
      ...common,
      method: 'POST',
      path: '/distributions',
      operationId: 'createDistribution',
      summary:
        'Create a distribution and launch it (needs distributions:write and distributions:launch); answers the distribution.launch operation',
      scope: 'distributions:launch',
      body: CreateDistributionInput,
      idempotent: true,
      success: accepted,
      handler: (ctx) => mutate(ctx, 'create', 'distributions:launch'),
    },
    {
      ...common,
      method: 'POST',
      path: '/distributions/validate',
      operationId: 'validateDistribution',
      summary: 'Dry run of create: the same checks and whether the wallet would fund it; creates nothing, moves no money',
      scope: 'distributions:write',
      body: CreateDistributionInput,
      success: { status: 200, description: 'The request would be accepted', schema: DistributionValidation },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'distributions:write');
        parseInput(NoDistributionInput, platformQuery(ctx));
        ctx.body = await validateDistribution(deps, caller, await platformBody(deps, ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/distributions',
      operationId: 'listDistributions',
      summary: "List the selected brand's distributions, newest first",
      scope: 'distributions:read',
      query: ListDistributionsInput,
      success: { status: 200, description: 'A page of distributions', schema: DistributionList },
      handler: async (ctx) => {
        ctx.body = await listDistributions(deps, callerWith(ctx, 'distributions:read'), platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/distributions/:id',
      operationId: 'retrieveDistribution',
      summary: 'Retrieve a distribution',
      scope: 'distributions:read',
      query: NoDistributionInput,
      success: { status: 200, description: 'The wrapped distribution', schema: DistributionEnvelope },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'distributions:read');
        parseInput(NoDistributionInput, platformQuery(ctx));
        ctx.body = { distribution: await retrieveDistribution(deps, caller.organization.id, ctx.params.id!) };
      },
    },
    verb(
      'launch',
      'distributions:launch',
      'Launch a failed distribution again; while a launch waits on funding, answers that same operation',
    ),
    verb('pause', 'distributions:write', 'Pause an active distribution'),
    verb('resume', 'distributions:write', 'Resume a paused distribution'),
    verb('cancel', 'distributions:write', 'Cancel a distribution (control plane: may run beside the live launch it cancels)'),
    {
      ...common,
      tag: 'Deployments',
      method: 'GET',
      path: '/deployments',
      operationId: 'listDeployments',
      summary: 'List deployments, newest first, optionally of one distribution',
      scope: 'deployments:read',
      query: ListDeploymentsInput,
      success: { status: 200, description: 'A page of deployments', schema: DeploymentList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'deployments:read');
        ctx.body = await listDeployments(deps, caller.organization.id, platformQuery(ctx));
      },
    },
    {
      ...common,
      tag: 'Deployments',
      method: 'GET',
      path: '/deployments/:id',
      operationId: 'retrieveDeployment',
      summary: 'Retrieve a deployment',
      scope: 'deployments:read',
      query: NoDistributionInput,
      success: { status: 200, description: 'The wrapped deployment', schema: DeploymentEnvelope },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'deployments:read');
        parseInput(NoDistributionInput, platformQuery(ctx));
        ctx.body = { deployment: await retrieveDeployment(deps, caller.organization.id, ctx.params.id!) };
      },
    },
  ];
}
