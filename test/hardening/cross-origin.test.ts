import { describe, expect } from 'vitest';
import WebSocket from 'ws';
import { appTest, buildTenant, expectErrorResponse, expectPlatformError, rawRequest } from '../support/kit.ts';
import { wsUrl } from '../support/stream-client.ts';

/**
 * Finding 3 of issue 31: `/graphql` reflected any `Origin` with credentials allowed. One cross-origin policy
 * (src/http/cors.ts): every route but partner connect's three (test/connect/cors.test.ts) is same-origin, so a browser
 * request from another origin is refused 403 `origin_not_allowed` without `Access-Control-Allow-Origin`, preflights
 * included, and a graphql-ws handshake from another origin is refused before the upgrade.
 */
const test = appTest();
const EVIL = 'https://evil.example';
const QUERY = JSON.stringify({ query: '{ viewer { scopes } }' });

const noCors = (headers: Record<string, string | string[] | undefined>) =>
  Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('same-origin routes answer no cross-origin browser request', () => {
  // The first test of the file starts its server.
  test('GraphQL over HTTP: a foreign origin gets 403 origin_not_allowed and no CORS header, a preflight too', {
    timeout: 180_000,
  }, async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    for (const origin of [EVIL, 'null', `${t.origin.replace('127.0.0.1', 'localhost')}`, t.origin.replace('http:', 'ftp:')]) {
      const res = await rawRequest(t.origin, 'POST', '/graphql', { ...auth, origin }, QUERY);
      expect(res.status, origin).toBe(403);
      expect(res.body.error, origin).toBe('origin_not_allowed');
      expect(noCors(res.headers), origin).toEqual([]);
    }
    const preflight = await rawRequest(t.origin, 'OPTIONS', '/graphql', {
      origin: EVIL,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    });
    expect(preflight.status).toBe(403);
    expect(noCors(preflight.headers)).toEqual([]);
    const sse = await rawRequest(t.origin, 'GET', '/graphql?query=subscription%7Bevents%7Bid%7D%7D', {
      authorization: `Bearer ${token}`,
      accept: 'text/event-stream',
      origin: EVIL,
    });
    expect(sse.status).toBe(403);
    expect(noCors(sse.headers)).toEqual([]);
  });

  test('its own origin (the Host it was reached at) and requests without Origin are served, with no CORS header', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const cases: Record<string, string>[] = [{ origin: t.origin }, {}, { origin: 'https://api.example.com', host: 'api.example.com' }];
    for (const headers of cases) {
      const res = await rawRequest(t.origin, 'POST', '/graphql', { ...auth, ...headers }, QUERY);
      expect(res.status, JSON.stringify(headers)).toBe(200);
      expect(res.body.data.viewer.scopes).toContain('events:read');
      expect(noCors(res.headers)).toEqual([]);
    }
  });

  test('REST, token management, operator and the pages refuse a foreign origin in their envelope; preflights too', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const headers = { origin: EVIL };
    const events = await t.http.get('/v1/platform/events', { token, headers });
    expectPlatformError(events, 403, 'origin_not_allowed', 'Origin');
    expect(noCors(Object.fromEntries(events.headers))).toEqual([]);
    for (const path of ['/api/scopes', '/platform/tokens', '/operator/organizations', '/console', '/docs', '/openapi.json']) {
      const res = await t.http.get(path, { token, headers });
      expectErrorResponse(res, 403, 'origin_not_allowed');
      expect(noCors(Object.fromEntries(res.headers)), path).toEqual([]);
    }
    for (const path of ['/v1/platform/events', '/api/scopes_exec', '/platform/tokens']) {
      const res = await t.http.request('OPTIONS', path, undefined, { headers: { ...headers, 'access-control-request-method': 'POST' } });
      expect(res.status, path).toBe(403);
      expect(noCors(Object.fromEntries(res.headers)), path).toEqual([]);
    }
    // The same routes from their own origin, as the console calls them.
    expect((await t.http.get('/v1/platform/events', { token, headers: { origin: t.origin } })).status).toBe(200);
  });
});

describe('graphql-ws handshakes', () => {
  /** The handshake's outcome: `open`, or the HTTP status it was refused with. */
  const handshake = (url: string, origin?: string) =>
    new Promise<'open' | number>((resolve, reject) => {
      const ws = new WebSocket(url, 'graphql-transport-ws', origin ? { origin } : {});
      ws.once('open', () => {
        ws.close();
        resolve('open');
      });
      ws.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode!);
        res.resume();
      });
      ws.once('error', (e) => reject(e));
    });

  test('a foreign Origin is refused 403 before the upgrade; its own origin and no Origin (a server) are accepted', async ({ app: t }) => {
    expect(await handshake(wsUrl(t), EVIL)).toBe(403);
    expect(await handshake(wsUrl(t), 'null')).toBe(403);
    expect(await handshake(wsUrl(t), t.origin)).toBe('open');
    expect(await handshake(wsUrl(t))).toBe('open');
    expect(t.app.connections.streams).toBeLessThanOrEqual(2);
  });
});
