import { Prisma, type Tx } from '../../db/database.ts';
import type { Enrollment, PrismaClient } from '../../db/generated/client.ts';

/** The enrollment capability's SQL: enrollments, their standing evaluation's statements and the due-work queries. */
type Reader = Tx | PrismaClient;

/**
 * The start of the UTC period (`day`, `week` from Monday as ISO 8601 has
 * it, or `month`) that contains `at`, as SQL: `window` and `at` are SQL
 * expressions (a column, a parameter).
 */
export const periodStart = (window: Prisma.Sql, at: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`(date_trunc(${window}, (${at}) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')`;

/** The end (exclusive) of that period: the next one's start, the arithmetic done in UTC whatever the session's zone. */
export const periodEnd = (window: Prisma.Sql, at: Prisma.Sql): Prisma.Sql =>
  Prisma.sql`((date_trunc(${window}, (${at}) AT TIME ZONE 'UTC') + ('1 ' || ${window})::interval) AT TIME ZONE 'UTC')`;

/**
 * The statement reading an entity's standing inputs as one `inputs` JSON
 * column. `entity` is an SQL expression for the entity id (a subquery on the
 * batched port, where the id may not be known yet; NULL reads as no inputs).
 */
export function standingInputs(entity: Prisma.Sql, now: Date, programId?: string): Prisma.Sql {
  const program = programId ? Prisma.sql`AND e.program_id = ${programId}` : Prisma.empty;
  const at = Prisma.sql`${now}::timestamptz`;
  return Prisma.sql`
    WITH target AS (SELECT ${entity}::text AS id),
    enr AS (
      SELECT e.*, p.grace_period_seconds, p.brand_id, p.performance_window FROM enrollment e JOIN program p ON p.id = e.program_id, target
      WHERE e.entity_id = target.id AND e.status = 'active' ${program}
    )
    SELECT json_build_object(
      'enrollments', COALESCE((SELECT json_agg(json_build_object(
        'id', id, 'organizationId', organization_id, 'programId', program_id, 'entityId', entity_id, 'status', status,
        'standing', standing, 'graceEndsAt', grace_ends_at, 'evaluation', evaluation, 'evaluatedAt', evaluated_at,
        'tier', tier, 'createdAt', created_at, 'updatedAt', updated_at, 'gracePeriodSeconds', grace_period_seconds, 'brandId', brand_id) ORDER BY id) FROM enr), '[]'),
      'requirements', COALESCE((SELECT json_agg(json_build_object(
        'id', r.id, 'programId', r.program_id, 'metric', r.metric, 'operator', r.operator, 'threshold', r.threshold) ORDER BY r.id)
        FROM program_requirement r WHERE r.program_id IN (SELECT program_id FROM enr)), '[]'),
      'claims', COALESCE((SELECT json_agg(json_build_object('key', c.key, 'present', c.present, 'value', c.value, 'expiresAt', c.expires_at))
        FROM assertion_claim c, target WHERE c.entity_id = target.id AND EXISTS (SELECT 1 FROM enr)), '[]'),
      'metrics', COALESCE((SELECT json_agg(json_build_object('programId', r.program_id, 'key', r.key, 'value', t.total, 'count', t.n))
        FROM (SELECT DISTINCT m.program_id, m.key, enr.performance_window
                FROM (SELECT r.program_id, substr(r.metric, 8) AS key FROM program_requirement r WHERE r.metric LIKE 'metric:%'
                      UNION SELECT t.program_id, t.metric FROM program_tier t) m
                JOIN enr ON enr.program_id = m.program_id) r,
        LATERAL (SELECT COALESCE(sum(m.value), 0)::float8 AS total, count(*)::int AS n FROM performance_measurement m, target
                  WHERE m.entity_id = target.id AND m.metric = r.key AND (m.program_id IS NULL OR m.program_id = r.program_id)
                    AND m.occurred_at >= ${periodStart(Prisma.sql`r.performance_window`, at)} AND m.occurred_at <= ${at}) t), '[]'),
      'tiers', COALESCE((SELECT json_agg(json_build_object('id', t.id, 'programId', t.program_id, 'name', t.name, 'metric', t.metric,
          'threshold', t.threshold::float8, 'rateBps', t.rate_bps) ORDER BY t.program_id, t.threshold, t.id)
        FROM program_tier t WHERE t.program_id IN (SELECT program_id FROM enr)), '[]')
    ) AS inputs`;
}

/** An evaluation's new standings for its enrollments, as one UPDATE statement whatever their number. */
export function standingUpdateStatement(updates: unknown[], now: Date): Prisma.Sql {
  return Prisma.sql`UPDATE enrollment e
      SET standing = u.standing, grace_ends_at = u.grace_ends_at, evaluation = u.evaluation, tier = u.tier, evaluated_at = ${now}::timestamptz, updated_at = ${now}::timestamptz
      FROM json_to_recordset(${JSON.stringify(updates)}::json) AS u(id text, standing text, grace_ends_at timestamptz, evaluation jsonb, tier jsonb)
      WHERE e.id = u.id`;
}

/** The entity's standing inputs (standingInputs) as the `inputs` JSON column. */
export async function readStandingInputs(tx: Tx, entityId: string, now: Date, programId?: string): Promise<unknown> {
  const [row] = await tx.$queryRaw<{ inputs: unknown }[]>(standingInputs(Prisma.sql`${entityId}`, now, programId));
  return row!.inputs;
}

/** Programs with a requirement on a measured metric or a tier ladder (their standing or tier moves when a period ends). */
const MEASURED_PROGRAM = Prisma.sql`(EXISTS (SELECT 1 FROM program_requirement r WHERE r.program_id = p.id AND r.metric LIKE 'metric:%')
  OR EXISTS (SELECT 1 FROM program_tier t WHERE t.program_id = p.id))`;

export interface DueEntity {
  entity_id: string;
  /** `expiry` (a claim expired, or a grace window ended) or `period` (a metric period began), `expiry` first. */
  trigger: 'expiry' | 'period';
}

/** Entities with due work at `now` (all, or only `entityId`: the re-check under its lock), at most `limit`. */
export async function dueEntities(db: Pick<Tx, '$queryRaw'>, now: Date, limit: number, entityId?: string): Promise<DueEntity[]> {
  const one = entityId === undefined ? Prisma.empty : Prisma.sql`AND e.entity_id = ${entityId}`;
  return db.$queryRaw<DueEntity[]>`
    SELECT entity_id, min(trigger) AS trigger FROM (
      SELECT e.entity_id, 'expiry' AS trigger FROM enrollment e
        JOIN assertion_claim c ON c.entity_id = e.entity_id
       WHERE e.status = 'active' AND c.present AND c.expires_at <= ${now}
         AND (e.evaluated_at IS NULL OR e.evaluated_at < c.expires_at) ${one}
      UNION ALL
      SELECT e.entity_id, 'expiry' FROM enrollment e
       WHERE e.status = 'active' AND e.standing = 'grace' AND e.grace_ends_at <= ${now} ${one}
      UNION ALL
      SELECT e.entity_id, 'period' FROM enrollment e JOIN program p ON p.id = e.program_id
       WHERE e.status = 'active' AND ${MEASURED_PROGRAM}
         AND e.evaluated_at < ${periodStart(Prisma.sql`p.performance_window`, Prisma.sql`${now}::timestamptz`)} ${one}
    ) due
    GROUP BY entity_id
    ORDER BY 1
    LIMIT ${limit}`;
}

/** The next instant after `now` with due work (a future claim expiry, grace end or metric period start), if any. */
export async function nextDueInstant(db: PrismaClient, now: Date): Promise<Date | null> {
  const rows = await db.$queryRaw<{ at: Date | null }[]>`
    SELECT LEAST(
      (SELECT min(c.expires_at) FROM assertion_claim c
         WHERE c.present AND c.expires_at > ${now}
           AND EXISTS (SELECT 1 FROM enrollment e WHERE e.entity_id = c.entity_id AND e.status = 'active')),
      (SELECT min(grace_ends_at) FROM enrollment WHERE status = 'active' AND standing = 'grace' AND grace_ends_at > ${now}),
      (SELECT min(${periodEnd(Prisma.sql`p.performance_window`, Prisma.sql`${now}::timestamptz`)})
         FROM program p WHERE ${MEASURED_PROGRAM}
          AND EXISTS (SELECT 1 FROM enrollment e WHERE e.program_id = p.id AND e.status = 'active'))
    ) AS at`;
  const at = rows[0]?.at;
  return at ? new Date(at) : null;
}

export function enrollmentOf(db: Reader, organizationId: string, id: string): Promise<Enrollment | null> {
  return db.enrollment.findFirst({ where: { id, organizationId } });
}

export function enrollmentById(tx: Tx, id: string): Promise<Enrollment> {
  return tx.enrollment.findUniqueOrThrow({ where: { id } });
}

export function insertEnrollmentRow(
  tx: Tx,
  row: Pick<Enrollment, 'id' | 'organizationId' | 'programId' | 'entityId' | 'createdAt' | 'updatedAt'>,
): Promise<Enrollment> {
  return tx.enrollment.create({ data: row });
}

/** The entity's enrollment in the program, whatever its status. */
export function enrollmentIn(tx: Tx, programId: string, entityId: string): Promise<Enrollment | null> {
  return tx.enrollment.findUnique({ where: { programId_entityId: { programId, entityId } } });
}

/** The connect flow's view of the entity's enrollment in the program. */
export function enrollmentSummaryIn(
  db: Reader,
  programId: string,
  entityId: string,
): Promise<Pick<Enrollment, 'id' | 'programId' | 'status' | 'standing'> | null> {
  return db.enrollment.findUnique({
    where: { programId_entityId: { programId, entityId } },
    select: { id: true, programId: true, status: true, standing: true },
  });
}

export function setEnrollmentStatus(tx: Tx, id: string, status: string, at: Date): Promise<Enrollment> {
  return tx.enrollment.update({ where: { id }, data: { status, updatedAt: at } });
}

/** Up to `take` enrollments below a cursor, newest first, in the given programs, optionally of one entity and status. */
export function enrollmentsPage(
  db: Reader,
  q: { organizationId: string; programIds: string[]; entityId?: string; status?: string },
  below: { id?: { lt: string } },
  take: number,
): Promise<Enrollment[]> {
  return db.enrollment.findMany({
    where: {
      organizationId: q.organizationId,
      programId: { in: q.programIds },
      ...(q.entityId ? { entityId: q.entityId } : {}),
      ...(q.status ? { status: q.status } : {}),
      ...below,
    },
    orderBy: { id: 'desc' },
    take,
  });
}

/** The entities' enrollments in the brand's programs, newest first. */
export function brandEnrollmentsOf(
  db: Reader,
  entityIds: string[],
  brandId: string,
): Promise<{ id: string; entity_id: string; program_id: string; status: string; standing: string }[]> {
  return db.$queryRaw<{ id: string; entity_id: string; program_id: string; status: string; standing: string }[]>`
      SELECT e.id, e.entity_id, e.program_id, e.status, e.standing FROM enrollment e JOIN program p ON p.id = e.program_id
      WHERE e.entity_id = ANY(${entityIds}::text[]) AND p.brand_id = ${brandId} ORDER BY e.id DESC`;
}

/** The entity's active enrollments in the brand's programs become `paused`; returns them. */
export function pauseBrandEnrollments(tx: Tx, brandId: string, entityId: string, now: Date): Promise<{ id: string; program_id: string }[]> {
  return tx.$queryRaw<{ id: string; program_id: string }[]>`
    UPDATE enrollment e SET status = 'paused', updated_at = ${now}::timestamptz
    FROM program p
    WHERE p.id = e.program_id AND p.brand_id = ${brandId} AND e.entity_id = ${entityId} AND e.status = 'active'
    RETURNING e.id, e.program_id`;
}

/** The entities of the program's active enrollments, in id order (a stable lock order). */
export function activeEnrollmentEntities(tx: Tx, programId: string): Promise<{ entityId: string }[]> {
  return tx.enrollment.findMany({
    where: { programId, status: 'active' },
    select: { entityId: true },
    orderBy: { entityId: 'asc' },
  });
}

/** Up to `limit` of them after `after`, in id order (a retier's batch). */
export function activeEnrollmentEntitiesAfter(tx: Tx, programId: string, after: string, limit: number): Promise<{ entity_id: string }[]> {
  return tx.$queryRaw<{ entity_id: string }[]>`
        SELECT entity_id FROM enrollment WHERE program_id = ${programId} AND status = 'active' AND entity_id > ${after}
        ORDER BY entity_id LIMIT ${limit}`;
}
