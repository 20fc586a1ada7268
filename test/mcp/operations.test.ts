import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { connectMcp, toolError, toolValue } from './helpers.ts';

/**
 * A change that starts an operation answers with it at once; wait_for_operation
 * waits for a terminal status (a normal result whatever it is), and out of time
 * is an error result operation_wait_timeout with the operation as it is now.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const SCOPES = ['distributions:read', 'distributions:write', 'distributions:launch'];
const distribution = (config: Record<string, unknown> = {}) => ({
  name: 'distributions_create',
  arguments: { name: 'D', budget: 0, deployments: [{ provider: 'sandbox', config }] },
});

describe('wait_for_operation', () => {
  test('a started operation is answered at once; waiting answers it terminal, with progress when asked', async () => {
    const { token } = await buildTenant(t, SCOPES);
    const client = await connectMcp(t.origin, token);
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('wait_for_operation');
    const started = toolValue(await client.callTool(distribution()));
    expect(started.operation.id).toMatch(/^op_/);
    const progress: unknown[] = [];
    const done = await client.callTool({ name: 'wait_for_operation', arguments: { id: started.operation.id } }, undefined, {
      onprogress: (p) => void progress.push(p),
    });
    const op = toolValue(done);
    expect(op.id).toBe(started.operation.id);
    expect(op.status).toBe('succeeded');
    expect(progress.length).toBeGreaterThan(0);
    await client.close();
  });

  test('a failed operation is a normal result too: the status is the answer', async () => {
    const { token } = await buildTenant(t, SCOPES);
    const client = await connectMcp(t.origin, token);
    const started = toolValue(await client.callTool(distribution({ outcome: 'fail' })));
    const op = toolValue(await client.callTool({ name: 'wait_for_operation', arguments: { id: started.operation.id } }));
    expect(['failed', 'partial']).toContain(op.status);
    await client.close();
  });

  test('out of time: operation_wait_timeout with the operation attached; an unknown id is resource_missing', async () => {
    const { token } = await buildTenant(t, SCOPES);
    const client = await connectMcp(t.origin, token);
    const started = toolValue(await client.callTool(distribution({ outcome: 'review' })));
    const before = performance.now();
    const late = toolError(
      await client.callTool({ name: 'wait_for_operation', arguments: { id: started.operation.id, timeout_seconds: 1 } }),
    );
    expect(performance.now() - before).toBeGreaterThanOrEqual(900);
    expect(late.code).toBe('operation_wait_timeout');
    expect((late.body as { operation: { id: string; status: string } }).operation.id).toBe(started.operation.id);
    const missing = toolError(await client.callTool({ name: 'wait_for_operation', arguments: { id: 'op_00000000000000000000000000' } }));
    expect(missing.code).toBe('resource_missing');
    const tooLong = toolError(
      await client.callTool({ name: 'wait_for_operation', arguments: { id: started.operation.id, timeout_seconds: 51 } }),
    );
    expect([tooLong.code, tooLong.param]).toEqual(['invalid_request', 'timeout_seconds']);
    await client.close();
  });
});
