import type { Context } from 'koa';
import type { Deps } from '../../src/domain/context.ts';
import { authenticateOperator } from '../../src/domain/operator/operator-token.ts';
import { SetKillSwitchInput } from '../../src/domain/operator/kill-switch.ts';
import type { KillSwitch } from '../../src/runtime/kill-switch.ts';
import { ListInput, listOf } from '../../src/domain/action/list.ts';
import {
  CreateOrganizationInput,
  OperatorOrganization,
  createOrganization,
  listOrganizations,
  retrieveOrganization,
} from '../../src/domain/organization/organization.ts';
import { bearer, readJsonBody } from '../http/body.ts';
import { platformQuery } from '../platform/pipeline.ts';
import type { RouteDef } from '../http/route.ts';

/** Operator interface under `/operator`, guarded by the operator token. */
async function operatorBody(deps: Deps, ctx: Context): Promise<unknown> {
  await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
  return readJsonBody(ctx, deps.config.bodyLimitBytes);
}

export function operatorRoutes(deps: Deps, killSwitch: KillSwitch): RouteDef[] {
  const common = { tag: 'Operator', auth: 'operator' as const };
  return [
    {
      ...common,
      method: 'POST',
      path: '/operator/organizations',
      operationId: 'createOrganization',
      summary: 'Create an organization with its brands and a first user token',
      body: CreateOrganizationInput,
      success: { status: 201, description: 'The organization, brands (oldest first) and the user token, shown once' },
      errors: [400, 401, 409],
      handler: async (ctx) => {
        const body = await operatorBody(deps, ctx);
        const { organization, brands, user_token } = await createOrganization(deps, body);
        ctx.status = 201;
        ctx.body = { organization, brands, user_token };
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/operator/organizations',
      operationId: 'listOrganizations',
      summary: 'List organizations, newest first, each with its brands (oldest first)',
      query: ListInput,
      success: { status: 200, description: 'A page of organizations', schema: listOf(OperatorOrganization) },
      errors: [400, 401, 404],
      handler: async (ctx) => {
        await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
        ctx.body = await listOrganizations(deps, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/operator/organizations/:id',
      operationId: 'retrieveOrganization',
      summary: 'Retrieve an organization with its brands (oldest first: the first is the default brand)',
      success: { status: 200, description: 'The organization', schema: OperatorOrganization },
      errors: [401, 404],
      handler: async (ctx) => {
        await authenticateOperator(deps, bearer(ctx) || undefined, ctx.state.client);
        ctx.body = await retrieveOrganization(deps, ctx.params.id!);
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/operator/kill_switch',
      operationId: 'getKillSwitch',
      summary: 'Read the kill switch',
      success: { status: 200, description: 'The kill switch state' },
      errors: [401],
      handler: async (ctx) => {
        await operatorBody(deps, ctx);
        ctx.body = await killSwitch.state();
      },
    },
    {
      ...common,
      method: 'POST',
      path: '/operator/kill_switch',
      operationId: 'setKillSwitch',
      summary: 'Engage or release the kill switch (every Surface B route answers 503 while engaged)',
      body: SetKillSwitchInput,
      success: { status: 200, description: 'The new state' },
      errors: [400, 401],
      handler: async (ctx) => {
        ctx.body = await killSwitch.set(await operatorBody(deps, ctx));
      },
    },
  ];
}
