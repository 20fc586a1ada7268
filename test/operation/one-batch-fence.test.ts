import { describe, expect } from 'vitest';
import type { Operation } from '../../src/db/generated/client.ts';
import { claimOperations, runClaimed, type OperationHandler } from '../../src/domain/operation/engine.ts';
import { newOperationRow } from '../../src/domain/operation/operation.ts';
import { appTest, type TestApp } from '../support/kit.ts';
import { operationsConfig, tenant } from './helpers.ts';
import { insertOperation, operationById } from '../../src/domain/operation/store.ts';
import { markWrittenStatement, updateOperationRow } from '../support/db-access.ts';

/**
 * A step with no reads commits in one batch whose fence aborts it when the
 * lease is lost (issue #13, scenario 7; hand-on.test.ts holds the rest). No
 * worker runs: the test claims and runs the operation itself.
 */
const test = appTest({ config: operationsConfig({ worker: false, pollMs: 60_000, concurrency: 4 }) });

describe('a one-batch commit is fenced', () => {
  let t: TestApp;
  test.beforeAll(({ app }) => void (t = app));

  /** A handler whose only step writes `progress` and settles in one batch, after `before` ran. */
  const oneTrip = (before: (op: Operation) => Promise<void>): OperationHandler => ({
    kind: 'test.one_trip',
    async step(ctx) {
      await before(ctx.op);
      return ctx.commitBatched([], () => ({
        statements: [markWrittenStatement(ctx.op.id)],
        outcome: { status: 'succeeded', result: { done: true } },
      }));
    },
  });

  async function claimedRow() {
    const who = await tenant(t);
    const row = newOperationRow(t.app.deps, {
      organizationId: who.orgId,
      subject: { type: 'test', id: `test_${Date.now()}_${Math.random()}` },
      kind: 'test.one_trip',
    });
    await insertOperation(t.app.deps.db.prisma, { ...row, result: {}, progress: {} });
    const [claimed] = await claimOperations(t.app.deps, `test#${row.id}`, 1);
    expect(claimed?.id).toBe(row.id);
    return claimed!;
  }
  const read = (id: string) => operationById(t.app.deps.db.prisma, id);

  test('commits its writes, events and outcome when the lease holds', async () => {
    const claimed = await claimedRow();
    await runClaimed(t.app.deps, new Map([['test.one_trip', oneTrip(async () => {})]]), claimed);
    expect(await read(claimed.id)).toMatchObject({
      status: 'succeeded',
      progress: { written: true },
      result: { done: true },
      leaseOwner: null,
    });
  });

  test('applies nothing when the lease was taken over before the batch', async () => {
    const claimed = await claimedRow();
    const steal = async (o: Operation) => {
      await updateOperationRow(t, o.id, { leaseOwner: 'another-worker' });
    };
    await runClaimed(t.app.deps, new Map([['test.one_trip', oneTrip(steal)]]), claimed);
    const after = await read(claimed.id);
    expect(after).toMatchObject({ status: 'running', leaseOwner: 'another-worker', progress: {}, result: {} });
  });
});
