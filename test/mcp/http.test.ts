import { describe, expect } from 'vitest';
import {
  appTest,
  buildOrg,
  buildTenant,
  buildToken,
  emitEvent,
  expectPlatformError,
  rawRequest,
  TEST_MODE_KEYS,
  type TestApp,
} from '../support/kit.ts';
import { MCP_SESSION_IDLE_MS } from '../../src/domain/mcp/expiry.ts';
import { startMaintenance } from '../../src/workers/maintenance.ts';
import { plainRequest } from '../../src/mcp/json-request.ts';
import { connectMcp, toolValue } from './helpers.ts';

/**
 * `/mcp` is Surface B's: the same key checked in the same order with the
 * same codes and envelope (plus `WWW-Authenticate: Bearer` on a 401), a
 * `Host` allow-list against DNS rebinding, REST's body limit, sessions that
 * belong to the key that opened them, and no 5xx for anything a client sends.
 */
const test = appTest({ config: { bodyLimitBytes: 64 * 1024 } });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ACCEPT = { accept: 'application/json, text/event-stream' };
const init = (version = '2025-11-25', id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const post = (body: unknown, token?: string, headers: Record<string, string> = {}) =>
  t.http.post('/mcp', body, { token, headers: { ...ACCEPT, ...headers } });

describe('/mcp authority, in Surface B order', () => {
  test('no key: 401 platform_token_required with WWW-Authenticate: Bearer', async () => {
    const res = await post(init());
    expectPlatformError(res, 401, 'platform_token_required');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });

  test('an unknown key: 401 invalid_token with WWW-Authenticate', async () => {
    const res = await post(init(), 'sk_platform_live_nope');
    expectPlatformError(res, 401, 'invalid_token');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*invalid_token/);
  });

  test('test-mode keys: 400 test_mode_not_yet_available, before the key is looked up', async () => {
    for (const key of TEST_MODE_KEYS) expectPlatformError(await post(init(), key), 400, 'test_mode_not_yet_available');
  });

  test('a publishable pk_live_ key gets nothing: 403', async () => {
    const org = await buildOrg(t);
    const pk = await t.http.post('/platform/tokens/create', { name: 'site', kind: 'publishable', brand: 'main' }, { token: org.userToken });
    expect(pk.status, pk.text).toBe(200);
    const res = await post(init(), pk.body.secret);
    expect(res.status, res.text).toBe(403);
    expect(res.body.error.code).toBe('publishable_key_not_allowed');
  });

  test('the kill switch: 503 developer_access_paused, and a live key works again once released', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const set = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });
    expect((await set(true)).status).toBe(200);
    try {
      expectPlatformError(await post(init(), token), 503, 'developer_access_paused');
    } finally {
      expect((await set(false)).status).toBe(200);
    }
    expect((await post(init(), token)).status).toBe(200);
  });
});

