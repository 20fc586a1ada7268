import { z } from 'zod';
import type { Entity as EntityRow } from '../../db/generated/client.ts';
import { DomainError, missing } from '../errors.ts';
import { isId } from '../id.ts';
import { capability, read, type Reader } from '../action/action.ts';
import { ListInput, listOf, newestFirst } from '../action/list.ts';
import { ENROLLMENT_STATUSES, STANDINGS } from '../enrollment/presenter.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { RELATIONSHIP_STATUSES } from '../relationship/states.ts';
import { subjectFields } from './entity.ts';
import { isoTime } from '../shape.ts';
import { entitiesPage, entityOf } from './store.ts';
import { liveClaimKeys } from '../assertion/store.ts';
import { brandEnrollmentsOf } from '../enrollment/store.ts';
import { brandRelationshipsOf } from '../relationship/store.ts';

/**
 * Entities as a resource (read only; they are created implicitly by
 * assertions, enrollments, measurements and relationships). Each carries its
 * identities and a summary: its current live claims (keys), and its
 * enrollments and relationships in the selected brand. A page reads the
 * summaries of all its entities in three queries, whatever its size.
 */
export const ListEntitiesInput = z.strictObject({
  external_user_id: subjectFields.external_user_id,
  issuer: subjectFields.issuer,
  ...ListInput.shape,
});
export const NoEntityInput = z.strictObject({});

export const EntityObject = z.object({
  id: z.string().describe('prefix ent_'),
  object: z.literal('entity'),
  identities: z
    .array(z.object({ external_user_id: z.string(), issuer: z.string() }))
    .describe('the (external_user_id, issuer) pairs naming it'),
  claims: z.array(z.string()).describe('the keys of its current live claims (present, not expired), in key order'),
  enrollments: z
    .array(z.object({ id: z.string(), program: z.string(), status: z.enum(ENROLLMENT_STATUSES), standing: z.enum(STANDINGS) }))
    .describe("its enrollments in the selected brand's programs, newest first"),
  relationships: z
    .array(z.object({ id: z.string(), brand: z.string(), status: z.enum(RELATIONSHIP_STATUSES) }))
    .describe('its relationships with the selected brand, newest first (at most one is not ended)'),
  created_at: isoTime,
});
export type PublicEntity = z.output<typeof EntityObject>;

/** The summaries of `rows`, in three queries (claims, enrollments, relationships), presented in order. */
async function presentEntities(db: Reader, caller: SurfaceBCaller, rows: EntityRow[], now: Date): Promise<PublicEntity[]> {
  const ids = rows.map((r) => r.id);
  if (!ids.length) return [];
  const [claims, enrollments, relationships] = await Promise.all([
    liveClaimKeys(db, ids, now),
    brandEnrollmentsOf(db, ids, caller.brand.id),
    brandRelationshipsOf(db, ids, caller.brand.id),
  ]);
  const group = <T extends object>(list: T[], key: (x: T) => string) => {
    const m = new Map<string, T[]>();
    for (const x of list) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
    return m;
  };
  const byClaim = group(claims, (c) => c.entityId);
  const byEnrollment = group(enrollments, (e) => e.entity_id);
  const byRelationship = group(relationships, (r) => r.entityId);
  return rows.map((r) => ({
    id: r.id,
    object: 'entity',
    identities: r.externalUserId !== null && r.issuer !== null ? [{ external_user_id: r.externalUserId, issuer: r.issuer }] : [],
    claims: (byClaim.get(r.id) ?? []).map((c) => c.key),
    enrollments: (byEnrollment.get(r.id) ?? []).map((e) => ({
      id: e.id,
      program: e.program_id,
      status: e.status as PublicEntity['enrollments'][number]['status'],
      standing: e.standing as PublicEntity['enrollments'][number]['standing'],
    })),
    relationships: (byRelationship.get(r.id) ?? []).map((x) => ({
      id: x.id,
      brand: x.brandId,
      status: x.status as PublicEntity['relationships'][number]['status'],
    })),
    created_at: r.createdAt.toISOString(),
  }));
}

async function findEntityRow(db: Reader, organizationId: string, id: string, param: string | null = null): Promise<EntityRow> {
  const row = isId('entity', id) ? await entityOf(db, organizationId, id) : null;
  if (!row) throw missing('entity', id, param);
  return row;
}

/** One entity of the organization with its summary (the retrieve action and GraphQL `node(id:)`). */
export async function retrieveEntity(db: Reader, caller: SurfaceBCaller, id: string, now: Date): Promise<PublicEntity> {
  const [entity] = await presentEntities(db, caller, [await findEntityRow(db, caller.organization.id, id)], now);
  return entity!;
}

/** Newest first; `external_user_id` with `issuer` (both or neither) narrows to the entity they name. */
async function listEntities(db: Reader, caller: SurfaceBCaller, input: z.output<typeof ListEntitiesInput>, now: Date) {
  const { external_user_id: ext, issuer } = input;
  if ((ext === undefined) !== (issuer === undefined)) {
    const absent = ext === undefined ? 'external_user_id' : 'issuer';
    throw new DomainError('invalid_request', 'external_user_id and issuer filter together: give both or neither', absent);
  }
  const organizationId = caller.organization.id;
  const page = await newestFirst(
    input,
    (id, param) => findEntityRow(db, organizationId, id, param),
    (below, take) => entitiesPage(db, organizationId, ext !== undefined ? { externalUserId: ext, issuer } : undefined, below, take),
  );
  return { ...page, data: await presentEntities(db, caller, page.data, now) };
}

/** The entity actions (src/domain/action/action.ts). */
export const entities = capability({ name: 'entities', title: 'Entities', resource: 'entities' })({
  list: read({
    summary: 'Entities, newest first; external_user_id with issuer narrows to the entity they name',
    input: ListEntitiesInput,
    output: listOf(EntityObject),
    run: ({ deps, caller, input, db }) => listEntities(db, caller, input, deps.clock.now()),
  }),
  retrieve: read({
    summary: 'One entity: its identities, current claims, and its enrollments and relationships in the selected brand',
    params: ['id'],
    retrieves: 'entity',
    input: NoEntityInput,
    output: EntityObject,
    run: ({ deps, caller, params, db }) => retrieveEntity(db, caller, params.id, deps.clock.now()),
  }),
});
