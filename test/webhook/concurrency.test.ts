import { afterEach, describe, expect } from 'vitest';
import { INITIAL_ENDPOINT_LIMIT } from '../../src/domain/webhook/concurrency.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { createEndpoint, delayed, emitMany, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

/**
 * Adaptive per-endpoint concurrency and keep-alive connections (ADR 0002,
 * Concurrency): observed at a real receiver, never by timing alone. The limit's
 * own rules are unit-tested in test/webhook/adaptive-limit.test.ts.
 */

const CEILING = 12;
// A generous timeout: on a loaded machine a 2 s one would be a congestion signal of its own.
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0], endpointConcurrency: CEILING, concurrency: 64, timeoutMs: 10_000 }) });

describe('adaptive concurrency and keep-alive over HTTP', () => {
  let t: TestApp;
  let rx: Receiver;
  test.beforeAll(({ app }) => void (t = app));
  afterEach(async () => {
    await rx?.close();
  });

  test('grows past its starting limit against a fast receiver, never past the ceiling, over far fewer connections than requests', {
    timeout: 180_000,
  }, async () => {
    rx = await startReceiver();
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const fast = delayed(() => 10);
    rx.on('/fast', fast.behaviour);
    const ep = await createEndpoint(t, token, { url: rx.url('/fast') });
    await emitMany(t, org.id, 200);
    await t.app.webhooks.drain();
    expect(rx.for('/fast')).toHaveLength(200);
    expect(fast.seen.max).toBeGreaterThan(INITIAL_ENDPOINT_LIMIT);
    expect(fast.seen.max).toBeLessThanOrEqual(CEILING);
    // The limit at the end is not asserted: on a loaded machine the last answers slow down and it rightly shrinks
    // again; the receiver's own count of requests in flight above is the proof that it grew.
    expect(t.app.webhooks.endpointLimit(ep.id)).toBeGreaterThanOrEqual(1);
    // Keep-alive: sockets are reused; a new one only when all are busy (≤ the limit), or after 4 s idle.
    expect(rx.connections()).toBeLessThanOrEqual(2 * CEILING);
    expect(rx.connections()).toBeLessThan(200 / 5);
  });

  test('shrinks to one request at a time when the receiver answers 503, and when its answers get slow', { timeout: 180_000 }, async () => {
    rx = await startReceiver();
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const failing = delayed(() => 5);
    rx.on('/busy', (req, res) => {
      failing.behaviour(req, { end: () => res.writeHead(503).end('busy') });
    });
    const busy = await createEndpoint(t, token, { url: rx.url('/busy') });
    await emitMany(t, org.id, 40);
    await t.app.webhooks.drain();
    expect(rx.for('/busy')).toHaveLength(40);
    expect(failing.seen.max).toBeLessThanOrEqual(INITIAL_ENDPOINT_LIMIT);
    expect(t.app.webhooks.endpointLimit(busy.id)).toBe(1);

    // Fast for the first 120 requests (the limit grows), then 600 ms per answer.
    let n = 0;
    let grown = 0;
    const slowing = delayed(() => (++n <= 120 ? 5 : 600));
    const other = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const ep = await createEndpoint(t, other.token, { url: rx.url('/slowing') });
    rx.on('/slowing', (req, res) => {
      if (n === 120) grown = t.app.webhooks.endpointLimit(ep.id);
      slowing.behaviour(req, res);
    });
    await emitMany(t, other.org.id, 150);
    await t.app.webhooks.drain();
    expect(rx.for('/slowing')).toHaveLength(150);
    // Growth itself is the first test's; here the limit it reached (on a loaded machine, stalls may already have trimmed it).
    expect(grown).toBeGreaterThan(1);
    expect(t.app.webhooks.endpointLimit(ep.id)).toBeLessThan(grown);
  });
});
