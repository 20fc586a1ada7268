import { describe, expect } from 'vitest';
import { appTest, buildTenant } from '../support/kit.ts';
import { SseSubscription, subscribeLive, waitUntil, withTimeout, wsClient } from '../support/stream-client.ts';

/**
 * Stopping the server with open subscriptions (graphql-ws and SSE) finishes
 * promptly, well inside the shutdown grace period, and ends them for clients.
 */
const grace = 60_000;
const test = appTest({ config: { shutdownGraceMs: grace } });

describe('shutdown with open subscriptions', () => {
  test('app.stop() returns promptly and every subscriber sees its stream end', { timeout: 90_000 }, async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const c = wsClient(t, `Bearer ${token}`);
    const ws1 = await subscribeLive(t, c);
    const ws2 = await subscribeLive(t, c);
    const sse = new SseSubscription(t.origin, token);
    await waitUntil(() => t.app.stream.subscriberCount === 3, 'the SSE listener');

    const started = Date.now();
    await withTimeout(t.app.stop(), grace / 2, 'app.stop() with open subscriptions');
    // Open subscriptions must not hold the server for its grace period (a generous ratio, not a wall-clock bound).
    expect(Date.now() - started).toBeLessThan(grace / 4);
    expect(t.app.stream.subscriberCount).toBe(0);
    await waitUntil(() => ws1.completed && ws2.completed, 'graphql-ws subscribers to be told', 15_000);
    await withTimeout(sse.done, 15_000, 'the SSE response to end');
    expect(sse.ended).toBe(true);
    await c.dispose();
  });
});
