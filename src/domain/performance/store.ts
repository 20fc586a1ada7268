import { Prisma, type Tx } from '../../db/database.ts';
import type { PrismaClient } from '../../db/generated/client.ts';
import { periodEnd, periodStart } from '../enrollment/store.ts';

/** The performance capability's SQL: measurements (append-only, exact numeric values) and their rollups. */
type Reader = Tx | PrismaClient;

export interface MeasurementRow {
  id: string;
  entity_id: string;
  program_id: string | null;
  metric: string;
  value: number;
  occurred_at: Date;
  external_id: string | null;
  created_at: Date;
}

/** A measurement to insert, as the batch's JSON carries it (`ord`: its place in the batch). */
export interface NewMeasurement {
  ord: number;
  id: string;
  entity_id: string | undefined;
  program_id: string | null;
  metric: string;
  value: string;
  occurred_at: string;
  external_id: string | null;
}

const MEASUREMENT_COLUMNS = Prisma.sql`id, entity_id, program_id, metric, value::float8 AS value, occurred_at, external_id, created_at`;

/** One insert for the whole batch, in its order; a repeated `external_id` is kept once (not returned). */
export function insertMeasurements(tx: Tx, organizationId: string, rows: NewMeasurement[], now: Date): Promise<MeasurementRow[]> {
  return tx.$queryRaw<MeasurementRow[]>`
    INSERT INTO performance_measurement (id, organization_id, entity_id, program_id, metric, value, occurred_at, external_id, created_at)
    SELECT r.id, ${organizationId}, r.entity_id, r.program_id, r.metric, r.value::numeric, r.occurred_at, r.external_id, ${now}::timestamptz
      FROM json_to_recordset(${JSON.stringify(rows)}::json)
        AS r(ord int, id text, entity_id text, program_id text, metric text, value text, occurred_at timestamptz, external_id text)
     ORDER BY r.ord
    ON CONFLICT (organization_id, external_id) WHERE external_id IS NOT NULL DO NOTHING
    RETURNING ${MEASUREMENT_COLUMNS}`;
}

/** The organization's measurements recorded earlier under these external ids. */
export function measurementsByExternalIds(tx: Tx, organizationId: string, externalIds: string[]): Promise<MeasurementRow[]> {
  return tx.$queryRaw<MeasurementRow[]>`
        SELECT ${MEASUREMENT_COLUMNS} FROM performance_measurement
         WHERE organization_id = ${organizationId} AND external_id IN (SELECT jsonb_array_elements_text(${JSON.stringify(externalIds)}::jsonb))`;
}

export interface RollupRow {
  period_start: Date;
  period_end: Date;
  value: number;
  count: number;
}

/**
 * Sums of a metric per UTC period, newest first, periods without measurements left out: of one entity or all, of one
 * program's (with those naming none) or all, periods starting before `until` and ending after `since`, at most `take`.
 */
export function rollups(
  db: Reader,
  q: {
    organizationId: string;
    metric: string;
    window: string;
    entityId?: string;
    programId?: string;
    since?: Date;
    until: Date;
    take: number;
  },
): Promise<RollupRow[]> {
  const window = Prisma.sql`${q.window}`;
  const start = periodStart(window, Prisma.sql`m.occurred_at`);
  return db.$queryRaw<RollupRow[]>`
    SELECT ${start} AS period_start, ${periodEnd(window, Prisma.sql`m.occurred_at`)} AS period_end, sum(m.value)::float8 AS value, count(*)::int AS count
      FROM performance_measurement m
     WHERE m.organization_id = ${q.organizationId} AND m.metric = ${q.metric}
       ${q.entityId ? Prisma.sql`AND m.entity_id = ${q.entityId}` : Prisma.empty}
       ${q.programId !== undefined ? Prisma.sql`AND (m.program_id IS NULL OR m.program_id = ${q.programId})` : Prisma.empty}
       AND m.occurred_at < ${periodEnd(window, Prisma.sql`${q.until}::timestamptz`)}
       AND ${start} < ${q.until}::timestamptz
       ${q.since ? Prisma.sql`AND m.occurred_at >= ${periodStart(window, Prisma.sql`${q.since}::timestamptz`)}` : Prisma.empty}
     GROUP BY 1, 2 ORDER BY 1 DESC LIMIT ${q.take}`;
}
