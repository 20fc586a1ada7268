import type { Deps } from '../../src/domain/context.ts';
import { relationships } from '../../src/domain/relationship/relationship.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Relationships of the selected brand with entities: created → active ⇄ paused → ended. */
export function relationshipRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Relationships', errors: [400, 401, 403, 404, 409, 429, 503] };
  const move = (op: 'activate' | 'pause' | 'resume' | 'end', summary: string): RouteDef =>
    actionRoute(deps, relationships[op], {
      ...common,
      method: 'POST',
      path: `/relationships/:id/${op}`,
      operationId: `${op}Relationship`,
      summary,
      description: 'The relationship',
    });
  return [
    actionRoute(deps, relationships.create, {
      ...common,
      method: 'POST',
      path: '/relationships',
      operationId: 'createRelationship',
      summary:
        'Start a relationship between the brand and an entity (entity, or external_user_id with issuer: created on first use); one not ended per brand and entity',
      description: 'The relationship',
    }),
    move('activate', 'Activate a created relationship (relationship.activated)'),
    move('pause', 'Pause an active relationship (relationship.paused)'),
    move('resume', 'Resume a paused relationship (relationship.resumed)'),
    move('end', "End a relationship (relationship.ended; final): the entity's active enrollments in the brand's programs become paused"),
    actionRoute(deps, relationships.list, {
      ...common,
      method: 'GET',
      path: '/relationships',
      operationId: 'listRelationships',
      summary: "The brand's relationships, newest first; filter by subject and status",
      description: 'A page of relationships',
    }),
    actionRoute(deps, relationships.retrieve, {
      ...common,
      method: 'GET',
      path: '/relationships/:id',
      operationId: 'retrieveRelationship',
      summary: 'One relationship of the brand',
      description: 'The relationship',
    }),
  ];
}
