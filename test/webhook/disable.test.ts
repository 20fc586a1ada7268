import { afterAll, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

const SCOPES = ['webhooks:read', 'webhooks:write'];
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 1000, 5000], timeoutMs: 30_000, leaseMs: 45_000 }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
// The held request must outlast the steps between its start and release() even on a loaded machine.
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

const setStatus = (token: string, id: string, status: string) => t.http.post(`/v1/platform/webhook_endpoints/${id}`, { status }, { token });
const retry = (token: string, ep: string, d: string, key?: string) =>
  t.http.post(`/v1/platform/webhook_endpoints/${ep}/deliveries/${d}/retry`, {}, { token, headers: key ? { 'idempotency-key': key } : {} });

test('disabling exhausts pending and in-flight deliveries at once, with no further request; re-enabling does not resurrect them', async () => {
  const { org, token } = await buildTenant(t, SCOPES);
  let release: () => void = () => {};
  rx.on('/held', (_req, res) => {
    release = () => {
      res.statusCode = 503;
      res.end('busy');
    };
  });
  rx.on('/down', (_req, res) => {
    res.statusCode = 500;
    res.end();
  });
  const held = await createEndpoint(t, token, { url: rx.url('/held') });
  const down = await createEndpoint(t, token, { url: rx.url('/down') });
  await emitEvent(t, org.id);
  await rx.waitFor(1, '/held'); // in flight now
  await rx.waitFor(1, '/down');
  // /down's first attempt is recorded (a retry is scheduled) while /held is still on the wire.
  await expect.poll(async () => (await listDeliveries(t, token, down.id))[0].status, { timeout: 5000 }).toBe('failing');
  expect((await listDeliveries(t, token, held.id))[0]).toMatchObject({ status: 'pending', attempts: 0 });

  expect((await setStatus(token, held.id, 'disabled')).status).toBe(200);
  expect((await setStatus(token, down.id, 'disabled')).status).toBe(200);
  for (const id of [held.id, down.id])
    expect((await listDeliveries(t, token, id))[0]).toMatchObject({ status: 'exhausted', last_error: 'endpoint disabled' });

  release(); // the in-flight attempt finishes: logged, but the delivery stays exhausted
  await settle(t);
  const [h] = await listDeliveries(t, token, held.id);
  expect(h).toMatchObject({ status: 'exhausted' });
  expect(h.attempt_log).toEqual([expect.objectContaining({ number: 1, status_code: 503 })]);

  t.clock.advance(3600_000);
  expect((await setStatus(token, held.id, 'enabled')).status).toBe(200);
  expect((await setStatus(token, down.id, 'enabled')).status).toBe(200);
  await settle(t);
  expect(rx.for('/held')).toHaveLength(1);
  expect(rx.for('/down')).toHaveLength(1);
  for (const id of [held.id, down.id]) expect((await listDeliveries(t, token, id))[0].status).toBe('exhausted');
});

test('retry re-queues an exhausted delivery for an immediate attempt; idempotent; 400 on a disabled endpoint; 404 across organizations', async () => {
  const { org, token } = await buildTenant(t, SCOPES);
  const other = await buildTenant(t, SCOPES);
  let fail = true;
  rx.on('/flaky', (_req, res) => {
    res.statusCode = fail ? 500 : 204;
    res.end();
  });
  const ep = await createEndpoint(t, token, { url: rx.url('/flaky') });
  await emitEvent(t, org.id);
  for (const step of [0, 1200, 5600]) {
    t.clock.advance(step);
    await settle(t);
  }
  const [d] = await listDeliveries(t, token, ep.id);
  expect(d).toMatchObject({ status: 'exhausted', attempts: 3 });

  expect((await retry(other.token, ep.id, d.id)).body.error.code).toBe('resource_missing');
  expect((await retry(token, ep.id, 'msg_00000000000000000000000000000000')).status).toBe(404);
  const ro = await buildTenant(t, ['webhooks:read']);
  expect((await retry(ro.token, ep.id, d.id)).status).toBe(403);

  fail = false;
  const r1 = await retry(token, ep.id, d.id, 'retry-1');
  expect(r1.status, r1.text).toBe(200);
  expect(r1.body.webhook_delivery).toMatchObject({ id: d.id, status: 'failing' });
  // settle() may return before the poll timer's lease of the attempt is recorded: see it on the wire, then settle again for its record.
  await settle(t);
  await rx.waitFor(4, '/flaky');
  await settle(t);
  const [after] = await listDeliveries(t, token, ep.id);
  expect(after).toMatchObject({ status: 'succeeded', attempts: 4, last_status_code: 204 });

  const replay = await retry(token, ep.id, d.id, 'retry-1');
  expect(replay.status).toBe(200);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  expect(replay.body).toEqual(r1.body);
  expect((await retry(token, ep.id, d.id)).body.error.code).toBe('invalid_status'); // already succeeded

  await setStatus(token, ep.id, 'disabled');
  const onDisabled = await retry(token, ep.id, d.id, 'retry-2');
  expect(onDisabled.status).toBe(400);
  expect(onDisabled.body.error.code).toBe('invalid_status');
});

test('lists deliveries newest first with paging, each with its attempt log; other organizations get 404', async () => {
  const { org, token } = await buildTenant(t, SCOPES);
  const other = await buildTenant(t, SCOPES);
  const ep = await createEndpoint(t, token, { url: rx.url('/list') });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await emitEvent(t, org.id));
  await settle(t);
  const page1 = await t.http.get(`/v1/platform/webhook_endpoints/${ep.id}/deliveries?limit=2`, { token });
  expect(page1.body).toMatchObject({ object: 'list', has_more: true });
  expect(page1.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([ids[2], ids[1]]);
  const page2 = await t.http.get(`/v1/platform/webhook_endpoints/${ep.id}/deliveries?starting_after=${page1.body.data[1].id}`, { token });
  expect(page2.body).toMatchObject({ has_more: false });
  expect(page2.body.data.map((d: { event_id: string }) => d.event_id)).toEqual([ids[0]]);
  expect(page2.body.data[0]).toMatchObject({
    object: 'webhook_delivery',
    status: 'succeeded',
    attempts: 1,
    event_type: 'assertion.created',
  });
  expect(page2.body.data[0].attempt_log).toEqual([
    expect.objectContaining({ number: 1, status_code: 200, error: null, response_excerpt: 'ok' }),
  ]);

  const cross = await t.http.get(`/v1/platform/webhook_endpoints/${ep.id}/deliveries`, { token: other.token });
  expect(cross.status).toBe(404);
  expect(cross.body.error.code).toBe('resource_missing');

  // Deleting the endpoint removes its deliveries with it.
  expect((await t.http.delete(`/v1/platform/webhook_endpoints/${ep.id}`, { token })).status).toBe(200);
  expect((await t.http.get(`/v1/platform/webhook_endpoints/${ep.id}/deliveries`, { token })).status).toBe(404);
});
