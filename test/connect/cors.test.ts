import { describe, expect } from 'vitest';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { buildConnectBrand, connect, hsHandoff, join, status } from '../support/connect.ts';

/** CORS on the three partner-connect routes: the key's brand's allowed_origins; preflights for an origin some brand allows. */
const test = appTest({
  config: { connectRateLimits: { key: { perSecond: 1000, burst: 10_000 }, ip: { perSecond: 1000, burst: 10_000 } } },
});
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const SHOP = 'https://shop.example';
const preflight = (path: string, origin?: string) =>
  t.http.request('OPTIONS', `/v1/platform/connect/${path}`, undefined, {
    headers: {
      ...(origin ? { origin } : {}),
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, connect-session',
    },
  });
const vary = (res: { headers: Headers }) => (res.headers.get('vary') ?? '').toLowerCase();

describe('CORS on the real requests', () => {
  test('an allowed origin is echoed (with Vary: Origin) on join, status and connect, and on their refusals', async () => {
    const b = await buildConnectBrand(t, { origins: [SHOP, 'http://localhost:5173'] });
    const headers = { origin: SHOP };
    const joined = await join(t, b.pk, await hsHandoff(t, b), headers);
    expect(joined.status, joined.text).toBe(200);
    expect(joined.headers.get('access-control-allow-origin')).toBe(SHOP);
    expect(vary(joined)).toContain('origin');
    expect(joined.headers.get('access-control-expose-headers')).toContain('Retry-After');
    const { session } = joined.body;
    const st = await status(t, b.pk, session, { origin: 'http://localhost:5173' });
    expect(st.status).toBe(200);
    expect(st.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const made = await connect(t, b.pk, session, { provider: 'youtube', account_id: 'c1' }, headers);
    expect(made.status).toBe(201);
    expect(made.headers.get('access-control-allow-origin')).toBe(SHOP);
    // A refusal a browser on that origin can read.
    const bad = await status(t, b.pk, `cs_${'A'.repeat(36)}`, headers);
    expectPlatformError(bad, 401, 'invalid_token');
    expect(bad.headers.get('access-control-allow-origin')).toBe(SHOP);
    const badKey = await status(t, `pk_live_${'A'.repeat(36)}`, session, headers);
    expectPlatformError(badKey, 401, 'invalid_token');
    expect(badKey.headers.get('access-control-allow-origin')).toBe(SHOP);
  });

  test('an origin the key’s brand does not allow (even one another brand allows) is 403 origin_not_allowed without CORS headers, and the handoff is not spent', async () => {
    const b = await buildConnectBrand(t, { origins: [SHOP] });
    const elsewhere = await buildConnectBrand(t, { origins: ['https://elsewhere.example'] });
    const handoff = await hsHandoff(t, b);
    for (const origin of ['https://elsewhere.example', 'https://evil.example', 'null', `${SHOP}:8443`, 'http://shop.example']) {
      const res = await join(t, b.pk, handoff, { origin });
      expectPlatformError(res, 403, 'origin_not_allowed', 'Origin');
      expect(res.headers.get('access-control-allow-origin'), origin).toBeNull();
      expect(vary(res)).toContain('origin');
    }
    expect(elsewhere.pk).toBeDefined();
    // Without Origin (a server, curl) it is not a CORS request: answered, without CORS headers.
    const plain = await join(t, b.pk, handoff);
    expect(plain.status, plain.text).toBe(200);
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
    const st = await status(t, b.pk, plain.body.session, { origin: 'https://evil.example' });
    expectPlatformError(st, 403, 'origin_not_allowed');
  });
});

describe('preflight', () => {
  test('an origin some brand allows: 204 with methods, headers and max age; no key needed', async () => {
    await buildConnectBrand(t, { origins: ['https://pre.example'] });
    for (const path of ['join', 'status', 'connect']) {
      const res = await preflight(path, 'https://pre.example');
      expect(res.status, res.text).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://pre.example');
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Connect-Session, Idempotency-Key');
      expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
      expect(vary(res)).toContain('origin');
    }
  });

  test('an origin no brand allows, or none: 403 without CORS headers; a configuration change applies to the next preflight', async () => {
    const b = await buildConnectBrand(t, { origins: ['https://gone.example'] });
    for (const origin of ['https://nobody.example', undefined]) {
      const res = await preflight('join', origin);
      expectPlatformError(res, 403, 'origin_not_allowed');
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
    expect((await preflight('join', 'https://gone.example')).status).toBe(204);
    const changed = await t.http.post('/v1/platform/connect_config', { allowed_origins: ['https://new.example'] }, { token: b.sk });
    expect(changed.status, changed.text).toBe(200);
    expectPlatformError(await preflight('join', 'https://gone.example'), 403, 'origin_not_allowed');
    expect((await preflight('join', 'https://new.example')).status).toBe(204);
  });

  test('preflight is only on the three connect routes', async () => {
    await buildConnectBrand(t, { origins: ['https://only.example'] });
    const res = await t.http.request('OPTIONS', '/v1/platform/events', undefined, { headers: { origin: 'https://only.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
