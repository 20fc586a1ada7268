import type { Deps } from '../../src/domain/context.ts';
import { entities } from '../../src/domain/entity/entities.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Entities (read only): identities and a summary of claims, and of enrollments and relationships in the selected brand. */
export function entityRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Entities', errors: [400, 401, 403, 404, 429, 503] };
  return [
    actionRoute(deps, entities.list, {
      ...common,
      method: 'GET',
      path: '/entities',
      operationId: 'listEntities',
      summary: 'Entities, newest first; external_user_id with issuer narrows to the entity they name',
      description: 'A page of entities',
    }),
    actionRoute(deps, entities.retrieve, {
      ...common,
      method: 'GET',
      path: '/entities/:id',
      operationId: 'retrieveEntity',
      summary: 'One entity: its identities, current claims, and its enrollments and relationships in the selected brand',
      description: 'The entity',
    }),
  ];
}
