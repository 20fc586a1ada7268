import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { ListOperationsInput, OPERATION_STATUSES, operations } from '../../src/domain/operation/operation.ts';
import type { RouteDef } from '../http/route.ts';
import { actionRoute } from './answer.ts';

/** Operations: read-only handles of asynchronous mutations (operations:read is implicit on every token). */
export function operationRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Operations', errors: [400, 401, 403, 404, 429, 503] };
  return [
    actionRoute(deps, operations.list, {
      ...common,
      method: 'GET',
      path: '/operations',
      operationId: 'listOperations',
      summary: 'List operations, newest first',
      description: 'A page of operations',
      // Documented with the statuses as an enum; validated by the domain (invalid_status).
      documentedQuery: ListOperationsInput.extend({ status: z.enum(OPERATION_STATUSES).optional() }),
    }),
    actionRoute(deps, operations.retrieve, {
      ...common,
      method: 'GET',
      path: '/operations/:id',
      operationId: 'retrieveOperation',
      summary: 'Retrieve an operation (poll it until a terminal status)',
      description: 'The wrapped operation',
      envelope: 'operation',
    }),
  ];
}
