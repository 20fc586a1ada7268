import { z } from 'zod';
import type { Prisma } from '../../db/generated/client.ts';
import type { Deps } from '../context.ts';
import { DomainError, missing } from '../errors.ts';
import { isId } from '../id.ts';
import { wakeOperations } from '../operation/operation.ts';
import { parseInput } from '../validation.ts';
import { presentDeployment } from './distribution.ts';
import { findDeployment, setProviderState } from './store.ts';

/**
 * What a provider tells us later: a review decision, or how an asynchronous
 * teardown ended. Recording it is the domain event that clears the blocker,
 * so the waiting operation is woken in the same transaction. For the
 * built-in sandbox these arrive through the operator routes.
 */
export const ProviderReviewInput = z.strictObject({ decision: z.enum(['approve', 'reject']) });
export const ProviderCleanupInput = z.strictObject({ outcome: z.enum(['succeeded', 'failed']) });

async function record(
  deps: Deps,
  id: string,
  expected: string,
  patch: Record<string, string>,
  wake: (dep: { id: string; distributionId: string }) => Prisma.OperationWhereInput,
) {
  return deps.db.transaction(async (tx) => {
    const dep = isId('deployment', id) ? await findDeployment(tx, id) : null;
    if (!dep) throw missing('deployment', id);
    if (dep.status !== expected) throw new DomainError('resource_conflict', `The deployment is ${dep.status}, not ${expected}`, null);
    const row = await setProviderState(tx, id, { ...(dep.providerState as object), ...patch }, deps.clock.now());
    await wakeOperations(deps, tx, wake(dep));
    return { deployment: presentDeployment(row) };
  });
}

export async function recordProviderReview(deps: Deps, id: string, raw: unknown) {
  const input = parseInput(ProviderReviewInput, raw);
  return record(deps, id, 'in_review', { review: input.decision }, (dep) => ({
    subjectType: 'deployment',
    subjectId: dep.id,
    waitingReason: 'provider_review',
  }));
}

export async function recordProviderCleanup(deps: Deps, id: string, raw: unknown) {
  const input = parseInput(ProviderCleanupInput, raw);
  // Two operations tear a deployment down: its distribution's cancel, and a teardown of the deployment alone.
  return record(deps, id, 'canceling', { cleanup: input.outcome }, (dep) => ({
    waitingReason: 'awaiting_cleanup',
    OR: [
      { subjectType: 'distribution', subjectId: dep.distributionId },
      { subjectType: 'deployment', subjectId: dep.id },
    ],
  }));
}
