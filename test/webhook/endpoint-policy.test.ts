import { expect } from 'vitest';
import { buildTenant, emitEvent, expectGraphQLError, expectPlatformError } from '../support/kit.ts';
import { answering, createEndpoint, delayed, deliveryTest, emitMany, listDeliveries, settle } from './receiver.ts';

/**
 * Per-endpoint policy (src/domain/webhook/policy.ts): timeout, retry schedule, max in flight and rate limit, validated
 * against the operator's bounds and honoured by delivery, with real receivers on loopback. The deployment here:
 * 2 s timeout, schedule 0, 1 s, 5 s, at most 64 in flight per endpoint.
 */
const { test, ctx } = deliveryTest({
  retryScheduleMs: [0, 1000, 5000],
  timeoutMs: 2000,
  policyBounds: { maxTimeoutMs: 5000, maxRetries: 3, maxRetryDelayMs: 3_600_000, maxRatePerSecond: 50 },
});
const SCOPES = ['webhooks:read', 'webhooks:write'];
const P = '/v1/platform/webhook_endpoints';
const DEFAULTS = { timeout_ms: null, retry_schedule: null, max_in_flight: null, rate_limit_per_second: null };

test('the policy is shown on the endpoint (null: the deployment default), merged on update, and cleared by null', async () => {
  const { t } = ctx;
  const { token } = await buildTenant(t, SCOPES);
  const plain = await t.http.post(P, { url: 'https://a.example/hook' }, { token });
  expect(plain.body.webhook_endpoint.policy).toEqual(DEFAULTS);
  const res = await t.http.post(
    P,
    { url: 'https://a.example/hook', policy: { timeout_ms: 1500, retry_schedule: ['30s', '300000ms', '0.75h'] } },
    { token },
  );
  expect(res.status, res.text).toBe(201);
  const id = res.body.webhook_endpoint.id;
  expect(res.body.webhook_endpoint.policy).toEqual({ ...DEFAULTS, timeout_ms: 1500, retry_schedule: ['30s', '5m', '45m'] });

  const upd = await t.http.post(`${P}/${id}`, { policy: { max_in_flight: 2, timeout_ms: null } }, { token });
  expect(upd.body.webhook_endpoint.policy).toEqual({ ...DEFAULTS, retry_schedule: ['30s', '5m', '45m'], max_in_flight: 2 });
  const gql = await t.http.graphql(
    `mutation { updateWebhookEndpoint(id: "${id}", policy: { rateLimitPerSecond: 2.5, retrySchedule: null }) {
      policy { timeoutMs retrySchedule maxInFlight rateLimitPerSecond } } }`,
    {},
    { token },
  );
  expect(gql.body.data.updateWebhookEndpoint.policy).toEqual({
    timeoutMs: null,
    retrySchedule: null,
    maxInFlight: 2,
    rateLimitPerSecond: 2.5,
  });
  const cleared = await t.http.post(`${P}/${id}`, { policy: null }, { token });
  expect(cleared.body.webhook_endpoint.policy).toEqual(DEFAULTS);
});

test("a policy outside the operator's bounds is 400 invalid_request naming the field, on REST and GraphQL alike", async () => {
  const { t } = ctx;
  const { token } = await buildTenant(t, SCOPES);
  const url = 'https://a.example/hook';
  const cases: [Record<string, unknown>, string, string][] = [
    [{ timeout_ms: 50 }, 'policy.timeout_ms', 'timeoutMs: 50'],
    [{ timeout_ms: 5001 }, 'policy.timeout_ms', 'timeoutMs: 5001'],
    [{ retry_schedule: ['1s', '1s', '1s', '1s'] }, 'policy.retry_schedule', 'retrySchedule: ["1s", "1s", "1s", "1s"]'],
    [{ retry_schedule: ['500ms'] }, 'policy.retry_schedule', 'retrySchedule: ["500ms"]'],
    [{ retry_schedule: ['2h'] }, 'policy.retry_schedule', 'retrySchedule: ["2h"]'],
    [{ retry_schedule: ['soon'] }, 'policy.retry_schedule.0', 'retrySchedule: ["soon"]'],
    [{ max_in_flight: 0 }, 'policy.max_in_flight', 'maxInFlight: 0'],
    [{ max_in_flight: 65 }, 'policy.max_in_flight', 'maxInFlight: 65'],
    [{ rate_limit_per_second: 0 }, 'policy.rate_limit_per_second', 'rateLimitPerSecond: 0'],
    [{ rate_limit_per_second: 51 }, 'policy.rate_limit_per_second', 'rateLimitPerSecond: 51'],
    [{ retries: 3 }, 'policy.retries', ''],
  ];
  for (const [policy, param, gqlPolicy] of cases) {
    expectPlatformError(await t.http.post(P, { url, policy }, { token }), 400, 'invalid_request', param);
    if (!gqlPolicy) continue;
    const g = await t.http.graphql(`mutation { createWebhookEndpoint(url: "${url}", policy: { ${gqlPolicy} }) { id } }`, {}, { token });
    expect(expectGraphQLError(g, 'invalid_request').extensions.param).toBe(param);
  }
  const list = await t.http.get(P, { token });
  expect(list.body.data).toEqual([]);
});

