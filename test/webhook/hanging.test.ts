import { afterAll, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 60_000], timeoutMs: 3000, endpointConcurrency: 5, concurrency: 16 }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
// Per-endpoint concurrency 5: a hanging receiver holds at most five of the process's slots.
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

test('a hanging receiver times out while the other endpoints keep being served', async () => {
  const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  let open = 0;
  rx.on('/hang', (req) => {
    // accepts, never answers
    open++;
    req.socket.once('close', () => open--);
  });
  const hangingAtFastReceipt: number[] = [];
  rx.on('/fast', (_req, res) => {
    hangingAtFastReceipt.push(open);
    res.end('ok');
  });
  const hang = await createEndpoint(t, token, { url: rx.url('/hang') });
  await createEndpoint(t, token, { url: rx.url('/fast') });
  for (let i = 0; i < 10; i++) {
    const res = await t.http.post(
      '/operator/events',
      { organization_id: org.id, type: 'assertion.created', subject: { type: 'entity', id: 'e' } },
      { token: t.operatorToken },
    );
    expect(res.status).toBe(201);
  }
  await t.app.sequencer.flush();
  await rx.waitFor(10, '/fast', 10_000);
  // The last fast delivery arrived while the hanging receiver still held requests open: nothing waited for it.
  expect(hangingAtFastReceipt.at(-1)).toBeGreaterThan(0);
  await t.app.webhooks.drain();
  // Bounded per-endpoint concurrency: a slot frees only when an attempt times out,
  // so no more than five requests arrive within 2 s of the first (the 3 s timeout runs from before arrival;
  // the receiver's socket close lags the worker's abort, so counting open sockets would overstate it).
  // Without the bound all ten arrive together; a loaded machine may spread the first five, so fewer is fine.
  const arrivals = rx.for('/hang').map((r) => r.at);
  expect(arrivals).toHaveLength(10);
  expect(arrivals.filter((at) => at < arrivals[0]! + 2000).length).toBeLessThanOrEqual(5);
  const ds = await listDeliveries(t, token, hang.id, '?limit=100');
  expect(ds).toHaveLength(10);
  for (const d of ds) {
    expect(d).toMatchObject({ status: 'failing', attempts: 1 });
    expect(d.attempt_log[0].error).toBe('timeout after 3000 ms');
  }
});
