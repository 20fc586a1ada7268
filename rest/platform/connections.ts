import type { Deps } from '../../src/domain/context.ts';
import { connections } from '../../src/domain/connection/connection.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Connections of the selected brand: an entity's accounts at providers and what they granted. */
export function connectionRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Connections', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, connections.create, {
      ...common,
      method: 'POST',
      path: '/connections',
      operationId: 'createConnection',
      summary:
        "Record an entity's account at a provider and its grants (entity, or external_user_id with issuer: created on first use); one active per brand, entity, provider and account",
      description: 'The connection',
    }),
    actionRoute(deps, connections.list, {
      ...common,
      method: 'GET',
      path: '/connections',
      operationId: 'listConnections',
      summary: "The brand's connections, newest first; filter by entity, provider and status",
      description: 'A page of connections',
    }),
    actionRoute(deps, connections.retrieve, {
      ...common,
      method: 'GET',
      path: '/connections/:id',
      operationId: 'retrieveConnection',
      summary: 'One connection of the brand',
      description: 'The connection',
    }),
    actionRoute(deps, connections.revoke, {
      ...common,
      method: 'POST',
      path: '/connections/:id/revoke',
      operationId: 'revokeConnection',
      summary: 'Revoke a connection (final); each live deployment placed through it starts a deployment.teardown operation',
      description: 'The revoked connection and the teardown operations it started',
    }),
  ];
}