test("a slow receiver times out at the endpoint's timeout, not the deployment's", async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  rx.on('/policy-slow', () => {}); // never answers
  const ep = await createEndpoint(t, token, { url: rx.url('/policy-slow'), policy: { timeout_ms: 300 } });
  await emitEvent(t, org.id);
  await settle(t);
  const [d] = await listDeliveries(t, token, ep.id);
  expect(d.attempt_log[0].error).toBe('timeout after 300 ms');
  expect(d.attempt_log[0].duration_ms).toBeGreaterThanOrEqual(280);
  expect(d.attempt_log[0].duration_ms).toBeLessThan(1500);
});

test("the endpoint's retry schedule spaces its attempts (±10 %) and its length ends them", async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  rx.on('/policy-retry', answering(500));
  const ep = await createEndpoint(t, token, { url: rx.url('/policy-retry'), policy: { retry_schedule: ['20s', '2m'] } });
  await emitEvent(t, org.id);
  await settle(t);
  const gap = async (attempts: number, ms: number) => {
    const [d] = await listDeliveries(t, token, ep.id);
    expect(d).toMatchObject({ status: 'failing', attempts });
    const wait = Date.parse(d.next_attempt_at) - Date.parse(d.attempt_log.at(-1).started_at);
    expect(wait).toBeGreaterThanOrEqual(ms * 0.9);
    expect(wait).toBeLessThanOrEqual(ms * 1.1);
  };
  await gap(1, 20_000);
  t.clock.advance(17_000); // the deployment's 1 s has long passed: nothing is sent before the endpoint's 20 s
  await settle(t);
  expect(rx.for('/policy-retry')).toHaveLength(1);
  t.clock.advance(5_000);
  await settle(t);
  await gap(2, 120_000);
  t.clock.advance(135_000);
  await settle(t);
  const [d] = await listDeliveries(t, token, ep.id);
  expect(d).toMatchObject({ status: 'exhausted', attempts: 3 });
  expect(rx.for('/policy-retry')).toHaveLength(3);
});

test('max_in_flight 1: the receiver never sees two requests at once, and every delivery arrives', async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  const slow = delayed(() => 25);
  rx.on('/policy-one', slow.behaviour);
  await createEndpoint(t, token, { url: rx.url('/policy-one'), policy: { max_in_flight: 1 } });
  await emitMany(t, org.id, 20);
  await rx.waitFor(20, '/policy-one');
  expect(slow.seen.max).toBe(1);
});

test('rate_limit_per_second: after a burst of one second, attempts start at about the rate', async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  await createEndpoint(t, token, { url: rx.url('/policy-rate'), policy: { rate_limit_per_second: 5 } });
  await emitMany(t, org.id, 20);
  const got = (await rx.waitFor(20, '/policy-rate', 20_000)).map((r) => r.at);
  // 5 at once, then 15 at 5/s: about 3 s. Generous bounds for a loaded machine.
  expect(got.at(-1)! - got[0]!).toBeGreaterThanOrEqual(2400);
  for (const at of got) expect(got.filter((x) => x >= at && x < at + 1000).length).toBeLessThanOrEqual(11);
});
