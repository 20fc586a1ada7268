import { describe, expect } from 'vitest';
import { signingSecrets } from '../../src/domain/webhook/endpoint.ts';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant, buildToken, expectPlatformError, type TestApp } from '../support/kit.ts';
import { DEFAULT_POLICY, WE, WRITE, createEndpoint, endpointCount, errorShape, key, rest, retrieved } from './webhook-endpoints-helpers.ts';
import { findEndpointById } from '../../src/domain/webhook/store.ts';

const test = appTest({ config: { webhook: { ...loadConfig({}).webhook, allowLoopback: true } } });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
// Loopback URLs are part of the URL rule under test: accepted on both databases (the PostgreSQL default refuses them).
test.beforeAll(({ app }) => void (t = app));

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('create', () => {
  test('answers 201 with the wrapped endpoint and a whsec_ secret of 32 random bytes', async () => {
    const { token } = await buildTenant(t, WRITE);
    const res = await rest(t, token).create({
      url: 'https://hooks.example.com/in',
      description: 'main',
      enabled_events: ['distribution.live'],
    });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual(['webhook_endpoint']);
    const e = res.body.webhook_endpoint;
    expect(e).toEqual({
      id: expect.stringMatching(/^we_[0-9a-f]{32}$/),
      object: 'webhook_endpoint',
      url: 'https://hooks.example.com/in',
      description: 'main',
      enabled_events: ['distribution.live'],
      filter: { brands: null, subject_types: null },
      status: 'enabled',
      disabled_reason: null,
      failing_since: null,
      policy: DEFAULT_POLICY,
      ordering: 'none',
      secret: expect.stringMatching(SECRET),
      rotated_at: null,
      livemode: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect(Buffer.from(e.secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(e.created_at).toBe(t.clock.now().toISOString());
  });

  test('accepts camelCase enabledEvents and snake_case enabled_events, and refuses both at once', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const camel = await createEndpoint(t, token, { enabledEvents: ['payout.created'] });
    expect(camel.enabled_events).toEqual(['payout.created']);
    const snake = await createEndpoint(t, token, { enabled_events: ['payout.failed'] });
    expect(snake.enabled_events).toEqual(['payout.failed']);
    const both = await rest(t, token).create({
      url: 'https://a.example',
      enabledEvents: ['payout.created'],
      enabled_events: ['payout.created'],
    });
    expectPlatformError(both, 400, 'invalid_request', 'enabled_events');
    expect(await endpointCount(t, org.id)).toBe(2);
  });

  test('two secrets are never the same', async () => {
    const { token } = await buildTenant(t, WRITE);
    const a = await createEndpoint(t, token);
    const b = await createEndpoint(t, token);
    expect(a.secret).not.toBe(b.secret);
  });
});

describe('URL rule', () => {
  test.each([
    'https://hooks.example.com/in',
    'http://localhost:8080/hook',
    'http://127.0.0.1/hook',
    'http://[::1]:3000/hook',
    'HTTP://LOCALHOST/hook',
  ])('accepts %s', async (url) => {
    const { token } = await buildTenant(t, WRITE);
    expect((await rest(t, token).create({ url })).status).toBe(201);
  });

  test.each([
    'http://example.com/hook',
    'http://10.0.0.1/hook',
    'http://127.0.0.2/hook',
    'http://localhost.example.com/hook',
    'ftp://example.com/hook',
    'garbage',
    '',
    '/relative/path',
    'https://user:pass@example.com/hook',
    `https://example.com/${'a'.repeat(2100)}`,
    // https, but a private address: the network policy refuses it (test/webhook/ssrf-table.test.ts has the full table).
    'https://10.0.0.1/hook',
  ])('refuses %s with 400 invalid_request on url', async (url) => {
    const { org, token } = await buildTenant(t, WRITE);
    expectPlatformError(await rest(t, token).create({ url }), 400, 'invalid_request', 'url');
    expect(await endpointCount(t, org.id)).toBe(0);
  });

  test('url is required', async () => {
    const { token } = await buildTenant(t, WRITE);
    expectPlatformError(await rest(t, token).create({ description: 'x' }), 400, 'invalid_request', 'url');
  });
});

describe('description and enabled_events', () => {
  test('description: 500 characters ok, 501 refused', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    await createEndpoint(t, token, { description: 'd'.repeat(500) });
    expectPlatformError(
      await rest(t, token).create({ url: 'https://a.example', description: 'd'.repeat(501) }),
      400,
      'invalid_request',
      'description',
    );
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('enabled_events: 100 entries ok, 101 refused', async () => {
    const { token } = await buildTenant(t, WRITE);
    const hundred = Array.from({ length: 100 }, () => 'payout.created');
    expect((await rest(t, token).create({ url: 'https://a.example', enabled_events: hundred })).status).toBe(201);
    expectPlatformError(
      await rest(t, token).create({ url: 'https://a.example', enabled_events: [...hundred, 'payout.created'] }),
      400,
      'invalid_request',
      'enabled_events',
    );
  });

  test('unknown types are 400 invalid_event_type naming every offender', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const res = await rest(t, token).create({
      url: 'https://a.example',
      enabled_events: ['payout.created', 'nope.one', 'distribution.live', 'internal.secret_thing', 'Payout.Created'],
    });
    expectPlatformError(res, 400, 'invalid_event_type', 'enabled_events');
    for (const o of ['nope.one', 'internal.secret_thing', 'Payout.Created']) expect(res.body.error.message).toContain(o);
    expect(res.body.error.message).not.toContain('distribution.live');
    expect(await endpointCount(t, org.id)).toBe(0);
  });

  test('legacy program_member.* spellings are accepted', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token, { enabled_events: ['program_member.created', 'relationship.ended'] });
    expect(e.enabled_events).toEqual(['program_member.created', 'relationship.ended']);
  });

  test('an empty or omitted list means all public types (stored as [])', async () => {
    const { token } = await buildTenant(t, WRITE);
    expect((await createEndpoint(t, token, { enabled_events: [] })).enabled_events).toEqual([]);
    expect((await createEndpoint(t, token)).enabled_events).toEqual([]);
  });
});

describe('list', () => {
  test('is a list envelope, newest first, without secrets, paged backward with starting_after', async () => {
    const { token } = await buildTenant(t, WRITE);
    const made = [];
    for (let i = 0; i < 5; i++) {
      made.push(await createEndpoint(t, token, { description: `n${i}` }));
      t.clock.advance(1000);
    }
    const all = await rest(t, token).list();
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['data', 'has_more', 'object']);
    expect(all.body.object).toBe('list');
    expect(all.body.has_more).toBe(false);
    expect(all.body.data.map((e: any) => e.id)).toEqual(made.map((e) => e.id).reverse());
    for (const e of all.body.data) {
      expect(e).not.toHaveProperty('secret');
      expect(e.object).toBe('webhook_endpoint');
    }
    const { secret: _s, ...withoutSecret } = made[4];
    expect(all.body.data[0]).toEqual(withoutSecret);

    const p1 = await rest(t, token).list('?limit=2');
    expect(p1.body.data.map((e: any) => e.description)).toEqual(['n4', 'n3']);
    expect(p1.body.has_more).toBe(true);
    const p2 = await rest(t, token).list(`?limit=2&starting_after=${p1.body.data[1].id}`);
    expect(p2.body.data.map((e: any) => e.description)).toEqual(['n2', 'n1']);
    expect(p2.body.has_more).toBe(true);
    const p3 = await rest(t, token).list(`?limit=2&startingAfter=${p2.body.data[1].id}`);
    expect(p3.body.data.map((e: any) => e.description)).toEqual(['n0']);
    expect(p3.body.has_more).toBe(false);
  });

  test('defaults to 20 and accepts 1..100', async () => {
    const { token } = await buildTenant(t, WRITE);
    for (let i = 0; i < 21; i++) await createEndpoint(t, token);
    const def = await rest(t, token).list();
    expect(def.body.data).toHaveLength(20);
    expect(def.body.has_more).toBe(true);
    expect((await rest(t, token).list('?limit=1')).body.data).toHaveLength(1);
    const max = await rest(t, token).list('?limit=100');
    expect(max.body.data).toHaveLength(21);
    expect(max.body.has_more).toBe(false);
  });

  test.each(['0', '101', 'abc', '1.5', '-1', ''])('limit=%s is 400 invalid_request on limit', async (limit) => {
    const { token } = await buildTenant(t, WRITE);
    expectPlatformError(await rest(t, token).list(`?limit=${limit}`), 400, 'invalid_request', 'limit');
  });

  test('unknown or repeated query parameters are 400', async () => {
    const { token } = await buildTenant(t, WRITE);
    expectPlatformError(await rest(t, token).list('?colour=red'), 400, 'invalid_request', 'colour');
    expectPlatformError(await rest(t, token).list('?limit=1&limit=2'), 400, 'invalid_request', 'limit');
  });

  test("only shows the caller's organization", async () => {
    const a = await buildTenant(t, WRITE);
    const b = await buildTenant(t, WRITE);
    const mine = await createEndpoint(t, a.token);
    await createEndpoint(t, b.token);
    expect((await rest(t, a.token).list()).body.data.map((e: any) => e.id)).toEqual([mine.id]);
  });
});

