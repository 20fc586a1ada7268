import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';

/**
 * wait() against the real server is in distributions.test.ts (succeeded,
 * partial, timeout on funding_required). Here every terminal status and the
 * poll sequence are driven deterministically by a fake
 * `GET /v1/platform/operations/:id` on a local node:http server that plays a
 * scripted sequence of statuses per operation id (the last one repeats).
 */
const scripts: Record<string, string[]> = {
  op_ok: ['pending', 'running', 'succeeded'],
  op_partial: ['running', 'partial'],
  op_failed: ['waiting', 'failed'],
  op_canceled: ['canceled'],
  op_stuck: ['waiting'],
};
const polls: Record<string, number> = {};
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const id = /^\/v1\/platform\/operations\/([^/?]+)/.exec(req.url ?? '')?.[1] ?? '';
    const script = scripts[id];
    res.setHeader('content-type', 'application/json');
    res.setHeader('request-id', 'req_fake');
    if (!script) {
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { code: 'resource_missing', message: `No operation ${id}`, param: 'id', request_id: 'req_fake' } }));
      return;
    }
    const n = (polls[id] = (polls[id] ?? 0) + 1);
    const status = script[Math.min(n, script.length) - 1]!;
    res.end(
      JSON.stringify({
        id,
        object: 'operation',
        subject: { type: 'distribution', id: 'dist_1' },
        kind: 'distribution.launch',
        status,
        waiting_reason: status === 'waiting' ? 'funding_required' : null,
        attempts: n,
        max_attempts: 5,
        error: status === 'failed' ? { code: 'provider_rejected' } : null,
        result: {},
        progress: { deployments_done: n },
        target_operation_id: null,
        livemode: true,
        created_at: new Date().toISOString(),
        completed_at: null,
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const client = () => new PlatformClient({ apiKey: 'sk_platform_live_fake', origin });

describe('operations.wait (against a fake operations endpoint)', () => {
  it('polls until succeeded and resolves with the camelCased operation', async () => {
    const seen: string[] = [];
    const op = await client().operations.wait('op_ok', { intervalMs: 10, onPoll: (o) => seen.push(o.status) });
    expect(op).toMatchObject({ id: 'op_ok', status: 'succeeded', maxAttempts: 5, progress: { deploymentsDone: 3 } });
    expect(seen).toEqual(['pending', 'running', 'succeeded']);
  });

  it.each(['op_partial', 'op_failed', 'op_canceled'])('resolves without throwing on a terminal failure (%s)', async (id) => {
    const op = await client().operations.wait(id, { intervalMs: 10 });
    expect(['partial', 'failed', 'canceled']).toContain(op.status);
  });

  it('throws operation_wait_timeout only when time runs out, and stops polling', async () => {
    const started = Date.now();
    const err = await client()
      .operations.wait('op_stuck', { timeoutMs: 200, intervalMs: 20 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('operation_wait_timeout');
    expect(err.message).toContain('waiting');
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(5000); // generous: loaded CI machines
    // No poll after the timeout (a poll aborted at the deadline may still land first, so settle, then count).
    await new Promise((r) => setTimeout(r, 300));
    const count = polls.op_stuck;
    await new Promise((r) => setTimeout(r, 300));
    expect(polls.op_stuck).toBe(count);
  });

  it('an API error while polling is thrown as is', async () => {
    await expect(client().operations.wait('op_nope', { intervalMs: 10 })).rejects.toMatchObject({
      code: 'resource_missing',
      status: 404,
      requestId: 'req_fake',
    });
  });
});
