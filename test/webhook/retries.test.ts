import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

// Schedule: at once, then after 1 s and 5 s (±10 %): three attempts.
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 1000, 5000], timeoutMs: 1000 }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
let token: string;
let orgId: string;
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
  const o = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  token = o.token;
  orgId = o.org.id;
});
afterAll(async () => {
  await rx?.close();
});

async function deliveryOf(endpointId: string) {
  const [d] = await listDeliveries(t, token, endpointId);
  return d;
}

/** Runs the schedule with the injected clock, checking nothing is sent before each delay is due. */
async function runSchedule(endpointId: string, path: string) {
  await emitEvent(t, orgId);
  await settle(t);
  await rx.waitFor(1, path);
  let d = await deliveryOf(endpointId);
  expect(d).toMatchObject({ status: 'failing', attempts: 1 });
  const due1 = Date.parse(d.next_attempt_at) - t.clock.now().getTime();
  expect(due1).toBeGreaterThanOrEqual(900);
  expect(due1).toBeLessThanOrEqual(1100);

  t.clock.advance(850); // not due yet: nothing is sent
  await settle(t);
  expect(rx.for(path)).toHaveLength(1);
  t.clock.advance(300);
  await settle(t);
  await rx.waitFor(2, path);
  d = await deliveryOf(endpointId);
  expect(d).toMatchObject({ status: 'failing', attempts: 2 });
  const due2 = Date.parse(d.next_attempt_at) - t.clock.now().getTime();
  expect(due2).toBeGreaterThanOrEqual(4500);
  expect(due2).toBeLessThanOrEqual(5500);

  t.clock.advance(5600);
  await settle(t);
  await rx.waitFor(3, path);
  d = await deliveryOf(endpointId);
  expect(d).toMatchObject({ status: 'exhausted', attempts: 3, next_attempt_at: null });
  expect(d.completed_at).not.toBeNull();
  t.clock.advance(3600_000); // exhausted: never again
  await settle(t);
  expect(rx.for(path)).toHaveLength(3);
  return d;
}

describe('retry schedule', () => {
  test('a receiver answering 500 is retried on the schedule and ends exhausted; every attempt is logged with a ≤1 KiB excerpt', async () => {
    rx.on('/500', (_req, res) => {
      res.statusCode = 500;
      res.end('x'.repeat(5000));
    });
    const ep = await createEndpoint(t, token, { url: rx.url('/500') });
    const d = await runSchedule(ep.id, '/500');
    expect(d.last_status_code).toBe(500);
    expect(d.attempt_log.map((a: { number: number }) => a.number)).toEqual([1, 2, 3]);
    for (const a of d.attempt_log) {
      expect(a).toMatchObject({ status_code: 500, error: 'HTTP 500' });
      expect(a.response_excerpt.length).toBe(1024);
      expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    }
  });

  test('a receiver that does not answer within the timeout is retried and ends exhausted', async () => {
    rx.on('/slow', () => {}); // never answers
    const ep = await createEndpoint(t, token, { url: rx.url('/slow') });
    const d = await runSchedule(ep.id, '/slow');
    expect(d.last_status_code).toBeNull();
    expect(d.attempt_log[0].error).toMatch(/timeout after 1000 ms/);
    expect(d.attempt_log[0].duration_ms).toBeGreaterThanOrEqual(950);
  });

  test('a refused connection is retried and ends exhausted', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const ep = await createEndpoint(t, token, { url: `http://127.0.0.1:${port}/gone` });
    await emitEvent(t, orgId);
    for (const step of [0, 1200, 5600]) {
      t.clock.advance(step);
      await settle(t);
    }
    const d = await deliveryOf(ep.id);
    expect(d).toMatchObject({ status: 'exhausted', attempts: 3, last_status_code: null });
    expect(d.attempt_log.every((a: { error: string }) => /ECONNREFUSED/.test(a.error))).toBe(true);
  });
});
