import {
  Measurement as MeasurementShape,
  MeasurementBatch as BatchShape,
  RecordMeasurementsInput,
  Rollup,
  performance,
} from '../../domain/performance/performance.ts';
import { mutationAction, queryAction } from '../action.ts';
import { inputType, objectType } from '../derive.ts';

/** Performance in GraphQL: the same actions as REST (measurement batches, rollups). */
objectType('Measurement', MeasurementShape, { description: 'One measured value of a metric for an entity (msr_)' });

const MeasurementBatch = objectType('MeasurementBatch', BatchShape, {
  description: 'What recordMeasurements answers: one measurement per item sent, in order',
});

objectType('PerformanceRollup', Rollup, { description: 'The exact sum of a metric over one UTC period' });

const PerformanceRollupList = objectType('PerformanceRollupList', performance.rollups.output, {
  description: 'A page of rollups, newest period first; the next page: until = the last periodStart',
});

inputType('MeasurementInput', RecordMeasurementsInput.shape.measurements.element, {
  description: 'One measurement: entity, or externalUserId with issuer',
  ids: ['program'],
});

mutationAction('recordMeasurements', performance.record, {
  type: MeasurementBatch,
  description: 'Record up to 500 measurements; a bad item rejects the batch (scope performance:write)',
});

queryAction('performanceRollups', performance.rollups, {
  type: PerformanceRollupList,
  description: 'Sums of a metric per UTC period, newest first (scope performance:read)',
  ids: ['program'],
});
