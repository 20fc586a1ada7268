import { afterAll, beforeAll, describe, expect } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { FlakyProxy } from './flaky-proxy.ts';

const ALL = ['webhooks:read', 'webhooks:write', 'events:read', 'assertions:read', 'assertions:write'];

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

async function clientFor(scopes = ALL, extra: Partial<ConstructorParameters<typeof PlatformClient>[0]> = {}) {
  const { org, token } = await buildTenant(t, scopes);
  return { org, token, client: new PlatformClient({ apiKey: token, origin: t.origin, ...extra }) };
}

describe('responses', () => {
  test('camelCases every key and unwraps the webhook_endpoint envelope', async () => {
    const { client } = await clientFor();
    const created = await client.webhookEndpoints.create({
      url: 'https://example.com/hook',
      description: 'orders',
      enabledEvents: ['assertion.created'],
    });
    expect(created).toMatchObject({
      object: 'webhook_endpoint',
      url: 'https://example.com/hook',
      enabledEvents: ['assertion.created'],
      status: 'enabled',
      livemode: true,
    });
    expect(created.id).toMatch(/^we_/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(typeof created.createdAt).toBe('string');
    expect(created).not.toHaveProperty('enabled_events');
    expect(created).not.toHaveProperty('webhookEndpoint');

    const retrieved = await client.webhookEndpoints.retrieve(created.id);
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.health?.lastHour).toEqual({ attempts: 0, succeeded: 0, successRate: null, p50Ms: null, p99Ms: null });
    const updated = await client.webhookEndpoints.update(created.id, { status: 'disabled' });
    expect(updated.status).toBe('disabled');
    // Nested input keys go out snake_case too.
    const tuned = await client.webhookEndpoints.update(created.id, {
      policy: { maxInFlight: 2, retrySchedule: ['30s'] },
      ordering: 'subject',
    });
    expect(tuned).toMatchObject({ policy: { maxInFlight: 2, retrySchedule: ['30s'], timeoutMs: null }, ordering: 'subject' });
    const rotated = await client.webhookEndpoints.rotateSecret(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.rotatedAt).not.toBeNull();
    expect(await client.webhookEndpoints.del(created.id)).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
  });

  test('lists return { data, hasMore } and auto-paging walks every page', async () => {
    const { client } = await clientFor();
    for (let i = 0; i < 3; i++) await client.webhookEndpoints.create({ url: `https://example.com/${i}` });
    const page = await client.webhookEndpoints.list({ limit: 2 });
    expect(page.object).toBe('list');
    expect(page.data).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    const urls: string[] = [];
    for await (const e of client.webhookEndpoints.list({ limit: 2 }).autoPaging()) urls.push(e.url);
    expect(urls).toEqual(['https://example.com/2', 'https://example.com/1', 'https://example.com/0']);
  });

  test('the event feed pages in seq order and camelCases event data', async () => {
    const { org, client } = await clientFor();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await emitEvent(t, org.id, 'enrollment.qualified', { previous_status: 'not_qualified', step_no: i }));
    const seen = [];
    for await (const e of client.events.list({ limit: 2, type: 'enrollment.qualified' })) seen.push(e);
    expect(seen.map((e) => e.id)).toEqual(ids);
    expect(seen.map((e) => e.seq)).toEqual([...seen.map((e) => e.seq)].sort((a, b) => a - b));
    expect(seen[0]!.data).toEqual({ previousStatus: 'not_qualified', stepNo: 0, test: true });
    expect(seen[0]).toMatchObject({
      object: 'event',
      type: 'enrollment.qualified',
      subject: { type: 'entity', id: 'ent_1' },
      operation: null,
    });
    expect(typeof seen[0]!.createdAt).toBe('string');

    const after = await client.events.list({ startingAfter: seen[2]!.seq });
    expect(after.data.map((e) => e.id)).toEqual(ids.slice(3));

    // Newest first: the head, then auto-paging back to the oldest.
    expect((await client.events.list({ order: 'desc', limit: 1 })).data.map((e) => e.id)).toEqual([ids[4]]);
    const back = [];
    for await (const e of client.events.list({ order: 'desc', limit: 2, type: 'enrollment.qualified' })) back.push(e.id);
    expect(back).toEqual([...ids].reverse());
  });
});

describe('errors', () => {
  test('a refused call throws PlatformError with code, message, param, requestId and status', async () => {
    const { client } = await clientFor(['webhooks:read']);
    const err = await client.webhookEndpoints.create({ url: 'https://example.com/x' }).catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'missing_scope', message: 'missing_scope:webhooks:write', status: 403, param: null });
    expect(err.requestId).toMatch(/^req_/);

    const { client: full } = await clientFor();
    // @ts-expect-error an unknown event type: the client's type refuses it, and so does the server
    const bad = await full.events.list({ type: 'nope.nope' }).catch((e) => e);
    expect(bad).toMatchObject({ code: 'invalid_event_type', param: 'type', status: 400 });
    const missing = await full.webhookEndpoints.retrieve('we_00000000000000000000000000000000').catch((e) => e);
    expect(missing).toMatchObject({ code: 'resource_missing', status: 404 });
  });

  test('an unreachable server is a connection_error', async () => {
    const client = new PlatformClient({ apiKey: 'sk_platform_live_x', origin: 'http://127.0.0.1:9', maxRetries: 0 });
    await expect(client.events.list()).rejects.toMatchObject({ code: 'connection_error', status: 0, requestId: null });
  });
});

