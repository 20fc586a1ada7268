import { describe, expect } from 'vitest';
import { appTest, buildOrg, buildTenant, buildToken, expectErrorResponse, expectPlatformError } from '../support/kit.ts';

/**
 * The organization's request budget across its tokens (docs/security.md, "Abuse limits"): small buckets, so the
 * arithmetic is exact (the test clock does not move unless advanced). A token holds 5, its organization 12.
 */
const test = appTest({ config: { rateLimitPerSecond: 1, rateLimitBurst: 5, organizationRateLimit: { perSecond: 1, burst: 12 } } });

const headers = (res: { headers: Headers }) => ({
  limit: Number(res.headers.get('ratelimit-limit')),
  remaining: Number(res.headers.get('ratelimit-remaining')),
});

describe('organization request budget', () => {
  test('20 tokens of one organization together get its budget, no more; RateLimit-* reports the tighter bucket; a refusal takes from neither; another organization is unaffected', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const tokens = [];
    for (let i = 0; i < 20; i++) tokens.push((await buildToken(t, org, ['events:read', 'units:read'])).secret);
    const events = (token: string) => t.http.get('/v1/platform/events', { token });

    // The token's bucket (5, 4 left) is tighter than the organization's (12, 11 left).
    const first = await events(tokens[0]!);
    expect(first.status, first.text).toBe(200);
    expect(headers(first)).toEqual({ limit: 5, remaining: 4 });
    for (let i = 0; i < 4; i++) expect((await events(tokens[0]!)).status).toBe(200);
    // Refused by its own bucket: the organization's is not charged for it (7 left, proven below).
    const own = await events(tokens[0]!);
    expectPlatformError(own, 429, 'rate_limited');
    expect(own.body.error.message).toMatch(/token/);

    for (let i = 0; i < 5; i++) expect((await events(tokens[1]!)).status).toBe(200);
    // Now the organization's bucket (12, 1 left) is the tighter one.
    const tighter = await events(tokens[2]!);
    expect(tighter.status).toBe(200);
    expect(headers(tighter)).toEqual({ limit: 12, remaining: 1 });
    expect((await events(tokens[2]!)).status).toBe(200);

    // 12 admitted in all; every other token, fresh as it is, is refused on every surface.
    let admitted = 0;
    for (const token of tokens.slice(3)) {
      const res = await events(token);
      if (res.status === 200) admitted++;
      else {
        expectPlatformError(res, 429, 'rate_limited');
        expect(res.body.error.message).toMatch(/organization/);
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(headers(res)).toEqual({ limit: 12, remaining: 0 });
      }
    }
    expect(admitted).toBe(0);
    const gql = await t.http.graphql('{ viewer { tokenId } }', {}, { token: tokens[3] });
    expect(gql.status).toBe(429);
    expect(gql.body.errors[0].extensions.code).toBe('rate_limited');
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Surface A with a platform token spends from the same budget.
    const surfaceA = await t.http.post('/api/units/list', {}, { token: tokens[4] });
    expectErrorResponse(surfaceA, 429, 'rate_limited');

    const other = await buildTenant(t, ['events:read']);
    expect((await events(other.token)).status).toBe(200);

    // One second refills one request of the organization's budget.
    t.clock.advance(1000);
    expect((await events(tokens[5]!)).status).toBe(200);
    expectPlatformError(await events(tokens[6]!), 429, 'rate_limited');
  });

  test('Surface A charges the organization budget too', async ({ app: t }) => {
    const org = await buildOrg(t);
    const a = await buildToken(t, org, ['units:read']);
    const b = await buildToken(t, org, ['units:read']);
    const c = await buildToken(t, org, ['units:read', 'events:read']);
    for (const token of [a, b])
      for (let i = 0; i < 5; i++) expect((await t.http.post('/api/units/list', {}, { token: token.secret })).status).toBe(200);
    expect((await t.http.get('/v1/platform/events', { token: c.secret })).status).toBe(200);
    expect((await t.http.get('/v1/platform/events', { token: c.secret })).status).toBe(200);
    expectPlatformError(await t.http.get('/v1/platform/events', { token: c.secret }), 429, 'rate_limited');
  });
});