describe('organization scoping and ids', () => {
  test("another organization's endpoint is 404 resource_missing, the same body as a nonexistent id, on every operation", async () => {
    const owner = await buildTenant(t, WRITE);
    const other = await buildTenant(t, WRITE);
    const theirs = await createEndpoint(t, owner.token);
    const ghost = `we_${'0'.repeat(32)}`;
    const api = rest(t, other.token);
    const ops = [
      (id: string) => api.get(id),
      (id: string) => api.update(id, { description: 'x' }),
      (id: string) => api.rotate(id),
      (id: string) => api.del(id),
    ];
    for (const op of ops) {
      const a = await op(theirs.id);
      const b = await op(ghost);
      expectPlatformError(a, 404, 'resource_missing', null);
      expectPlatformError(b, 404, 'resource_missing', null);
      expect(errorShape(a)).toEqual({ ...errorShape(b), message: a.body.error.message });
      expect(a.body.error.message.replace(theirs.id, 'ID')).toBe(b.body.error.message.replace(ghost, 'ID'));
    }
    // Nothing changed for the owner.
    const still = await rest(t, owner.token).get(theirs.id);
    expect(still.status).toBe(200);
    expect(still.body.webhook_endpoint.rotated_at).toBeNull();
    expect(still.body.webhook_endpoint.description).toBeNull();
  });

  test.each(['evt_0123456789abcdef0123456789abcdef', 'we_123', 'WE_0123456789ABCDEF0123456789ABCDEF', 'x', '%00'])(
    'id %s is 404',
    async (id) => {
      const { token } = await buildTenant(t, WRITE);
      expectPlatformError(await rest(t, token).get(encodeURIComponent(id)), 404, 'resource_missing');
    },
  );

  test('an unauthenticated request for any id is 401, never 404', async () => {
    const { token } = await buildTenant(t, WRITE);
    const real = await createEndpoint(t, token);
    for (const id of [real.id, `we_${'0'.repeat(32)}`, 'nope']) {
      expectPlatformError(await t.http.get(`${WE}/${id}`), 401, 'platform_token_required');
      expectPlatformError(await t.http.post(`${WE}/${id}`, { status: 'disabled' }), 401, 'platform_token_required');
      expectPlatformError(await t.http.post(`${WE}/${id}/rotate_secret`), 401, 'platform_token_required');
      expectPlatformError(await t.http.delete(`${WE}/${id}`), 401, 'platform_token_required');
      expectPlatformError(await t.http.get(`${WE}/${id}`, { token: 'sk_platform_live_unknown' }), 401, 'invalid_token');
    }
    expectPlatformError(await t.http.get(WE), 401, 'platform_token_required');
    expect((await rest(t, token).get(real.id)).body.webhook_endpoint.status).toBe('enabled');
  });
});

