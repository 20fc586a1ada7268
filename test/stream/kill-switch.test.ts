import { afterAll, describe, expect } from 'vitest';
import type { Client } from 'graphql-ws';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { appendEvents, SseSubscription, Subscription, subscribeLive, waitUntil, wsClient } from '../support/stream-client.ts';

/** The operator kill switch refuses new subscriptions on both transports (its own file: it is process-wide). */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
const clients: Client[] = [];
test.beforeAll(({ app }) => void (t = app));
afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await t?.http.post('/operator/kill_switch', { engaged: false }, { token: t.operatorToken });
});

const killSwitch = async (engaged: boolean) => {
  const res = await t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });
  expect(res.status, res.text).toBe(200);
};

describe('kill switch', () => {
  test('engaged: a new subscription is developer_access_paused over graphql-ws and SSE; released: subscriptions work again', async () => {
    const a = await buildTenant(t, ['events:read']);
    await killSwitch(true);
    try {
      const c = wsClient(t, `Bearer ${a.token}`);
      clients.push(c);
      const sub = new Subscription(c);
      const err = await sub.firstError();
      expect(err.extensions?.code).toBe('developer_access_paused');

      const s = new SseSubscription(t.origin, a.token);
      await waitUntil(() => s.errors.length > 0 || s.ended, 'the SSE error');
      await s.close();
      expect(s.errors[0]?.extensions?.code).toBe('developer_access_paused');
      expect(t.app.stream.subscriberCount).toBe(0);
    } finally {
      await killSwitch(false);
    }

    const c = wsClient(t, `Bearer ${a.token}`);
    clients.push(c);
    const sub = await subscribeLive(t, c);
    const ids = await appendEvents(t.app, a.org.id, [{}]);
    await sub.waitForCount(1);
    expect(sub.events.map((e) => e.id)).toEqual(ids);
  });
});
