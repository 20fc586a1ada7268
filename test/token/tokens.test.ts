import { describe, expect } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { appTest, buildOrg, buildToken, expectErrorResponse, type TestApp, type TestOrg } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const list = async (org: TestOrg) => {
  const res = await t.http.get('/platform/tokens', { token: org.userToken });
  expect(res.status, res.text).toBe(200);
  return res.body.tokens as any[];
};
const smoke = (secret: string) => t.http.post('/api/smoke', undefined, { token: secret });
const create = (org: TestOrg, body: unknown) => t.http.post('/platform/tokens/create', body, { token: org.userToken });
const revoke = (org: TestOrg, tokenId: string) => t.http.post('/platform/tokens/revoke', { token_id: tokenId }, { token: org.userToken });
const rotate = (org: TestOrg, tokenId: string) => t.http.post('/platform/tokens/rotate', { token_id: tokenId }, { token: org.userToken });

describe('token management: create', () => {
  test('create returns the token and a secret shown once: sk_platform_live_, with a shorter token_prefix that prefixes it', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const res = await create(org, { name: 'ci bot', scopes: ['units:read', 'units:create'] });
    expect(res.status, res.text).toBe(200);
    const { token, secret } = res.body;
    expect(secret).toMatch(/^sk_platform_live_[0-9A-Za-z]+$/);
    expect(secret.startsWith(token.token_prefix)).toBe(true);
    expect(token.token_prefix.length).toBeLessThan(secret.length);
    expect(token.token_prefix.length).toBeGreaterThan('sk_platform_live_'.length);
    expect(token).toMatchObject({
      name: 'ci bot',
      scopes: ['units:read', 'units:create'],
      status: 'active',
      revoked_at: null,
      expires_at: null,
      last_used_at: null,
    });
    expect(token.id).toMatch(/^tok_/);
    expect((await smoke(secret)).status).toBe(200);
  });

  test('create accepts every scope in the catalogue', async ({ app: t }) => {
    const org = await buildOrg(t);
    const res = await create(org, { name: 'all', scopes: ALL_SCOPES });
    expect(res.status, res.text).toBe(200);
    expect(res.body.token.scopes).toEqual(ALL_SCOPES);
    for (const scope of ALL_SCOPES) {
      const one = await create(org, { name: scope, scopes: [scope] });
      expect(one.status, `${scope}: ${one.text}`).toBe(200);
    }
  });

  test('an unknown scope is 400 naming it, and no token is created', async ({ app: t }) => {
    const org = await buildOrg(t);
    const res = await create(org, { name: 'x', scopes: ['units:read', 'units:teleport'] });
    expectErrorResponse(res, 400, 'unknown_scope');
    expect(res.body.param).toBe('scopes');
    expect(res.body.message).toContain('units:teleport');
    expect(res.body.message).not.toContain('units:read');
    expect(await list(org)).toEqual([]);
  });

  test('legacy program_members:read is refused at creation (aliases only honour already-issued tokens)', async ({ app: t }) => {
    const org = await buildOrg(t);
    const res = await create(org, { name: 'legacy', scopes: ['program_members:read'] });
    expectErrorResponse(res, 400, 'unknown_scope');
    expect(res.body.message).toContain('program_members:read');
    expect(await list(org)).toEqual([]);
  });

  test('expires_at in the past (or now) is 400 on expires_at', async ({ app: t }) => {
    const org = await buildOrg(t);
    for (const when of [new Date(t.clock.now().getTime() - 1000), t.clock.now()]) {
      const res = await create(org, { name: 'old', scopes: ['units:read'], expires_at: when.toISOString() });
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param).toBe('expires_at');
    }
    const notADate = await create(org, { name: 'old', scopes: ['units:read'], expires_at: 'tomorrow' });
    expectErrorResponse(notADate, 400, 'invalid_request');
    expect(notADate.body.param).toBe('expires_at');
    expect(await list(org)).toEqual([]);
  });
});

