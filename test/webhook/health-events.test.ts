import { expect } from 'vitest';
import { buildTenant, emitEvent, expectErrorResponse, feedEvents } from '../support/kit.ts';
import { waitUntil, wsClient } from '../support/stream-client.ts';
import { answering, createEndpoint, deliveryTest, settle } from './receiver.ts';

/**
 * An endpoint's health transitions are internal events: listed on the operator route and pushed by the GraphQL
 * subscription webhookEndpointHealthChanged, never public (not in the feed, never delivered to a webhook).
 */
const { test, ctx } = deliveryTest({ retryScheduleMs: [0, 1000, 5000] });
const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read'];

test('failing started, recovered, disabled (gone, manual) and enabled are recorded, shown to operators and subscribers, and never public', async () => {
  const { t, rx } = ctx;
  const { org, token } = await buildTenant(t, SCOPES);
  let status = 500;
  rx.on('/transitions', (req, res) => answering(status)(req, res));
  const ep = await createEndpoint(t, token, { url: rx.url('/transitions') });
  const client = wsClient(t, `Bearer ${token}`);
  const pushed: any[] = [];
  const errors: unknown[] = [];
  client.subscribe(
    {
      query: `subscription($id: ID!) { webhookEndpointHealthChanged(id: $id, after: "whe_") { id kind reason createdAt endpoint { id status disabledReason } } }`,
      variables: { id: ep.id },
    },
    { next: (m: any) => pushed.push(m.data?.webhookEndpointHealthChanged ?? m), error: (e) => errors.push(e), complete: () => {} },
  );
  try {
    await emitEvent(t, org.id); // 500: failing started
    await settle(t);
    status = 200;
    t.clock.advance(1100); // the retry answers 200: recovered
    await settle(t);
    status = 410;
    await emitEvent(t, org.id); // 410: disabled, gone
    await settle(t);
    for (const s of ['enabled', 'disabled'])
      expect((await t.http.post(`/v1/platform/webhook_endpoints/${ep.id}`, { status: s }, { token })).status).toBe(200);

    const expected = [
      { kind: 'failing_started', reason: null },
      { kind: 'recovered', reason: null },
      { kind: 'disabled', reason: 'gone' },
      { kind: 'enabled', reason: null },
      { kind: 'disabled', reason: 'manual' },
    ];
    const res = await t.http.get(`/operator/webhook_endpoints/${ep.id}/health_events`, { token: t.operatorToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.has_more).toBe(false);
    expect(res.body.data.map((e: any) => ({ kind: e.kind, reason: e.reason }))).toEqual([...expected].reverse());
    expect(res.body.data[0]).toMatchObject({
      object: 'webhook_endpoint_health_event',
      endpoint_id: ep.id,
      id: expect.stringMatching(/^whe_/),
    });
    const page = await t.http.get(`/operator/webhook_endpoints/${ep.id}/health_events?limit=2&starting_after=${res.body.data[1].id}`, {
      token: t.operatorToken,
    });
    expect(page.body.data.map((e: any) => e.id)).toEqual(res.body.data.slice(2, 4).map((e: any) => e.id));

    await waitUntil(
      () => pushed.length >= expected.length,
      () => `five transitions; saw ${JSON.stringify(pushed)} ${JSON.stringify(errors)}`,
    );
    expect(pushed.map((e) => ({ kind: e.kind.toLowerCase(), reason: e.reason }))).toEqual(expected);
    expect(pushed.map((e) => e.id)).toEqual(res.body.data.map((e: any) => e.id).reverse());
    expect(pushed.at(-1).endpoint).toEqual({ id: ep.id, status: 'DISABLED', disabledReason: 'MANUAL' });

    // Never public: the feed holds only the two test events, and the receiver only ever got those.
    expect((await feedEvents(t, token)).map((e) => e.type)).toEqual(['assertion.created', 'assertion.created']);
    expect(new Set(rx.for('/transitions').map((r) => JSON.parse(r.body).type))).toEqual(new Set(['assertion.created']));
  } finally {
    await client.dispose();
  }
});

test('the operator route needs the operator token and a known endpoint', async () => {
  const { t } = ctx;
  const { token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: 'https://a.example/hook' });
  expectErrorResponse(await t.http.get(`/operator/webhook_endpoints/${ep.id}/health_events`, { token }), 401);
  expectErrorResponse(
    await t.http.get('/operator/webhook_endpoints/we_nope/health_events', { token: t.operatorToken }),
    404,
    'resource_missing',
  );
  const empty = await t.http.get(`/operator/webhook_endpoints/${ep.id}/health_events`, { token: t.operatorToken });
  expect(empty.body).toEqual({ object: 'list', data: [], has_more: false });
});
