import { describe, expect } from 'vitest';
import { MAX_INPUT_DEPTH } from '../../src/domain/input-guard.ts';
import { wsClient } from '../support/stream-client.ts';
import { appTest, type TestApp, buildTenant, type HttpResponse } from '../support/kit.ts';

/**
 * One input boundary per transport (src/domain/input-guard.ts): text that
 * PostgreSQL cannot store (U+0000, unpaired surrogates) and structures nested
 * deeper than MAX_INPUT_DEPTH are 400 invalid_request naming the field,
 * before any domain code, fingerprint or query sees them.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
let token: string;
let userToken: string;
let orgId: string;
test.beforeAll(async ({ app: t }) => {
  const built = await buildTenant(t, [
    'webhooks:read',
    'webhooks:write',
    'assertions:write',
    'programs:read',
    'program_requirements:write',
    'enrollments:write',
    'events:read',
    'distributions:write',
    'distributions:launch',
    'units:create',
  ]);
  token = built.token;
  userToken = built.org.userToken;
  orgId = built.org.id;
});

const NUL = 'a\u0000b';
const HIGH = 'a\ud800b';
const LOW = '\udc00b';

function expectRefused(res: HttpResponse, param: string | null, surface: 'a' | 'b' = 'b') {
  expect(res.status, res.text).toBe(400);
  if (surface === 'b') expect(res.body.error).toMatchObject({ code: 'invalid_request', param, request_id: res.headers.get('request-id') });
  else expect(res.body).toMatchObject({ error: 'invalid_request', ...(param ? { param } : {}), request_id: res.headers.get('request-id') });
}

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 ? { k: v } : [v];
  return v;
};
/** JSON text of `depth` nested arrays, built without recursion (JSON.stringify itself overflows on 100,000 levels). */
const deepJson = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

describe('unstorable text over REST', () => {
  const post = (path: string, body: unknown, auth = token, headers: Record<string, string> = {}) =>
    t.http.post(path, body, { token: auth, headers });
  const webhook = { url: 'https://example.com/hook' };

  test('NUL and unpaired surrogates in any body string are 400 invalid_request naming the field, on every surface', async ({ app: t }) => {
    for (const bad of [NUL, HIGH, LOW]) {
      expectRefused(await post('/v1/platform/webhook_endpoints', { ...webhook, description: bad }), 'description');
      expectRefused(await post('/v1/platform/webhook_endpoints', { url: `https://example.com/${bad}` }), 'url');
      expectRefused(
        await post('/v1/platform/webhook_endpoints', { ...webhook, enabled_events: ['event.created', 'event.updated', bad] }),
        'enabled_events.2',
      );
      expectRefused(await post('/v1/platform/assertions', { external_user_id: bad, issuer: 'site', key: 'k' }), 'external_user_id');
      expectRefused(await post('/v1/platform/assertions', { external_user_id: 'u1', issuer: bad, key: 'k' }), 'issuer');
      expectRefused(await post('/v1/platform/programs', { name: bad }), 'name');
      expectRefused(await post('/v1/platform/enrollments', { program: `prog_${bad}`, entity: 'ent_1' }), 'program');
      expectRefused(
        await post('/v1/platform/distributions', { name: bad, budget: 0, deployments: [{ provider: 'sandbox', config: { note: bad } }] }),
        'name',
      );
      expectRefused(await post('/api/units/create', { type: 'video', caption: bad }), 'caption', 'a');
      expectRefused(await post('/platform/tokens/create', { name: bad, scopes: ['events:read'] }, userToken), 'name', 'a');
      expectRefused(
        await post('/operator/organizations', { name: bad, slug: 'nul-org', brands: [{ slug: 'main', name: 'Main' }] }, t.operatorToken),
        'name',
        'a',
      );
      expectRefused(
        await post(
          '/operator/events',
          { organization_id: orgId, type: 'assertion.created', subject: { type: 'entity', id: 'ent_1' }, data: { note: bad } },
          t.operatorToken,
        ),
        'data.note',
        'a',
      );
      // A key is text too; the parent names the place without echoing the key.
      expectRefused(
        await post(
          '/operator/events',
          { organization_id: orgId, type: 'assertion.created', subject: { type: 'entity', id: 'ent_1' }, data: { [bad]: 1 } },
          t.operatorToken,
        ),
        'data',
        'a',
      );
    }
    const endpoints = await t.http.get('/v1/platform/webhook_endpoints', { token });
    expect(endpoints.body.data).toEqual([]);
  });

  test('the query string and the Idempotency-Key and Service-Brand headers are checked the same way', async ({ app: t }) => {
    expectRefused(await t.http.get(`/v1/platform/events?starting_after=${encodeURIComponent(NUL)}`, { token }), 'starting_after');
    expectRefused(await t.http.get(`/v1/platform/events?limit=10&limit=${encodeURIComponent(NUL)}`, { token }), 'limit.1');
    // Node's HTTP parser already refuses a NUL in a header; a Latin-1 value is legal and reaches the domain's own rules.
    const brand = await t.http.get('/v1/platform/events', { token, headers: { 'service-brand': 'caf\u00e9' } });
    expect(brand.status, brand.text).toBe(400);
    expect(brand.body.error.code).toBe('brand_not_found');
  });

  test('surrogate pairs (emoji, astral characters) are ordinary text and round-trip', async ({ app: t }) => {
    const text = 'launch 🚀 𝄞 done';
    const res = await post('/v1/platform/webhook_endpoints', { ...webhook, description: text });
    expect(res.status, res.text).toBe(201);
    expect(res.body.webhook_endpoint.description).toBe(text);
    const read = await t.http.get(`/v1/platform/webhook_endpoints/${res.body.webhook_endpoint.id}`, { token });
    expect(read.body.webhook_endpoint?.description ?? read.body.description).toBe(text);
  });
});

