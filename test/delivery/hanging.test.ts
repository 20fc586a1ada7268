import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { buildOrgWithToken } from '../support/factories.ts';
import { emitEvent } from '../support/events.ts';
import { createEndpoint, listDeliveries, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

let t: TestApp;
let rx: Receiver;
beforeAll(async () => {
  // Per-endpoint concurrency 2: a hanging receiver holds at most two of the process's slots.
  t = await startTestApp(webhookConfig({ retryScheduleMs: [0, 60_000], timeoutMs: 1500, endpointConcurrency: 2, concurrency: 8 }));
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.stop();
  await rx?.close();
});

it('a hanging receiver times out while the other endpoints keep being served', async () => {
  const { org, token } = await buildOrgWithToken(t, ['webhooks:read', 'webhooks:write']);
  rx.on('/hang', () => {}); // accepts, never answers
  const hang = await createEndpoint(t, token, { url: rx.url('/hang') });
  await createEndpoint(t, token, { url: rx.url('/fast') });
  const started = Date.now();
  for (let i = 0; i < 10; i++) await emitEvent(t, org.id);
  await rx.waitFor(10, '/fast', 5000);
  expect(Date.now() - started).toBeLessThan(1500 + 2000); // not stuck behind the hanging endpoint
  expect(rx.for('/hang').length).toBeLessThanOrEqual(2); // bounded per-endpoint concurrency
  await t.app.webhooks.drain();
  const ds = await listDeliveries(t, token, hang.id, '?limit=100');
  expect(ds).toHaveLength(10);
  for (const d of ds) {
    expect(d).toMatchObject({ status: 'failing', attempts: 1 });
    expect(d.attempt_log[0].error).toBe('timeout after 1500 ms');
  }
});
