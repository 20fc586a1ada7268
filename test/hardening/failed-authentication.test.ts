import { request } from 'node:http';
import { describe, expect } from 'vitest';
import { SseSubscription, Subscription, waitUntil, wsClient } from '../support/stream-client.ts';
import {
  appTest,
  buildOrg,
  buildTenant,
  buildToken,
  expectErrorResponse,
  expectGraphQLError,
  expectPlatformError,
} from '../support/kit.ts';

/**
 * Failed-authentication throttling per client address (docs/security.md, "Abuse limits"): 5 failures, then 429
 * until the bucket refills (1 a second; the test clock moves only when advanced). A valid key is never throttled.
 */
const test = appTest({ config: { authFailureRateLimit: { perSecond: 1, burst: 5 } } });

const BAD_SECRET = `sk_platform_live_${'x'.repeat(36)}`;

/** One request from `localAddress` (127.0.0.x: every loopback address reaches the server). */
function from(
  origin: string,
  localAddress: string,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; body: any }> {
  const { hostname, port } = new URL(origin);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (payload !== undefined)
    Object.assign(headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) });
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

describe('failed-authentication throttling', () => {
  test('after its burst of failures an address gets 429 for any key it has not proven, on every front; a valid key from it still works; another address still gets 401', async ({
    app: t,
  }) => {
    const tenant = await buildTenant(t, ['events:read']);
    const { secret: publishable } = await buildToken(t, tenant.org, [], { kind: 'publishable', brand: 'main', scopes: undefined });
    expect((await t.http.get('/v1/platform/events', { token: tenant.token })).status).toBe(200);

    for (let i = 0; i < 5; i++) expectPlatformError(await t.http.get('/v1/platform/events', { token: BAD_SECRET }), 401, 'invalid_token');
    const limited = await t.http.get('/v1/platform/events', { token: BAD_SECRET });
    expectPlatformError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // Every front answers a key it has not seen succeed with 429 in its envelope, without checking it.
    expectErrorResponse(await t.http.post('/api/units/list', {}, { token: BAD_SECRET }), 429, 'rate_limited');
    expectErrorResponse(await t.http.get('/platform/tokens', { token: 'ut_wrong' }), 429, 'rate_limited');
    expectErrorResponse(await t.http.get('/operator/organizations', { token: 'wrong-operator-token' }), 429, 'rate_limited');
    expectPlatformError(await t.http.get('/v1/platform/connect/status', { token: 'pk_live_wrong' }), 429, 'rate_limited');
    const gql = await t.http.graphql('{ viewer { tokenId } }', {}, { token: BAD_SECRET });
    expectGraphQLError(gql, 'rate_limited', 429);
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const ws = wsClient(t, `Bearer ${BAD_SECRET}`);
    try {
      expect((await new Subscription(ws).firstError()).extensions?.code).toBe('rate_limited');
    } finally {
      await ws.dispose();
    }
    const sse = new SseSubscription(t.origin, BAD_SECRET);
    await waitUntil(() => sse.errors.length > 0 || sse.ended, 'the SSE refusal');
    expect(sse.errors[0]?.extensions?.code).toBe('rate_limited');

    // Valid credentials from the same address are not affected, on any front.
    expect((await t.http.get('/v1/platform/events', { token: tenant.token })).status).toBe(200);
    expect((await t.http.graphql('{ viewer { tokenId } }', {}, { token: tenant.token })).body.data.viewer.tokenId).toBe(tenant.tokenId);
    expect((await t.http.get('/platform/tokens', { token: tenant.org.userToken })).status).toBe(200);
    expect((await t.http.get('/operator/organizations', { token: t.operatorToken })).status).toBe(200);
    // A key created in this process is known good before its first use.
    const fresh = await buildToken(t, tenant.org, ['events:read']);
    expect((await t.http.get('/v1/platform/events', { token: fresh.secret })).status).toBe(200);
    expect((await t.http.get('/v1/platform/connect/status', { token: publishable })).status).not.toBe(429);

    // Another address has its own bucket.
    const elsewhere = await from(t.origin, '127.0.0.2', 'GET', '/v1/platform/events', BAD_SECRET);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.error.code).toBe('invalid_token');

    // One second refills one attempt.
    t.clock.advance(1000);
    expectPlatformError(await t.http.get('/v1/platform/events', { token: BAD_SECRET }), 401, 'invalid_token');
    expectPlatformError(await t.http.get('/v1/platform/events', { token: BAD_SECRET }), 429, 'rate_limited');
  });

  test('failures on every front spend from the one bucket of their address', async ({ app: t }) => {
    const org = await buildOrg(t);
    const at = (method: string, path: string, token: string, body?: unknown) => from(t.origin, '127.0.0.3', method, path, token, body);
    // A test-mode key is refused from its prefix: it proves nothing and spends nothing.
    for (let i = 0; i < 6; i++) expect((await at('GET', '/v1/platform/events', 'sk_test_abc')).status).toBe(400);
    expect((await at('POST', '/api/units/list', BAD_SECRET, {})).body.error).toBe('invalid_token');
    expect((await at('GET', '/platform/tokens', 'ut_wrong')).body.error).toBe('invalid_token');
    expect((await at('GET', '/operator/organizations', 'wrong-operator-token')).body.error).toBe('invalid_token');
    expect((await at('GET', '/v1/platform/connect/status', 'pk_live_wrong')).body.error.code).toBe('invalid_token');
    const gql = await at('POST', '/graphql', BAD_SECRET, { query: '{ viewer { tokenId } }' });
    expect(gql.body.errors[0].extensions.code).toBe('invalid_token');
    const sixth = await at('GET', '/v1/platform/events', BAD_SECRET);
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.code).toBe('rate_limited');
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await at('GET', '/platform/tokens', org.userToken)).status).toBe(200);
  });
});