describe('update', () => {
  test('leaves omitted fields untouched and changes the given ones', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token, { description: 'keep', enabled_events: ['payout.created'] });
    t.clock.advance(5000);
    const res = await rest(t, token).update(e.id, { status: 'disabled' });
    expect(res.status, res.text).toBe(200);
    const { secret: _s, ...before } = e;
    expect(res.body).toEqual({
      webhook_endpoint: { ...before, status: 'disabled', disabled_reason: 'manual', updated_at: t.clock.now().toISOString() },
    });

    const back = await rest(t, token).update(e.id, { status: 'enabled', enabledEvents: ['payout.settled', 'program_member.ended'] });
    expect(back.body.webhook_endpoint).toMatchObject({
      status: 'enabled',
      disabled_reason: null,
      enabled_events: ['payout.settled', 'program_member.ended'],
      description: 'keep',
      url: e.url,
    });

    const moved = await rest(t, token).update(e.id, { url: 'http://localhost:9000/x', description: 'new' });
    expect(moved.body.webhook_endpoint).toMatchObject({ url: 'http://localhost:9000/x', description: 'new', status: 'enabled' });

    const cleared = await rest(t, token).update(e.id, { description: null, enabled_events: [] });
    expect(cleared.body.webhook_endpoint).toMatchObject({ description: null, enabled_events: [], url: 'http://localhost:9000/x' });

    const empty = await rest(t, token).update(e.id, {});
    expect(empty.status).toBe(200);
    expect(empty.body.webhook_endpoint).toMatchObject({
      description: null,
      enabled_events: [],
      url: 'http://localhost:9000/x',
      status: 'enabled',
    });
    expect(retrieved(await rest(t, token).get(e.id))).toEqual(empty.body.webhook_endpoint);
  });

  test('validates url, description, enabled_events and status like create, and changes nothing on error', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    const api = rest(t, token);
    expectPlatformError(await api.update(e.id, { url: 'http://example.com' }), 400, 'invalid_request', 'url');
    expectPlatformError(await api.update(e.id, { description: 'x'.repeat(501) }), 400, 'invalid_request', 'description');
    expectPlatformError(
      await api.update(e.id, { enabled_events: Array(101).fill('payout.created') }),
      400,
      'invalid_request',
      'enabled_events',
    );
    const bad = await api.update(e.id, { enabled_events: ['x.y', 'payout.created', 'z.w'] });
    expectPlatformError(bad, 400, 'invalid_event_type', 'enabled_events');
    expect(bad.body.error.message).toContain('x.y');
    expect(bad.body.error.message).toContain('z.w');
    expectPlatformError(await api.update(e.id, { status: 'paused' }), 400, 'invalid_request', 'status');
    expectPlatformError(await api.update(e.id, { status: 'disabled', secret: 'whsec_mine' }), 400, 'invalid_request', 'secret');
    const { secret: _s, ...unchanged } = e;
    expect(retrieved(await api.get(e.id))).toEqual(unchanged);
  });
});

