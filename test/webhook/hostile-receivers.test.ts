import { afterAll, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

/**
 * Hostile receivers, in their own file with a generous attempt timeout: the
 * huge body answers 200 at once, and its attempt must succeed even when a
 * loaded machine is slow to read the first KiB.
 */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 1000, 5000], timeoutMs: 20_000, leaseMs: 40_000 }) });
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

test('a redirect is not followed, a reset socket and a huge streamed body leave the worker healthy', async () => {
  rx.on('/redirect', (_req, res) => {
    res.writeHead(302, { location: rx.url('/target') });
    res.end();
  });
  rx.on('/reset', (req) => req.socket.destroy());
  rx.on('/huge', (_req, res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const pump = () => {
      while (res.write(chunk));
    };
    res.on('drain', pump);
    res.on('error', () => {});
    pump();
  });
  const redirect = await createEndpoint(t, token, { url: rx.url('/redirect') });
  const reset = await createEndpoint(t, token, { url: rx.url('/reset') });
  const huge = await createEndpoint(t, token, { url: rx.url('/huge') });
  await emitEvent(t, orgId);
  await settle(t);
  expect(rx.for('/target')).toEqual([]);
  expect((await deliveryOf(redirect.id)).attempt_log[0]).toMatchObject({ status_code: 302, error: 'redirect not followed' });
  expect((await deliveryOf(reset.id)).attempt_log[0].error).toMatch(/socket hang up|ECONNRESET/);
  const h = await deliveryOf(huge.id);
  expect(h).toMatchObject({ status: 'succeeded', last_status_code: 200 });
  expect(h.attempt_log[0].response_excerpt.length).toBeLessThanOrEqual(1024);
});
