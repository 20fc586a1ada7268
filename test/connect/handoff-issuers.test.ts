import { generateKeyPairSync } from 'node:crypto';
import { describe, expect } from 'vitest';
import { appTest, buildTenant, expectPlatformError, type TestApp } from '../support/kit.ts';
import { expectStatus } from '../assertion/helpers.ts';
import { handoffIssuerRow } from '../support/db-access.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const P = '/v1/platform';
const ISS = /^iss_[0-9a-f]{32}$/;
const DAY = 24 * 3600 * 1000;

async function who(scopes = ['handoff:read', 'handoff:write']) {
  const { org, token } = await buildTenant(t, scopes);
  return {
    org,
    token,
    create: (body: unknown) => t.http.post(`${P}/handoff/issuers`, body, { token }),
    rotate: (id: string, body?: unknown) => t.http.post(`${P}/handoff/issuers/${id}/rotate`, body, { token }),
    del: (id: string) => t.http.request('DELETE', `${P}/handoff/issuers/${id}`, undefined, { token }),
    get: (path: string) => t.http.get(`${P}${path}`, { token }),
  };
}

const ed25519 = () => generateKeyPairSync('ed25519');

describe('handoff issuers', () => {
  test('HS256: the secret is generated when omitted and shown only in the create and rotate answers; the previous one overlaps 24 h', async () => {
    const w = await who();
    const created = expectStatus(await w.create({ name: 'Shop', algorithm: 'HS256' }), 201);
    expect(created).toEqual({
      id: expect.stringMatching(ISS),
      object: 'handoff_issuer',
      brand: w.org.brands[0]!.id,
      name: 'Shop',
      algorithm: 'HS256',
      public_key: null,
      secret: expect.stringMatching(/^hsk_[0-9A-Za-z]{36}$/),
      previous_expires_at: null,
      rotated_at: null,
      livemode: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const { secret, ...shown } = created;
    expect(expectStatus(await w.get(`/handoff/issuers/${created.id}`), 200)).toEqual(shown);
    expect(expectStatus(await w.get('/handoff/issuers'), 200).data).toEqual([shown]);
    const rotated = expectStatus(await w.rotate(created.id), 200);
    expect(rotated.secret).toMatch(/^hsk_/);
    expect(rotated.secret).not.toBe(secret);
    expect(Date.parse(rotated.previous_expires_at) - Date.parse(rotated.rotated_at)).toBe(DAY);
    expect(expectStatus(await w.get(`/handoff/issuers/${created.id}`), 200).secret).toBeUndefined();
    // The stored secrets are what verifies: the new one, and the previous one until its overlap ends.
    const row = await handoffIssuerRow(t, created.id);
    expect([row.secret, row.previousSecret]).toEqual([rotated.secret, secret]);
    // A secret the caller brings is at least 32 characters (256 bits).
    expect(expectStatus(await w.create({ name: 'Own', algorithm: 'HS256', secret: 'x'.repeat(32) }), 201).secret).toBe('x'.repeat(32));
    expectPlatformError(await w.create({ name: 'Short', algorithm: 'HS256', secret: 'x'.repeat(31) }), 400, 'invalid_request', 'secret');
  });

  test('EdDSA: an Ed25519 public key as a JWK or an SPKI PEM, stored and shown as a JWK; rotation keeps the previous key 24 h', async () => {
    const w = await who();
    const first = ed25519();
    const jwk = first.publicKey.export({ format: 'jwk' });
    const fromJwk = expectStatus(await w.create({ name: 'Partner', algorithm: 'EdDSA', public_key: jwk }), 201);
    expect(fromJwk).toMatchObject({ algorithm: 'EdDSA', public_key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x } });
    expect(fromJwk.secret).toBeUndefined();
    const pem = first.publicKey.export({ format: 'pem', type: 'spki' }).toString();
    const fromPem = expectStatus(await w.create({ name: 'Partner PEM', algorithm: 'EdDSA', public_key: pem }), 201);
    expect(fromPem.public_key).toEqual(fromJwk.public_key);
    const next = ed25519().publicKey.export({ format: 'jwk' });
    const rotated = expectStatus(await w.rotate(fromJwk.id, { public_key: next }), 200);
    expect(rotated.public_key.x).toBe(next.x);
    expect(Date.parse(rotated.previous_expires_at) - Date.parse(rotated.rotated_at)).toBe(DAY);
    const row = await handoffIssuerRow(t, fromJwk.id);
    expect((row.previousPublicKey as { x: string }).x).toBe(jwk.x);
  });

  test('bad key material is 400 naming it: private keys, other curves, garbage, the wrong field for the algorithm', async () => {
    const w = await who();
    const pair = ed25519();
    const refused = async (body: Record<string, unknown>, param: string) =>
      expectPlatformError(await w.create({ name: 'x', ...body }), 400, 'invalid_request', param);
    await refused({ algorithm: 'EdDSA', public_key: pair.privateKey.export({ format: 'jwk' }) }, 'public_key');
    await refused({ algorithm: 'EdDSA', public_key: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() }, 'public_key');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    await refused({ algorithm: 'EdDSA', public_key: ec }, 'public_key');
    await refused({ algorithm: 'EdDSA', public_key: 'not a key' }, 'public_key');
    await refused({ algorithm: 'EdDSA', public_key: { kty: 'OKP', crv: 'Ed25519', x: '!!' } }, 'public_key');
    await refused({ algorithm: 'EdDSA' }, 'public_key');
    await refused({ algorithm: 'EdDSA', secret: 'x'.repeat(40), public_key: pair.publicKey.export({ format: 'jwk' }) }, 'secret');
    await refused({ algorithm: 'HS256', public_key: pair.publicKey.export({ format: 'jwk' }) }, 'public_key');
    await refused({ algorithm: 'RS256' }, 'algorithm');
    await refused({ algorithm: 'HS256', name: '' }, 'name');
    const hs = expectStatus(await w.create({ name: 'h', algorithm: 'HS256' }), 201);
    expectPlatformError(
      await w.rotate(hs.id, { public_key: pair.publicKey.export({ format: 'jwk' }) }),
      400,
      'invalid_request',
      'public_key',
    );
    expectPlatformError(await w.rotate('iss_nope'), 404, 'resource_missing');
  });

  test('delete removes the issuer (404 afterwards); scopes handoff:read and handoff:write', async () => {
    const w = await who();
    const created = expectStatus(await w.create({ name: 'Gone', algorithm: 'HS256' }), 201);
    expect(expectStatus(await w.del(created.id), 200)).toEqual({ id: created.id, object: 'handoff_issuer', deleted: true });
    expectPlatformError(await w.get(`/handoff/issuers/${created.id}`), 404, 'resource_missing');
    expectPlatformError(await w.del(created.id), 404, 'resource_missing');
    const reader = await who(['handoff:read']);
    expectStatus(await reader.get('/handoff/issuers'), 200);
    expectPlatformError(await reader.create({ name: 'x', algorithm: 'HS256' }), 403, 'missing_scope');
  });

  test('GraphQL: create, rotate, list, delete', async () => {
    const w = await who();
    const gql = async (query: string, variables = {}) => (await t.http.graphql(query, variables, { token: w.token })).body;
    const jwk = ed25519().publicKey.export({ format: 'jwk' });
    const created = (
      await gql(
        'mutation($k: JSON) { createHandoffIssuer(name: "P", algorithm: "EdDSA", publicKey: $k) { id algorithm publicKey secret } }',
        {
          k: jwk,
        },
      )
    ).data.createHandoffIssuer;
    expect(created).toMatchObject({ algorithm: 'EdDSA', publicKey: { x: jwk.x }, secret: null });
    const hs = (await gql('mutation { createHandoffIssuer(name: "H", algorithm: "HS256") { id secret } }')).data.createHandoffIssuer;
    expect(hs.secret).toMatch(/^hsk_/);
    const rotated = (await gql(`mutation { rotateHandoffIssuer(id: "${hs.id}") { secret previousExpiresAt } }`)).data.rotateHandoffIssuer;
    expect(rotated.secret).not.toBe(hs.secret);
    const listed = (await gql('{ handoffIssuers { edges { node { id secret } } } }')).data.handoffIssuers.edges;
    expect(listed.map((e: { node: { id: string; secret: null } }) => e.node)).toEqual([
      { id: hs.id, secret: null },
      { id: created.id, secret: null },
    ]);
    expect((await gql(`mutation { deleteHandoffIssuer(id: "${hs.id}") { id deleted } }`)).data.deleteHandoffIssuer).toEqual({
      id: hs.id,
      deleted: true,
    });
  });
});