describe('/mcp transport', () => {
  test('the two newest revisions are negotiated as asked; the session id comes back and is required after', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    for (const version of ['2025-11-25', '2025-06-18']) {
      const res = await post(init(version), token);
      expect(res.status, res.text).toBe(200);
      expect(res.body.result.protocolVersion).toBe(version);
      const session = res.headers.get('mcp-session-id')!;
      expect(session).toMatch(/^[0-9a-f-]{36}$/);
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, token, {
        'mcp-session-id': session,
        'mcp-protocol-version': version,
      });
      expect(list.status, list.text).toBe(200);
      expect(list.body.result.tools.map((x: { name: string }) => x.name)).toContain('events_list');
    }
    const none = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, token);
    expect(none.status).toBe(400);
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'tools/list' }, token, {
      'mcp-session-id': '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.status).toBe(404);
  });

  test('a plain request answers exactly as the SDK transport answers the same request: results, JSON-RPC errors, refusals', async () => {
    const { token, org } = await buildTenant(t, ['events:read']);
    await emitEvent(t, org.id);
    const session = (await post(init(), token)).headers.get('mcp-session-id')!;
    const headers = { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    // `_meta` in the params sends a request through the SDK's own transport (src/mcp/json-request.ts `plainRequest`).
    const viaSdk = (params: Record<string, unknown> = {}) => ({ ...params, _meta: {} });
    const cases: [string, Record<string, unknown> | undefined][] = [
      ['tools/call', { name: 'events_list', arguments: { limit: 5 } }],
      ['tools/call', { name: 'no_such_tool', arguments: {} }],
      ['tools/call', { arguments: {} }],
      ['tools/list', undefined],
      ['no/such/method', undefined],
    ];
    const route = { accept: ACCEPT.accept, contentType: 'application/json', protocolVersion: '2025-11-25' };
    for (const [method, params] of cases) {
      expect(plainRequest(route, [{ jsonrpc: '2.0', id: 7, method, params }])).toBeDefined();
      expect(plainRequest(route, [{ jsonrpc: '2.0', id: 7, method, params: viaSdk(params) }])).toBeUndefined();
      const plain = await post({ jsonrpc: '2.0', id: 7, method, ...(params ? { params } : {}) }, token, headers);
      const sdk = await post({ jsonrpc: '2.0', id: 7, method, params: viaSdk(params) }, token, headers);
      expect([plain.status, plain.headers.get('content-type')], method).toEqual([sdk.status, sdk.headers.get('content-type')]);
      // The request id differs per request: the rest of the answer is the same.
      const body = (r: typeof plain) => JSON.parse(r.text.replace(/"request_id\\?":\\?"[^"\\]+\\?"/g, '"request_id":"…"'));
      expect(body(plain), `${method} ${JSON.stringify(params)}`).toEqual(body(sdk));
    }
    // What the SDK's transport refuses is still its to refuse: an unsupported revision, an extra member, no event stream.
    const list = { jsonrpc: '2.0', id: 8, method: 'tools/list' };
    expect((await post(list, token, { ...headers, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
    expect((await post({ ...list, extra: 1 }, token, headers)).status).toBe(400);
    expect((await post(list, token, { ...headers, accept: 'application/json' })).status).toBe(406);
  });

  test('a session belongs to its key: another key, even of the same organization, is told it does not exist', async () => {
    const a = await buildTenant(t, ['events:read']);
    const session = (await post(init(), a.token)).headers.get('mcp-session-id')!;
    const sibling = await buildToken(t, a.org, ['events:read']);
    const stranger = await buildTenant(t, ['events:read']);
    for (const key of [sibling.secret, stranger.token]) {
      const list = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, key, { 'mcp-session-id': session });
      expect(list.status).toBe(404);
    }
  });

  test('a session idle for a day is pruned by the maintenance loop; one in use is kept', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const idle = (await post(init(), token)).headers.get('mcp-session-id')!;
    const used = (await post(init(), token)).headers.get('mcp-session-id')!;
    const ping = (session: string) => post({ jsonrpc: '2.0', id: 2, method: 'ping' }, token, { 'mcp-session-id': session });
    const maintenance = startMaintenance(t.app.deps, 3_600_000);
    try {
      t.clock.advance(MCP_SESSION_IDLE_MS - 60_000);
      expect((await ping(used)).status).toBe(200); // a use near the end of the window records itself
      t.clock.advance(120_000);
      await maintenance.runOnce();
      expect((await ping(idle)).status).toBe(404);
      expect((await ping(used)).status).toBe(200);
    } finally {
      maintenance.stop();
    }
  });

  test('DELETE ends a session', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const session = (await post(init(), token)).headers.get('mcp-session-id')!;
    const del = await t.http.delete('/mcp', { token, headers: { 'mcp-session-id': session } });
    expect(del.status).toBe(200);
    expect((await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, token, { 'mcp-session-id': session })).status).toBe(404);
  });

  test('DNS rebinding: a foreign Host is refused before anything else; a foreign Origin too', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const port = new URL(t.origin).port;
    const body = JSON.stringify(init());
    const evil = await rawRequest(
      t.origin,
      'POST',
      '/mcp',
      { host: `evil.example:${port}`, 'content-type': 'application/json', ...ACCEPT, authorization: `Bearer ${token}` },
      body,
    );
    expect(evil.status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`]) {
      const ok = await rawRequest(
        t.origin,
        'POST',
        '/mcp',
        { host, 'content-type': 'application/json', ...ACCEPT, authorization: `Bearer ${token}` },
        body,
      );
      expect(ok.status, host).toBe(200);
    }
    const cross = await post(init(), token, { origin: 'https://evil.example' });
    expectPlatformError(cross, 403, 'origin_not_allowed');
  });

  test('bad input is a 4xx, never a 5xx: malformed JSON, oversized bodies, wrong types, unknown methods and tools', async () => {
    const { token } = await buildTenant(t, ['events:read', 'webhooks:write']);
    const session = (await post(init(), token)).headers.get('mcp-session-id')!;
    const h = { 'mcp-session-id': session };
    const bodies: unknown[] = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'events_list', arguments: { limit: 'x' } } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'nope' } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'webhook_endpoints_create', arguments: { url: 5, idempotency_key: 7 } },
      },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'events_retrieve', arguments: { id: ['x'] } } },
      { jsonrpc: '2.0', id: 1, method: 'nope/nope' },
      { jsonrpc: '1.0', id: 1, method: 'ping' },
      { id: {}, method: 7 },
      [],
      [1, 2, 3],
      'text',
      42,
      null,
    ];
    for (const b of bodies) {
      const res = await post(b, token, h);
      expect(res.status, `${JSON.stringify(b)} → ${res.text}`).toBeLessThan(500);
    }
    for (const raw of ['{', '{"jsonrpc":', 'x'.repeat(10), `{"a":"${'x'.repeat(70 * 1024)}"}`]) {
      const res = await t.http.request('POST', '/mcp', undefined, {
        token,
        raw,
        headers: { ...ACCEPT, ...h, 'content-type': 'application/json' },
      });
      expect(res.status, res.text.slice(0, 200)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    const big = await t.http.request('POST', '/mcp', undefined, {
      token,
      raw: `{"a":"${'x'.repeat(70 * 1024)}"}`,
      headers: { ...ACCEPT, ...h, 'content-type': 'application/json' },
    });
    expectPlatformError(big, 413, 'payload_too_large');
    expect((await t.http.request('PUT', '/mcp', {}, { token })).status).toBe(405);
    expect((await t.http.request('POST', '/mcp', undefined, { token, raw: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(
      415,
    );
  });

  test('revoking the key ends its open MCP stream, and its session answers 401 after', async () => {
    const org = await buildOrg(t);
    const tok = await t.http.post('/platform/tokens/create', { name: 'agent', scopes: ['events:read'] }, { token: org.userToken });
    const client = await connectMcp(t.origin, tok.body.secret);
    toolValue(await client.callTool({ name: 'events_list', arguments: {} }));
    const closed = new Promise<void>((resolve) => {
      client.onerror = () => resolve();
      client.onclose = () => resolve();
    });
    expect((await t.http.post('/platform/tokens/revoke', { token_id: tok.body.token.id }, { token: org.userToken })).status).toBe(200);
    await expect(client.callTool({ name: 'events_list', arguments: {} })).rejects.toThrow(/401|invalid_token/);
    await closed;
    await client.close();
  });
});
