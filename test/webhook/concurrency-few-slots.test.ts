import { afterEach, describe, expect } from 'vitest';
import { appTest, buildTenant } from '../support/kit.ts';
import { createEndpoint, delayed, emitMany, listDeliveries, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

/**
 * Delivery with few slots in the process (4, at most 8 per endpoint): a slow
 * endpoint does not hold back a fast one, and keep-alive connections do not
 * let a name resolving to loopback through. concurrency.test.ts holds the
 * adaptive limit itself, on a server with many slots.
 */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0], endpointConcurrency: 8, concurrency: 4 }) });

describe('delivery with few slots in the process', () => {
  let rx: Receiver;
  afterEach(async () => {
    await rx?.close();
  });

  test('a slow endpoint does not hold back a fast one, even with few slots in the process', { timeout: 120_000 }, async ({ app: t }) => {
    rx = await startReceiver();
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const slow = delayed(() => 1000);
    rx.on('/slow', slow.behaviour);
    let slowAtLastFast = -1;
    rx.on('/fast', (_req, res) => {
      slowAtLastFast = rx.for('/slow').length;
      res.end('ok');
    });
    await createEndpoint(t, token, { url: rx.url('/slow') });
    const fast = await createEndpoint(t, token, { url: rx.url('/fast') });
    await emitMany(t, org.id, 30);
    await t.app.webhooks.drain();
    expect(rx.for('/fast')).toHaveLength(30);
    expect(rx.for('/slow')).toHaveLength(30);
    // Max-min fair: the fast endpoint takes each slot it frees (and its share of the others), so it finished
    // well before the slow one (at most 3 slots per second); on PostgreSQL at about a third of it. Before, it finished last.
    expect(slowAtLastFast).toBeLessThanOrEqual(24);
    expect((await listDeliveries(t, token, fast.id, '?limit=100')).every((d) => d.status === 'succeeded')).toBe(true);
  });

  test('refuses a name resolving to loopback, without a connection, while keep-alive connections to that address are open', async ({
    app: t,
  }) => {
    rx = await startReceiver();
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const { port } = new URL(rx.url());
    const literal = await createEndpoint(t, token, { url: rx.url('/literal') });
    await emitMany(t, org.id, 10);
    await t.app.webhooks.drain();
    const open = rx.connections();
    // `vm` resolves to 127.0.0.1 through /etc/hosts (see ssrf.test.ts): the address the open sockets go to, not named loopback.
    const byDns = await createEndpoint(t, token, { url: `https://vm:${port}/by-dns` });
    for (let i = 0; i < 2; i++) {
      await emitMany(t, org.id, 10);
      await t.app.webhooks.drain();
    }
    expect(rx.for('/literal')).toHaveLength(30);
    expect(rx.connections()).toBeLessThan(30);
    expect(rx.for('/by-dns')).toEqual([]);
    const refused = await listDeliveries(t, token, byDns.id, '?limit=100');
    expect(refused).toHaveLength(20);
    for (const d of refused) expect(d.attempt_log[0].error).toBe('destination_refused: vm resolves to a loopback address');
    // Only the literal endpoint's requests may have opened sockets since (a reuse, or a new one when all were busy).
    expect(rx.connections() - open).toBeLessThanOrEqual(20);
    expect((await listDeliveries(t, token, literal.id, '?limit=100')).every((d) => d.status === 'succeeded')).toBe(true);
  });
});
