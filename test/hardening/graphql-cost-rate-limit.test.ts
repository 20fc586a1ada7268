import { describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant, expectGraphQLError, type HttpResponse } from '../support/kit.ts';

/**
 * GraphQL and REST draw on one rate-limit bucket, charged by the same cost
 * (the list items a request asks for), on a server with a small bucket and a
 * low GraphQL cost ceiling.
 */
const test = appTest({
  config: { rateLimitPerSecond: 1, rateLimitBurst: 10, graphqlLimits: { ...loadConfig({}).graphqlLimits, maxCost: 10 } },
});

describe('the rate limiter charges GraphQL and REST by the same cost', () => {
  const remaining = (res: HttpResponse) => Number(res.headers.get('ratelimit-remaining'));
  const pages = (n: number, size = 100) =>
    Array.from({ length: n }, (_, i) => `e${i}: events(first: ${size}) { edges { cursor } }`).join(' ');

  test('events(first: 100) and GET /events?limit=100 cost 1 each; 101 items cost 2; 5 pages of 100 cost 5', async ({ app: small }) => {
    const { token } = await buildTenant(small, ['events:read']);
    expect(remaining(await small.http.get('/v1/platform/events?limit=100', { token }))).toBe(9);
    // GraphQL answers with the bucket's RateLimit-* as REST does.
    const one = await small.http.graphql(`{ ${pages(1)} }`, {}, { token });
    expect(one.status).toBe(200);
    expect([one.headers.get('ratelimit-limit'), remaining(one)]).toEqual(['10', 8]);
    expect(Number(one.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect(remaining(await small.http.get('/v1/platform/events?limit=100', { token }))).toBe(7);
    const over100 = await small.http.graphql(
      '{ a: events(first: 100) { edges { cursor } } b: events(first: 1) { edges { cursor } } }',
      {},
      { token },
    );
    expect(over100.body.errors, over100.text).toBeUndefined();
    expect(remaining(await small.http.get('/v1/platform/events', { token }))).toBe(4);
    expect((await small.http.graphql(`{ ${pages(5)} }`, {}, { token })).status).toBe(429);
  });

  test('a REST limit out of range is refused by validation (400) and charged as one request, not priced as a huge page', async ({
    app: small,
  }) => {
    const { token } = await buildTenant(small, ['events:read']);
    const res = await small.http.get('/v1/platform/events?limit=9007199254740992', { token });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'limit' });
    expect(remaining(res)).toBe(9);
  });

  test('a token whose bucket cannot pay the cost gets 429 rate_limited with Retry-After; cheaper requests still pass', async ({
    app: small,
  }) => {
    const { token } = await buildTenant(small, ['events:read']);
    for (let i = 0; i < 2; i++) {
      const res = await small.http.graphql(`{ ${pages(5)} }`, {}, { token });
      expect(res.body.errors, res.text).toBeUndefined();
    }
    const limited = await small.http.graphql(`{ ${pages(5)} }`, {}, { token });
    expectGraphQLError(limited, 'rate_limited', 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect([limited.headers.get('ratelimit-limit'), limited.headers.get('ratelimit-remaining')]).toEqual(['10', '0']);
    expect(limited.headers.get('ratelimit-reset')).toBe(limited.headers.get('retry-after'));
    small.clock.advance(1000);
    const cheap = await small.http.graphql(`{ ${pages(1)} }`, {}, { token });
    expect(cheap.body.errors, cheap.text).toBeUndefined();
  });
});
