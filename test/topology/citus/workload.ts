import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { connectMcp, toolValue } from '../../mcp/helpers.ts';
import { activeEnrollment, ALL_SCOPES as CLAIM_SCOPES, api } from '../../assertion/helpers.ts';
import { launch, sandbox, settled, topUp } from '../../operation/helpers.ts';
import { destinations } from '../../destination/helpers.ts';
import { buildTenant, buildToken, feedEvents, type TestApp } from '../../support/kit.ts';
import { SseSubscription, Subscription, waitUntil, wsClient } from '../../support/stream-client.ts';
import { startReceiver } from '../../webhook/receiver.ts';

const ALL = [
  ...CLAIM_SCOPES,
  'webhooks:read',
  'webhooks:write',
  'distributions:read',
  'distributions:write',
  'distributions:launch',
  'deployments:read',
  'units:create',
  'units:read',
];
const ok = (res: { status: number; text: string }, status = 200) => expect(res.status, res.text).toBe(status);

/** Polls `read` (a request through the API) until it gives a value; the worker's progress is not otherwise observable. */
async function until<T>(read: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A representative day of the product, through its real fronts (REST, GraphQL over HTTP, graphql-ws, SSE, MCP) on
 * one server: two organizations with keys, claims, programs and enrollments, measurements, units, the feed, live
 * subscribers, webhook endpoints receiving fan-out and deliveries (a failing one retried), an event destination,
 * a distribution launched and settled through the operations worker, idempotent retries, token rotation and revocation.
 * Every statement it causes is in the statement log the report reads.
 */
export async function runWorkload(t: TestApp): Promise<void> {
  const rx = await startReceiver();
  const closers: (() => unknown)[] = [];
  try {
    const orgs = await Promise.all([0, 1].map(() => buildTenant(t, ALL)));
    for (const [i, { org, token }] of orgs.entries()) {
      const a = api(t, token);
      // Live subscribers first, so every append below is streamed (graphql-ws and SSE).
      const ws = wsClient(t, `Bearer ${token}`);
      const live = new Subscription(ws, { startingAfter: '0' });
      const sse = new SseSubscription(t.origin, token, { startingAfter: '0' });
      closers.push(
        () => live.dispose(),
        () => ws.dispose(),
        () => sse.close().catch(() => {}),
      );

      // Webhooks: one endpoint that answers 200, one that fails once then recovers; an event destination on a broker
      // that is not there (its deliveries fail and are rescheduled).
      const good = await t.http.post('/v1/platform/webhook_endpoints', { url: rx.url(`/ok/${i}`) }, { token });
      ok(good, 201);
      rx.on(`/failing/${i}`, (_req, res) => {
        res.statusCode = 500;
        res.end('x');
      });
      const failing = await t.http.post(
        '/v1/platform/webhook_endpoints',
        { url: rx.url(`/failing/${i}`), enabled_events: ['assertion.created'] },
        { token },
      );
      ok(failing, 201);
      ok(await destinations(t, token).create({ type: 'nats', url: 'nats://127.0.0.1:1', subject: 'platform.events' }), 201);

      // Claims, REST and GraphQL, with an idempotent retry of each.
      const user = randomUUID();
      const key = randomUUID();
      const claim = await a.assert({ external_user_id: user, issuer: 'acme', key: 'verified', value: true }, { 'idempotency-key': key });
      ok(claim, 201);
      ok(await a.assert({ external_user_id: user, issuer: 'acme', key: 'verified', value: true }, { 'idempotency-key': key }), 201);
      const gql = (query: string, variables: Record<string, unknown> = {}) => t.http.graphql(query, variables, { token });
      const created = await gql(
        'mutation($u: String, $k: String!) { createAssertion(externalUserId: $u, issuer: "acme", key: $k, value: 7) { id entity } }',
        { u: user, k: 'score' },
      );
      expect(created.body.errors, created.text).toBeUndefined();
      ok(await a.revoke({ external_user_id: user, issuer: 'acme', key: 'score' }), 201);
      ok(await a.list({ external_user_id: user, issuer: 'acme' }));
      ok(await a.event(claim.body.id));

      // A program with a requirement, an active enrollment, measurements and rollups.
      const { program, entity } = await activeEnrollment(a);
      ok(await a.enrollments({ program: program.id }));
      const at = t.clock.now().toISOString();
      ok(await a.measure([{ entity, metric: 'views', value: 10, occurred_at: at, external_id: randomUUID() }]), 201);
      ok(await a.rollups({ entity, metric: 'views', window: 'month' }));

      // Surface A: a unit, its idempotent retry, the list.
      const unitKey = randomUUID();
      ok(await t.http.post('/api/units/create', { type: 'video', caption: 'c' }, { token, headers: { 'Idempotency-Key': unitKey } }));
      ok(await t.http.post('/api/units/create', { type: 'video', caption: 'c' }, { token, headers: { 'Idempotency-Key': unitKey } }));
      ok(await t.http.post('/api/units/list', {}, { token }));

      // Money and an operation: top-up, launch, the worker runs it to the end.
      const ops = { token, brand: org.brands[0]!.id, orgId: org.id };
      await topUp(t, ops.brand, 10_000);
      const launched = await launch(t, ops, { budget: 1000, deployments: [sandbox()] });
      await settled(t, ops, launched.operation.id);

      // The feed (REST, filtered, after a cursor) and GraphQL's connection.
      const feed = await feedEvents(t, token);
      ok(await t.http.get(`/v1/platform/events?type=assertion.created&starting_after=${feed[0].id}`, { token }));
      const page = await gql('{ events(first: 20) { edges { node { id seq type } } } }');
      expect(page.body.errors, page.text).toBeUndefined();

      // Everything reached the live subscribers, and every endpoint its events; the flaky one was retried.
      await waitUntil(() => live.events.length >= feed.length && sse.events.length >= feed.length, 'live subscribers', 30_000);
      await waitUntil(() => rx.for(`/ok/${i}`).length >= feed.length, 'webhook deliveries', 30_000);
      ok(await t.http.get(`/v1/platform/webhook_endpoints/${good.body.webhook_endpoint.id}/deliveries?limit=5`, { token }));
      ok(await t.http.get(`/v1/platform/events/${feed[0].id}/deliveries`, { token }));
      // The failing endpoint's deliveries use up the schedule (three attempts each); one is retried by hand.
      const failingId = failing.body.webhook_endpoint.id;
      const exhausted = await until(async () => {
        const res = await t.http.get(`/v1/platform/webhook_endpoints/${failingId}/deliveries?status=exhausted&limit=1`, { token });
        return res.body.data?.[0];
      }, 'an exhausted delivery');
      ok(await t.http.post(`/v1/platform/webhook_endpoints/${failingId}/deliveries/${exhausted.id}/retry`, {}, { token }));
      const retried = rx.for(`/failing/${i}`).length;
      await waitUntil(() => rx.for(`/failing/${i}`).length > retried, 'the retried attempt', 30_000);

      // An agent over MCP reads the feed.
      const agent = await connectMcp(t.origin, token);
      closers.push(() => agent.close());
      toolValue(await agent.callTool({ name: 'events_list', arguments: { limit: 5 } }));

      // Keys: a second token is rotated, then the rotated one revoked.
      const extra = await buildToken(t, org, ['events:read']);
      const rotated = await t.http.post('/platform/tokens/rotate', { token_id: extra.id }, { token: org.userToken });
      ok(rotated);
      ok(await t.http.post('/platform/tokens/revoke', { token_id: rotated.body.token.id }, { token: org.userToken }));
      ok(await t.http.get('/platform/tokens', { token: org.userToken }));
    }
  } finally {
    for (const close of closers.reverse()) await close();
    await rx.close();
  }
}
