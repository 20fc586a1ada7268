import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';

const SCOPES = [
  'org:read',
  'entities:read',
  'relationships:read',
  'relationships:write',
  'connections:read',
  'connections:write',
  'connect_config:read',
  'connect_config:write',
  'handoff:read',
  'handoff:write',
];

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

async function tenant() {
  const { org, token } = await buildTenant(t, SCOPES);
  return { org, client: new PlatformClient({ apiKey: token, origin: t.origin }) };
}

describe('client library: brands, entities, relationships, connections, connect configuration, handoff issuers', () => {
  test('brands, entities and relationships, typed and camelCased', async () => {
    const { org, client } = await tenant();
    const brands = await client.brands.list();
    expect(brands.data.map((b) => [b.id, b.default])).toEqual([
      [org.brands[0]!.id, true],
      [org.brands[1]!.id, false],
    ]);
    expect((await client.brands.retrieve(org.brands[0]!.id)).slug).toBe(org.brands[0]!.slug);
    const user = randomUUID();
    const rel = await client.relationships.create({ externalUserId: user, issuer: 'https://idp.example' });
    expect(rel).toMatchObject({ object: 'relationship', status: 'created', endedAt: null });
    expect((await client.relationships.move(rel.id, 'activate')).status).toBe('active');
    expect((await client.relationships.list({ status: 'active' })).data.map((r) => r.id)).toEqual([rel.id]);
    const entity = await client.entities.retrieve(rel.entity);
    expect(entity.identities).toEqual([{ externalUserId: user, issuer: 'https://idp.example' }]);
    expect(entity.relationships).toEqual([{ id: rel.id, brand: rel.brand, status: 'active' }]);
    expect((await client.entities.list({ externalUserId: user, issuer: 'https://idp.example' })).data[0]!.id).toBe(rel.entity);
    const err = await client.relationships.move(rel.id, 'resume').catch((e) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect(err.code).toBe('invalid_state_transition');
  });

  test('connections, connect configuration and handoff issuers', async () => {
    const { client } = await tenant();
    const conn = await client.connections.create({
      externalUserId: randomUUID(),
      issuer: 'https://idp.example',
      provider: 'youtube',
      accountId: 'UC1',
      grants: ['videos:read'],
    });
    expect(conn).toMatchObject({ object: 'connection', accountId: 'UC1', grants: ['videos:read'], status: 'active' });
    expect((await client.connections.list({ provider: 'youtube' })).data.map((c) => c.id)).toEqual([conn.id]);
    expect(await client.connections.revoke(conn.id)).toMatchObject({ connection: { id: conn.id, status: 'revoked' }, teardowns: [] });

    expect(await client.connectConfig.retrieve()).toMatchObject({ allowedOrigins: [], updatedAt: null });
    const cfg = await client.connectConfig.update({ allowedOrigins: ['https://shop.example'], primaryColor: '#123456' });
    expect(cfg).toMatchObject({ allowedOrigins: ['https://shop.example'], primaryColor: '#123456', displayName: null });
    const bad = await client.connectConfig.update({ allowedOrigins: ['https://shop.example/'] }).catch((e) => e);
    expect(bad).toMatchObject({ code: 'invalid_request', param: 'allowed_origins.0' });

    const hs = await client.handoffIssuers.create({ name: 'Shop', algorithm: 'HS256' });
    expect(hs.secret).toMatch(/^hsk_/);
    const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as Record<string, unknown>;
    const ed = await client.handoffIssuers.create({ name: 'Partner', algorithm: 'EdDSA', publicKey: jwk });
    expect(ed.publicKey).toEqual(jwk);
    const rotated = await client.handoffIssuers.rotate(hs.id);
    expect(rotated.secret).not.toBe(hs.secret);
    expect(rotated.previousExpiresAt).toEqual(expect.any(String));
    expect((await client.handoffIssuers.list()).data.map((i) => i.id)).toEqual([ed.id, hs.id]);
    expect(await client.handoffIssuers.delete(hs.id)).toEqual({ id: hs.id, object: 'handoff_issuer', deleted: true });
    expect((await client.handoffIssuers.retrieve(ed.id)).name).toBe('Partner');
  });
});
