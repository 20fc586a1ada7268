import {
  performance,
  type PublicMeasurement,
  type PublicMeasurementBatch,
  type PublicRollup,
} from '../../domain/performance/performance.ts';
import { mutationAction, queryAction } from '../action.ts';
import { builder } from '../builder.ts';
import { given } from '../connection.ts';
import { subjectArgs, subjectInput } from './assertion.ts';
import { PerformanceWindow } from './enums.ts';

/** Performance in GraphQL: the same actions as REST (measurement batches, rollups). */
const Measurement = builder.objectRef<PublicMeasurement>('Measurement').implement({
  description: 'One measured value of a metric for an entity (msr_)',
  fields: (t) => ({
    id: t.exposeID('id'),
    entity: t.exposeString('entity'),
    metric: t.exposeString('metric'),
    value: t.exposeFloat('value'),
    occurredAt: t.exposeString('occurred_at'),
    program: t.exposeString('program', { nullable: true }),
    externalId: t.exposeString('external_id', { nullable: true }),
    duplicate: t.exposeBoolean('duplicate', { description: 'its externalId was already recorded: this is the first record' }),
    createdAt: t.exposeString('created_at'),
  }),
});

const MeasurementBatch = builder.objectRef<PublicMeasurementBatch>('MeasurementBatch').implement({
  description: 'What recordMeasurements answers: one measurement per item sent, in order',
  fields: (t) => ({
    recorded: t.exposeInt('recorded'),
    duplicates: t.exposeInt('duplicates'),
    data: t.field({ type: [Measurement], resolve: (b) => b.data }),
  }),
});

const PerformanceRollup = builder.objectRef<PublicRollup>('PerformanceRollup').implement({
  description: 'The exact sum of a metric over one UTC period',
  fields: (t) => ({
    metric: t.exposeString('metric'),
    window: t.expose('window', { type: PerformanceWindow }),
    periodStart: t.exposeString('period_start'),
    periodEnd: t.exposeString('period_end', { description: 'exclusive' }),
    entity: t.exposeString('entity', { nullable: true }),
    program: t.exposeString('program', { nullable: true }),
    value: t.exposeFloat('value'),
    count: t.exposeInt('count'),
  }),
});

const PerformanceRollupList = builder.objectRef<{ data: PublicRollup[]; has_more: boolean }>('PerformanceRollupList').implement({
  description: 'A page of rollups, newest period first; the next page: until = the last periodStart',
  fields: (t) => ({
    data: t.field({ type: [PerformanceRollup], resolve: (l) => l.data }),
    hasMore: t.exposeBoolean('has_more'),
  }),
});

const MeasurementInput = builder.inputType('MeasurementInput', {
  description: 'One measurement: entity, or externalUserId with issuer',
  fields: (t) => ({
    entity: t.string(),
    externalUserId: t.string(),
    issuer: t.string(),
    metric: t.string({ required: true }),
    value: t.float({ required: true }),
    occurredAt: t.string({ required: true, description: 'RFC 3339, now or in the past' }),
    program: t.id(),
    externalId: t.string({ description: 'your id for it: a repeat within the organization is a duplicate' }),
  }),
});

mutationAction('recordMeasurements', performance.record, {
  type: MeasurementBatch,
  description: 'Record up to 500 measurements; a bad item rejects the batch (scope performance:write)',
  args: (arg) => ({ measurements: arg({ type: [MeasurementInput], required: true }) }),
  input: (a) => ({
    input: {
      measurements: a.measurements.map((m) =>
        given({
          ...subjectInput(m),
          metric: m.metric,
          value: m.value,
          occurred_at: m.occurredAt,
          program: m.program == null ? undefined : String(m.program),
          external_id: m.externalId ?? undefined,
        }),
      ),
    },
  }),
});

queryAction('performanceRollups', performance.rollups, {
  type: PerformanceRollupList,
  description: 'Sums of a metric per UTC period, newest first (scope performance:read)',
  args: (arg) => ({
    ...subjectArgs,
    metric: arg.string({ required: true }),
    window: arg({ type: PerformanceWindow, required: true }),
    program: arg.id(),
    since: arg.string(),
    until: arg.string(),
    limit: arg.int(),
  }),
  input: (a) => ({
    input: given({
      ...subjectInput(a),
      metric: a.metric,
      window: a.window,
      program: a.program == null ? undefined : String(a.program),
      since: a.since ?? undefined,
      until: a.until ?? undefined,
      limit: a.limit ?? undefined,
    }),
  }),
});
