import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { deployments, dist, drain, events, launch, op, operationsConfig, sandbox, tenant, topUp, typesOf, verb } from './helpers.ts';
import { updateOperationRow } from '../support/db-access.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** Holds an operation as if another worker were running it, its lease 30 s ahead (simulated worker state). */
const heldElsewhere = (t: TestApp, id: string) =>
  updateOperationRow(t, id, { status: 'running', leaseOwner: 'elsewhere', leaseExpiresAt: new Date(t.clock.now().getTime() + 30_000) });

describe('cancel (control plane)', () => {
  test('a cancel coexists with the launch it targets, waits awaiting_target_settle, leaves it canceled and supersedes its children', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 900);
    const { operation: launchOp, distribution } = await launch(t, who, {
      budget: 900,
      deployments: [sandbox({ outcome: 'review' }), sandbox()],
    });
    await drain(t); // launch waits on its children; one child waits on review
    const cancel = await verb(t, who, distribution.id, 'cancel');
    expect(cancel.status, cancel.text).toBe(202);
    expect(cancel.body.operation).toMatchObject({ kind: 'distribution.cancel', status: 'pending', target_operation_id: launchOp.id });
    // The target is still live: both operations are live on the subject at once.
    expect((await op(t, who, launchOp.id)).status).toBe('waiting');
    // Cancel twice while one is live: the same cancel operation.
    expect((await verb(t, who, distribution.id, 'cancel')).body.operation.id).toBe(cancel.body.operation.id);
    await drain(t);
    expect(await op(t, who, launchOp.id)).toMatchObject({ status: 'canceled', result: { canceled_by: cancel.body.operation.id } });
    expect(await op(t, who, cancel.body.operation.id)).toMatchObject({
      status: 'succeeded',
      result: { target_operation_id: launchOp.id, target_outcome: 'canceled', target_finished_first: false, cleanup_failed: [] },
    });
    expect(await dist(t, who, distribution.id)).toMatchObject({ status: 'canceled', budget_reserved: 0 });
    expect((await deployments(t, who, distribution.id)).map((d) => d.status)).toEqual(['canceled', 'canceled']);
    const evts = await events(t, who);
    expect(typesOf(evts)).toEqual(
      expect.arrayContaining([
        'operation.cancel_requested',
        'operation.canceled',
        'operation.superseded',
        'deployment.cancel_requested',
        'deployment.canceled',
        'distribution.canceled',
        'budget.released',
      ]),
    );
    expect(evts.find((e) => e.type === 'budget.released').data.amount).toBe(900);
    const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
    expect(wallet.body.balance).toBe(900);
  });

  test('a cancel of a running operation waits with awaiting_target_settle until the target settles', async () => {
    const who = await tenant(t);
    const { operation: launchOp, distribution } = await launch(t, who, { deployments: [sandbox()] });
    // Hold the launch as if a worker were running it: the cancel must wait for it to settle.
    await heldElsewhere(t, launchOp.id);
    const cancel = await verb(t, who, distribution.id, 'cancel');
    await drain(t);
    expect(await op(t, who, cancel.body.operation.id)).toMatchObject({ status: 'waiting', waiting_reason: 'awaiting_target_settle' });
    t.clock.advance(31_000); // the other worker died: its lease expires and the launch resumes here, sees the cancel
    await drain(t);
    expect((await op(t, who, launchOp.id)).status).toBe('canceled');
    expect((await op(t, who, cancel.body.operation.id)).status).toBe('succeeded');
  });

  test('a launch that already finished is left as it is, and the cancel says so', async () => {
    const who = await tenant(t);
    const { operation: launchOp, distribution } = await launch(t, who, { deployments: [sandbox()] });
    await heldElsewhere(t, launchOp.id);
    const cancel = await verb(t, who, distribution.id, 'cancel');
    // The worker finishes the launch before it looks at the cancel request.
    await updateOperationRow(t, launchOp.id, { cancelRequestedBy: null, leaseOwner: null, status: 'pending', leaseExpiresAt: null });
    await drain(t);
    expect((await op(t, who, launchOp.id)).status).toBe('succeeded');
    expect((await op(t, who, cancel.body.operation.id)).result).toMatchObject({ target_outcome: 'succeeded', target_finished_first: true });
    expect((await dist(t, who, distribution.id)).status).toBe('canceled');
  });

  test('awaiting_cleanup until the provider reports the teardown; a failed cleanup makes the cancel partial', async () => {
    const who = await tenant(t);
    const { distribution } = await launch(t, who, { deployments: [sandbox({ cleanup: 'async' }), sandbox({ cleanup: 'fail' })] });
    await drain(t);
    const cancel = await verb(t, who, distribution.id, 'cancel');
    expect(cancel.body.operation.target_operation_id).toBeNull();
    await drain(t);
    expect(await op(t, who, cancel.body.operation.id)).toMatchObject({ status: 'waiting', waiting_reason: 'awaiting_cleanup' });
    const [asyncDep, failing] = await deployments(t, who, distribution.id);
    expect([asyncDep.status, failing.status]).toEqual(['canceling', 'cleanup_failed']);
    const res = await t.http.post(
      `/operator/sandbox/deployments/${asyncDep.id}/cleanup`,
      { outcome: 'succeeded' },
      { token: t.operatorToken },
    );
    expect(res.status, res.text).toBe(200);
    await drain(t);
    expect(await op(t, who, cancel.body.operation.id)).toMatchObject({
      status: 'partial',
      error: { code: 'cleanup_failed' },
      result: { cleanup_failed: [failing.id] },
    });
    expect(typesOf(await events(t, who))).toEqual(
      expect.arrayContaining(['deployment.cleanup_failed', 'deployment.canceled', 'distribution.canceled']),
    );
    const again = await verb(t, who, distribution.id, 'cancel');
    expect(again.status).toBe(409);
  });

  test('a launch waiting on funding is canceled without moving money', async () => {
    const who = await tenant(t);
    const { operation: launchOp, distribution } = await launch(t, who, { budget: 10, deployments: [sandbox()] });
    await drain(t);
    expect((await op(t, who, launchOp.id)).waiting_reason).toBe('funding_required');
    const cancel = await verb(t, who, distribution.id, 'cancel');
    await drain(t);
    expect((await op(t, who, launchOp.id)).status).toBe('canceled');
    expect((await op(t, who, cancel.body.operation.id)).status).toBe('succeeded');
    expect(typesOf(await events(t, who), distribution.id)).not.toContain('budget.released');
  });
});
