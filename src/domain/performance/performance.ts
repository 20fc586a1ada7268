import { z } from 'zod';
import type { Tx } from '../../db/database.ts';
import type { Deps } from '../context.ts';
import { DomainError, isDomainError, missing } from '../errors.ts';
import { isId, newId } from '../id.ts';
import { findEntity, subjectFields, subjectOf, type Subject } from '../entity/entity.ts';
import { evaluateEntityStanding } from '../enrollment/standing.ts';
import { capability, mutation, read, type Reader } from '../action/action.ts';
import { listOf, pageOf, wholeList, type Page } from '../action/list.ts';
import { findProgram, PERFORMANCE_WINDOWS } from '../program/program.ts';
import type { SurfaceBCaller } from '../platform/request-auth.ts';
import { timestamp } from '../validation.ts';
import { ASSERTION_KEY } from '../assertion/assertion.ts';
import { accrueMeasured } from '../payout/ledger.ts';
import { isoTime } from '../shape.ts';
import { insertMeasurements, measurementsByExternalIds, type MeasurementRow, rollups } from './store.ts';
import { insertExternalEntities, lockEnrolledEntities, resolveSubjects } from '../entity/store.ts';
import { brandProgramsIn } from '../program/store.ts';

/**
 * Performance: measured values of a metric for an entity, ingested in
 * batches, append-only, summed into rollups per UTC day, ISO week (from
 * Monday) or month, and read by `metric:<key>` program requirements over
 * the program's current period. Values are exact: stored as numeric with six
 * decimal places, summed in numeric, so a rollup does not depend on the
 * order in which measurements arrived. A measurement names a program or
 * none; one without a program counts toward every program of its entity.
 */
export const MEASUREMENT_BATCH_MAX = 500;
/** A metric key follows the assertion key rule. */
export const METRIC_KEY = ASSERTION_KEY;
/** Beyond this a value cannot keep six exact decimals in numeric(24,6). */
export const MEASUREMENT_VALUE_MAX = 1e15;
export const ROLLUP_LIMIT_MAX = 366;

const metric = z.string().regex(METRIC_KEY, 'must match ^[a-z][a-z0-9_]{0,63}$');

const MeasurementItem = z.strictObject({
  ...subjectFields,
  metric,
  value: z
    .number({ error: 'must be a finite number' })
    .min(-MEASUREMENT_VALUE_MAX)
    .max(MEASUREMENT_VALUE_MAX)
    .describe('finite number, stored with six decimal places (numeric(24,6))'),
  occurred_at: timestamp().describe('when it happened: now or in the past'),
  program: z.string().min(1).optional().describe("prog_ id of the caller's brand; omitted: counts toward every program"),
  external_id: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('your id for it: a repeat within the organization is a duplicate, never counted twice'),
});
type MeasurementItem = z.output<typeof MeasurementItem>;

export const RecordMeasurementsInput = z.strictObject({
  measurements: z.array(MeasurementItem).min(1).max(MEASUREMENT_BATCH_MAX),
});

export const Measurement = z.object({
  id: z.string().describe('prefix msr_'),
  object: z.literal('measurement'),
  entity: z.string().describe('prefix ent_'),
  metric: z.string(),
  value: z.number(),
  occurred_at: isoTime,
  program: z.string().nullable(),
  external_id: z.string().nullable(),
  duplicate: z.boolean().describe('true: its external_id was already recorded; this is the first record, nothing was added'),
  created_at: isoTime,
});
export type PublicMeasurement = z.output<typeof Measurement>;

export const MeasurementBatch = z.object({
  object: z.literal('measurement_batch'),
  recorded: z.number().int().describe('measurements added'),
  duplicates: z.number().int().describe('measurements whose external_id was already recorded'),
  data: z.array(Measurement).describe('one per measurement sent, in the same order'),
});
export type PublicMeasurementBatch = z.output<typeof MeasurementBatch>;

export const RollupsInput = z.strictObject({
  ...subjectFields,
  metric,
  window: z.enum(PERFORMANCE_WINDOWS),
  program: z.string().min(1).optional(),
  since: timestamp().optional().describe('periods ending after this instant'),
  until: timestamp().optional().describe('periods starting before this instant (default: now); the next page: the last period_start'),
  limit: z.coerce.number().int().min(1).max(ROLLUP_LIMIT_MAX).default(31),
});