describe('rotate_secret', () => {
  test('returns a new secret once, sets rotated_at, keeps the previous one for 24 h', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    t.clock.advance(60_000);
    const rotatedAt = t.clock.now();
    const res = await rest(t, token).rotate(e.id);
    expect(res.status, res.text).toBe(200);
    const r = res.body.webhook_endpoint;
    expect(r.secret).toMatch(SECRET);
    expect(r.secret).not.toBe(e.secret);
    expect(r.rotated_at).toBe(rotatedAt.toISOString());
    expect(r.id).toBe(e.id);

    const got = await rest(t, token).get(e.id);
    expect(got.body.webhook_endpoint).not.toHaveProperty('secret');
    expect(got.body.webhook_endpoint.rotated_at).toBe(rotatedAt.toISOString());

    const row = (await findEndpointById(t.app.deps.db.prisma, e.id))!;
    expect(row.secret).toBe(r.secret);
    expect(row.previousSecret).toBe(e.secret);
    expect(row.previousSecretExpiresAt!.getTime()).toBe(rotatedAt.getTime() + 24 * 3600 * 1000);
    expect(signingSecrets(row, t.clock.now())).toEqual([r.secret, e.secret]);
    t.clock.advance(24 * 3600 * 1000 - 1);
    expect(signingSecrets(row, t.clock.now())).toEqual([r.secret, e.secret]);
    t.clock.advance(1);
    expect(signingSecrets(row, t.clock.now())).toEqual([r.secret]);
  });

  test('a second rotation replaces the previous secret with the one it displaces', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    const first = (await rest(t, token).rotate(e.id)).body.webhook_endpoint.secret;
    const second = (await rest(t, token).rotate(e.id)).body.webhook_endpoint.secret;
    const row = (await findEndpointById(t.app.deps.db.prisma, e.id))!;
    expect(signingSecrets(row, t.clock.now())).toEqual([second, first]);
  });

  test('refuses a body with fields', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    expectPlatformError(
      await t.http.post(`${WE}/${e.id}/rotate_secret`, { secret: 'whsec_x' }, { token }),
      400,
      'invalid_request',
      'secret',
    );
    expect((await rest(t, token).get(e.id)).body.webhook_endpoint.rotated_at).toBeNull();
  });
});

