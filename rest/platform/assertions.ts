import type { Deps } from '../../src/domain/context.ts';
import {
  CreateAssertionInput,
  ListAssertionsInput,
  NoAssertionInput,
  RevokeAssertionInput,
  listAssertions,
  mutateAssertion,
  retrieveAssertion,
} from '../../src/domain/assertion/assertion.ts';
import type { RouteDef } from '../http/route.ts';
import { answerMutation, answerRetrieve } from './answer.ts';
import { callerWith, confirmsAdmission, platformQuery } from './pipeline.ts';
import { Assertion, AssertionList, AssertionRevocation } from './standing-schemas.ts';

/** Assertions: claims about an entity; organization-scoped (brand selection does not apply). */
export function assertionRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Assertions', auth: 'platform' as const, errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    {
      ...common,
      method: 'POST',
      path: '/assertions',
      operationId: 'createAssertion',
      summary: 'State a claim: 201 when it changed (new event), 200 when it was already in that state',
      scope: 'assertions:write',
      body: CreateAssertionInput,
      idempotent: true,
      success: { status: 201, description: 'The assertion event (200: the current one, nothing appended)', schema: Assertion },
      handler: confirmsAdmission((ctx) =>
        answerMutation(deps, ctx, 'assertions:write', (caller, input, key) => mutateAssertion(deps, caller, { op: 'create', input }, key)),
      ),
    },
    {
      ...common,
      method: 'POST',
      path: '/assertions/revoke',
      operationId: 'revokeAssertion',
      summary: 'Revoke a claim: 201 with the revoked event when it was present, 200 and nothing appended when absent',
      scope: 'assertions:write',
      body: RevokeAssertionInput,
      idempotent: true,
      success: { status: 201, description: 'The revocation (200: already absent)', schema: AssertionRevocation },
      handler: confirmsAdmission((ctx) =>
        answerMutation(deps, ctx, 'assertions:write', (caller, input, key) => mutateAssertion(deps, caller, { op: 'revoke', input }, key)),
      ),
    },
    {
      ...common,
      method: 'GET',
      path: '/assertions',
      operationId: 'listAssertions',
      summary: "The subject's current claims (each as its newest event), ordered by key",
      scope: 'assertions:read',
      query: ListAssertionsInput,
      success: { status: 200, description: 'A page of current claims', schema: AssertionList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'assertions:read');
        ctx.body = await listAssertions(deps, caller.organization.id, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/assertions/:id',
      operationId: 'retrieveAssertionEvent',
      summary: 'One assertion event by asrt_ id',
      scope: 'assertions:read',
      query: NoAssertionInput,
      success: { status: 200, description: 'The assertion event', schema: Assertion },
      handler: (ctx) => answerRetrieve(ctx, 'assertions:read', (caller) => retrieveAssertion(deps, caller.organization.id, ctx.params.id!)),
    },
  ];
}
