import { expect } from 'vitest';
import { PlatformClient } from '../../packages/client/src/index.ts';
import { answering, emitMany, settle, startReceiver, webhookConfig } from '../webhook/receiver.ts';
import { operationsConfig } from '../operation/helpers.ts';
import { appTest, buildTenant } from '../support/kit.ts';

/**
 * The client's methods for what issue 16 added, through real HTTP to a loopback receiver: endpoint filter, policy
 * and ordering params, replay (and its cancel) as an operation, the delivery log's filters, one event's deliveries
 * and the endpoint's health.
 */
const test = appTest({ config: { ...webhookConfig({ retryScheduleMs: [0, 60_000] }), ...operationsConfig() } });
const rx = await startReceiver();
test.afterAll(() => rx.close());

const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read'];

test('create and update carry filter, policy and ordering; retrieve has the health summary', async ({ app: t }) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const client = new PlatformClient({ apiKey: token, origin: t.origin });
  const brand = org.brands[0]!.id;
  const ep = await client.webhookEndpoints.create({
    url: rx.url('/client-params'),
    filter: { brands: [brand], subjectTypes: ['entity'] },
    policy: { timeoutMs: 1500, retrySchedule: ['30s', '5m'], maxInFlight: 3, rateLimitPerSecond: 10 },
    ordering: 'subject',
  });
  expect(ep).toMatchObject({
    filter: { brands: [brand], subjectTypes: ['entity'] },
    policy: { timeoutMs: 1500, retrySchedule: ['30s', '5m'], maxInFlight: 3, rateLimitPerSecond: 10 },
    ordering: 'subject',
  });
  const updated = await client.webhookEndpoints.update(ep.id, { filter: null, policy: null, ordering: 'none' });
  expect(updated).toMatchObject({
    filter: { brands: null, subjectTypes: null },
    policy: { timeoutMs: null, retrySchedule: null, maxInFlight: null, rateLimitPerSecond: null },
    ordering: 'none',
  });
  const health = (await client.webhookEndpoints.retrieve(ep.id)).health!;
  expect(health).toEqual({
    lastHour: { attempts: 0, succeeded: 0, successRate: null, p50Ms: null, p99Ms: null },
    lastDay: { attempts: 0, succeeded: 0, successRate: null, p50Ms: null, p99Ms: null },
    lastSuccessAt: null,
    lastFailure: null,
  });
});

test('the delivery log filters by status, event type, event id, creation time and status class; events.deliveries shows one event', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const client = new PlatformClient({ apiKey: token, origin: t.origin });
  rx.on('/client-log-bad', answering(500));
  const good = await client.webhookEndpoints.create({ url: rx.url('/client-log-good') });
  const bad = await client.webhookEndpoints.create({ url: rx.url('/client-log-bad') });
  t.clock.advance(1);
  await emitMany(t, org.id, 2);
  await settle(t);
  const first = (await client.events.list()).data[0]!.id;
  const all = (await client.webhookEndpoints.deliveries(bad.id)).data;
  expect(all).toHaveLength(2);
  expect(all.every((d) => d.status === 'failing' && d.replayOperationId === null)).toBe(true);
  expect((await client.webhookEndpoints.deliveries(bad.id, { status: 'succeeded' })).data).toEqual([]);
  expect((await client.webhookEndpoints.deliveries(bad.id, { statusClass: '5xx' })).data).toHaveLength(2);
  expect((await client.webhookEndpoints.deliveries(good.id, { statusClass: '5xx' })).data).toEqual([]);
  expect((await client.webhookEndpoints.deliveries(bad.id, { eventId: first })).data.map((d) => d.eventId)).toEqual([first]);
  expect((await client.webhookEndpoints.deliveries(bad.id, { eventType: 'assertion.revoked' })).data).toEqual([]);
  const now = t.clock.now().toISOString();
  expect((await client.webhookEndpoints.deliveries(bad.id, { created: { lte: now } })).data).toHaveLength(2);
  expect((await client.webhookEndpoints.deliveries(bad.id, { created: { gt: now } })).data).toEqual([]);
  const across = (await client.events.deliveries(first)).data;
  expect(across.map((d) => d.endpointId).sort()).toEqual([good.id, bad.id].sort());
  expect((await client.events.deliveries(first, { status: 'succeeded' })).data.map((d) => d.endpointId)).toEqual([good.id]);
  await expect(client.webhookEndpoints.deliveries(bad.id, { statusClass: '6xx' as never })).rejects.toMatchObject({
    code: 'invalid_request',
    status: 400,
  });
});

test('replay answers the operation; a second live replay is operation_conflict; cancelReplay answers the cancel operation', async ({
  app: t,
}) => {
  const { org, token } = await buildTenant(t, SCOPES);
  const client = new PlatformClient({ apiKey: token, origin: t.origin });
  const ep = await client.webhookEndpoints.create({ url: rx.url('/client-replay') });
  t.clock.advance(1);
  await emitMany(t, org.id, 3);
  const op = await client.webhookEndpoints.replay(ep.id, { startingAfter: 0, types: ['assertion.created'], onlyFailed: false });
  expect(op).toMatchObject({
    object: 'operation',
    kind: 'webhook_endpoint.replay',
    status: 'pending',
    subject: { type: 'webhook_endpoint', id: ep.id },
  });
  await expect(client.webhookEndpoints.replay(ep.id, { since: t.clock.now().toISOString() })).rejects.toMatchObject({
    code: 'operation_conflict',
    status: 409,
  });
  const cancel = await client.webhookEndpoints.cancelReplay(ep.id);
  expect(cancel).toMatchObject({ object: 'operation', targetOperationId: op.id });
  await t.app.operations.drain();
  expect((await client.operations.retrieve(op.id)).status).toBe('canceled');
});