describe('delete', () => {
  test('answers {id, object, deleted:true}; retrieve afterwards is 404; the row and secrets are gone', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    await rest(t, token).rotate(e.id);
    const res = await rest(t, token).del(e.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ id: e.id, object: 'webhook_endpoint', deleted: true });
    expectPlatformError(await rest(t, token).get(e.id), 404, 'resource_missing');
    expect(await endpointCount(t, org.id)).toBe(0);
  });

  test('a replayed delete returns the cached 200 though the row is gone; a fresh delete is 404', async () => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    const first = await rest(t, token).del(e.id, key('del-1'));
    expect(first.status).toBe(200);
    const replay = await rest(t, token).del(e.id, key('del-1'));
    expect(replay.status, replay.text).toBe(200);
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectPlatformError(await rest(t, token).del(e.id, key('del-2')), 404, 'resource_missing');
    expectPlatformError(await rest(t, token).del(e.id), 404, 'resource_missing');
  });
});

describe('scopes and brand', () => {
  test('webhooks:read lists and retrieves; every write needs webhooks:write', async () => {
    const writer = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, writer.token);
    const reader = (await buildToken(t, writer.org, ['webhooks:read'])).secret;
    const api = rest(t, reader);
    expect((await api.list()).status).toBe(200);
    expect((await api.get(e.id)).status).toBe(200);
    for (const res of [
      await api.create({ url: 'https://a.example' }),
      await api.update(e.id, { status: 'disabled' }),
      await api.rotate(e.id),
      await api.del(e.id),
      await api.update('we_nope', { status: 'disabled' }),
    ]) {
      expectPlatformError(res, 403, 'missing_scope', null);
      expect(res.body.error.message).toBe('missing_scope:webhooks:write');
    }
    expect(await endpointCount(t, writer.org.id)).toBe(1);
    expect((await api.get(e.id)).body.webhook_endpoint.status).toBe('enabled');

    const writeOnly = (await buildToken(t, writer.org, ['webhooks:write'])).secret;
    for (const res of [await rest(t, writeOnly).list(), await rest(t, writeOnly).get(e.id)]) {
      expectPlatformError(res, 403, 'missing_scope', null);
      expect(res.body.error.message).toBe('missing_scope:webhooks:read');
    }
    const unrelated = (await buildToken(t, writer.org, ['events:read'])).secret;
    expectPlatformError(await rest(t, unrelated).create({ url: 'https://a.example' }), 403, 'missing_scope');
  });

  test('the Service-Brand header does not scope endpoints', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const [main, second] = org.brands;
    const viaMain = (await rest(t, token).create({ url: 'https://a.example' }, { 'Service-Brand': main!.slug })).body.webhook_endpoint;
    const viaSecond = (await rest(t, token).create({ url: 'https://b.example' }, { 'Service-Brand': second!.id })).body.webhook_endpoint;
    const ids = (b: string) =>
      rest(t, token)
        .list('', { 'Service-Brand': b })
        .then((r) => r.body.data.map((e: any) => e.id));
    expect(await ids(main!.id)).toEqual([viaSecond.id, viaMain.id]);
    expect(await ids(second!.slug)).toEqual([viaSecond.id, viaMain.id]);
    expect(await ids('')).toEqual([viaSecond.id, viaMain.id]);
  });
});

