import { describe, expect } from 'vitest';
import { appTest, buildTenant, expectGraphQLError, expectPlatformError, type TestApp } from '../support/kit.ts';
import { expectStatus } from '../assertion/helpers.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const P = '/v1/platform';
const SCOPES = ['connect_config:read', 'connect_config:write', 'programs:read'];

async function who(scopes = SCOPES) {
  const { org, token } = await buildTenant(t, [...scopes, 'program_requirements:write']);
  const headers = (brand?: string) => (brand ? { 'service-brand': brand } : undefined);
  return {
    org,
    token,
    get: (brand?: string) => t.http.get(`${P}/connect_config`, { token, headers: headers(brand) }),
    set: (body: unknown, brand?: string) => t.http.post(`${P}/connect_config`, body, { token, headers: headers(brand) }),
    program: async (brand?: string) =>
      expectStatus(
        await t.http.post(`${P}/programs`, { name: 'Partners', grace_period_seconds: 0 }, { token, headers: headers(brand) }),
        201,
      ).id as string,
  };
}

describe('connect configuration', () => {
  test('a brand never configured reads as the defaults; an update replaces the fields sent and null clears', async () => {
    const w = await who();
    const brand = w.org.brands[0]!.id;
    expect(expectStatus(await w.get(), 200)).toEqual({
      object: 'connect_config',
      brand,
      allowed_origins: [],
      default_program: null,
      required_assertions: [],
      display_name: null,
      primary_color: null,
      accent_color: null,
      livemode: true,
      updated_at: null,
    });
    const program = await w.program();
    const set = expectStatus(
      await w.set({
        allowed_origins: ['https://shop.example', 'http://localhost:5173', 'https://partners.example:8443'],
        default_program: program,
        required_assertions: ['verified', 'age_over_18'],
        display_name: 'Acme Partners',
        primary_color: '#112233',
        accent_color: '#ffaa00',
      }),
      200,
    );
    expect(set).toMatchObject({
      allowed_origins: ['https://shop.example', 'http://localhost:5173', 'https://partners.example:8443'],
      default_program: program,
      required_assertions: ['verified', 'age_over_18'],
      display_name: 'Acme Partners',
      primary_color: '#112233',
      accent_color: '#ffaa00',
      updated_at: expect.any(String),
    });
    expect(expectStatus(await w.get(), 200)).toEqual(set);
    const cleared = expectStatus(await w.set({ display_name: null, default_program: null, allowed_origins: [] }), 200);
    expect(cleared).toMatchObject({ display_name: null, default_program: null, allowed_origins: [], primary_color: '#112233' });
    // Per brand: the second brand is still unconfigured.
    expect(expectStatus(await w.get(w.org.brands[1]!.id), 200)).toMatchObject({ brand: w.org.brands[1]!.id, updated_at: null });
  });

  test('allowed_origins are origins: https (http only on loopback), no path, query, fragment, userinfo or wildcard', async () => {
    const w = await who();
    for (const bad of [
      'https://shop.example/',
      'https://shop.example/path',
      'https://shop.example?x=1',
      'https://shop.example#f',
      'https://user:pw@shop.example',
      'http://shop.example',
      'https://*.shop.example',
      'https://Shop.example',
      'https://shop.example:443',
      'shop.example',
      'ftp://shop.example',
      'null',
    ]) {
      expectPlatformError(await w.set({ allowed_origins: ['https://ok.example', bad] }), 400, 'invalid_request', 'allowed_origins.1');
    }
    const res = await w.set({ allowed_origins: ['https://shop.example/'] });
    expect(res.body.error.message).toContain('did you mean https://shop.example?');
    expectPlatformError(
      await w.set({ allowed_origins: ['https://a.example', 'https://a.example'] }),
      400,
      'invalid_request',
      'allowed_origins',
    );
    expectStatus(await w.set({ allowed_origins: ['http://127.0.0.1:8080', 'http://[::1]:3000', 'http://localhost'] }), 200);
  });

  test('other fields are validated with their param; default_program must be a program of the brand', async () => {
    const w = await who();
    expectPlatformError(await w.set({ primary_color: '#12345' }), 400, 'invalid_request', 'primary_color');
    expectPlatformError(await w.set({ accent_color: '#ABCDEF' }), 400, 'invalid_request', 'accent_color');
    expectPlatformError(await w.set({ required_assertions: ['Verified'] }), 400, 'invalid_request', 'required_assertions.0');
    expectPlatformError(await w.set({ display_name: '' }), 400, 'invalid_request', 'display_name');
    expectPlatformError(await w.set({ allowed_origins: null }), 400, 'invalid_request', 'allowed_origins');
    expectPlatformError(await w.set({ colour: '#000000' }), 400, 'invalid_request');
    expectPlatformError(await w.set({ default_program: 'prog_nope' }), 404, 'resource_missing', 'default_program');
    // A program of the other brand is not this brand's.
    const elsewhere = await w.program(w.org.brands[1]!.id);
    expectPlatformError(await w.set({ default_program: elsewhere }), 404, 'resource_missing', 'default_program');
    expect(expectStatus(await w.get(), 200).updated_at).toBeNull();
  });

  test('scopes: connect_config:read reads, connect_config:write writes', async () => {
    const reader = await who(['connect_config:read']);
    expectStatus(await reader.get(), 200);
    expectPlatformError(await reader.set({ display_name: 'x' }), 403, 'missing_scope');
    const writer = await who(['connect_config:write']);
    expectPlatformError(await writer.get(), 403, 'missing_scope');
  });

  test('GraphQL: connectConfig and updateConnectConfig', async () => {
    const w = await who();
    const gql = (query: string) => t.http.post('/graphql', { query }, { token: w.token });
    const res = await gql(
      'mutation { updateConnectConfig(allowedOrigins: ["https://shop.example"], displayName: "Acme", primaryColor: "#000000") { allowedOrigins displayName primaryColor accentColor } }',
    );
    expect(res.body.data.updateConnectConfig).toEqual({
      allowedOrigins: ['https://shop.example'],
      displayName: 'Acme',
      primaryColor: '#000000',
      accentColor: null,
    });
    expect((await gql('{ connectConfig { allowedOrigins displayName } }')).body.data.connectConfig).toEqual({
      allowedOrigins: ['https://shop.example'],
      displayName: 'Acme',
    });
    const err = expectGraphQLError(
      await gql('mutation { updateConnectConfig(allowedOrigins: ["https://a.example/x"]) { brand } }'),
      'invalid_request',
    );
    expect(err.extensions.param).toBe('allowed_origins.0'); // mutations name REST's params, as every GraphQL mutation does
  });
});