describe('retries and idempotency keys', () => {
  let proxy: FlakyProxy;
  let proxied: string;
  beforeAll(async () => {
    proxy = new FlakyProxy(t.origin);
    proxied = await proxy.start();
  });
  afterAll(async () => {
    await proxy?.stop();
  });

  test('a 503 then success: the retry carries the same generated key and the server acts once', async () => {
    const { token, client: direct } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied });
    proxy.seen.length = 0;
    proxy.interfere({ status: 503 });
    const created = await client.webhookEndpoints.create({ url: 'https://example.com/once' });
    const posts = proxy.seen.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(posts[1]!.idempotencyKey).toBe(posts[0]!.idempotencyKey);
    const all = await direct.webhookEndpoints.list();
    expect(all.data.map((e) => e.id)).toEqual([created.id]);
  });

  test('a dropped connection on a mutation is retried with the same key: one effect', async () => {
    const { token, client: direct } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied });
    proxy.seen.length = 0;
    proxy.interfere('drop-connection');
    await client.webhookEndpoints.create({ url: 'https://example.com/dropped' });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.idempotencyKey).toBe(proxy.seen[0]!.idempotencyKey);
    expect((await direct.webhookEndpoints.list()).data).toHaveLength(1);
  });

  test('a given Idempotency-Key is used as is and a replay returns the same object', async () => {
    const { client } = await clientFor();
    const a = await client.webhookEndpoints.create({ url: 'https://example.com/k' }, { idempotencyKey: 'client-test-1' });
    const b = await client.webhookEndpoints.create({ url: 'https://example.com/k' }, { idempotencyKey: 'client-test-1' });
    expect(b.id).toBe(a.id);
    const conflict = await client.webhookEndpoints
      .create({ url: 'https://example.com/other' }, { idempotencyKey: 'client-test-1' })
      .catch((e) => e);
    expect(conflict).toMatchObject({ code: 'idempotency_key_conflict', status: 409 });
  });

  test('each call gets its own key', async () => {
    const { token } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied });
    proxy.seen.length = 0;
    await client.webhookEndpoints.create({ url: 'https://example.com/a' });
    await client.webhookEndpoints.create({ url: 'https://example.com/a' });
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[0]!.idempotencyKey).not.toBe(proxy.seen[1]!.idempotencyKey);
  });

  test('Retry-After on a 429 is honoured', async () => {
    const { token } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied });
    proxy.seen.length = 0;
    proxy.interfere({
      status: 429,
      headers: { 'retry-after': '1' },
      body: { error: { code: 'rate_limited', message: 'slow down', param: null, request_id: 'req_proxy' } },
    });
    const page = await client.events.list();
    expect(page.object).toBe('list');
    expect(proxy.seen).toHaveLength(2);
    expect(proxy.seen[1]!.at - proxy.seen[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test('Retry-After is bounded by maxRetryDelayMs', async () => {
    const { token } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied, maxRetryDelayMs: 100 });
    proxy.seen.length = 0;
    proxy.interfere({ status: 429, headers: { 'retry-after': '3600' } });
    const started = Date.now();
    await client.events.list();
    expect(Date.now() - started).toBeLessThan(2000);
    expect(proxy.seen).toHaveLength(2);
  });

  test('gives up after maxRetries and throws the last error; 4xx is never retried', async () => {
    const { token } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: proxied, maxRetries: 1, maxRetryDelayMs: 10 });
    proxy.seen.length = 0;
    proxy.interfere({ status: 503 }, { status: 503 });
    await expect(client.events.list()).rejects.toMatchObject({ code: 'service_unavailable', status: 503, requestId: 'req_proxy' });
    expect(proxy.seen).toHaveLength(2);

    proxy.seen.length = 0;
    // @ts-expect-error an unknown event type (the client's type refuses it too)
    await expect(client.events.list({ type: 'nope' })).rejects.toMatchObject({ code: 'invalid_event_type' });
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('brand selection', () => {
  test('brand is sent as Service-Brand; an unknown brand is brand_not_found', async () => {
    const { token } = await clientFor();
    const client = new PlatformClient({ apiKey: token, origin: t.origin, brand: 'nope' });
    await expect(client.events.list()).rejects.toMatchObject({ code: 'brand_not_found', status: 400 });
  });
});
