import { EntityObject, entities } from '../../domain/entity/entities.ts';
import { Relationship as RelationshipShape } from '../../domain/relationship/presenter.ts';
import { relationships } from '../../domain/relationship/relationship.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { objectType } from '../derive.ts';
import { Node } from './node.ts';

/** Entities (read only, with their summary) and the brand's relationships with them. */
const summary = EntityObject.shape;
objectType('EntityIdentity', summary.identities.element, { description: 'An (externalUserId, issuer) pair naming an entity' });
objectType('EntityEnrollment', summary.enrollments.element, {
  description: "An entity's enrollment in a program of the selected brand, as its summary shows it",
});
objectType('EntityRelationship', summary.relationships.element, {
  description: "An entity's relationship with the selected brand, as its summary shows it",
});

export const Entity = objectType('Entity', EntityObject, {
  description: 'A creator or partner (ent_): its identities, current claims, and its enrollments and relationships in the selected brand',
  interfaces: [Node],
});

connectionAction('entities', entities.list, {
  type: Entity,
  description: 'Entities, newest first; externalUserId with issuer narrows to one (scope entities:read). Cursors are ent_ ids.',
});

queryAction('entity', entities.retrieve, {
  description: 'One entity by ent_ id (scope entities:read)',
  type: Entity,
});

export const Relationship = objectType('Relationship', RelationshipShape, {
  description: "The selected brand's relationship with an entity (rel_)",
  interfaces: [Node],
});

connectionAction('relationships', relationships.list, {
  type: Relationship,
  description: "The brand's relationships, newest first (scope relationships:read). Cursors are rel_ ids.",
});

queryAction('relationship', relationships.retrieve, {
  description: 'One relationship of the brand by rel_ id (scope relationships:read)',
  type: Relationship,
});

mutationAction('createRelationship', relationships.create, {
  description: 'Start a relationship between the brand and an entity; one not ended per brand and entity (scope relationships:write)',
  type: Relationship,
});

for (const [field, op] of [
  ['activateRelationship', 'activate'],
  ['pauseRelationship', 'pause'],
  ['resumeRelationship', 'resume'],
  ['endRelationship', 'end'],
] as const) {
  mutationAction(field, relationships[op], {
    description: `${op[0]!.toUpperCase()}${op.slice(1)} a relationship (scope relationships:write)`,
    type: Relationship,
  });
}
