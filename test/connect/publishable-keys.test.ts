import { describe, expect } from 'vitest';
import { SseSubscription, Subscription, waitUntil, wsClient } from '../support/stream-client.ts';
import {
  appTest,
  buildOrg,
  buildToken,
  expectErrorResponse,
  expectGraphQLError,
  expectPlatformError,
  type TestOrg,
} from '../support/kit.ts';
import { platformTokenRow } from '../support/db-access.ts';

/**
 * Publishable keys (`pk_live_`) through token management: bound to one brand of the organization, no scopes,
 * shown once, listed with kind and brand, revocable; refused with 403 `publishable_key_not_allowed` on every
 * route but the partner-connect ones (REST, Surface A, GraphQL over HTTP, graphql-ws, SSE).
 */
const test = appTest();

const create = (t: { http: any }, org: TestOrg, body: unknown) => t.http.post('/platform/tokens/create', body, { token: org.userToken });
const list = async (t: { http: any }, org: TestOrg) => {
  const res = await t.http.get('/platform/tokens', { token: org.userToken });
  expect(res.status, res.text).toBe(200);
  return res.body.tokens as any[];
};

describe('publishable keys: create, list, revoke', () => {
  test('kind publishable with a brand (id or slug): pk_live_ + random with a checksum, shown once, no scopes', async ({ app: t }) => {
    const org = await buildOrg(t);
    const res = await create(t, org, { name: 'site', kind: 'publishable', brand: org.brands[1]!.id });
    expect(res.status, res.text).toBe(200);
    const { token, secret } = res.body;
    expect(secret).toMatch(/^pk_live_[0-9A-Za-z]{36}$/);
    expect(secret.startsWith(token.token_prefix)).toBe(true);
    expect(token.token_prefix.length).toBeLessThan(secret.length);
    expect(token).toMatchObject({ kind: 'publishable', brand: org.brands[1]!.id, scopes: [], status: 'active', revoked_at: null });
    const bySlug = await create(t, org, { name: 'site 2', kind: 'publishable', brand: 'main' });
    expect(bySlug.status, bySlug.text).toBe(200);
    expect(bySlug.body.token.brand).toBe(org.brands[0]!.id);
    // Listed with kind and brand, never the secret.
    const listed = await list(t, org);
    expect(listed.map((k) => [k.id, k.kind, k.brand])).toEqual([
      [bySlug.body.token.id, 'publishable', org.brands[0]!.id],
      [token.id, 'publishable', org.brands[1]!.id],
    ]);
    expect(JSON.stringify(listed)).not.toContain(secret);
    // Only a hash is stored.
    const row = await platformTokenRow(t, token.id);
    expect(JSON.stringify(row)).not.toContain(secret.slice('pk_live_'.length));
  });

  test('a secret key is unchanged: kind secret, brand null, scopes required', async ({ app: t }) => {
    const org = await buildOrg(t);
    const sk = await buildToken(t, org, ['units:read']);
    expect(sk.secret).toMatch(/^sk_platform_live_/);
    expect(sk.token).toMatchObject({ kind: 'secret', brand: null, scopes: ['units:read'] });
    const explicit = await create(t, org, { name: 'x', kind: 'secret', scopes: ['units:read'] });
    expect(explicit.status, explicit.text).toBe(200);
    expect(explicit.body.secret).toMatch(/^sk_platform_live_/);
    expectErrorResponse(await create(t, org, { name: 'x' }), 400, 'invalid_request');
    const branded = await create(t, org, { name: 'x', scopes: ['units:read'], brand: 'main' });
    expectErrorResponse(branded, 400, 'invalid_request');
    expect(branded.body.param).toBe('brand');
  });

  test('brand missing, unknown or another organization’s → 400 naming brand; scopes given → 400 naming scopes; nothing created', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const other = await buildOrg(t);
    const missingBrand = await create(t, org, { name: 'x', kind: 'publishable' });
    expectErrorResponse(missingBrand, 400, 'invalid_request');
    expect(missingBrand.body.param).toBe('brand');
    for (const brand of ['nope', other.brands[0]!.id, 'brand_00000000000000000000000000000000']) {
      const res = await create(t, org, { name: 'x', kind: 'publishable', brand });
      expectErrorResponse(res, 400, 'brand_not_found');
      expect(res.body.param).toBe('brand');
    }
    for (const scopes of [['units:read'], []]) {
      const res = await create(t, org, { name: 'x', kind: 'publishable', brand: 'main', scopes });
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param).toBe('scopes');
    }
    for (const body of [
      { name: 'x', kind: 'browser', brand: 'main' },
      { name: 'x', kind: 'publishable', brand: 7 },
      { name: 'x', kind: 'publishable', brand: ['main'] },
      { name: 'x', kind: 'publishable', brand: 'ma\u0000in' },
    ]) {
      const res = await create(t, org, body);
      expect(res.status, res.text).toBe(400);
    }
    expect(await list(t, org)).toEqual([]);
  });

  test('a revoked publishable key is 401 invalid_token on the connect routes, like a revoked secret key', async ({ app: t }) => {
    const org = await buildOrg(t);
    const made = (await create(t, org, { name: 'site', kind: 'publishable', brand: 'main' })).body;
    const { secret } = made;
    const id = made.token.id;
    const revoked = await t.http.post('/platform/tokens/revoke', { token_id: id }, { token: org.userToken });
    expect(revoked.status, revoked.text).toBe(200);
    expect((await list(t, org))[0]).toMatchObject({ id, kind: 'publishable', status: 'revoked' });
    expectPlatformError(await t.http.get('/v1/platform/connect/status', { token: secret }), 401, 'invalid_token');
  });

  test('rotating a publishable key keeps its kind and brand', async ({ app: t }) => {
    const org = await buildOrg(t);
    const made = await create(t, org, { name: 'site', kind: 'publishable', brand: 'second' });
    const res = await t.http.post('/platform/tokens/rotate', { token_id: made.body.token.id }, { token: org.userToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.secret).toMatch(/^pk_live_/);
    expect(res.body.token).toMatchObject({ kind: 'publishable', brand: org.brands[1]!.id, scopes: [] });
  });
});