describe('bad input', () => {
  test('malformed JSON, non-object bodies, wrong types and unknown fields are 400 and create nothing', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const raw = (body: string) => t.http.post(WE, undefined, { token, raw: body });
    expectPlatformError(await raw('{"url": "https://a.example"'), 400, 'invalid_request');
    expectPlatformError(await raw('[{"url": "https://a.example"}]'), 400, 'invalid_request');
    expectPlatformError(await raw('"https://a.example"'), 400, 'invalid_request');
    expectPlatformError(await raw('null'), 400, 'invalid_request');
    expectPlatformError(await raw('42'), 400, 'invalid_request');
    const api = rest(t, token);
    expectPlatformError(await api.create({ url: 42 }), 400, 'invalid_request', 'url');
    expectPlatformError(await api.create({ url: ['https://a.example'] }), 400, 'invalid_request', 'url');
    expectPlatformError(await api.create({ url: 'https://a.example', description: 5 }), 400, 'invalid_request', 'description');
    expectPlatformError(
      await api.create({ url: 'https://a.example', enabled_events: 'payout.created' }),
      400,
      'invalid_request',
      'enabled_events',
    );
    expectPlatformError(await api.create({ url: 'https://a.example', enabled_events: [1] }), 400, 'invalid_request', 'enabled_events.0');
    expectPlatformError(await api.create({ url: 'https://a.example', status: 'disabled' }), 400, 'invalid_request', 'status');
    expectPlatformError(await api.create({ url: 'https://a.example', secret: 'whsec_mine' }), 400, 'invalid_request', 'secret');
    expectPlatformError(await api.create({ url: 'https://a.example', livemode: false }), 400, 'invalid_request', 'livemode');
    expect(await endpointCount(t, org.id)).toBe(0);
  });

  test('a non-JSON content type is refused', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const res = await t.http.post(WE, undefined, {
      token,
      raw: 'url=https://a.example',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.body.error.request_id).toBe(res.headers.get('request-id'));
    expect(await endpointCount(t, org.id)).toBe(0);
  });

  test('unknown query parameters are 400 on every route, and nothing changes', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    expectPlatformError(await t.http.post(`${WE}?debug=1`, { url: 'https://a.example' }, { token }), 400, 'invalid_request', 'debug');
    expectPlatformError(await t.http.get(`${WE}/${e.id}?expand=secret`, { token }), 400, 'invalid_request', 'expand');
    expectPlatformError(await t.http.post(`${WE}/${e.id}?force=1`, { status: 'disabled' }, { token }), 400, 'invalid_request', 'force');
    expectPlatformError(await t.http.post(`${WE}/${e.id}/rotate_secret?now=1`, undefined, { token }), 400, 'invalid_request', 'now');
    expectPlatformError(await t.http.delete(`${WE}/${e.id}?force=1`, { token }), 400, 'invalid_request', 'force');
    expect(await endpointCount(t, org.id)).toBe(1);
    const { secret: _s, ...unchanged } = e;
    expect(retrieved(await rest(t, token).get(e.id))).toEqual(unchanged);
  });

  test('a huge body is refused without a 500', async () => {
    const { org, token } = await buildTenant(t, WRITE);
    const res = await rest(t, token).create({ url: 'https://a.example', description: 'x'.repeat(2_000_000) });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(await endpointCount(t, org.id)).toBe(0);
  });
});
