import { describe, expect } from 'vitest';
import { appTest, buildOrg, buildToken, expectPlatformError } from '../support/kit.ts';

/** Surface B's request rate limit (its own file: the server runs with a small bucket). */
const test = appTest({ config: { rateLimitPerSecond: 1, rateLimitBurst: 3 } });

const VIEWER = '{ viewer { scopes brand { slug } } }';

describe('Surface B rate limit', () => {
  test('a token past its bucket gets 429 rate_limited with Retry-After; other tokens are unaffected; it refills over time', async ({
    app: small,
  }) => {
    const org = await buildOrg(small);
    const a = await buildToken(small, org, ['events:read']);
    const b = await buildToken(small, org, ['events:read']);
    for (let i = 0; i < 3; i++) expect((await small.http.get('/v1/platform/events', { token: a.secret })).status).toBe(200);
    const limited = await small.http.get('/v1/platform/events', { token: a.secret });
    expectPlatformError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await small.http.get('/v1/platform/events', { token: b.secret })).status).toBe(200);
    const gql = await small.http.graphql(VIEWER, {}, { token: a.secret });
    expect(gql.status).toBe(429);
    expect(gql.body.errors[0].extensions.code).toBe('rate_limited');
    small.clock.advance(2000);
    expect((await small.http.get('/v1/platform/events', { token: a.secret })).status).toBe(200);
  });
});
