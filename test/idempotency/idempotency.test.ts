import { describe, expect } from 'vitest';
import { GQL, WRITE, createEndpoint, endpointCount, gqlCode, key, rest } from '../webhook/webhook-endpoints-helpers.ts';
import { appTest, buildTenant, buildToken, expectPlatformError } from '../support/kit.ts';
import { findEndpointById } from '../../src/domain/webhook/store.ts';

const test = appTest();

const DAY = 24 * 3600 * 1000;
const body = { url: 'https://hooks.example.com/in', enabled_events: ['payout.created'] };

describe('Idempotency-Key on Surface B (webhook endpoints)', () => {
  test('a replay returns the stored 201 and body (same id and secret) and creates nothing', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const first = await rest(t, token).create(body, key('create-1'));
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    t.clock.advance(60_000);
    // Same body with keys in another order and another spelling of the same field names.
    const again = await rest(t, token).create({ enabled_events: ['payout.created'], url: body.url }, key('create-1'));
    expect(again.status, again.text).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.text).toBe(first.text); // byte for byte: keys keep their order
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
    expect(await endpointCount(t, org.id)).toBe(1);
    expect((await rest(t, token).list()).body.data).toHaveLength(1);
  });

  test('a GraphQL replay carries Idempotent-Replayed: true too, on both HTTP paths (direct JSON, and through Yoga)', async ({ app: t }) => {
    const { token } = await buildTenant(t, WRITE);
    const mutation = 'mutation { createWebhookEndpoint(url: "https://hooks.example.com/g") { id secret } }';
    for (const [name, headers] of [
      ['direct', {}],
      ['yoga', { 'content-type': 'application/graphql+json' }],
    ] as const) {
      const h = { ...headers, 'idempotency-key': `gql-replay-${name}` };
      const first = await t.http.graphql(mutation, {}, { token, headers: h });
      const again = await t.http.graphql(mutation, {}, { token, headers: h });
      expect(first.body.errors, first.text).toBeUndefined();
      expect(first.headers.get('idempotent-replayed'), name).toBeNull();
      expect(again.headers.get('idempotent-replayed'), name).toBe('true');
      expect(again.body.data).toEqual(first.body.data);
    }
    // The argument key replays the same way.
    const arg = 'mutation { createWebhookEndpoint(url: "https://hooks.example.com/a", idempotencyKey: "gql-arg-1") { id } }';
    await t.http.graphql(arg, {}, { token });
    expect((await t.http.graphql(arg, {}, { token })).headers.get('idempotent-replayed')).toBe('true');
  });

  test('without a key, identical requests create two endpoints', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    await rest(t, token).create(body);
    await rest(t, token).create(body);
    expect(await endpointCount(t, org.id)).toBe(2);
  });

  test('the same key with a different body is 409 idempotency_key_conflict', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    expect((await rest(t, token).create(body, key('k'))).status).toBe(201);
    expectPlatformError(
      await rest(t, token).create({ ...body, description: 'other' }, key('k')),
      409,
      'idempotency_key_conflict',
      'Idempotency-Key',
    );
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('the same key on another operation or another endpoint id is a conflict too', async ({ app: t }) => {
    const { token } = await buildTenant(t, WRITE);
    const a = await createEndpoint(t, token);
    const b = await createEndpoint(t, token);
    expect((await rest(t, token).update(a.id, { status: 'disabled' }, key('u'))).status).toBe(200);
    expectPlatformError(await rest(t, token).update(b.id, { status: 'disabled' }, key('u')), 409, 'idempotency_key_conflict');
    expectPlatformError(await rest(t, token).rotate(a.id, key('u')), 409, 'idempotency_key_conflict');
    expectPlatformError(await rest(t, token).del(a.id, key('u')), 409, 'idempotency_key_conflict');
    expect((await rest(t, token).get(b.id)).body.webhook_endpoint.status).toBe('enabled');
    expect((await rest(t, token).get(a.id)).status).toBe(200);
  });

  test('a replayed rotate_secret returns the same secret and does not rotate again', async ({ app: t }) => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    const r1 = await rest(t, token).rotate(e.id, key('rot'));
    const r2 = await rest(t, token).rotate(e.id, key('rot'));
    expect(r2.status).toBe(200);
    expect(r2.body).toEqual(r1.body);
    const row = await findEndpointById(t.app.deps.db.prisma, e.id);
    expect(row!.secret).toBe(r1.body.webhook_endpoint.secret);
    expect(row!.previousSecret).toBe(e.secret);
  });

  test('10 concurrent creates with one key make exactly one endpoint and all answer 201 with its id', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const results = await Promise.all(Array.from({ length: 10 }, () => rest(t, token).create(body, key('burst'))));
    for (const r of results) expect(r.status, r.text).toBe(201);
    const ids = new Set(results.map((r) => r.body.webhook_endpoint.id));
    const secrets = new Set(results.map((r) => r.body.webhook_endpoint.secret));
    expect(ids.size).toBe(1);
    expect(secrets.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') !== 'true')).toHaveLength(1);
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('keys are per organization', async ({ app: t }) => {
    const a = await buildTenant(t, WRITE);
    const b = await buildTenant(t, WRITE);
    const ra = await rest(t, a.token).create(body, key('shared'));
    const rb = await rest(t, b.token).create({ ...body, description: 'b' }, key('shared'));
    expect(ra.status).toBe(201);
    expect(rb.status, rb.text).toBe(201);
    expect(rb.body.webhook_endpoint.id).not.toBe(ra.body.webhook_endpoint.id);
    expect(await endpointCount(t, a.org.id)).toBe(1);
    expect(await endpointCount(t, b.org.id)).toBe(1);
  });

  test('keys are shared by the tokens of one organization', async ({ app: t }) => {
    const a = await buildTenant(t, WRITE);
    const second = (await buildToken(t, a.org, WRITE)).secret;
    const r1 = await rest(t, a.token).create(body, key('org-wide'));
    const r2 = await rest(t, second).create(body, key('org-wide'));
    expect(r2.body).toEqual(r1.body);
    expect(await endpointCount(t, a.org.id)).toBe(1);
  });

  test('replays for 24 h; afterwards the key starts a new request', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const first = await rest(t, token).create(body, key('day'));
    t.clock.advance(DAY - 1000);
    const within = await rest(t, token).create(body, key('day'));
    expect(within.body.webhook_endpoint.id).toBe(first.body.webhook_endpoint.id);
    expectPlatformError(await rest(t, token).create({ ...body, description: 'x' }, key('day')), 409, 'idempotency_key_conflict');
    t.clock.advance(1000);
    const fresh = await rest(t, token).create({ ...body, description: 'new' }, key('day'));
    expect(fresh.status, fresh.text).toBe(201);
    expect(fresh.body.webhook_endpoint.id).not.toBe(first.body.webhook_endpoint.id);
    expect(fresh.body.webhook_endpoint.description).toBe('new');
    expect(await endpointCount(t, org.id)).toBe(2);
    // The new request owns the key for the next 24 h.
    expect((await rest(t, token).create({ ...body, description: 'new' }, key('day'))).body).toEqual(fresh.body);
  });

  test('a failed request does not consume its key', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    expectPlatformError(await rest(t, token).create({ url: 'http://example.com' }, key('retry')), 400, 'invalid_request', 'url');
    const ok = await rest(t, token).create(body, key('retry'));
    expect(ok.status, ok.text).toBe(201);
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('a key longer than 255 characters or with non-printable characters is 400', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    expect((await rest(t, token).create(body, key('k'.repeat(255)))).status).toBe(201);
    expectPlatformError(await rest(t, token).create(body, key('k'.repeat(256))), 400, 'invalid_request', 'Idempotency-Key');
    expectPlatformError(await rest(t, token).create(body, key('with space')), 400, 'invalid_request', 'Idempotency-Key');
    expect(await endpointCount(t, org.id)).toBe(1);
  });
});

