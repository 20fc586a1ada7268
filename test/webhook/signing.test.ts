import { afterAll, expect } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

const test = appTest({ config: webhookConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

const verify = (secret: string, r: { body: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>);

test('deliveries verify with the standardwebhooks verifier; both secrets during the 24 h rotation overlap, only the current one after', async () => {
  const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  const ep = await createEndpoint(t, token, { url: rx.url('/signed') });

  const first = await emitEvent(t, org.id);
  await settle(t);
  const [r1] = await rx.waitFor(1, '/signed');
  expect(verify(ep.secret, r1!)).toMatchObject({ id: first, object: 'event' });
  expect(r1!.headers['webhook-id']).toBe(first);
  expect(Math.abs(Number(r1!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
  expect(String(r1!.headers['webhook-signature']).split(' ')).toHaveLength(1);

  const rotated = await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}/rotate_secret`, {}, { token });
  expect(rotated.status).toBe(200);
  const current = rotated.body.webhook_endpoint.secret as string;
  await emitEvent(t, org.id);
  await settle(t);
  const r2 = (await rx.waitFor(2, '/signed'))[1]!;
  const entries = String(r2.headers['webhook-signature']).split(' ');
  expect(entries).toHaveLength(2);
  expect(entries.every((e) => e.startsWith('v1,'))).toBe(true);
  expect(verify(current, r2)).toBeTruthy();
  expect(verify(ep.secret, r2)).toBeTruthy(); // the previous secret still verifies
  // Current first: a verifier holding only the current secret matches the first entry.
  expect(verify(current, { ...r2, headers: { ...r2.headers, 'webhook-signature': entries[0] } })).toBeTruthy();
  expect(verify(ep.secret, { ...r2, headers: { ...r2.headers, 'webhook-signature': entries[1] } })).toBeTruthy();

  t.clock.advance(24 * 3600 * 1000 + 1000);
  await emitEvent(t, org.id);
  await settle(t);
  const r3 = (await rx.waitFor(3, '/signed'))[2]!;
  expect(String(r3.headers['webhook-signature']).split(' ')).toHaveLength(1);
  expect(verify(current, r3)).toBeTruthy();
  expect(() => verify(ep.secret, r3)).toThrow();
});
