import { describe, expect } from 'vitest';
import { unitCount } from '../support/db-access.ts';
import { appTest, buildOrg, buildTenant, buildToken, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

/** Every authenticated Surface A route with a body that would succeed for a token holding all unit scopes. */
const ROUTES: [string, Record<string, unknown>][] = [
  ['/api/scopes_exec', { scope: 'org:read' }],
  ['/api/smoke', {}],
  ['/api/units/list', {}],
  ['/api/units/create', { type: 'video', caption: 'c' }],
  ['/api/units/delete', { unit_id: 'unit_00000000000000000000000000000000' }],
];
const ALL = ['org:read', 'units:read', 'units:create', 'units:delete', 'units:publish'];

describe('Surface A authentication', () => {
  test('bearer token is accepted on every route', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    for (const [path, body] of ROUTES) {
      const res = await t.http.post(path, body, { token });
      expect(res.status === 200 || (path === '/api/units/delete' && res.status === 404), `${path}: ${res.text}`).toBe(true);
    }
  });

  test('deprecated body token is accepted when there is no header', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    for (const [path, body] of ROUTES) {
      const res = await t.http.post(path, { ...body, token });
      expect(res.status === 200 || (path === '/api/units/delete' && res.status === 404), `${path}: ${res.text}`).toBe(true);
    }
    const smoke = await t.http.post('/api/smoke', { token });
    expect(smoke.body.org_id).toBe(org.id);
  });

  test('bearer header is preferred over the body token', async ({ app: t }) => {
    const a = await buildTenant(t, ['units:read']);
    const b = await buildTenant(t, ['units:read']);
    const res = await t.http.post('/api/smoke', { token: b.token }, { token: a.token });
    expect(res.status).toBe(200);
    expect(res.body.org_id).toBe(a.org.id);
    // A bad header is not rescued by a good body token.
    const bad = await t.http.post('/api/smoke', { token: b.token }, { token: 'sk_platform_live_nope' });
    expectErrorResponse(bad, 401, 'invalid_token');
  });

  test('missing, unknown and garbage tokens are 401 on every route', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    const forged = token.slice(0, -4) + (token.endsWith('aaaa') ? 'bbbb' : 'aaaa');
    const cases: { token?: string; headers?: Record<string, string>; bodyToken?: unknown }[] = [
      {},
      { token: 'garbage' },
      { token: forged },
      { token: 'sk_platform_live_' },
      { headers: { authorization: 'Basic dXNlcjpwYXNz' } },
      { headers: { authorization: 'Bearer' } },
      { bodyToken: 'sk_platform_live_unknown' },
      { bodyToken: '' },
    ];
    for (const [path, body] of ROUTES) {
      for (const c of cases) {
        const payload = c.bodyToken === undefined ? body : { ...body, token: c.bodyToken };
        const res = await t.http.post(path, payload, { token: c.token, headers: c.headers });
        expectErrorResponse(res, 401, 'invalid_token');
      }
    }
  });

  test('a non-string body token is 400 invalid_request', async ({ app: t }) => {
    const res = await t.http.post('/api/smoke', { token: 42 });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.param).toBe('token');
  });

  test('a revoked token is 401', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:create', 'units:read']);
    expect((await t.http.post('/api/smoke', undefined, { token: tok.secret })).status).toBe(200);
    const revoke = await t.http.post('/platform/tokens/revoke', { token_id: tok.id }, { token: org.userToken });
    expect(revoke.status, revoke.text).toBe(200);
    for (const [path, body] of ROUTES) expectErrorResponse(await t.http.post(path, body, { token: tok.secret }), 401, 'invalid_token');
    expectErrorResponse(await t.http.post('/api/smoke', { token: tok.secret }), 401, 'invalid_token');
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('an expired token is 401 once the clock passes expires_at', async ({ app: t }) => {
    const org = await buildOrg(t);
    const expiresAt = new Date(t.clock.now().getTime() + 60_000);
    const tok = await buildToken(t, org, ['units:create', 'units:read'], { expires_at: expiresAt.toISOString() });
    expect((await t.http.post('/api/units/list', {}, { token: tok.secret })).status).toBe(200);
    t.clock.advance(59_999);
    expect((await t.http.post('/api/units/list', {}, { token: tok.secret })).status).toBe(200);
    t.clock.advance(1);
    for (const [path, body] of ROUTES) expectErrorResponse(await t.http.post(path, body, { token: tok.secret }), 401, 'invalid_token');
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('sk_test_ keys are 400 test_mode_not_yet_available (header or body)', async ({ app: t }) => {
    for (const key of ['sk_test_abc123', 'sk_platform_test_abc', 'pk_test_abc']) {
      expectErrorResponse(await t.http.post('/api/units/list', {}, { token: key }), 400, 'test_mode_not_yet_available');
      expectErrorResponse(await t.http.post('/api/units/list', { token: key }), 400, 'test_mode_not_yet_available');
    }
  });

  test('pk_live_ keys are 403 publishable_key_not_allowed', async ({ app: t }) => {
    for (const [path, body] of ROUTES) {
      expectErrorResponse(await t.http.post(path, body, { token: 'pk_live_abc123' }), 403, 'publishable_key_not_allowed');
    }
  });

  test('a token without the route scope is 403 missing_scope with required_scope', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read']);
    for (const [path, scope] of [
      ['/api/units/list', 'units:read'],
      ['/api/units/create', 'units:create'],
      ['/api/units/delete', 'units:delete'],
    ] as const) {
      const body = ROUTES.find(([p]) => p === path)![1];
      const res = await t.http.post(path, body, { token });
      expectErrorResponse(res, 403, 'missing_scope');
      expect(res.body).toMatchObject({ message: `missing_scope:${scope}`, required_scope: scope });
    }
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('smoke answers the token organization and effective scopes', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['units:read', 'org:read']);
    const res = await t.http.post('/api/smoke', undefined, { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ok: true,
      org_id: org.id,
      org_name: `Org ${org.slug}`,
      org_slug: org.slug,
      scopes: ['operations:read', 'org:read', 'units:read'],
      mode: 'live',
      object: null,
    });
  });
});
