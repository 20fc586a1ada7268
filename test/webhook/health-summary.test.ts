import { expect } from 'vitest';
import { buildTenant, emitEvent } from '../support/kit.ts';
import { answering, createEndpoint, delayed, deliveryTest, settle } from './receiver.ts';

/**
 * The health summary of an endpoint (retrieve on REST, `WebhookEndpoint.health` on GraphQL): success rate and attempt
 * latency over the last hour and day, the last success and the last failure, from real attempts to a loopback receiver.
 * One attempt per delivery: a failure is final, so moving the clock retries nothing behind the summary's back.
 */
const { test, ctx } = deliveryTest({ retryScheduleMs: [0] });

const SCOPES = ['webhooks:read', 'webhooks:write'];
const HEALTH = `query($id: ID!) { webhookEndpoint(id: $id) { health {
  lastHour { attempts succeeded successRate p50Ms p99Ms } lastDay { attempts succeeded successRate p50Ms p99Ms }
  lastSuccessAt lastFailure { at statusCode error } } } }`;

async function health(token: string, id: string) {
  const res = await ctx.t.http.get(`/v1/platform/webhook_endpoints/${id}`, { token });
  expect(res.status, res.text).toBe(200);
  const gql = await ctx.t.http.graphql(HEALTH, { id }, { token });
  expect(gql.body.errors, gql.text).toBeUndefined();
  const h = res.body.webhook_endpoint.health;
  // The same summary on both fronts (GraphQL's names are camelCase).
  const window = (w: any) => ({
    attempts: w.attempts,
    succeeded: w.succeeded,
    successRate: w.success_rate,
    p50Ms: w.p50_ms,
    p99Ms: w.p99_ms,
  });
  expect(gql.body.data.webhookEndpoint.health).toEqual({
    lastHour: window(h.last_hour),
    lastDay: window(h.last_day),
    lastSuccessAt: h.last_success_at,
    lastFailure: h.last_failure && { at: h.last_failure.at, statusCode: h.last_failure.status_code, error: h.last_failure.error },
  });
  return h;
}

test('a new endpoint has an empty summary; attempts count per window, with success rate, latency, last success and failure', async () => {
  const { org, token } = await buildTenant(ctx.t, SCOPES);
  let status = 200;
  const slow = delayed(() => 60);
  ctx.rx.on('/health', (req, res) => (status === 200 ? slow.behaviour(req, res) : answering(status, 'down')(req, res)));
  const ep = await createEndpoint(ctx.t, token, { url: ctx.rx.url('/health') });
  const empty = { attempts: 0, succeeded: 0, success_rate: null, p50_ms: null, p99_ms: null };
  expect(await health(token, ep.id)).toEqual({ last_hour: empty, last_day: empty, last_success_at: null, last_failure: null });

  for (let i = 0; i < 3; i++) await emitEvent(ctx.t, org.id);
  await settle(ctx.t);
  const okAt = ctx.t.clock.now().toISOString();
  ctx.t.clock.advance(2 * 60_000);
  status = 500;
  await emitEvent(ctx.t, org.id);
  await settle(ctx.t);
  const failedAt = ctx.t.clock.now().toISOString();

  const h = await health(token, ep.id);
  expect(h.last_hour).toMatchObject({ attempts: 4, succeeded: 3, success_rate: 0.75 });
  expect(h.last_day).toEqual(h.last_hour);
  // Three answers took at least 60 ms, one was immediate: the median is a slow one, the 99th percentile too.
  expect(h.last_hour.p50_ms).toBeGreaterThanOrEqual(55);
  expect(h.last_hour.p99_ms).toBeGreaterThanOrEqual(h.last_hour.p50_ms);
  expect(h.last_success_at).toBe(okAt);
  expect(h.last_failure).toEqual({ at: failedAt, status_code: 500, error: 'HTTP 500' });

  // Two hours later the last hour is empty, the last day still counts them; a day later both are empty,
  // and the last success and failure stay (however old).
  ctx.t.clock.advance(2 * 3600_000);
  const later = await health(token, ep.id);
  expect(later.last_hour).toEqual(empty);
  expect(later.last_day).toEqual(h.last_day);
  ctx.t.clock.advance(86_400_000);
  expect(await health(token, ep.id)).toEqual({ ...h, last_hour: empty, last_day: empty });
});

test('the summary counts only its own endpoint, and the list does not carry it', async () => {
  const { org, token } = await buildTenant(ctx.t, SCOPES);
  ctx.rx.on('/health-other-down', answering(503));
  const ok = await createEndpoint(ctx.t, token, { url: ctx.rx.url('/health-other-ok') });
  const down = await createEndpoint(ctx.t, token, { url: ctx.rx.url('/health-other-down') });
  await emitEvent(ctx.t, org.id);
  await settle(ctx.t);
  expect((await health(token, ok.id)).last_hour).toMatchObject({ attempts: 1, succeeded: 1, success_rate: 1 });
  expect((await health(token, down.id)).last_hour).toMatchObject({ attempts: 1, succeeded: 0, success_rate: 0 });
  expect((await health(token, down.id)).last_success_at).toBeNull();
  const list = await ctx.t.http.get('/v1/platform/webhook_endpoints', { token });
  expect(list.body.data.every((e: object) => !('health' in e))).toBe(true);
  // GraphQL computes it for any endpoint it is asked on, a list's included.
  const gql = await ctx.t.http.graphql(
    '{ webhookEndpoints(first: 2) { edges { node { id health { lastHour { attempts } } } } } }',
    {},
    { token },
  );
  expect(gql.body.data.webhookEndpoints.edges.map((e: any) => e.node.health.lastHour.attempts)).toEqual([1, 1]);
});