export const Rollup = z.object({
  object: z.literal('performance_rollup'),
  metric: z.string(),
  window: z.enum(PERFORMANCE_WINDOWS),
  period_start: isoTime,
  period_end: isoTime.describe('exclusive'),
  entity: z.string().nullable().describe('null: every entity of the organization'),
  program: z.string().nullable().describe("null: every measurement; else the program's and those naming no program"),
  value: z.number().describe('the exact sum of the period'),
  count: z.number().int(),
});
export type PublicRollup = z.output<typeof Rollup>;

const presentMeasurement = (r: MeasurementRow, duplicate: boolean): PublicMeasurement => ({
  id: r.id,
  object: 'measurement',
  entity: r.entity_id,
  metric: r.metric,
  value: r.value,
  occurred_at: new Date(r.occurred_at).toISOString(),
  program: r.program_id,
  external_id: r.external_id,
  duplicate,
  created_at: new Date(r.created_at).toISOString(),
});

/** A problem with one item names it: `measurements.<index>.<field>`. */
function atItem<T>(index: number, run: () => T): T {
  try {
    return run();
  } catch (e) {
    if (!isDomainError(e)) throw e;
    throw new DomainError(e.code, e.message, `measurements.${index}.${e.param ?? 'entity'}`, e.details);
  }
}

/** Every program the batch names, of the caller's brand; any other (other brand, other organization, bad id) is 404 naming the item. */
async function checkPrograms(tx: Tx, caller: SurfaceBCaller, items: MeasurementItem[]): Promise<void> {
  const named = [...new Set(items.flatMap((m) => (m.program === undefined ? [] : [m.program])))];
  if (!named.length) return;
  const found = await brandProgramsIn(
    tx,
    named.filter((id) => isId('program', id)),
    caller.organization.id,
    caller.brand.id,
  );
  const known = new Set(found.map((p) => p.id));
  const index = items.findIndex((m) => m.program !== undefined && !known.has(m.program));
  if (index >= 0) throw missing('program', items[index]!.program!, `measurements.${index}.program`);
}

/**
 * Each item's entity id, in two statements whatever the batch size: the
 * external pairs created on first use (ON CONFLICT DO NOTHING converges
 * concurrent first uses), then every subject resolved. An unknown `ent_` id is
 * 404 naming its item.
 */
async function resolveEntities(deps: Deps, tx: Tx, organizationId: string, subjects: Subject[]): Promise<string[]> {
  const pairs = subjects.flatMap((s) =>
    s.kind === 'external' ? [{ id: newId('entity'), issuer: s.issuer, external_user_id: s.externalUserId }] : [],
  );
  if (pairs.length) await insertExternalEntities(tx, organizationId, pairs, deps.clock.now());
  const wanted = subjects.map((s, i) =>
    s.kind === 'entity'
      ? { i, id: s.id, issuer: null, external_user_id: null }
      : { i, id: null, issuer: s.issuer, external_user_id: s.externalUserId },
  );
  const rows = await resolveSubjects(tx, organizationId, wanted);
  const byIndex = new Map(rows.map((r) => [r.i, r.id]));
  const unknown = subjects.findIndex((_, i) => !byIndex.has(i));
  if (unknown >= 0) throw missing('entity', (subjects[unknown] as { id: string }).id, `measurements.${unknown}.entity`);
  return subjects.map((_, i) => byIndex.get(i)!);
}

/**
 * Records a batch in one transaction: every item validated first (a bad item
 * rejects the batch, naming it), one insert for all of them (a repeated
 * `external_id` is kept once), then the standing of every entity that gained
 * a measurement and has active enrollments re-evaluated under its lock
 * (trigger `metric`), entities in id order so concurrent batches never
 * deadlock. Evaluation runs after the insert, so each sees its own
 * measurements and everything committed before its lock.
 */
