import type { Deps } from '../../src/domain/context.ts';
import { performance } from '../../src/domain/performance/performance.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Performance: measurement ingestion and rollups; organization-scoped (a program filter is the selected brand's). */
export function performanceRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Performance', errors: [400, 401, 403, 404, 409, 429, 503] };
  return [
    actionRoute(deps, performance.record, {
      ...common,
      method: 'POST',
      path: '/performance/measurements',
      operationId: 'recordMeasurements',
      summary:
        'Record up to 500 measurements in one batch; a bad item rejects the batch (param names it); re-evaluates the standing of the entities measured (trigger metric)',
      description: 'The batch: one measurement per item sent, in order, duplicates marked',
    }),
    actionRoute(deps, performance.rollups, {
      ...common,
      method: 'GET',
      path: '/performance/rollups',
      operationId: 'listPerformanceRollups',
      summary: 'Sums of a metric per UTC day, ISO week or month, newest period first (periods without measurements left out)',
      description: 'A page of rollups; the next page: until = the last period_start',
    }),
  ];
}
