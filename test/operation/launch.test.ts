import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';
import { deployments, dist, drain, events, launch, op, operationsConfig, sandbox, tenant, topUp, typesOf, verb } from './helpers.ts';
import { addToWallet, insertMovement } from '../../src/domain/wallet/store.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('distribution.launch', () => {
  test('pending → succeeded: reserves the budget, fans out, the distribution goes active, events carry the operation', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 10_000);
    const { operation, distribution } = await launch(t, who, { budget: 5000, deployments: [sandbox({ spend: 1200 }), sandbox()] });
    expect(operation).toMatchObject({
      object: 'operation',
      kind: 'distribution.launch',
      status: 'pending',
      waiting_reason: null,
      attempts: 0,
      subject: { type: 'distribution', id: distribution.id },
    });
    expect(distribution.status).toBe('launching');
    await drain(t);
    const done = await op(t, who, operation.id);
    expect(done).toMatchObject({
      status: 'succeeded',
      waiting_reason: null,
      error: null,
      result: { distribution_status: 'active', deployments_succeeded: 2 },
    });
    expect(done.attempts).toBeGreaterThanOrEqual(1);
    expect(done.completed_at).not.toBeNull();
    expect(await dist(t, who, distribution.id)).toMatchObject({
      status: 'active',
      budget: 5000,
      budget_reserved: 3800,
      budget_spent: 1200,
    });
    const deps = await deployments(t, who, distribution.id);
    expect(deps.map((d) => d.status)).toEqual(['active', 'active']);
    const evts = await events(t, who);
    const mine = evts.filter((e) => e.operation !== null);
    expect(typesOf(mine)).toEqual(
      expect.arrayContaining([
        'distribution.launching',
        'deployment.created',
        'budget.reserved',
        'deployment.activated',
        'distribution.live',
        'operation.succeeded',
      ]),
    );
    for (const e of evts.filter((x) => x.subject.id === distribution.id && x.type !== 'operation.succeeded'))
      expect(e.operation).toBe(operation.id);
    // Children: one deployment.provision operation per deployment, parented to the launch.
    const children = await t.http.get(`/v1/platform/operations?subject_type=deployment&subject_id=${deps[0].id}`, { token: who.token });
    expect(children.body.data).toHaveLength(1);
    expect(children.body.data[0]).toMatchObject({ kind: 'deployment.provision', status: 'succeeded', parent_operation_id: operation.id });
  });

  test('partial: some deployments fail → the operation is partial and the distribution partially_active', async () => {
    const who = await tenant(t);
    const { operation, distribution } = await launch(t, who, { deployments: [sandbox(), sandbox({ outcome: 'fail' })] });
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({
      status: 'partial',
      error: { code: 'some_deployments_failed' },
      result: { distribution_status: 'partially_active' },
    });
    expect((await dist(t, who, distribution.id)).status).toBe('partially_active');
  });

  test('failed: every deployment fails → the operation fails, the distribution fails and its reservation is released', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 700);
    const { operation, distribution } = await launch(t, who, { budget: 700, deployments: [sandbox({ outcome: 'fail' })] });
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({ status: 'failed', error: { code: 'all_deployments_failed' } });
    expect(await dist(t, who, distribution.id)).toMatchObject({ status: 'failed', budget_reserved: 0 });
    const evts = await events(t, who);
    expect(typesOf(evts, distribution.id)).toEqual(
      expect.arrayContaining(['budget.reserved', 'budget.released', 'distribution.failed', 'operation.failed']),
    );
    const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
    expect(wallet.body.balance).toBe(700);
  });

  test('completion: placements that finish complete the distribution, release the unspent budget; drift is reported', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 1000);
    const { operation, distribution } = await launch(t, who, {
      budget: 1000,
      deployments: [sandbox({ spend: 300, complete: true, drift: true })],
    });
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({ status: 'succeeded', result: { distribution_status: 'completed' } });
    expect(await dist(t, who, distribution.id)).toMatchObject({ status: 'completed', budget_reserved: 0, budget_spent: 300 });
    const evts = await events(t, who);
    expect(typesOf(evts)).toEqual(
      expect.arrayContaining(['deployment.drifted', 'deployment.completed', 'distribution.completed', 'budget.released']),
    );
    expect(evts.find((e) => e.type === 'budget.released').data.amount).toBe(700);
  });

  test('transient provider failures retry with backoff (attempts counted) and fail once max_attempts is spent', async () => {
    const who = await tenant(t);
    const { operation } = await launch(t, who, { deployments: [sandbox({ transient_failures: 1 })] });
    await drain(t);
    const children = (await t.http.get(`/v1/platform/operations?subject_type=deployment`, { token: who.token })).body.data;
    expect(children[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      max_attempts: 3,
      progress: { last_error: { code: 'provider_unavailable' } },
    });
    await drain(t); // not due yet: the backoff is on the injected clock
    expect((await op(t, who, children[0].id)).status).toBe('pending');
    t.clock.advance(1000);
    await drain(t);
    expect(await op(t, who, children[0].id)).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect((await op(t, who, operation.id)).status).toBe('succeeded');

    const { operation: doomed } = await launch(t, who, { deployments: [sandbox({ transient_failures: 5 })] });
    for (let i = 0; i < 4; i++) {
      await drain(t);
      t.clock.advance(10_000);
    }
    await drain(t);
    const child = (await t.http.get(`/v1/platform/operations?subject_type=deployment&limit=1`, { token: who.token })).body.data[0];
    expect(child).toMatchObject({ status: 'failed', attempts: 3, error: { code: 'provider_unavailable' } });
    expect((await op(t, who, doomed.id)).status).toBe('failed');
  });

  test('provider_review waits until the provider decides: approve → active, reject → deployment.rejected', async () => {
    const who = await tenant(t);
    const { operation, distribution } = await launch(t, who, {
      deployments: [sandbox({ outcome: 'review' }), sandbox({ outcome: 'review' })],
    });
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({ status: 'waiting', waiting_reason: 'awaiting_children_settle' });
    const [a, b] = await deployments(t, who, distribution.id);
    expect([a.status, b.status]).toEqual(['in_review', 'in_review']);
    const child = (await t.http.get(`/v1/platform/operations?subject_id=${a.id}`, { token: who.token })).body.data[0];
    expect(child).toMatchObject({ status: 'waiting', waiting_reason: 'provider_review' });
    await drain(t);
    expect((await op(t, who, child.id)).status).toBe('waiting'); // nothing decided, nothing moves
    expect(
      (await t.http.post(`/operator/sandbox/deployments/${a.id}/review`, { decision: 'approve' }, { token: t.operatorToken })).status,
    ).toBe(200);
    await drain(t);
    expect((await op(t, who, child.id)).status).toBe('succeeded');
    expect((await op(t, who, operation.id)).waiting_reason).toBe('awaiting_children_settle');
    expect(
      (await t.http.post(`/operator/sandbox/deployments/${b.id}/review`, { decision: 'reject' }, { token: t.operatorToken })).status,
    ).toBe(200);
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({ status: 'partial', waiting_reason: null });
    expect(typesOf(await events(t, who), b.id)).toContain('deployment.rejected');
  });

  test('funding_required: budget.reserve_failed once, relaunch reuses the waiting operation, a top-up wakes it', async () => {
    const who = await tenant(t);
    await topUp(t, who.brand, 100);
    const { operation, distribution } = await launch(t, who, { budget: 500, deployments: [sandbox()] });
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({
      status: 'waiting',
      waiting_reason: 'funding_required',
      progress: { required: 500, wallet_balance: 100 },
    });
    const again = await verb(t, who, distribution.id, 'launch');
    expect(again.status, again.text).toBe(202);
    expect(again.body.operation.id).toBe(operation.id);
    await drain(t);
    expect((await op(t, who, operation.id)).waiting_reason).toBe('funding_required');
    expect(typesOf(await events(t, who)).filter((x) => x === 'budget.reserve_failed')).toHaveLength(1);
    await topUp(t, who.brand, 400);
    await drain(t);
    expect(await op(t, who, operation.id)).toMatchObject({ status: 'succeeded' });
    expect(typesOf(await events(t, who))).toEqual(expect.arrayContaining(['budget.reserve_failed', 'budget.reserved']));
  });

  test('the periodic recheck is the backstop when no wake-up arrives', async () => {
    const who = await tenant(t);
    const { operation, distribution } = await launch(t, who, { budget: 50, deployments: [sandbox()] });
    await drain(t);
    expect((await op(t, who, operation.id)).waiting_reason).toBe('funding_required');
    // Money arrives without the wake-up (as if another process's notification were lost).
    const db = t.app.deps.db.prisma;
    await addToWallet(db, { brandId: who.brand, organizationId: who.orgId, amount: 50, now: t.clock.now() });
    await insertMovement(db, {
      id: `wmv_${'0'.repeat(31)}1`,
      organizationId: who.orgId,
      brandId: who.brand,
      kind: 'top_up',
      amount: 50,
      createdAt: t.clock.now(),
    });
    await drain(t);
    expect((await op(t, who, operation.id)).status).toBe('waiting');
    t.clock.advance(60_000);
    await drain(t);
    expect((await op(t, who, operation.id)).status).toBe('succeeded');
    expect((await dist(t, who, distribution.id)).status).toBe('active');
  });

  test('pause and resume are operations too; a second mutation while one is live is operation_conflict', async () => {
    const who = await tenant(t);
    const { distribution } = await launch(t, who, { deployments: [sandbox(), sandbox({ outcome: 'fail' })] });
    await drain(t);
    const pause = await verb(t, who, distribution.id, 'pause');
    expect(pause.status, pause.text).toBe(202);
    expect(pause.body.operation).toMatchObject({ kind: 'distribution.pause', status: 'pending' });
    const second = await verb(t, who, distribution.id, 'resume');
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('operation_conflict');
    await drain(t);
    expect((await dist(t, who, distribution.id)).status).toBe('paused');
    const resume = await verb(t, who, distribution.id, 'resume');
    expect(resume.status).toBe(202);
    await drain(t);
    expect((await op(t, who, resume.body.operation.id)).status).toBe('succeeded');
    expect((await dist(t, who, distribution.id)).status).toBe('partially_active');
    expect(typesOf(await events(t, who))).toEqual(
      expect.arrayContaining(['deployment.paused', 'distribution.paused', 'distribution.resumed']),
    );
  });
});