async function recordMeasurements(
  deps: Deps,
  tx: Tx,
  caller: SurfaceBCaller,
  input: z.output<typeof RecordMeasurementsInput>,
): Promise<PublicMeasurementBatch> {
  const now = deps.clock.now();
  const items = input.measurements;
  const subjects = items.map((m, i) =>
    atItem(i, () => {
      if (m.occurred_at > now) throw new DomainError('invalid_request', 'occurred_at must be now or in the past', 'occurred_at');
      const subject = subjectOf(m);
      if (subject.kind === 'entity' && !isId('entity', subject.id)) throw missing('entity', subject.id, 'entity');
      return subject;
    }),
  );
  await checkPrograms(tx, caller, items);
  const organizationId = caller.organization.id;
  const entities = await resolveEntities(deps, tx, organizationId, subjects);
  const rows = items.map((m, i) => ({
    ord: i,
    id: newId('measurement'),
    entity_id: entities[i],
    program_id: m.program ?? null,
    metric: m.metric,
    value: String(m.value),
    occurred_at: m.occurred_at.toISOString(),
    external_id: m.external_id ?? null,
  }));
  const inserted = await insertMeasurements(tx, organizationId, rows, now);
  const added = new Map(inserted.map((r) => [r.id, r]));
  const repeated = rows.filter((r) => !added.has(r.id)).map((r) => r.external_id!);
  const earlier = repeated.length ? await measurementsByExternalIds(tx, organizationId, repeated) : [];
  const byExternalId = new Map(earlier.map((r) => [r.external_id, r]));
  const data = rows.map((r) => {
    const row = added.get(r.id);
    return row ? presentMeasurement(row, false) : presentMeasurement(byExternalId.get(r.external_id)!, true);
  });
  const touched = [...new Set(inserted.map((r) => r.entity_id))];
  if (touched.length) {
    const enrolled = await lockEnrolledEntities(tx, touched);
    // The payout ledger first: closed periods accrue with the standing they ended with, late measurements adjust.
    await accrueMeasured(
      deps,
      tx,
      enrolled.map((e) => e.id),
      inserted.map((r) => r.id),
    );
    for (const { id } of enrolled) await evaluateEntityStanding(deps, tx, id, { trigger: 'metric' }, { alreadyLocked: true });
  }
  return { object: 'measurement_batch', recorded: inserted.length, duplicates: rows.length - inserted.length, data };
}

/**
 * Sums per UTC period, newest first, periods without measurements left out.
 * `until` pages back: the next page is `until` = the last `period_start`.
 * An external pair never seen has no measurements (an empty list); an unknown
 * `ent_` id is 404.
 */
async function listRollups(
  db: Reader,
  caller: SurfaceBCaller,
  input: z.output<typeof RollupsInput>,
  now: Date,
): Promise<Page<PublicRollup>> {
  const organizationId = caller.organization.id;
  const hasSubject = input.entity !== undefined || input.external_user_id !== undefined || input.issuer !== undefined;
  const entity = hasSubject ? await findEntity(db, organizationId, subjectOf(input)) : null;
  if (hasSubject && !entity) return wholeList([]);
  if (input.program !== undefined) await findProgram(db, caller, input.program, 'program');
  const rows = await rollups(db, {
    organizationId,
    metric: input.metric,
    window: input.window,
    entityId: entity?.id,
    programId: input.program,
    since: input.since,
    until: input.until ?? now,
    take: input.limit + 1,
  });
  const page = pageOf(rows, input.limit);
  return {
    ...page,
    data: page.data.map((r) => {
      return {
        object: 'performance_rollup',
        metric: input.metric,
        window: input.window,
        period_start: new Date(r.period_start).toISOString(),
        period_end: new Date(r.period_end).toISOString(),
        entity: entity?.id ?? null,
        program: input.program ?? null,
        value: r.value,
        count: r.count,
      };
    }),
  };
}

/** The performance actions (src/domain/action/action.ts). */
export const performance = capability({ name: 'performance', title: 'Performance', resource: 'performance' })({
  /** Outcome `created` (201) whether or not some items were duplicates: the batch itself was recorded. */
  record: mutation({
    name: 'performance.record_measurements',
    summary:
      'Record up to 500 measurements in one batch; a bad item rejects the batch (param names it); re-evaluates the standing of the entities measured (trigger metric)',
    input: RecordMeasurementsInput,
    output: MeasurementBatch,
    outcome: 'created',
    run: ({ deps, caller, input, db }) => recordMeasurements(deps, db, caller, input),
  }),
  rollups: read({
    summary: 'Sums of a metric per UTC day, ISO week or month, newest period first (periods without measurements left out)',
    input: RollupsInput,
    output: listOf(Rollup),
    run: ({ deps, caller, input, db }) => listRollups(db, caller, input, deps.clock.now()),
  }),
});
