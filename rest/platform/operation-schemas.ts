import { z } from 'zod';
import { Operation } from '../../src/domain/operation/schema.ts';

/** Response shapes of operations, for the OpenAPI document (distributions and deployments declare theirs in the domain). */
export const OperationEnvelope = z.object({ operation: Operation });
export const OperationList = z.object({ object: z.literal('list'), data: z.array(Operation), has_more: z.boolean() });
