import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { drain, launch, op, operationsConfig, sandbox, tenant, verb } from './helpers.ts';
import { countOperations, insertOperationRow } from '../support/db-access.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** A failed distribution: the one state from which it can be launched again. */
async function failedDistribution(who: Awaited<ReturnType<typeof tenant>>) {
  const { distribution } = await launch(t, who, { deployments: [sandbox({ outcome: 'fail' })] });
  await drain(t);
  return distribution.id as string;
}

const liveLaunches = (id: string) =>
  countOperations(t, { subjectId: id, kind: 'distribution.launch', status: { in: ['pending', 'running', 'waiting'] } });

describe('one live mutation per subject', () => {
  test('50 concurrent launches with different keys: one operation, 409 operation_conflict for the rest', async () => {
    const who = await tenant(t);
    const id = await failedDistribution(who);
    const results = await Promise.all(Array.from({ length: 50 }, () => verb(t, who, id, 'launch')));
    const accepted = results.filter((r) => r.status === 202);
    const conflicts = results.filter((r) => r.status === 409);
    expect(accepted).toHaveLength(1);
    expect(conflicts).toHaveLength(49);
    for (const c of conflicts) expect(c.body.error.code).toBe('operation_conflict');
    expect(await liveLaunches(id)).toBe(1);
    await drain(t);
    expect((await op(t, who, accepted[0]!.body.operation.id)).status).toBe('failed');
  });

  test('50 concurrent launches sharing an Idempotency-Key: every one answers the same operation', async () => {
    const who = await tenant(t);
    const id = await failedDistribution(who);
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 50 }, () => verb(t, who, id, 'launch', key)));
    const codes = new Set(results.map((r) => r.status));
    expect([...codes], results.find((r) => r.status !== 202)?.text).toEqual([202]);
    expect(new Set(results.map((r) => r.body.operation.id)).size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
    expect(await liveLaunches(id)).toBe(1);
  });

  test('the database refuses a second live mutation even when the read-then-write check is skipped', async () => {
    const who = await tenant(t);
    const id = await failedDistribution(who);
    const base = {
      organizationId: who.orgId,
      subjectType: 'distribution',
      subjectId: id,
      kind: 'distribution.launch',
      runAfter: new Date(),
    };
    await insertOperationRow(t, { id: `op_${randomUUID().replaceAll('-', '')}`, ...base });
    await expect(insertOperationRow(t, { id: `op_${randomUUID().replaceAll('-', '')}`, ...base })).rejects.toMatchObject({ code: 'P2002' });
    // The control plane is separate: a cancel may coexist.
    await insertOperationRow(t, { id: `op_${randomUUID().replaceAll('-', '')}`, ...base, kind: 'distribution.cancel', plane: 'control' });
  });

  test('launching an active distribution is refused without creating an operation', async () => {
    const who = await tenant(t);
    const { distribution } = await launch(t, who, { deployments: [sandbox()] });
    expect((await verb(t, who, distribution.id, 'launch')).body.error.code).toBe('operation_conflict');
    await drain(t);
    const res = await verb(t, who, distribution.id, 'launch');
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('resource_conflict');
    expect(await liveLaunches(distribution.id)).toBe(0);
  });
});
