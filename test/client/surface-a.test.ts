import { describe, expect } from 'vitest';
import { PlatformError, ScopeClient, TokenClient } from '../../packages/client/src/index.ts';
import { appTest, buildOrg, buildToken, type TestApp } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('ScopeClient (Surface A)', () => {
  test('scopes, smoke, exec and the unit routes, camelCased', async () => {
    const org = await buildOrg(t);
    const { secret, id } = await buildToken(t, org, ['org:read', 'units:read', 'units:create', 'units:delete']);
    const a = new ScopeClient({ token: secret, baseUrl: `${t.origin}/api` });

    expect((await a.scopes()).map((s) => s.scope)).toContain('units:create');
    const smoke = await a.smoke();
    expect(smoke).toMatchObject({ ok: true, orgId: org.id, orgSlug: org.slug });
    const exec = await a.exec('org:read');
    expect(exec).toMatchObject({ ok: true, tokenId: id, scope: { scope: 'org:read' } });

    const created = await a.units.create({ type: 'video', caption: 'Teaser', productionId: 'prod_42' });
    expect(created.duplicate).toBe(false);
    expect(created.unit).toMatchObject({ type: 'video', caption: 'Teaser', productionId: 'prod_42', status: 'draft' });
    const again = await a.units.create({ type: 'video', caption: 'Teaser', productionId: 'prod_42' }, { idempotencyKey: 'k1' });
    const replay = await a.units.create({ type: 'video', caption: 'Teaser', productionId: 'prod_42' }, { idempotencyKey: 'k1' });
    expect(replay).toMatchObject({ duplicate: true, unit: { id: again.unit.id } });

    const list = await a.units.list({ perPage: 1 });
    expect(list).toMatchObject({ page: 1, perPage: 1, hasMore: true });
    expect(await a.units.delete(created.unit.id)).toMatchObject({ ok: true });
  });

  test('Surface A errors become PlatformError with code and requiredScope', async () => {
    const org = await buildOrg(t);
    const { secret } = await buildToken(t, org, ['units:read']);
    const a = new ScopeClient({ token: secret, baseUrl: `${t.origin}/api` });
    const err = await a.units.delete('unit_00000000000000000000000000000000').catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'missing_scope', status: 403, requiredScope: 'units:delete' });
    expect(err.requestId).toMatch(/^req_/);
    const bad = new ScopeClient({ token: 'sk_platform_live_nope', baseUrl: `${t.origin}/api` });
    await expect(bad.smoke()).rejects.toMatchObject({ code: 'invalid_token', status: 401 });
  });
});

describe('TokenClient (token management)', () => {
  test('create, list, rotate and revoke', async () => {
    const org = await buildOrg(t);
    const tokens = new TokenClient({ userToken: org.userToken, dashboardBaseUrl: t.origin });
    const created = await tokens.create({ name: 'ci', scopes: ['units:read'], expiresAt: new Date('2030-01-01T00:00:00Z') });
    expect(created.secret).toMatch(/^sk_platform_live_/);
    expect(created.token).toMatchObject({ name: 'ci', scopes: ['units:read'], status: 'active', expiresAt: '2030-01-01T00:00:00.000Z' });
    expect(created.token.tokenPrefix).toBeTruthy();

    const listed = await tokens.list();
    expect(listed.map((x) => x.id)).toContain(created.token.id);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const rotated = await tokens.rotate(created.token.id);
    expect(rotated.token.id).not.toBe(created.token.id);
    expect(rotated.secret).not.toBe(created.secret);
    expect(await tokens.revoke(rotated.token.id)).toMatchObject({ ok: true });
    const after = await tokens.list();
    expect(after.find((x) => x.id === rotated.token.id)?.status).toBe('revoked');
    expect(after.find((x) => x.id === created.token.id)?.revokedAt).not.toBeNull();

    await expect(tokens.create({ name: 'x', scopes: ['units:teleport'] })).rejects.toMatchObject({
      code: 'unknown_scope',
      param: 'scopes',
      status: 400,
    });
  });
});