describe('token management: list', () => {
  test('list returns metadata only (never a secret or hash), newest first, only the caller organization', async ({ app: t }) => {
    const org = await buildOrg(t);
    const other = await buildOrg(t);
    await buildToken(t, other, ['units:read']);
    const first = await buildToken(t, org, ['units:read']);
    t.clock.advance(1000);
    const second = await buildToken(t, org, ['org:read']);
    const res = await t.http.get('/platform/tokens', { token: org.userToken });
    expect(res.status).toBe(200);
    expect(res.body.tokens.map((x: any) => x.id)).toEqual([second.id, first.id]);
    for (const tok of res.body.tokens) {
      expect(Object.keys(tok).sort()).toEqual(
        [
          'brand',
          'created_at',
          'expires_at',
          'id',
          'kind',
          'last_used_at',
          'name',
          'revoked_at',
          'scopes',
          'status',
          'token_prefix',
        ].sort(),
      );
    }
    for (const secret of [first.secret, second.secret]) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(secret.slice(-20));
    }
    expect(res.text).not.toMatch(/[0-9a-f]{64}/); // no SHA-256 hash
    expect(res.text).not.toMatch(/hash/i);
  });

  test('last_used_at is set once a token is used', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:read']);
    expect((await smoke(tok.secret)).status).toBe(200);
    const [row] = await list(org);
    expect(row.last_used_at).toBe(t.clock.now().toISOString());
  });
});

describe('token management: revoke', () => {
  test('revoke sets status revoked and revoked_at, and later use of the secret answers 401', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:read']);
    expect((await smoke(tok.secret)).status).toBe(200);
    const res = await revoke(org, tok.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ok: true });
    const [row] = await list(org);
    expect(row).toMatchObject({ id: tok.id, status: 'revoked', revoked_at: t.clock.now().toISOString() });
    expectErrorResponse(await smoke(tok.secret), 401, 'invalid_token');
    expectErrorResponse(await t.http.post('/api/units/list', {}, { token: tok.secret }), 401, 'invalid_token');
  });

  test('revoking twice is 200 and keeps the first revoked_at', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:read']);
    expect((await revoke(org, tok.id)).status).toBe(200);
    const revokedAt = (await list(org))[0].revoked_at;
    t.clock.advance(60_000);
    const again = await revoke(org, tok.id);
    expect(again.status, again.text).toBe(200);
    expect((await list(org))[0].revoked_at).toBe(revokedAt);
  });
});

describe('token management: rotate', () => {
  test('rotate revokes the old token (401) and returns an active replacement with the same scopes, secret shown once', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const old = await buildToken(t, org, ['units:read', 'units:delete']);
    const res = await rotate(org, old.id);
    expect(res.status, res.text).toBe(200);
    const { token, secret } = res.body;
    expect(token.id).not.toBe(old.id);
    expect(secret).toMatch(/^sk_platform_live_/);
    expect(secret).not.toBe(old.secret);
    expect(secret.startsWith(token.token_prefix)).toBe(true);
    expect(token).toMatchObject({ status: 'active', scopes: ['units:read', 'units:delete'], name: old.token.name });
    expectErrorResponse(await smoke(old.secret), 401, 'invalid_token');
    const ok = await smoke(secret);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.scopes).toEqual(['operations:read', 'units:delete', 'units:read']);
    const rows = await list(org);
    expect(rows.map((r) => [r.id, r.status])).toEqual([
      [token.id, 'active'],
      [old.id, 'revoked'],
    ]);
    const listed = await t.http.get('/platform/tokens', { token: org.userToken });
    expect(listed.text).not.toContain(secret);
  });

  test('rotating a revoked token is 400 and issues nothing', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:read']);
    await revoke(org, tok.id);
    const res = await rotate(org, tok.id);
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.param).toBe('token_id');
    expect((await list(org)).length).toBe(1);
  });

  test('rotating an already rotated token is 400: the old secret cannot mint a second replacement', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['units:read']);
    expect((await rotate(org, tok.id)).status).toBe(200);
    expectErrorResponse(await rotate(org, tok.id), 400, 'invalid_request');
    expect((await list(org)).length).toBe(2);
  });
});

