import { describe, expect } from 'vitest';
import { appTest, expectPlatformError, buildOrg, buildTenant, buildToken } from '../support/kit.ts';
import { setTokenScopes } from '../support/db-access.ts';

/** The Surface B request pipeline, in the spec's order, on REST and GraphQL alike. */
const test = appTest();

const VIEWER = '{ viewer { scopes brand { slug } } }';

describe('Surface B request pipeline', () => {
  test('test-mode keys answer 400 test_mode_not_yet_available before anything else', async ({ app: t }) => {
    for (const key of ['sk_test_abc', 'pk_test_abc', 'sk_platform_test_abc']) {
      expectPlatformError(await t.http.get('/v1/platform/events', { token: key }), 400, 'test_mode_not_yet_available');
      const gql = await t.http.graphql(VIEWER, {}, { token: key });
      expect(gql.status).toBe(400);
      expect(gql.body.errors[0].extensions.code).toBe('test_mode_not_yet_available');
    }
  });

  test('no bearer header is 401 platform_token_required; no body token and no cookie are accepted', async ({ app: t }) => {
    expectPlatformError(await t.http.get('/v1/platform/events'), 401, 'platform_token_required');
    const { token } = await buildTenant(t, ['webhooks:write']);
    const res = await t.http.post(
      '/v1/platform/webhook_endpoints',
      { url: 'https://example.com/hook', token },
      { headers: { cookie: `token=${token}` } },
    );
    expectPlatformError(res, 401, 'platform_token_required');
    const gql = await t.http.graphql(VIEWER);
    expect(gql.status).toBe(401);
    expect(gql.body.errors[0].extensions.code).toBe('platform_token_required');
  });

  test('authentication runs before id lookup: an unauthenticated request for any id is 401, never 404', async ({ app: t }) => {
    for (const path of [
      '/v1/platform/webhook_endpoints/we_00000000000000000000000000000000',
      '/v1/platform/webhook_endpoints/nonsense',
      '/v1/platform/no_such_route',
    ]) {
      expectPlatformError(await t.http.get(path), 401, 'platform_token_required');
      expectPlatformError(await t.http.delete(path, { token: 'sk_platform_live_garbage' }), 401, 'invalid_token');
    }
  });

  test('unknown, revoked and expired keys are 401; a pk_live_ key is 403 publishable_key_not_allowed', async ({ app: t }) => {
    expectPlatformError(
      await t.http.get('/v1/platform/events', { token: 'sk_platform_live_000000000000000000000000000000000000' }),
      401,
      'invalid_token',
    );
    expectPlatformError(await t.http.get('/v1/platform/events', { token: 'pk_live_abc' }), 403, 'publishable_key_not_allowed');

    const org = await buildOrg(t);
    const revoked = await buildToken(t, org, ['events:read']);
    expect((await t.http.get('/v1/platform/events', { token: revoked.secret })).status).toBe(200);
    await t.http.post('/platform/tokens/revoke', { token_id: revoked.id }, { token: org.userToken });
    expectPlatformError(await t.http.get('/v1/platform/events', { token: revoked.secret }), 401, 'invalid_token');

    const expiring = await buildToken(t, org, ['events:read'], { expires_at: new Date(t.clock.now().getTime() + 60_000).toISOString() });
    expect((await t.http.get('/v1/platform/events', { token: expiring.secret })).status).toBe(200);
    t.clock.advance(61_000);
    expectPlatformError(await t.http.get('/v1/platform/events', { token: expiring.secret }), 401, 'invalid_token');
    const gql = await t.http.graphql(VIEWER, {}, { token: expiring.secret });
    expect(gql.body.errors[0].extensions.code).toBe('invalid_token');
  });

  test('Service-Brand selects a brand by id or slug; default is the oldest brand', async ({ app: t }) => {
    const org = await buildOrg(t, { brands: ['alpha', 'beta'] });
    const { secret } = await buildToken(t, org, ['events:read']);
    const brandOf = async (header?: string) =>
      (await t.http.graphql(VIEWER, {}, { token: secret, headers: header ? { 'service-brand': header } : {} })).body.data.viewer.brand.slug;
    expect(await brandOf()).toBe('alpha');
    expect(await brandOf('beta')).toBe('beta');
    expect(await brandOf(org.brands[1]!.id)).toBe('beta');
  });

  test('an unresolvable brand is 400 brand_not_found, identical for another organization’s brand and a nonexistent one', async ({
    app: t,
  }) => {
    const mine = await buildOrg(t);
    const other = await buildOrg(t, { brands: ['theirs'] });
    const { secret } = await buildToken(t, mine, ['events:read']);
    const foreign = await t.http.get('/v1/platform/events', { token: secret, headers: { 'service-brand': other.brands[0]!.id } });
    const nowhere = await t.http.get('/v1/platform/events', {
      token: secret,
      headers: { 'service-brand': 'brand_00000000000000000000000000000000' },
    });
    const foreignSlug = await t.http.get('/v1/platform/events', { token: secret, headers: { 'service-brand': 'theirs' } });
    for (const res of [foreign, nowhere, foreignSlug]) expectPlatformError(res, 400, 'brand_not_found');
    const strip = (b: any) => ({ ...b.error, request_id: undefined, message: b.error.message.replace(/'[^']*'/, "'x'") });
    expect(strip(foreign.body)).toEqual(strip(nowhere.body));
  });

  test('a missing scope is 403 missing_scope with message missing_scope:<scope>, on REST and GraphQL', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    const res = await t.http.get('/v1/platform/events', { token });
    expectPlatformError(res, 403, 'missing_scope');
    expect(res.body.error.message).toBe('missing_scope:events:read');
    const gql = await t.http.graphql('{ events(first: 1) { edges { node { id } } } }', {}, { token });
    expect(gql.body.errors[0].extensions.code).toBe('missing_scope');
    expect(gql.body.errors[0].message).toBe('missing_scope:events:read');
    // Resolver errors carry the request id of the HTTP request, like REST envelopes.
    expect(gql.body.errors[0].extensions.request_id).toBe(gql.headers.get('request-id'));
  });

  test('operations:read is implicit on every token', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    const gql = await t.http.graphql(VIEWER, {}, { token });
    expect(gql.body.data.viewer.scopes).toEqual(['operations:read', 'webhooks:read']);
  });

  test('legacy program_members:* scopes on an already-issued token grant relationships:*', async ({ app: t }) => {
    const { token, tokenId } = await buildTenant(t, ['events:read']);
    // Tokens can no longer be issued with legacy scopes; emulate one issued before the rename.
    await setTokenScopes(t, tokenId, ['events:read', 'program_members:read', 'program_members:write']);
    const gql = await t.http.graphql(VIEWER, {}, { token });
    expect(gql.body.data.viewer.scopes).toEqual(expect.arrayContaining(['relationships:read', 'relationships:write']));
    expect(gql.body.data.viewer.scopes).not.toContain('program_members:read');
  });

  test('an unknown route under /v1/platform is 404 route_not_found in the envelope for an authenticated caller', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    expectPlatformError(await t.http.get('/v1/platform/nothing_here', { token }), 404, 'route_not_found');
    expectPlatformError(await t.http.request('PUT', '/v1/platform/events', undefined, { token }), 405, 'method_not_allowed');
  });
});