describe('a real pk_live_ key is refused everywhere but partner connect', () => {
  test('REST Surface B and Surface A: 403 publishable_key_not_allowed; pk_test_ stays 400 test_mode_not_yet_available', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const { secret } = (await create(t, org, { name: 'site', kind: 'publishable', brand: 'main' })).body;
    for (const path of ['/v1/platform/events', '/v1/platform/brands', '/v1/platform/connect_config', '/v1/platform/nope']) {
      expectPlatformError(await t.http.get(path, { token: secret }), 403, 'publishable_key_not_allowed');
    }
    expectPlatformError(await t.http.post('/v1/platform/connections', {}, { token: secret }), 403, 'publishable_key_not_allowed');
    expectErrorResponse(await t.http.post('/api/smoke', undefined, { token: secret }), 403, 'publishable_key_not_allowed');
    expectPlatformError(await t.http.get('/v1/platform/events', { token: 'pk_test_abc' }), 400, 'test_mode_not_yet_available');
    expectPlatformError(
      await t.http.post('/v1/platform/connect/join', { handoff: 'x' }, { token: 'pk_test_abc' }),
      400,
      'test_mode_not_yet_available',
    );
  });

  test('GraphQL over HTTP, graphql-ws and SSE: publishable_key_not_allowed', async ({ app: t }) => {
    const org = await buildOrg(t);
    const { secret } = (await create(t, org, { name: 'site', kind: 'publishable', brand: 'main' })).body;
    const http = await t.http.post('/graphql', { query: '{ viewer { tokenId } }' }, { token: secret });
    expectGraphQLError(http, 'publishable_key_not_allowed');

    const ws = wsClient(t, `Bearer ${secret}`);
    try {
      const sub = new Subscription(ws);
      expect((await sub.firstError()).extensions?.code).toBe('publishable_key_not_allowed');
    } finally {
      await ws.dispose();
    }

    const sse = new SseSubscription(t.origin, secret);
    await waitUntil(() => sse.errors.length > 0 || sse.ended, 'the SSE refusal');
    expect(sse.errors[0]?.extensions?.code).toBe('publishable_key_not_allowed');
    expect(t.app.stream.subscriberCount).toBe(0);
  });
});