describe('token management: expiry', () => {
  test('an expired token lists as expired and answers 401', async ({ app: t }) => {
    const org = await buildOrg(t);
    const expiresAt = new Date(t.clock.now().getTime() + 3600_000);
    const tok = await buildToken(t, org, ['units:read'], { expires_at: expiresAt.toISOString() });
    expect(tok.token.expires_at).toBe(expiresAt.toISOString());
    expect((await smoke(tok.secret)).status).toBe(200);
    t.clock.advance(3600_000 + 1);
    expect((await list(org))[0]).toMatchObject({ id: tok.id, status: 'expired', revoked_at: null });
    expectErrorResponse(await smoke(tok.secret), 401, 'invalid_token');
    expectErrorResponse(await rotate(org, tok.id), 400, 'invalid_request');
  });
});

describe('token management: tenancy', () => {
  test("another organization's token_id is 404 on revoke and rotate, and nothing changes", async ({ app: t }) => {
    const mine = await buildOrg(t);
    const theirs = await buildOrg(t);
    const tok = await buildToken(t, theirs, ['units:read']);
    const before = await list(theirs);
    for (const res of [await revoke(mine, tok.id), await rotate(mine, tok.id)]) {
      expectErrorResponse(res, 404, 'resource_missing');
      expect(res.body.param).toBe('token_id');
    }
    expect(await list(theirs)).toEqual(before);
    expect(await list(mine)).toEqual([]);
    expect((await smoke(tok.secret)).status).toBe(200);
  });

  test('an unknown or malformed token_id is 404, never a 500', async ({ app: t }) => {
    const org = await buildOrg(t);
    for (const id of ['tok_00000000000000000000000000000000', 'nope', `tok_${'z'.repeat(32)}`, "tok_'; drop table x;--"]) {
      expectErrorResponse(await revoke(org, id), 404, 'resource_missing');
      expectErrorResponse(await rotate(org, id), 404, 'resource_missing');
    }
  });
});

describe('token management: user authentication', () => {
  const routes = [
    ['GET', '/platform/tokens', undefined],
    ['POST', '/platform/tokens/create', { name: 'x', scopes: ['units:read'] }],
    ['POST', '/platform/tokens/revoke', { token_id: 'tok_00000000000000000000000000000000' }],
    ['POST', '/platform/tokens/rotate', { token_id: 'tok_00000000000000000000000000000000' }],
  ] as const;

  test('a missing user token is 401 user_token_required on every route', async ({ app: t }) => {
    for (const [method, path, body] of routes) {
      expectErrorResponse(await t.http.request(method, path, body), 401, 'user_token_required');
      expectErrorResponse(
        await t.http.request(method, path, body, { headers: { authorization: 'Basic dXNlcjpwdw==' } }),
        401,
        'user_token_required',
      );
    }
  });

  test('a garbage, forged or other-kind user token is 401 on every route', async ({ app: t }) => {
    const org = await buildOrg(t);
    const forged = org.userToken.slice(0, -1) + (org.userToken.endsWith('a') ? 'b' : 'a');
    for (const bad of ['garbage', 'ut_', `ut_${'A'.repeat(36)}`, forged, t.operatorToken, 'pk_live_abc', 'sk_test_abc']) {
      for (const [method, path, body] of routes) {
        expectErrorResponse(await t.http.request(method, path, body, { token: bad }), 401);
      }
    }
    expect(await list(org)).toEqual([]);
  });

  test('a platform token used as a user token is 401', async ({ app: t }) => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ALL_SCOPES);
    for (const [method, path, body] of routes) {
      expectErrorResponse(await t.http.request(method, path, body, { token: tok.secret }), 401, 'invalid_token');
    }
    expectErrorResponse(await t.http.post('/platform/tokens/revoke', { token_id: tok.id }, { token: tok.secret }), 401);
    expect((await list(org)).map((r) => r.status)).toEqual(['active']);
  });

  test('a user token is not a platform token: it answers 401 on Surface A', async ({ app: t }) => {
    const org = await buildOrg(t);
    expectErrorResponse(await smoke(org.userToken), 401, 'invalid_token');
  });

  test('authentication runs before validation: bad bodies without a user token are 401, not 400', async ({ app: t }) => {
    expectErrorResponse(await t.http.post('/platform/tokens/create', { nope: 1 }), 401, 'user_token_required');
    expectErrorResponse(await t.http.post('/platform/tokens/create', undefined, { raw: '{bad json' }), 401, 'user_token_required');
  });
});
