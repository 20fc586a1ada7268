import { expect } from 'vitest';
import { startMaintenance } from '../../src/workers/maintenance.ts';
import { appTest, buildTenant, emitEvent } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig } from './receiver.ts';

/**
 * The queryable delivery log (issue 16): an endpoint's deliveries filtered by status, event type, event id, creation
 * time and the last attempt's HTTP status class; one event's deliveries across endpoints; attempts pruned past
 * WEBHOOK_ATTEMPT_RETENTION by the maintenance loop while deliveries and the feed stay.
 */
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0], attemptRetentionMs: 30 * 86_400_000 }) });
const rx = await startReceiver();
test.afterAll(() => rx.close());

const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read'];
const P = '/v1/platform';
const idsOf = (rows: { event_id: string }[]) => rows.map((r) => r.event_id).sort();

test('an endpoint’s log filters by status, event type, event id, created[…] and status class, alone and together', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  // Created events are accepted, revoked ones answered 503.
  rx.on('/log', (_req, res) => {
    res.statusCode = JSON.parse(rx.for('/log').at(-1)!.body).type === 'assertion.revoked' ? 503 : 200;
    res.end();
  });
  const ep = await createEndpoint(t, token, { url: rx.url('/log') });
  const early = await emitEvent(t, org.id, 'assertion.created');
  await settle(t); // a delivery is created when its event is fanned out: before the clock moves
  t.clock.advance(60_000);
  const middle = t.clock.now().toISOString();
  const revoked = await emitEvent(t, org.id, 'assertion.revoked');
  const late = await emitEvent(t, org.id, 'assertion.created');
  await settle(t);
  const q = (query: string) => listDeliveries(t, token, ep.id, `?${query}`);

  expect(idsOf(await q('status=succeeded'))).toEqual([early, late].sort());
  expect(idsOf(await q('status=exhausted'))).toEqual([revoked]);
  expect(idsOf(await q('event_type=assertion.revoked'))).toEqual([revoked]);
  expect(idsOf(await q(`event_id=${late}`))).toEqual([late]);
  expect(idsOf(await q(`created[gte]=${encodeURIComponent(middle)}`))).toEqual([revoked, late].sort());
  expect(idsOf(await q(`created[lt]=${encodeURIComponent(middle)}`))).toEqual([early]);
  expect(idsOf(await q('status_class=5xx'))).toEqual([revoked]);
  expect(idsOf(await q('status_class=2xx'))).toEqual([early, late].sort());
  expect(await q('status_class=4xx')).toEqual([]);
  expect(idsOf(await q(`status_class=2xx&event_type=assertion.created&created[gte]=${encodeURIComponent(middle)}`))).toEqual([late]);
  // Paging keeps the filter.
  const first = await t.http.get(`${P}/webhook_endpoints/${ep.id}/deliveries?status_class=2xx&limit=1`, { token });
  expect(first.body).toMatchObject({ has_more: true, data: [{ event_id: late }] });
  const next = await q(`status_class=2xx&limit=1&starting_after=${first.body.data[0].id}`);
  expect(idsOf(next)).toEqual([early]);

  // No response at all is the `error` class.
  const dead = await createEndpoint(t, token, { url: 'http://127.0.0.1:9/nothing-listens' });
  const lost = await emitEvent(t, org.id, 'assertion.created');
  await settle(t);
  expect(idsOf(await listDeliveries(t, token, dead.id, '?status_class=error'))).toEqual([lost]);
  expect(await listDeliveries(t, token, dead.id, '?status_class=2xx')).toEqual([]);

  // GraphQL takes the same filters.
  const gql = await t.http.graphql(
    `{ webhookEndpoint(id: "${ep.id}") { deliveries(statusClass: "5xx", eventType: "assertion.revoked") { edges { node { eventId lastStatusCode } } } } }`,
    {},
    { token },
  );
  expect(gql.body.data.webhookEndpoint.deliveries.edges.map((e: any) => e.node)).toEqual([{ eventId: revoked, lastStatusCode: 503 }]);

  const bad: [string, string, string][] = [
    ['event_type=nope', 'invalid_event_type', 'event_type'],
    ['status_class=1xx', 'invalid_request', 'status_class'],
    ['created[gte]=yesterday', 'invalid_request', 'created[gte]'],
    ['status=lost', 'invalid_request', 'status'],
  ];
  for (const [query, code, param] of bad) {
    const res = await t.http.get(`${P}/webhook_endpoints/${ep.id}/deliveries?${query}`, { token });
    expect([res.status, res.body.error?.code, res.body.error?.param], query).toEqual([400, code, param]);
  }
  const gqlBad = await t.http.graphql(
    `{ webhookEndpoint(id: "${ep.id}") { deliveries(statusClass: "1xx") { edges { cursor } } } }`,
    {},
    { token },
  );
  expect(gqlBad.body.errors[0].extensions).toMatchObject({ code: 'invalid_request', param: 'statusClass' });
});

test('GET /events/{id}/deliveries shows one event’s deliveries across endpoints; another organization’s event is 404', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const a = await createEndpoint(t, token, { url: rx.url('/event-a') });
  const b = await createEndpoint(t, token, { url: rx.url('/event-b') });
  const other = await emitEvent(t, org.id);
  const event = await emitEvent(t, org.id);
  await settle(t);
  const res = await t.http.get(`${P}/events/${event}/deliveries`, { token });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.map((d: any) => d.endpoint_id).sort()).toEqual([a.id, b.id].sort());
  expect(res.body.data.every((d: any) => d.event_id === event && d.status === 'succeeded')).toBe(true);
  expect((await t.http.get(`${P}/events/${event}/deliveries?status=failing`, { token })).body.data).toEqual([]);
  expect((await t.http.get(`${P}/events/${other}/deliveries?limit=1`, { token })).body).toMatchObject({ has_more: true });

  const gql = await t.http.graphql(`{ eventDeliveries(eventId: "${event}") { edges { node { endpointId } } } }`, {}, { token });
  expect(gql.body.data.eventDeliveries.edges.map((e: any) => e.node.endpointId).sort()).toEqual([a.id, b.id].sort());

  const stranger = await buildTenant(t, SCOPES);
  const foreign = await t.http.get(`${P}/events/${event}/deliveries`, { token: stranger.token });
  expect([foreign.status, foreign.body.error.code]).toEqual([404, 'resource_missing']);
  const noScope = await buildTenant(t, ['events:read']);
  expect((await t.http.get(`${P}/events/${event}/deliveries`, { token: noScope.token })).status).toBe(403);
});

test('the maintenance loop prunes attempts past the retention; the delivery and the feed stay', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/retained') });
  const old = await emitEvent(t, org.id);
  await settle(t);
  t.clock.advance(29 * 86_400_000);
  const recent = await emitEvent(t, org.id);
  await settle(t);
  t.clock.advance(2 * 86_400_000); // the first attempt is 31 days old, the second 2 days
  const maintenance = startMaintenance(t.app.deps, 3_600_000);
  await maintenance.runOnce();
  maintenance.stop();

  const byEvent = Object.fromEntries((await listDeliveries(t, token, ep.id)).map((d) => [d.event_id, d]));
  expect(byEvent[old]).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 200, attempt_log: [] });
  expect(byEvent[recent].attempt_log).toHaveLength(1);
  const feed = await t.http.get(`${P}/events/${old}`, { token });
  expect(feed.status).toBe(200);
});