describe('Idempotency on GraphQL mutations', () => {
  test('the Idempotency-Key header replays a single-mutation operation', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const vars = { url: body.url };
    const g1 = await t.http.graphql(GQL.create, vars, { token, headers: key('gql-h') });
    const g2 = await t.http.graphql(GQL.create, vars, { token, headers: key('gql-h') });
    expect(g1.body.errors, g1.text).toBeUndefined();
    expect(g2.body.data.createWebhookEndpoint).toEqual(g1.body.data.createWebhookEndpoint);
    expect(await endpointCount(t, org.id)).toBe(1);
    const conflict = await t.http.graphql(GQL.create, { url: 'https://other.example' }, { token, headers: key('gql-h') });
    expect(gqlCode(conflict)).toBe('idempotency_key_conflict');
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('the idempotencyKey argument overrides the header', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const a = await t.http.graphql(GQL.create, { url: body.url, idempotencyKey: 'arg-1' }, { token, headers: key('hdr') });
    const b = await t.http.graphql(GQL.create, { url: body.url, idempotencyKey: 'arg-2' }, { token, headers: key('hdr') });
    expect(b.body.data.createWebhookEndpoint.id).not.toBe(a.body.data.createWebhookEndpoint.id);
    const c = await t.http.graphql(GQL.create, { url: body.url, idempotencyKey: 'arg-1' }, { token });
    expect(c.body.data.createWebhookEndpoint.id).toBe(a.body.data.createWebhookEndpoint.id);
    expect(await endpointCount(t, org.id)).toBe(2);
    const long = await t.http.graphql(GQL.create, { url: body.url, idempotencyKey: 'k'.repeat(256) }, { token });
    expect(gqlCode(long)).toBe('invalid_request');
    expect(long.body.errors![0].extensions.param).toBe('idempotencyKey');
    const longHeader = await t.http.graphql(GQL.create, { url: body.url }, { token, headers: key('k'.repeat(256)) });
    expect(gqlCode(longHeader)).toBe('invalid_request');
    expect(await endpointCount(t, org.id)).toBe(2);
  });

  test('the header is not applied to several mutations at once: each needs its own idempotencyKey', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const two = `mutation($url: String!) {
      a: createWebhookEndpoint(url: $url) { id }
      b: createWebhookEndpoint(url: $url) { id } }`;
    const res = await t.http.graphql(two, { url: body.url }, { token, headers: key('multi') });
    // Mutations run in order and the first failure nulls the (non-null) data: one error, no effect.
    expect(res.body.errors?.map((e: any) => e.extensions.code)).toEqual(['invalid_request']);
    expect(res.body.errors![0].extensions.param).toBe('Idempotency-Key');
    expect(await endpointCount(t, org.id)).toBe(0);

    const own = `mutation($url: String!) {
      a: createWebhookEndpoint(url: $url, idempotencyKey: "m-a") { id }
      b: createWebhookEndpoint(url: $url, idempotencyKey: "m-b") { id } }`;
    const ok = await t.http.graphql(own, { url: body.url }, { token, headers: key('multi') });
    expect(ok.body.errors, ok.text).toBeUndefined();
    expect(ok.body.data.a.id).not.toBe(ok.body.data.b.id);
    const replay = await t.http.graphql(own, { url: body.url }, { token });
    expect(replay.body.data).toEqual(ok.body.data);
    expect(await endpointCount(t, org.id)).toBe(2);
  });

  test('a key replays across transports: GraphQL first, then REST answers the stored 201', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const g = await t.http.graphql(GQL.create, { url: body.url, enabledEvents: body.enabled_events }, { token, headers: key('x-1') });
    const r = await rest(t, token).create(body, key('x-1'));
    expect(r.status, r.text).toBe(201);
    expect(r.body.webhook_endpoint.id).toBe(g.body.data.createWebhookEndpoint.id);
    expect(r.body.webhook_endpoint.secret).toBe(g.body.data.createWebhookEndpoint.secret);
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('10 concurrent GraphQL creates with one key make one endpoint', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, WRITE);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => t.http.graphql(GQL.create, { url: body.url }, { token, headers: key('g-burst') })),
    );
    const ids = new Set(results.map((r) => r.body.data?.createWebhookEndpoint?.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^we_/);
    expect(await endpointCount(t, org.id)).toBe(1);
  });

  test('a replayed GraphQL delete answers the cached result', async ({ app: t }) => {
    const { token } = await buildTenant(t, WRITE);
    const e = await createEndpoint(t, token);
    const d1 = await t.http.graphql(GQL.del, { id: e.id, idempotencyKey: 'gd' }, { token });
    const d2 = await t.http.graphql(GQL.del, { id: e.id, idempotencyKey: 'gd' }, { token });
    expect(d2.body).toEqual(d1.body);
    expect(d1.body.data.deleteWebhookEndpoint).toEqual({ id: e.id, deleted: true });
    expect(gqlCode(await t.http.graphql(GQL.del, { id: e.id }, { token }))).toBe('resource_missing');
  });
});
