import { afterAll, describe, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';
import { synchronousCommitSettings } from '../support/db-access.ts';

const SCOPES = ['webhooks:read', 'webhooks:write', 'events:read'];
const test = appTest({ config: webhookConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

const typesAt = (path: string) =>
  rx
    .for(path)
    .map((r) => JSON.parse(r.body).type)
    .sort();

describe('fan-out', () => {
  test('delivers each event to every enabled, subscribed endpoint of its organization created at or before it, once', async () => {
    const { org, token } = await buildTenant(t, SCOPES);
    const other = await buildTenant(t, SCOPES);
    const before = await emitEvent(t, org.id, 'assertion.created'); // before any endpoint: no backfill
    t.clock.advance(1);
    const all = await createEndpoint(t, token, { url: rx.url('/all') });
    const filtered = await createEndpoint(t, token, { url: rx.url('/filtered'), enabled_events: ['assertion.revoked', 'payout.created'] });
    const legacy = await createEndpoint(t, token, { url: rx.url('/legacy'), enabled_events: ['program_member.created'] });
    const disabled = await createEndpoint(t, token, { url: rx.url('/disabled') });
    expect((await t.http.post(`/v1/platform/webhook_endpoints/${disabled.id}`, { status: 'disabled' }, { token })).status).toBe(200);
    await createEndpoint(t, other.token, { url: rx.url('/other-org') });

    for (const type of ['assertion.created', 'assertion.revoked', 'relationship.created', 'payout.created'])
      await emitEvent(t, org.id, type);
    // An endpoint created in the same millisecond as an event receives it ("at or after its creation"); fan-out may run
    // after the endpoint exists, so the late endpoint must be strictly later on the clock to be excluded.
    t.clock.advance(1);
    const late = await createEndpoint(t, token, { url: rx.url('/late') });
    await settle(t);

    expect(typesAt('/all')).toEqual(['assertion.created', 'assertion.revoked', 'payout.created', 'relationship.created']);
    expect(typesAt('/filtered')).toEqual(['assertion.revoked', 'payout.created']);
    expect(typesAt('/legacy')).toEqual(['relationship.created']); // legacy spelling receives the canonical event
    expect(rx.for('/disabled')).toEqual([]);
    expect(rx.for('/other-org')).toEqual([]);
    expect(rx.for('/late')).toEqual([]);
    expect(rx.for('/all').map((r) => r.headers['webhook-id'])).not.toContain(before);
    expect(await listDeliveries(t, token, late.id)).toEqual([]);
    expect(await listDeliveries(t, token, disabled.id)).toEqual([]);

    // Exactly once per (endpoint, event), even when fan-out is woken again.
    await settle(t);
    const ids = rx.for('/all').map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(4);
    expect(ids).toHaveLength(4);
    expect(await listDeliveries(t, token, all.id)).toHaveLength(4);
    expect(await listDeliveries(t, token, filtered.id)).toHaveLength(2);
    expect(await listDeliveries(t, token, legacy.id)).toHaveLength(1);
  });

  test('sends the event exactly as the feed shows it', async () => {
    const { org, token } = await buildTenant(t, SCOPES);
    await createEndpoint(t, token, { url: rx.url('/feed-shape') });
    const id = await emitEvent(t, org.id, 'payout.settled', { amount: 12 });
    await settle(t);
    const [received] = await rx.waitFor(1, '/feed-shape');
    const feed = await t.http.get('/v1/platform/events', { token });
    expect(feed.body.data.find((e: { id: string }) => e.id === id)).toEqual(JSON.parse(received!.body));
    expect(received!.headers['content-type']).toBe('application/json');
    expect(received!.headers['webhook-id']).toBe(id);
  });

  test('keeps its asynchronous commit to its own transactions: every pooled connection still says synchronous_commit on', async () => {
    const { org, token } = await buildTenant(t, SCOPES);
    await createEndpoint(t, token, { url: rx.url('/sync') });
    await emitEvent(t, org.id, 'payout.created'); // fanned out with a delivery
    await settle(t);
    const other = await buildTenant(t, SCOPES);
    await emitEvent(t, other.org.id, 'payout.created'); // an organization without endpoints: the one-round-trip skip
    await settle(t);
    await rx.waitFor(1, '/sync');
    const settings = await synchronousCommitSettings(t);
    expect(settings.length).toBeGreaterThan(0);
    expect(new Set(settings)).toEqual(new Set(['on']));
  });
});