describe('nesting depth over REST', () => {
  test(`a body nested deeper than ${MAX_INPUT_DEPTH} levels with an Idempotency-Key is 400 invalid_request, not a stack overflow`, async ({
    app: t,
  }) => {
    for (const depth of [MAX_INPUT_DEPTH, 5_000, 100_000]) {
      const headers = { 'idempotency-key': `deep-${depth}` };
      const b = `{"url":"https://example.com/hook","metadata":${deepJson(depth)}}`;
      expectRefused(await t.http.post('/v1/platform/webhook_endpoints', undefined, { token, headers, raw: b }), 'metadata');
      const a = `{"type":"video","caption":"c","extra":${deepJson(depth)}}`;
      expectRefused(await t.http.post('/api/units/create', undefined, { token, headers, raw: a }), 'extra', 'a');
    }
  });

  test(`exactly ${MAX_INPUT_DEPTH} levels pass the boundary`, async ({ app: t }) => {
    // The body object is level 1, `data` level 2: MAX - 2 more levels inside it.
    const body = {
      organization_id: orgId,
      type: 'assertion.created',
      subject: { type: 'entity', id: 'ent_1' },
      data: { deep: nested(MAX_INPUT_DEPTH - 2) },
    };
    const ok = await t.http.post('/operator/events', body, { token: t.operatorToken });
    expect(ok.status, ok.text).toBe(201);
    const tooDeep = await t.http.post(
      '/operator/events',
      { ...body, data: { deep: nested(MAX_INPUT_DEPTH - 1) } },
      { token: t.operatorToken },
    );
    expectRefused(tooDeep, 'data', 'a');
  });
});

