import { Prisma, type Tx } from '../../db/database.ts';
import type { Entity, PrismaClient } from '../../db/generated/client.ts';

/** The entity capability's SQL. */
type Reader = Tx | PrismaClient;

/** A subject: an `ent_` id, or the caller's (external_user_id, issuer) pair. */
export type Subject = { kind: 'entity'; id: string } | { kind: 'external'; externalUserId: string; issuer: string };

export function entityOf(db: Reader, organizationId: string, id: string): Promise<Entity | null> {
  return db.entity.findFirst({ where: { id, organizationId } });
}

export function entityByExternalId(db: Reader, organizationId: string, externalUserId: string, issuer: string): Promise<Entity | null> {
  return db.entity.findFirst({ where: { organizationId, externalUserId, issuer } });
}

/** Up to `take` of the organization's entities below a cursor, newest first; `external` narrows to the pair's. */
export function entitiesPage(
  db: Reader,
  organizationId: string,
  external: { externalUserId: string; issuer: string | undefined } | undefined,
  below: { id?: { lt: string } },
  take: number,
): Promise<Entity[]> {
  return db.entity.findMany({
    where: { organizationId, ...(external ? { externalUserId: external.externalUserId, issuer: external.issuer } : {}), ...below },
    orderBy: { id: 'desc' },
    take,
  });
}

/** ON CONFLICT DO NOTHING makes concurrent first uses of an external pair converge on one row. */
export function insertExternalEntityStatement(
  id: string,
  organizationId: string,
  subject: Extract<Subject, { kind: 'external' }>,
  now: Date,
): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO entity (id, organization_id, external_user_id, issuer, created_at)
    VALUES (${id}, ${organizationId}, ${subject.externalUserId}, ${subject.issuer}, ${now}::timestamptz)
    ON CONFLICT (organization_id, issuer, external_user_id) DO NOTHING`;
}

export async function insertExternalEntity(tx: Tx, statement: Prisma.Sql): Promise<void> {
  await tx.$executeRaw(statement);
}

/** The entity a subject names, as a query for statements on the batched SQL port (no row for an unknown subject). */
export function subjectEntity(organizationId: string, subject: Subject): Prisma.Sql {
  if (subject.kind === 'entity') return Prisma.sql`SELECT id FROM entity WHERE id = ${subject.id} AND organization_id = ${organizationId}`;
  return Prisma.sql`SELECT id FROM entity WHERE organization_id = ${organizationId} AND issuer = ${subject.issuer} AND external_user_id = ${subject.externalUserId}`;
}

/** subjectEntity as a scalar SQL expression (a parenthesized subquery: NULL for an unknown subject). */
export const subjectEntityId = (organizationId: string, subject: Subject): Prisma.Sql =>
  Prisma.sql`(${subjectEntity(organizationId, subject)})`;

/** The subject's entity row lock, as a statement of a batch. */
export const lockSubjectStatement = (organizationId: string, subject: Subject): Prisma.Sql =>
  Prisma.sql`${subjectEntity(organizationId, subject)} FOR UPDATE`;

/**
 * Serializes every change that reads or writes an entity's claims and
 * standing: writers of one claim, and evaluations of the entity's
 * enrollments, take this row lock first. Under READ COMMITTED the statements
 * after the lock see everything the previous holder committed, so each
 * evaluation starts from the standing the previous one left.
 */
export async function lockEntity(tx: Tx, entityId: string): Promise<void> {
  await tx.$queryRaw`SELECT id FROM entity WHERE id = ${entityId} FOR UPDATE`;
}

/** External pairs created on first use, in one statement whatever their number (ON CONFLICT DO NOTHING converges concurrent first uses). */
export async function insertExternalEntities(
  tx: Tx,
  organizationId: string,
  pairs: { id: string; issuer: string; external_user_id: string }[],
  now: Date,
): Promise<void> {
  await tx.$executeRaw`
      INSERT INTO entity (id, organization_id, external_user_id, issuer, created_at)
      SELECT p.id, ${organizationId}, p.external_user_id, p.issuer, ${now}::timestamptz
        FROM json_to_recordset(${JSON.stringify(pairs)}::json) AS p(id text, issuer text, external_user_id text)
      ON CONFLICT (organization_id, issuer, external_user_id) DO NOTHING`;
}

/** Each wanted subject's entity id by its index `i`, in one statement; an unknown subject has no row. */
export function resolveSubjects(
  tx: Tx,
  organizationId: string,
  wanted: { i: number; id: string | null; issuer: string | null; external_user_id: string | null }[],
): Promise<{ i: number; id: string }[]> {
  // Two index lookups (by id, by the external pair), never a join on an OR: that would compare every item with every entity.
  return tx.$queryRaw<{ i: number; id: string }[]>`
    WITH w AS (SELECT * FROM json_to_recordset(${JSON.stringify(wanted)}::json) AS w(i int, id text, issuer text, external_user_id text))
    SELECT w.i, e.id FROM w JOIN entity e ON e.id = w.id AND e.organization_id = ${organizationId} WHERE w.id IS NOT NULL
    UNION ALL
    SELECT w.i, e.id FROM w JOIN entity e
      ON e.organization_id = ${organizationId} AND e.issuer = w.issuer AND e.external_user_id = w.external_user_id
     WHERE w.id IS NULL`;
}

/** Locks those of `ids` with an active enrollment, in id order (concurrent callers never deadlock); returns them. */
export function lockEnrolledEntities(tx: Tx, ids: string[]): Promise<{ id: string }[]> {
  return tx.$queryRaw<{ id: string }[]>`
      SELECT e.id FROM entity e
       WHERE e.id IN (SELECT jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb))
         AND EXISTS (SELECT 1 FROM enrollment n WHERE n.entity_id = e.id AND n.status = 'active')
       ORDER BY e.id FOR UPDATE OF e`;
}
