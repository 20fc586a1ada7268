import { describe, expect } from 'vitest';
import { appTest, type TestApp, buildTenant, rawRequest, type RawResponse } from '../support/kit.ts';

/**
 * Paths match exactly, on every router (rest/http/route.ts): case-sensitive,
 * no optional trailing slash, nothing decoded or normalized. Anything else is
 * 404 route_not_found in the envelope of the surface (`/v1/` is Surface B's),
 * with Request-Id; never a handler run without its pipeline.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
let auth: Record<string, Record<string, string>>;
test.beforeAll(async ({ app: t }) => {
  const { org, token } = await buildTenant(t, ['events:read', 'webhooks:read', 'units:read']);
  auth = {
    platform: { authorization: `Bearer ${token}` },
    user: { authorization: `Bearer ${org.userToken}` },
    operator: { authorization: `Bearer ${t.operatorToken}` },
  };
});

const send = (method: string, path: string, who: keyof typeof auth, body?: string) =>
  rawRequest(t.origin, method, path, body === undefined ? auth[who] : { ...auth[who], 'content-type': 'application/json' }, body);

function expectNotFound(res: RawResponse, path: string, surface: 'a' | 'b') {
  expect(res.status, `${path}: ${res.text}`).toBe(404);
  const requestId = res.headers['request-id'];
  expect(requestId, path).toMatch(/^req_/);
  if (surface === 'b')
    expect(res.body, path).toEqual({ error: { code: 'route_not_found', message: expect.any(String), param: null, request_id: requestId } });
  else expect(res.body, path).toEqual({ error: 'route_not_found', message: expect.any(String), request_id: requestId });
}

// [method, exact path, credential, envelope]: one known route of every router in src/app.ts.
const ROUTES = [
  ['GET', '/healthz', 'platform', 'a'],
  ['GET', '/api/openapi.json', 'platform', 'a'],
  ['POST', '/api/units/list', 'platform', 'a'],
  ['GET', '/platform/tokens', 'user', 'a'],
  ['GET', '/operator/kill_switch', 'operator', 'a'],
  ['GET', '/v1/platform/events', 'platform', 'b'],
  ['GET', '/v1/platform/webhook_endpoints', 'platform', 'b'],
] as const;

function variants(path: string): string[] {
  const segments = path.split('/').slice(1);
  const last = segments.length - 1;
  const upper = (i: number) => `/${segments.map((s, j) => (j === i ? s[0]!.toUpperCase() + s.slice(1) : s)).join('/')}`;
  return [
    ...segments.map((_, i) => upper(i)),
    path.toUpperCase(),
    `${path}/`,
    `/${path}`,
    path.replace(/\/([^/]+)$/, '//$1'),
    path.replace(/\/([a-z])([^/]*)$/, (_m, c: string, rest: string) => `/%${c.charCodeAt(0).toString(16)}${rest}`),
    `${path.slice(0, path.lastIndexOf('/'))}/x/..${path.slice(path.lastIndexOf('/'))}`,
    `${path.slice(0, path.lastIndexOf('/'))}/.${path.slice(path.lastIndexOf('/'))}`,
    `${path.slice(0, path.lastIndexOf('/'))}/%2e%2e/${segments[last]}`,
  ];
}

describe('path matching', () => {
  test('the exact path of every router answers its route', async ({ app: t }) => {
    for (const [method, path, who] of ROUTES) {
      const res = await send(method, path, who);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
    }
    expect((await send('POST', '/graphql', 'platform', JSON.stringify({ query: '{ viewer { scopes } }' }))).status).toBe(200);
  });

  test('another case, a trailing or doubled slash, percent-encoding or dot segments are 404 route_not_found in the envelope, with Request-Id', async ({
    app: t,
  }) => {
    let checked = 0;
    for (const [method, path, who, surface] of ROUTES) {
      for (const variant of variants(path)) {
        expectNotFound(await send(method, variant, who), variant, surface);
        checked++;
      }
    }
    for (const variant of ['/GraphQL', '/GRAPHQL', '/graphql/', '//graphql', '/graphql/x', '/%67raphql']) {
      expectNotFound(await send('POST', variant, 'platform', JSON.stringify({ query: '{ viewer { scopes } }' })), variant, 'a');
      checked++;
    }
    expect(checked).toBeGreaterThan(60);
  });

  test('a mixed-case Surface B path never reaches a handler without the pipeline: unauthenticated it is the same 404', async ({
    app: t,
  }) => {
    for (const path of ['/V1/platform/events', '/v1/Platform/events', '/V1/PLATFORM/WEBHOOK_ENDPOINTS']) {
      expectNotFound(await rawRequest(t.origin, 'GET', path), path, 'b');
    }
    // Under the exact prefix the pipeline runs first, known route or not.
    for (const path of ['/v1/platform/Events', '/v1/platform/events/']) {
      const res = await rawRequest(t.origin, 'GET', path);
      expect(res.status, path).toBe(401);
      expect(res.body.error.code).toBe('platform_token_required');
    }
  });

  test('a method a path does not serve is still 405 with Allow; its other-case spelling is 404', async ({ app: t }) => {
    const res = await send('DELETE', '/v1/platform/events', 'platform');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET');
    expectNotFound(await send('DELETE', '/v1/platform/EVENTS', 'platform'), 'DELETE /v1/platform/EVENTS', 'b');
  });

  test('the service pages answer another method with 405 and Allow, never 404: /docs and its assets, health, OpenAPI, metrics', async ({
    app: t,
  }) => {
    for (const path of ['/docs', '/docs/swagger-ui.css', '/docs/init.js', '/healthz', '/openapi.json', '/metrics']) {
      const res = await rawRequest(t.origin, 'POST', path);
      expect(res.status, path).toBe(405);
      expect(res.headers.allow, path).toMatch(/^GET/);
    }
    expect((await rawRequest(t.origin, 'POST', '/docs/nothing.js')).status).toBe(404);
  });

  test('an encoded NUL in the path is 400 invalid_request before any id lookup', async ({ app: t }) => {
    const res = await send('GET', '/v1/platform/webhook_endpoints/we_%00', 'platform');
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_request', param: 'path' });
  });
});
