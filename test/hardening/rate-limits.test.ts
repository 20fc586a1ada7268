import { describe, expect } from 'vitest';
import { appTest, type TestApp, buildOrg, buildToken, expectErrorResponse, type HttpResponse } from '../support/kit.ts';
import { platformTokensOf } from '../../src/domain/token/store.ts';

/**
 * Surface A and token management: a token bucket per credential, apart from
 * Surface B's, answering 429 `rate_limited` in Surface A's ErrorResponse.
 */
const test = appTest({ config: { surfaceARateLimitPerSecond: 1, surfaceARateLimitBurst: 3 } });
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

function expectRateLimited(res: HttpResponse) {
  expectErrorResponse(res, 429, 'rate_limited');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(res.headers.get('ratelimit-limit')).toBe('3');
  expect(res.headers.get('ratelimit-remaining')).toBe('0');
}

/** A platform token made with a throwaway organization's user token, so the tested credentials start with full buckets. */
async function platformToken(scopes = ['units:read']) {
  const org = await buildOrg(t);
  return (await buildToken(t, org, scopes)).secret;
}

describe('Surface A request rate limit', () => {
  test('a token past its bucket gets 429 rate_limited with Retry-After; other tokens and Surface B are unaffected; it refills', async ({
    app: t,
  }) => {
    const token = await platformToken();
    const other = await platformToken();
    for (let i = 0; i < 3; i++) {
      const res = await t.http.post('/api/smoke', {}, { token });
      expect(res.status, res.text).toBe(200);
      expect(res.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    expectRateLimited(await t.http.post('/api/smoke', {}, { token }));
    expectRateLimited(await t.http.post('/api/units/list', {}, { token }));
    expect((await t.http.post('/api/smoke', {}, { token: other })).status).toBe(200);
    // Surface B keeps its own bucket for the same token.
    expect((await t.http.get('/v1/platform/events', { token })).status).not.toBe(429);
    t.clock.advance(1000);
    expect((await t.http.post('/api/smoke', {}, { token })).status).toBe(200);
    expectRateLimited(await t.http.post('/api/smoke', {}, { token }));
  });

  test('the deprecated body token is limited the same way', async ({ app: t }) => {
    const token = await platformToken();
    for (let i = 0; i < 3; i++) expect((await t.http.post('/api/smoke', { token })).status).toBe(200);
    expectRateLimited(await t.http.post('/api/smoke', { token }));
  });

  test('a burst of concurrent requests admits exactly the bucket', async ({ app: t }) => {
    const token = await platformToken();
    const statuses = (await Promise.all(Array.from({ length: 12 }, () => t.http.post('/api/smoke', {}, { token })))).map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });
});

describe('token management request rate limit', () => {
  test('a user token past its bucket gets 429 rate_limited; another user token is unaffected', async ({ app: t }) => {
    const org = await buildOrg(t);
    const other = await buildOrg(t);
    for (let i = 0; i < 3; i++) expect((await t.http.get('/platform/tokens', { token: org.userToken })).status).toBe(200);
    expectRateLimited(await t.http.get('/platform/tokens', { token: org.userToken }));
    expectRateLimited(await t.http.post('/platform/tokens/create', { name: 'x', scopes: ['units:read'] }, { token: org.userToken }));
    expect((await t.http.get('/platform/tokens', { token: other.userToken })).status).toBe(200);
    expect((await platformTokensOf(t.app.deps.db.prisma, org.id)).length).toBe(0);
  });
});

test('the Surface A OpenAPI document lists 429 on every authenticated route', async ({ app: t }) => {
  const doc = (await t.http.get('/api/openapi.json')).body;
  for (const [path, item] of Object.entries<Record<string, { security?: unknown[]; responses: Record<string, unknown> }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.security?.length) expect(Object.keys(op.responses), `${method} ${path}`).toContain('429');
    }
  }
});
