import type { Deps } from '../../src/domain/context.ts';
import { assertions } from '../../src/domain/assertion/assertion.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Assertions: claims about an entity; organization-scoped (brand selection does not apply). */
export function assertionRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Assertions', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, assertions.create, {
      ...common,
      method: 'POST',
      path: '/assertions',
      operationId: 'createAssertion',
      summary: 'State a claim: 201 when it changed (new event), 200 when it was already in that state',
      description: 'The assertion event (200: the current one, nothing appended)',
    }),
    actionRoute(deps, assertions.revoke, {
      ...common,
      method: 'POST',
      path: '/assertions/revoke',
      operationId: 'revokeAssertion',
      summary: 'Revoke a claim: 201 with the revoked event when it was present, 200 and nothing appended when absent',
      description: 'The revocation (200: already absent)',
    }),
    actionRoute(deps, assertions.list, {
      ...common,
      method: 'GET',
      path: '/assertions',
      operationId: 'listAssertions',
      summary: "The subject's current claims (each as its newest event), ordered by key",
      description: 'A page of current claims',
    }),
    actionRoute(deps, assertions.retrieve, {
      ...common,
      method: 'GET',
      path: '/assertions/:id',
      operationId: 'retrieveAssertionEvent',
      summary: 'One assertion event by asrt_ id',
      description: 'The assertion event',
    }),
  ];
}
