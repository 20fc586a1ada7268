import { entities, type PublicEntity } from '../../domain/entity/entities.ts';
import type { PublicRelationship } from '../../domain/relationship/presenter.ts';
import { relationships } from '../../domain/relationship/relationship.ts';
import { connectionAction, mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { EnrollmentStanding, EnrollmentStatus, RelationshipStatus } from './enums.ts';
import { Node } from './node.ts';

/** Entities (read only, with their summary) and the brand's relationships with them. */
const EntityIdentity = builder.objectRef<PublicEntity['identities'][number]>('EntityIdentity').implement({
  description: 'An (externalUserId, issuer) pair naming an entity',
  fields: (t) => ({ externalUserId: t.exposeString('external_user_id'), issuer: t.exposeString('issuer') }),
});

const EntityEnrollment = builder.objectRef<PublicEntity['enrollments'][number]>('EntityEnrollment').implement({
  description: "An entity's enrollment in a program of the selected brand, as its summary shows it",
  fields: (t) => ({
    id: t.exposeID('id'),
    program: t.exposeString('program'),
    status: t.field({ type: EnrollmentStatus, resolve: (e) => e.status }),
    standing: t.field({ type: EnrollmentStanding, resolve: (e) => e.standing }),
  }),
});

const EntityRelationship = builder.objectRef<PublicEntity['relationships'][number]>('EntityRelationship').implement({
  description: "An entity's relationship with the selected brand, as its summary shows it",
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    status: t.field({ type: RelationshipStatus, resolve: (r) => r.status }),
  }),
});

export const Entity = builder.objectRef<PublicEntity>('Entity').implement({
  description: 'A creator or partner (ent_): its identities, current claims, and its enrollments and relationships in the selected brand',
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    identities: t.field({ type: [EntityIdentity], resolve: (e) => e.identities }),
    claims: t.exposeStringList('claims', { description: 'The keys of its current live claims, in key order' }),
    enrollments: t.field({ type: [EntityEnrollment], resolve: (e) => e.enrollments }),
    relationships: t.field({ type: [EntityRelationship], resolve: (e) => e.relationships }),
    createdAt: t.exposeString('created_at'),
  }),
});

connectionAction('entities', entities.list, {
  type: Entity,
  description: 'Entities, newest first; externalUserId with issuer narrows to one (scope entities:read). Cursors are ent_ ids.',
  args: (arg) => ({ externalUserId: arg.string(), issuer: arg.string() }),
  input: (a) => ({ input: given({ external_user_id: a.externalUserId ?? undefined, issuer: a.issuer ?? undefined }) }),
  argNames: { external_user_id: 'externalUserId' },
});

queryAction('entity', entities.retrieve, {
  description: 'One entity by ent_ id (scope entities:read)',
  type: Entity,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

export const Relationship = builder.objectRef<PublicRelationship>('Relationship').implement({
  description: "The selected brand's relationship with an entity (rel_)",
  interfaces: [Node],
  fields: (t) => ({
    id: t.exposeID('id'),
    brand: t.exposeString('brand'),
    entity: t.exposeString('entity'),
    status: t.field({ type: RelationshipStatus, resolve: (r) => r.status }),
    endedAt: t.exposeString('ended_at', { nullable: true }),
    livemode: t.exposeBoolean('livemode'),
    createdAt: t.exposeString('created_at'),
    updatedAt: t.exposeString('updated_at'),
  }),
});

connectionAction('relationships', relationships.list, {
  type: Relationship,
  description: "The brand's relationships, newest first (scope relationships:read). Cursors are rel_ ids.",
  args: (arg) => ({ ...subjectArgs, status: arg({ type: RelationshipStatus }) }),
  input: (a) => ({ input: given({ ...subjectInput(a), status: a.status ?? undefined }) }),
  argNames: { external_user_id: 'externalUserId' },
});

queryAction('relationship', relationships.retrieve, {
  description: 'One relationship of the brand by rel_ id (scope relationships:read)',
  type: Relationship,
  args: (arg) => ({ id: arg.id({ required: true }) }),
  input: (a) => ({ params: { id: String(a.id) } }),
});

mutationAction('createRelationship', relationships.create, {
  description: 'Start a relationship between the brand and an entity; one not ended per brand and entity (scope relationships:write)',
  type: Relationship,
  args: () => ({ ...subjectArgs }),
  input: (a) => ({ input: given(subjectInput(a)) }),
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
    args: (arg) => ({ id: arg.id({ required: true }) }),
    input: (a) => ({ params: { id: String(a.id) }, input: {} }),
  });
}
