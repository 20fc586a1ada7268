import { describe, expect } from 'vitest';
import {
  appTest,
  buildOrg,
  buildTenant,
  buildToken,
  expectErrorResponse,
  expectGraphQLError,
  expectPlatformError,
} from '../support/kit.ts';

/** Caps per organization (docs/security.md, "Abuse limits"), small here: 3 secret tokens, 2 publishable keys, 3 webhook endpoints. */
const test = appTest({ config: { organizationCaps: { secretTokens: 3, publishableKeys: 2, webhookEndpoints: 3 } } });

const create = (t: Parameters<typeof buildOrg>[0], userToken: string, extra: Record<string, unknown> = { scopes: ['events:read'] }) =>
  t.http.post('/platform/tokens/create', { name: 'k', ...extra }, { token: userToken });

describe('caps per organization', () => {
  test('active tokens: create at the cap is 400 token_limit_reached; rotate at the cap works; revoked and expired ones do not count; each kind has its own cap', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const soon = new Date(t.clock.now().getTime() + 60_000).toISOString();
    const expiring = await buildToken(t, org, ['events:read'], { expires_at: soon });
    const a = await buildToken(t, org, ['events:read']);
    await buildToken(t, org, ['events:read']);
    expectErrorResponse(await create(t, org.userToken), 400, 'token_limit_reached');

    const rotated = await t.http.post('/platform/tokens/rotate', { token_id: a.id }, { token: org.userToken });
    expect(rotated.status, rotated.text).toBe(200);
    expectErrorResponse(await create(t, org.userToken), 400, 'token_limit_reached');

    // Publishable keys have their own cap.
    for (let i = 0; i < 2; i++) expect((await create(t, org.userToken, { kind: 'publishable', brand: 'main' })).status).toBe(200);
    expectErrorResponse(await create(t, org.userToken, { kind: 'publishable', brand: 'main' }), 400, 'token_limit_reached');

    t.clock.advance(60_000); // the expiring token expires: a slot frees
    expect((await create(t, org.userToken)).status).toBe(200);
    expectErrorResponse(await create(t, org.userToken), 400, 'token_limit_reached');
    expect(expiring.id).toBeTruthy();

    const revoked = await t.http.post('/platform/tokens/revoke', { token_id: rotated.body.token.id }, { token: org.userToken });
    expect(revoked.status).toBe(200);
    expect((await create(t, org.userToken)).status).toBe(200);
  });

  test('an organization over its cap keeps working but creates no more', async ({ app: t }) => {
    const tenant = await buildTenant(t, ['events:read']);
    await buildToken(t, tenant.org, ['events:read']);
    const caps = t.app.deps.config.organizationCaps;
    caps.secretTokens = 1; // lowered under the organization's feet: it now holds 2
    try {
      expect((await t.http.get('/v1/platform/events', { token: tenant.token })).status).toBe(200);
      expectErrorResponse(await create(t, tenant.org.userToken), 400, 'token_limit_reached');
      expect((await t.http.post('/platform/tokens/rotate', { token_id: tenant.tokenId }, { token: tenant.org.userToken })).status).toBe(
        200,
      );
    } finally {
      caps.secretTokens = 3;
    }
  });

  test('concurrent token creations at the cap minus one: exactly one succeeds', async ({ app: t }) => {
    const org = await buildOrg(t);
    await buildToken(t, org, ['events:read']);
    await buildToken(t, org, ['events:read']);
    const results = await Promise.all(Array.from({ length: 6 }, () => create(t, org.userToken)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((r) => r.status !== 200)) expectErrorResponse(r, 400, 'token_limit_reached');
  });

  test('webhook endpoints: create at the cap is 400 webhook_endpoint_limit_reached on REST and GraphQL; deleting one frees a slot; concurrent creations at the cap minus one: exactly one succeeds', async ({
    app: t,
  }) => {
    const { token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const endpoint = (i: number) => t.http.post('/v1/platform/webhook_endpoints', { url: `https://hooks.example.com/${i}` }, { token });
    const ids = [];
    for (let i = 0; i < 2; i++) {
      const res = await endpoint(i);
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.webhook_endpoint.id);
    }
    const concurrent = await Promise.all(Array.from({ length: 6 }, (_, i) => endpoint(10 + i)));
    expect(concurrent.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of concurrent.filter((r) => r.status !== 201)) expectPlatformError(r, 400, 'webhook_endpoint_limit_reached', null);

    expectPlatformError(await endpoint(3), 400, 'webhook_endpoint_limit_reached', null);
    const gql = await t.http.graphql('mutation { createWebhookEndpoint(url: "https://hooks.example.com/g") { id } }', {}, { token });
    expectGraphQLError(gql, 'webhook_endpoint_limit_reached');

    const deleted = await t.http.delete(`/v1/platform/webhook_endpoints/${ids[0]}`, { token });
    expect(deleted.status, deleted.text).toBe(200);
    const again = await t.http.graphql('mutation { createWebhookEndpoint(url: "https://hooks.example.com/g") { id } }', {}, { token });
    expect(again.body.data?.createWebhookEndpoint?.id, JSON.stringify(again.body)).toBeTruthy();
    // Another organization counts its own.
    const other = await buildTenant(t, ['webhooks:write']);
    expect(
      (await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://hooks.example.com/o' }, { token: other.token })).status,
    ).toBe(201);
  });
});
