import { z } from 'zod';
import type { Deps } from '../../src/domain/context.ts';
import { ListOperationsInput, OPERATION_STATUSES, listOperations, retrieveOperation } from '../../src/domain/operation/operation.ts';
import { parseInput } from '../../src/domain/validation.ts';
import type { RouteDef } from '../http/route.ts';
import { callerWith, platformQuery } from './pipeline.ts';
import { OperationEnvelope, OperationList } from './operation-schemas.ts';

/** Operations: read-only handles of asynchronous mutations (operations:read is implicit on every token). */
export function operationRoutes(deps: Deps): RouteDef[] {
  const common = { tag: 'Operations', auth: 'platform' as const, scope: 'operations:read', errors: [400, 401, 403, 404, 429, 503] };
  return [
    {
      ...common,
      method: 'GET',
      path: '/operations',
      operationId: 'listOperations',
      summary: 'List operations, newest first',
      // Documented with the statuses as an enum; validated by the domain (invalid_status).
      query: ListOperationsInput.extend({ status: z.enum(OPERATION_STATUSES).optional() }),
      success: { status: 200, description: 'A page of operations', schema: OperationList },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'operations:read');
        ctx.body = await listOperations(deps, caller.organization.id, platformQuery(ctx));
      },
    },
    {
      ...common,
      method: 'GET',
      path: '/operations/:id',
      operationId: 'retrieveOperation',
      summary: 'Retrieve an operation (poll it until a terminal status)',
      query: z.strictObject({}),
      success: { status: 200, description: 'The wrapped operation', schema: OperationEnvelope },
      handler: async (ctx) => {
        const caller = callerWith(ctx, 'operations:read');
        parseInput(z.strictObject({}), platformQuery(ctx));
        ctx.body = { operation: await retrieveOperation(deps, caller.organization.id, ctx.params.id!) };
      },
    },
  ];
}