describe('GraphQL', () => {
  const gql = (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    t.http.graphql(query, variables, { token, headers });
  const CREATE =
    'mutation($url: String!, $description: String, $events: [String!]) { createWebhookEndpoint(url: $url, description: $description, enabledEvents: $events) { id description } }';

  function expectGraphQLRefused(res: HttpResponse, param: string | null) {
    expect(res.status, res.text).toBe(400);
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request', param, request_id: res.headers.get('request-id') });
  }

  test('NUL and unpaired surrogates in variables are 400 invalid_request naming the variable path', async ({ app: t }) => {
    for (const bad of [NUL, HIGH, LOW]) {
      expectGraphQLRefused(await gql(CREATE, { url: 'https://example.com/hook', description: bad }), 'description');
      expectGraphQLRefused(await gql(CREATE, { url: 'https://example.com/hook', events: ['event.created', bad] }), 'events.1');
      expectGraphQLRefused(await gql('mutation($n: String!) { createProgram(name: $n) { id } }', { n: bad }), 'n');
      expectGraphQLRefused(
        await gql('mutation($v: JSON) { createAssertion(externalUserId: "u", issuer: "s", key: "k", value: $v) { id } }', {
          v: { note: bad },
        }),
        'v.note',
      );
    }
  });

  test('a \\u0000 escape in a string literal of the document is refused the same way', async ({ app: t }) => {
    expectGraphQLRefused(
      await gql('mutation { createWebhookEndpoint(url: "https://example.com/hook", description: "a\\u0000b") { id } }'),
      'description',
    );
    expectGraphQLRefused(await gql('mutation { createProgram(name: "x\\u{0}") { id } }'), 'name');
    const list = await t.http.get('/v1/platform/webhook_endpoints', { token });
    expect(list.body.data.every((e: any) => !String(e.description ?? '').includes('\u0000'))).toBe(true);
  });

  test('emoji in variables and literals pass', async ({ app: t }) => {
    const res = await gql(CREATE, { url: 'https://example.com/hook', description: 'gql 🚀' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.createWebhookEndpoint.description).toBe('gql 🚀');
    const literal = await gql(
      'mutation { createWebhookEndpoint(url: "https://example.com/hook", description: "lit \\uD83D\\uDE80") { description } }',
    );
    expect(literal.body.data?.createWebhookEndpoint.description, literal.text).toBe('lit 🚀');
  });

  test(`variables nested deeper than ${MAX_INPUT_DEPTH} levels with an Idempotency-Key are 400 invalid_request`, async ({ app: t }) => {
    const q = 'mutation($v: JSON) { createAssertion(externalUserId: "u", issuer: "s", key: "k", value: $v) { id } }';
    for (const depth of [MAX_INPUT_DEPTH + 1, 5_000, 100_000]) {
      const raw = `{"query":${JSON.stringify(q)},"variables":{"v":${deepJson(depth)}}}`;
      const res = await t.http.request('POST', '/graphql', undefined, { token, raw, headers: { 'idempotency-key': `gdeep-${depth}` } });
      expectGraphQLRefused(res, 'v');
    }
  });

  test('over graphql-ws the same plugin refuses variables, and connection params are checked like headers', async ({ app: t }) => {
    const once = async (params: Record<string, unknown>, query: string, variables: Record<string, unknown>) => {
      const client = wsClient(t, `Bearer ${token}`, params);
      try {
        return await new Promise<{ next?: any; error?: any }>((resolve) => {
          client.subscribe(
            { query, variables },
            { next: (next) => resolve({ next }), error: (error) => resolve({ error }), complete: () => resolve({}) },
          );
        });
      } finally {
        await client.dispose();
      }
    };
    const refused = await once({}, 'mutation($n: String!) { createProgram(name: $n) { id } }', { n: NUL });
    expect(refused.next?.errors?.[0]?.extensions, JSON.stringify(refused)).toMatchObject({ code: 'invalid_request', param: 'n' });
    const brand = await once({ 'service-brand': NUL }, '{ viewer { scopes } }', {});
    const errors = brand.error ?? brand.next?.errors;
    expect(errors?.[0]?.extensions, JSON.stringify(brand)).toMatchObject({ code: 'invalid_request', param: 'service-brand' });
  });
});
