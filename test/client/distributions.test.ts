import { describe, expect } from 'vitest';
import { OperatorClient, PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';

const SCOPES = ['distributions:read', 'distributions:write', 'distributions:launch', 'deployments:read'];

const test = appTest({
  config: {
    operations: { worker: true, pollMs: 50, leaseMs: 30_000, recheckMs: 500, retryBaseMs: 100, retryMaxMs: 1000, maxAttempts: 3 },
  },
});
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let operator: OperatorClient;
// The real operations worker, polling fast, so wait() sees the server move on its own.
test.beforeAll(async ({ app }) => {
  t = app;
  operator = new OperatorClient({ operatorToken: t.operatorToken, origin: t.origin });
});

async function tenant() {
  const { org, token } = await buildTenant(t, SCOPES);
  return { brand: org.brands[0]!.id, client: new PlatformClient({ apiKey: token, origin: t.origin }) };
}

const sandbox = (config: Record<string, unknown> = {}) => ({ provider: 'sandbox', config });

describe('distributions, deployments and operations against the real server', () => {
  test('validate is a dry run; create launches and wait() resolves on succeeded', async () => {
    const { brand, client } = await tenant();
    expect(await operator.topUpWallet(brand, { amount: 5000 })).toMatchObject({ object: 'wallet', brand, balance: 5000 });
    const plan = { name: 'Spring', budget: 3000, deployments: [sandbox({ spend: 500 }), sandbox()] };
    expect(await client.distributions.validate(plan)).toMatchObject({
      object: 'distribution_validation',
      valid: true,
      fundingSufficient: true,
      walletBalance: 5000,
    });

    const { operation, distribution } = await client.distributions.create(plan);
    expect(operation).toMatchObject({
      object: 'operation',
      kind: 'distribution.launch',
      subject: { type: 'distribution', id: distribution.id },
      waitingReason: null,
    });
    expect(distribution).toMatchObject({ object: 'distribution', name: 'Spring', budget: 3000 });

    const done = await client.operations.wait(operation.id, { intervalMs: 50, timeoutMs: 20_000 });
    expect(done).toMatchObject({ id: operation.id, status: 'succeeded', error: null });
    expect(done.completedAt).not.toBeNull();
    expect(done.result).toMatchObject({ distributionStatus: 'active' });

    expect((await client.distributions.retrieve(distribution.id)).status).toBe('active');
    const deps = await client.deployments.list({ distribution: distribution.id });
    expect(deps.data).toHaveLength(2);
    expect(deps.data[0]).toMatchObject({ object: 'deployment', distribution: distribution.id, provider: 'sandbox' });
    expect((await client.deployments.retrieve(deps.data[0]!.id)).id).toBe(deps.data[0]!.id);
    const ops = await client.operations.list({ subjectType: 'distribution', subjectId: distribution.id });
    expect(ops.data.map((o) => o.id)).toContain(operation.id);
    const children = await client.operations.list({ parentOperationId: operation.id });
    expect(children.data.map((o) => [o.kind, o.parentOperationId])).toEqual([
      ['deployment.provision', operation.id],
      ['deployment.provision', operation.id],
    ]);
    const listed = [];
    for await (const d of client.distributions.list({ limit: 1 })) listed.push(d.id);
    expect(listed).toEqual([distribution.id]);
  });

  test('wait() resolves without throwing when the launch ends partial', async () => {
    const { client } = await tenant();
    const { operation } = await client.distributions.create({
      name: 'Half',
      budget: 0,
      deployments: [sandbox(), sandbox({ outcome: 'fail' })],
    });
    const done = await client.operations.wait(operation.id, { intervalMs: 50, timeoutMs: 20_000 });
    expect(done.status).toBe('partial');
    expect(done.error).toMatchObject({ code: 'some_deployments_failed' });
  });

  test('wait() times out on an operation waiting on funding, which keeps running and succeeds after a top-up', async () => {
    const { brand, client } = await tenant();
    const { operation } = await client.distributions.create({ name: 'Unfunded', budget: 2000, deployments: [sandbox()] });
    const err = await client.operations.wait(operation.id, { intervalMs: 50, timeoutMs: 600 }).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('operation_wait_timeout');
    const waiting = await client.operations.retrieve(operation.id);
    expect(waiting).toMatchObject({ status: 'waiting', waitingReason: 'funding_required' });

    await operator.topUpWallet(brand, { amount: 2000 });
    expect((await client.operations.wait(operation.id, { intervalMs: 50, timeoutMs: 20_000 })).status).toBe('succeeded');
  });

  test('pause, resume and cancel answer operations that wait() settles', async () => {
    const { client } = await tenant();
    const { operation, distribution } = await client.distributions.create({ name: 'Verbs', budget: 0, deployments: [sandbox()] });
    await client.operations.wait(operation.id, { intervalMs: 50 });
    const paused = await client.distributions.pause(distribution.id);
    expect(paused.operation.kind).toBe('distribution.pause');
    expect((await client.operations.wait(paused.operation.id, { intervalMs: 50 })).status).toBe('succeeded');
    const resumed = await client.distributions.resume(distribution.id);
    expect((await client.operations.wait(resumed.operation.id, { intervalMs: 50 })).status).toBe('succeeded');
    const canceled = await client.distributions.cancel(distribution.id);
    const settled = await client.operations.wait(canceled.operation.id, { intervalMs: 50 });
    expect(['succeeded', 'canceled']).toContain(settled.status);
    expect((await client.distributions.retrieve(distribution.id)).status).toBe('canceled');
  });

  test('a replayed launch (same key) returns the same operation', async () => {
    const { client } = await tenant();
    const plan = { name: 'Once', budget: 0, deployments: [sandbox()] };
    const a = await client.distributions.create(plan, { idempotencyKey: 'launch-once' });
    const b = await client.distributions.create(plan, { idempotencyKey: 'launch-once' });
    expect(b.operation.id).toBe(a.operation.id);
  });
});
