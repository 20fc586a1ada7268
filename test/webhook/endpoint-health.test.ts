import { expect } from 'vitest';
import { RETRY_AFTER_BOUNDS_MS } from '../../src/domain/webhook/lease.ts';
import { appTest, buildTenant, emitEvent } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

/**
 * Endpoint health: a receiver's 410 Gone retires its endpoint; 429/503 with Retry-After are waited for as asked;
 * failing_since tracks an unbroken run of failures, and past WEBHOOK_DISABLE_FAILING_AFTER (60 s here) the endpoint is disabled.
 */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 1000, 5000], disableFailingAfterMs: 60_000 }) });
let rx: Receiver;
test.beforeAll(async () => {
  rx = await startReceiver();
});
test.afterAll(() => rx?.close());

const SCOPES = ['webhooks:read', 'webhooks:write'];
const endpointOf = async (t: Parameters<typeof settle>[0], token: string, id: string) =>
  (await t.http.get(`/v1/platform/webhook_endpoints/${id}`, { token })).body.webhook_endpoint;

test('410 Gone disables the endpoint at once (disabled_reason gone, on REST and GraphQL); nothing more is sent until it is enabled again', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  rx.on('/gone', (_req, res) => {
    res.statusCode = 410;
    res.end('retired');
  });
  const ep = await createEndpoint(t, token, { url: rx.url('/gone') });
  expect((await endpointOf(t, token, ep.id)).disabled_reason).toBeNull();
  await emitEvent(t, org.id);
  await emitEvent(t, org.id);
  await settle(t);
  const received = rx.for('/gone').length;
  expect(received).toBeGreaterThanOrEqual(1);
  expect(await endpointOf(t, token, ep.id)).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
  const gql = await t.http.graphql(`{ webhookEndpoint(id: "${ep.id}") { status disabledReason } }`, {}, { token });
  expect(gql.body.data.webhookEndpoint).toEqual({ status: 'DISABLED', disabledReason: 'GONE' });
  await settle(t); // a fan-out that raced the disable leaves a pending delivery, exhausted unsent when leased
  expect(rx.for('/gone').length).toBe(received);
  const deliveries = await listDeliveries(t, token, ep.id);
  expect(deliveries.length).toBeGreaterThanOrEqual(1);
  expect(deliveries.every((d) => d.status === 'exhausted')).toBe(true);
  expect(deliveries.some((d) => d.last_status_code === 410)).toBe(true);

  // Hours later, nothing has been retried; a new event is not delivered either.
  t.clock.advance(6 * 3600_000);
  await emitEvent(t, org.id);
  await settle(t);
  expect(rx.for('/gone').length).toBe(received);

  // "Disabled" again by hand keeps the receiver's reason; enabling clears it.
  await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}`, { status: 'disabled' }, { token });
  expect((await endpointOf(t, token, ep.id)).disabled_reason).toBe('gone');
  await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}`, { status: 'enabled' }, { token });
  expect(await endpointOf(t, token, ep.id)).toMatchObject({ status: 'enabled', disabled_reason: null });
});

test('a manual disable records disabled_reason manual', async ({ app: t }) => {
  const { token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/fine') });
  const res = await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}`, { status: 'disabled' }, { token });
  expect(res.body.webhook_endpoint).toMatchObject({ status: 'disabled', disabled_reason: 'manual' });
});

test('429 and 503 with Retry-After schedule the next attempt that far ahead (clamped to 1 s .. 6 h), not by the schedule', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const answers: Record<string, [number, string | undefined]> = {
    '/slow-down': [429, '120'],
    '/maintenance': [503, '999999999'],
    '/eager': [429, '0'],
    '/no-header': [503, undefined],
  };
  const eps: Record<string, string> = {};
  for (const [path, [status, after]] of Object.entries(answers)) {
    rx.on(path, (_req, res) => {
      res.statusCode = status;
      if (after !== undefined) res.setHeader('retry-after', after);
      res.end();
    });
    eps[path] = (await createEndpoint(t, token, { url: rx.url(path) })).id;
  }
  await emitEvent(t, org.id);
  await settle(t);
  const waitMs = async (path: string) => {
    const [d] = await listDeliveries(t, token, eps[path]!);
    expect(d.status).toBe('failing');
    return Date.parse(d.next_attempt_at) - Date.parse(d.attempt_log[0].started_at);
  };
  expect(await waitMs('/slow-down')).toBe(120_000);
  expect(await waitMs('/maintenance')).toBe(RETRY_AFTER_BOUNDS_MS[1]);
  expect(await waitMs('/eager')).toBe(RETRY_AFTER_BOUNDS_MS[0]);
  // Without the header, the schedule's second step (1 s, ±10 % jitter).
  const scheduled = await waitMs('/no-header');
  expect(scheduled).toBeGreaterThanOrEqual(900);
  expect(scheduled).toBeLessThanOrEqual(1100);
});

test('failing_since marks an unbroken run of failures, a success clears it, and failing past the threshold disables the endpoint', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  let answer = 500;
  rx.on('/flaky', (_req, res) => {
    res.statusCode = answer;
    res.end();
  });
  const ep = await createEndpoint(t, token, { url: rx.url('/flaky') });
  await emitEvent(t, org.id);
  await settle(t);
  const first = await endpointOf(t, token, ep.id);
  expect(first).toMatchObject({ status: 'enabled', disabled_reason: null });
  const [d] = await listDeliveries(t, token, ep.id);
  expect(first.failing_since).toBe(d.attempt_log[0].started_at);

  // A success ends the run.
  answer = 200;
  t.clock.advance(1100);
  await settle(t);
  expect((await endpointOf(t, token, ep.id)).failing_since).toBeNull();

  // A new run: still enabled within the threshold, disabled once an attempt fails past it.
  answer = 500;
  await emitEvent(t, org.id);
  await settle(t);
  const since = (await endpointOf(t, token, ep.id)).failing_since;
  expect(since).not.toBeNull();
  t.clock.advance(30_000);
  await emitEvent(t, org.id);
  await settle(t);
  expect(await endpointOf(t, token, ep.id)).toMatchObject({ status: 'enabled', failing_since: since });
  t.clock.advance(31_000);
  await emitEvent(t, org.id);
  await settle(t);
  expect(await endpointOf(t, token, ep.id)).toMatchObject({ status: 'disabled', disabled_reason: 'failing' });
  // A fan-out or lease that raced the disable may still hold a pending or failing delivery: it is exhausted when next
  // leased, with no request (past the longest retry of the schedule, jitter included).
  const sent = rx.for('/flaky').length;
  t.clock.advance(6000);
  await settle(t);
  expect(rx.for('/flaky').length).toBe(sent);
  expect((await listDeliveries(t, token, ep.id)).every((x) => x.status !== 'pending' && x.status !== 'failing')).toBe(true);
  const gql = await t.http.graphql(`{ webhookEndpoint(id: "${ep.id}") { disabledReason failingSince } }`, {}, { token });
  expect(gql.body.data.webhookEndpoint).toEqual({ disabledReason: 'FAILING', failingSince: since });

  // Enabling starts afresh.
  await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}`, { status: 'enabled' }, { token });
  expect(await endpointOf(t, token, ep.id)).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: null });
});
