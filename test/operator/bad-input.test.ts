import { beforeAll, describe, expect } from 'vitest';
import { appTest, buildOrg, buildToken, expectErrorResponse, type TestApp, type TestOrg } from '../support/kit.ts';
import type { HttpResponse } from '../support/http.ts';

/**
 * Bad input on every token-management and operator route: a clear 4xx
 * ErrorResponse, never a 500 or a stack trace, and nothing changes.
 */
const LIMIT = 2048;
const test = appTest({ config: { bodyLimitBytes: LIMIT } });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

type Route = { path: string; token: () => string; valid: () => Record<string, unknown>; wrongTypes: Record<string, unknown>[] };

let org: TestOrg;
let tokenId: string;
let secret: string;
let routes: Route[];
beforeAll(async () => {
  org = await buildOrg(t);
  const tok = await buildToken(t, org, ['units:read']);
  tokenId = tok.id;
  secret = tok.secret;
  await t.http.post('/api/smoke', undefined, { token: secret }); // sets last_used_at before any snapshot
  const user = () => org.userToken;
  const op = () => t.operatorToken;
  routes = [
    {
      path: '/platform/tokens/create',
      token: user,
      valid: () => ({ name: 'n', scopes: ['units:read'] }),
      wrongTypes: [
        { name: 1, scopes: ['units:read'] },
        { name: 'n', scopes: 'units:read' },
        { name: 'n', scopes: [1] },
        { name: 'n', scopes: [] },
        { name: 'n', scopes: ['units:read'], expires_at: 5 },
        { name: ['n'], scopes: ['units:read'] },
      ],
    },
    {
      path: '/platform/tokens/revoke',
      token: user,
      valid: () => ({ token_id: tokenId }),
      wrongTypes: [{ token_id: 1 }, { token_id: null }, { token_id: [tokenId] }, { token_id: { id: tokenId } }, {}],
    },
    {
      path: '/platform/tokens/rotate',
      token: user,
      valid: () => ({ token_id: tokenId }),
      wrongTypes: [{ token_id: 1 }, { token_id: null }, { token_id: [tokenId] }, {}],
    },
    {
      path: '/operator/organizations',
      token: op,
      valid: () => ({ name: 'Bad Input Org', slug: 'bad-input-org', brands: [{ slug: 'main', name: 'Main' }] }),
      wrongTypes: [
        { name: 1, slug: 'bad-input-org', brands: [{ slug: 'main', name: 'Main' }] },
        { name: 'x', slug: 7, brands: [] },
        { name: 'x', slug: 'bad-input-org', brands: {} },
        { name: 'x', slug: 'bad-input-org', brands: [null] },
      ],
    },
    {
      path: '/operator/kill_switch',
      token: op,
      valid: () => ({ engaged: true }),
      wrongTypes: [{ engaged: 'true' }, { engaged: null }, { engaged: [true] }, {}],
    },
  ];
});

/** Everything a bad request could have changed, read through the API. */
async function snapshot() {
  const tokens = await t.http.get('/platform/tokens', { token: org.userToken });
  const ks = await t.http.get('/operator/kill_switch', { token: t.operatorToken });
  const smoke = await t.http.post('/api/smoke', undefined, { token: secret });
  return { tokens: tokens.body, killSwitch: ks.body, smoke: smoke.status };
}

const send = (r: Route, init: { raw?: string; body?: unknown; contentType?: string }) =>
  t.http.request('POST', r.path, init.body, {
    token: r.token(),
    raw: init.raw,
    headers: init.contentType ? { 'content-type': init.contentType } : {},
  });

function expect4xx(res: HttpResponse, status: number, error: string, what: string) {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  expectErrorResponse(res, status, error);
}

describe('bad input on token and operator routes', () => {
  test('malformed JSON is 400 invalid_request on every route and changes nothing', async () => {
    const before = await snapshot();
    for (const r of routes) {
      for (const raw of ['{', '{"name":', "{'a':1}", 'undefined', '{"a":1}}', '\u0000']) {
        expect4xx(await send(r, { raw }), 400, 'invalid_request', `${r.path} ${JSON.stringify(raw)}`);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test('an array, string, number or null body is 400 invalid_request and changes nothing', async () => {
    const before = await snapshot();
    for (const r of routes) {
      for (const body of [[r.valid()], 'text', 42, null, true]) {
        expect4xx(await send(r, { body }), 400, 'invalid_request', `${r.path} ${JSON.stringify(body)}`);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test('wrong types are 400 invalid_request naming the parameter and change nothing', async () => {
    const before = await snapshot();
    for (const r of routes) {
      for (const body of r.wrongTypes) {
        const res = await send(r, { body });
        expect4xx(res, 400, 'invalid_request', `${r.path} ${JSON.stringify(body)}`);
        expect(res.body.param, `${r.path} ${JSON.stringify(body)}`).toEqual(expect.any(String));
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test('unknown fields are 400 invalid_request naming the field and change nothing', async () => {
    const before = await snapshot();
    for (const r of routes) {
      const res = await send(r, { body: { ...r.valid(), surprise: 1 } });
      expect4xx(res, 400, 'invalid_request', r.path);
      expect(res.body.param).toBe('surprise');
      expect(res.body.message).toContain('surprise');
    }
    expect(await snapshot()).toEqual(before);
  });

  test('a non-JSON content type is 415 unsupported_media_type and changes nothing', async () => {
    const before = await snapshot();
    for (const r of routes) {
      const json = JSON.stringify(r.valid());
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
        expect4xx(await send(r, { raw: json, contentType }), 415, 'unsupported_media_type', `${r.path} ${contentType}`);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  test(`a body over the limit (${LIMIT} bytes) is 413 payload_too_large and changes nothing`, async () => {
    const before = await snapshot();
    for (const r of routes) {
      const body = { ...r.valid(), name: 'x'.repeat(LIMIT * 4) };
      expect4xx(await send(r, { body }), 413, 'payload_too_large', r.path);
    }
    expect(await snapshot()).toEqual(before);
  });

  test('a body just under the limit is read and validated normally (not 413)', async () => {
    const r = routes.find((x) => x.path === '/operator/kill_switch')!;
    const res = await send(r, { body: { engaged: false, pad: 'x'.repeat(LIMIT - 100) } });
    expect4xx(res, 400, 'invalid_request', r.path);
    expect(res.body.param).toBe('pad');
  });

  test('an empty body is treated as no body: 400 naming the first required parameter, never 500', async () => {
    for (const r of routes) {
      const res = await send(r, { raw: '' });
      expect4xx(res, 400, 'invalid_request', r.path);
    }
  });

  test('the valid request still succeeds afterwards (the checks above are not vacuous)', async () => {
    for (const r of routes.filter((x) => x.path !== '/platform/tokens/revoke' && x.path !== '/platform/tokens/rotate')) {
      const res = await send(r, { body: r.valid() });
      expect(res.status, `${r.path}: ${res.text}`).toBeLessThan(300);
    }
  });
});
