import { afterAll, describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant, emitEvent, expectPlatformError, type TestApp } from '../support/kit.ts';
import { GQL, WE, gqlCode } from './webhook-endpoints-helpers.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';
import { updateEndpoint } from '../../src/domain/webhook/store.ts';

const WRITE = ['webhooks:read', 'webhooks:write'];
const test = appTest({ config: webhookConfig({ retryScheduleMs: [0, 1000], allowLoopback: false }) });

describe('WEBHOOK_ALLOW_LOOPBACK default', () => {
  test('is on with the embedded database, off with DATABASE_URL, and an explicit value always wins', () => {
    const allow = (env: NodeJS.ProcessEnv, over = {}) => loadConfig(env, over).webhook.allowLoopback;
    expect(allow({})).toBe(true);
    expect(allow({ DATABASE_URL: 'postgres://db.internal/platform' })).toBe(false);
    // Tests (and embedders) pass the database as an override: the default follows the database the server runs on.
    expect(allow({}, { databaseUrl: 'postgres://db.internal/platform' })).toBe(false);
    expect(allow({ DATABASE_URL: 'postgres://db.internal/platform', WEBHOOK_ALLOW_LOOPBACK: '1' })).toBe(true);
    expect(allow({ DATABASE_URL: 'postgres://db.internal/platform', WEBHOOK_ALLOW_LOOPBACK: 'true' })).toBe(true);
    expect(allow({ WEBHOOK_ALLOW_LOOPBACK: '0' })).toBe(false);
    expect(allow({ WEBHOOK_ALLOW_LOOPBACK: 'false' })).toBe(false);
  });
});

describe('loopback delivery disabled', () => {
  let t: TestApp;
  let rx: Receiver;
  test.beforeAll(async ({ app }) => {
    t = app;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  const LOOPBACK_URLS = [
    'http://localhost:8080/hook',
    'http://127.0.0.1/hook',
    'http://[::1]:3000/hook',
    'https://localhost/hook',
    'https://127.0.0.2/hook',
    'https://2130706433/hook',
    'http://2130706433/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://localhost./hook',
    'https://api.localhost/hook',
  ];

  test('refuses loopback URLs at create and update with 400 invalid_request on url, on REST and GraphQL alike', async () => {
    const { token } = await buildTenant(t, WRITE);
    const kept = await createEndpoint(t, token, { url: 'https://hooks.example.com/in' });
    for (const url of LOOPBACK_URLS) {
      const created = await t.http.post(WE, { url }, { token });
      expectPlatformError(created, 400, 'invalid_request', 'url');
      expect(created.body.error.message, url).toMatch(/loopback/);
      expectPlatformError(await t.http.post(`${WE}/${kept.id}`, { url }, { token }), 400, 'invalid_request', 'url');
      const g = await t.http.graphql(GQL.create, { url }, { token });
      expect(gqlCode(g), url).toBe('invalid_request');
      expect(g.body.errors[0].extensions.param).toBe('url');
      const u = await t.http.graphql(GQL.update, { id: kept.id, url }, { token });
      expect(gqlCode(u), url).toBe('invalid_request');
      expect(u.body.errors[0].extensions.param).toBe('url');
    }
    const list = await t.http.get(WE, { token });
    expect(list.body.data.map((e: { url: string }) => e.url)).toEqual(['https://hooks.example.com/in']);
    // Other fields of an endpoint can still change.
    expect((await t.http.post(`${WE}/${kept.id}`, { description: 'still editable' }, { token })).status).toBe(200);
  });

  test('records each attempt to an existing loopback endpoint as refused, without a connection or an excerpt', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    // An endpoint stored before loopback was disabled (the API no longer accepts it).
    const ep = await createEndpoint(t, token, { url: 'https://hooks.example.com/in' });
    await updateEndpoint(t.app.deps.db.prisma, ep.id, { url: rx.url('/existing') });
    await emitEvent(t, org.id);
    await settle(t);
    t.clock.advance(2000);
    await settle(t);
    const [d] = await listDeliveries(t, token, ep.id);
    expect(d).toMatchObject({ status: 'exhausted', attempts: 2, last_status_code: null });
    for (const a of d.attempt_log) {
      expect(a.error).toMatch(/^destination_refused: /);
      expect(a.response_excerpt).toBeNull();
    }
    expect(rx.connections()).toBe(0);
  });
});
