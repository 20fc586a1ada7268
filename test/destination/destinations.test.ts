import { describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { signingSecrets } from '../../src/domain/webhook/endpoint.ts';
import { findEndpointById } from '../../src/domain/webhook/store.ts';
import { appTest, buildTenant, expectGraphQLError, expectPlatformError, type TestApp } from '../support/kit.ts';
import { NATS_URL, RABBIT, WRITE, destinations } from './helpers.ts';

// Loopback broker URLs are part of the URL rule under test: accepted on both databases (the PostgreSQL default refuses them).
const test = appTest({ config: { webhook: { ...loadConfig({}).webhook, allowLoopback: true } } });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

describe('create', () => {
  test('answers 201 with the wrapped destination, its URL masked and a whsec_ secret shown once', async () => {
    const { token } = await buildTenant(t, WRITE);
    const res = await destinations(t, token).create({
      ...RABBIT,
      url: 'amqps://user:s3cret@broker.example:5671/vhost',
      description: 'main',
    });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual(['event_destination']);
    const d = res.body.event_destination;
    expect(d).toEqual({
      id: expect.stringMatching(/^ed_[0-9a-f]{32}$/),
      object: 'event_destination',
      type: 'rabbitmq',
      url: 'amqps://user:***@broker.example:5671/vhost',
      exchange: 'events',
      routing_key: '{type}',
      subject: null,
      stream: null,
      max_len: null,
      ca_certificate: null,
      description: 'main',
      enabled_events: [],
      filter: { brands: null, subject_types: null },
      status: 'enabled',
      disabled_reason: null,
      failing_since: null,
      policy: { timeout_ms: null, retry_schedule: null, max_in_flight: null, rate_limit_per_second: null },
      ordering: 'none',
      secret: expect.stringMatching(SECRET),
      rotated_at: null,
      livemode: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const got = await destinations(t, token).get(d.id);
    expect(got.status, got.text).toBe(200);
    const { health, ...again } = got.body.event_destination;
    expect(again).toEqual({ ...d, secret: undefined });
    expect(again).not.toHaveProperty('secret');
    expect(health).toMatchObject({ last_success_at: null, last_failure: null });
    expect(got.text).not.toContain('s3cret');
    const listed = await destinations(t, token).list();
    expect(listed.body.data.map((x: { id: string }) => x.id)).toEqual([d.id]);
    expect(listed.text).not.toContain('s3cret');
    expect(listed.text).not.toContain('whsec_');
  });

  test.each([
    [
      'nats',
      { type: 'nats', url: 'tls://tok3n@nats.example:4222', subject: 'events.{type}' },
      'tls://***@nats.example:4222',
      { subject: 'events.{type}' },
    ],
    [
      'redis',
      { type: 'redis', url: 'rediss://:pw0rd@redis.example:6380/0', stream: 'events', max_len: 1000 },
      'rediss://:***@redis.example:6380/0',
      { stream: 'events', max_len: 1000 },
    ],
    ['redis without credentials', { type: 'redis', url: 'redis://127.0.0.1:6379', stream: 'e' }, 'redis://127.0.0.1:6379', { stream: 'e' }],
  ])('%s: its settings and masked URL', async (_name, body, masked, settings) => {
    const { token } = await buildTenant(t, WRITE);
    const res = await destinations(t, token).create(body);
    expect(res.status, res.text).toBe(201);
    expect(res.body.event_destination).toMatchObject({ url: masked, exchange: null, routing_key: null, ...settings });
    expect(res.text).not.toMatch(/tok3n|pw0rd/);
  });
});

describe('validation', () => {
  test.each([
    [{ ...RABBIT, url: 'not a url' }, 'url'],
    [{ ...RABBIT, url: 'https://broker.example' }, 'url'],
    [{ ...RABBIT, url: 'nats://127.0.0.1:4222' }, 'url'],
    [{ ...RABBIT, url: 'amqp://broker.example' }, 'url'],
    [{ type: 'nats', url: 'nats://nats.example:4222', subject: 'a' }, 'url'],
    [{ type: 'redis', url: 'redis://redis.example', stream: 'a' }, 'url'],
    [{ ...RABBIT, url: 'amqps://10.0.0.8' }, 'url'],
    [{ ...RABBIT, url: 'amqps://169.254.169.254' }, 'url'],
    [{ ...RABBIT, routing_key: '{type}.{tenant}' }, 'routing_key'],
    [{ type: 'nats', url: NATS_URL, subject: 'events.{nope}' }, 'subject'],
    [{ type: 'nats', url: NATS_URL }, 'subject'],
    [{ type: 'redis', url: 'redis://localhost' }, 'stream'],
    [{ ...RABBIT, exchange: undefined }, 'exchange'],
    [{ ...RABBIT, stream: 'x' }, 'stream'],
    [{ type: 'nats', url: NATS_URL, subject: 's', max_len: 5 }, 'max_len'],
    [{ ...RABBIT, ca_certificate: 'not a certificate' }, 'ca_certificate'],
    [{ ...RABBIT, type: 'kafka' }, 'type'],
  ])('%j is 400 invalid_request naming %s', async (body, param) => {
    const { token } = await buildTenant(t, WRITE);
    expectPlatformError(await destinations(t, token).create(body), 400, 'invalid_request', param);
  });

  test('update keeps the rules: scheme of the type, templates, keys of another type; the type is fixed', async () => {
    const { token } = await buildTenant(t, WRITE);
    const api = destinations(t, token);
    const d = (await api.create({ type: 'nats', url: NATS_URL, subject: 'a.{type}' })).body.event_destination;
    expectPlatformError(await api.update(d.id, { url: 'amqps://x.example' }), 400, 'invalid_request', 'url');
    expectPlatformError(await api.update(d.id, { subject: '{x}' }), 400, 'invalid_request', 'subject');
    expectPlatformError(await api.update(d.id, { exchange: 'e' }), 400, 'invalid_request', 'exchange');
    expectPlatformError(await api.update(d.id, { type: 'redis' }), 400, 'invalid_request', 'type');
    const ok = await api.update(d.id, { subject: 'b.{event_id}', url: 'tls://u:p@nats.example:4222', enabled_events: ['payout.created'] });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.event_destination).toMatchObject({
      subject: 'b.{event_id}',
      url: 'tls://u:***@nats.example:4222',
      enabled_events: ['payout.created'],
    });
    expect(ok.body.event_destination).not.toHaveProperty('secret');
  });

  test('the loopback switch off refuses loopback broker hosts, as for webhook URLs', async () => {
    const { token } = await buildTenant(t, WRITE);
    const cfg = t.app.deps.config.webhook;
    cfg.allowLoopback = false;
    try {
      const res = await destinations(t, token).create({ ...RABBIT, url: 'amqp://127.0.0.1:5672' });
      expectPlatformError(res, 400, 'invalid_request', 'url');
      expect(res.body.error.message).toMatch(/loopback/);
    } finally {
      cfg.allowLoopback = true;
    }
  });
});

describe('one table, two resources', () => {
  test('webhook endpoint lists and retrieves never show destinations, nor destination ones endpoints', async () => {
    const { token } = await buildTenant(t, WRITE);
    const we = await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://hooks.example.com/in' }, { token });
    const d = (await destinations(t, token).create(RABBIT)).body.event_destination;
    const endpoints = await t.http.get('/v1/platform/webhook_endpoints', { token });
    expect(endpoints.body.data.map((e: { id: string }) => e.id)).toEqual([we.body.webhook_endpoint.id]);
    expect((await destinations(t, token).list()).body.data.map((e: { id: string }) => e.id)).toEqual([d.id]);
    expectPlatformError(await t.http.get(`/v1/platform/webhook_endpoints/${d.id}`, { token }), 404, 'resource_missing');
    expectPlatformError(await destinations(t, token).get(we.body.webhook_endpoint.id), 404, 'resource_missing');
    expectPlatformError(
      await t.http.post(`/v1/platform/webhook_endpoints/${d.id}/rotate_secret`, undefined, { token }),
      404,
      'resource_missing',
    );
    expectPlatformError(await destinations(t, token).del(we.body.webhook_endpoint.id), 404, 'resource_missing');
  });

  test('destinations count toward the organization endpoint cap', async () => {
    const { token } = await buildTenant(t, WRITE);
    const caps = t.app.deps.config.organizationCaps;
    const was = caps.webhookEndpoints;
    caps.webhookEndpoints = 2;
    try {
      expect((await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://hooks.example.com/in' }, { token })).status).toBe(201);
      const d = await destinations(t, token).create(RABBIT);
      expect(d.status, d.text).toBe(201);
      expectPlatformError(await destinations(t, token).create(RABBIT), 400, 'webhook_endpoint_limit_reached');
      expectPlatformError(
        await t.http.post('/v1/platform/webhook_endpoints', { url: 'https://hooks.example.com/in' }, { token }),
        400,
        'webhook_endpoint_limit_reached',
      );
      expect((await destinations(t, token).del(d.body.event_destination.id)).status).toBe(200);
      expect((await destinations(t, token).create(RABBIT)).status).toBe(201);
    } finally {
      caps.webhookEndpoints = was;
    }
  });

  test('scopes: webhooks:read lists, webhooks:write creates', async () => {
    const reader = await buildTenant(t, ['webhooks:read']);
    expect((await destinations(t, reader.token).list()).status).toBe(200);
    expectPlatformError(await destinations(t, reader.token).create(RABBIT), 403, 'missing_scope');
    const none = await buildTenant(t, ['events:read']);
    expectPlatformError(await destinations(t, none.token).list(), 403, 'missing_scope');
  });
});

describe('rotate_secret and delete', () => {
  test('rotate returns a new secret once and the previous one keeps signing for 24 h', async () => {
    const { token } = await buildTenant(t, WRITE);
    const d = (await destinations(t, token).create(RABBIT)).body.event_destination;
    const res = await destinations(t, token).rotate(d.id);
    expect(res.status, res.text).toBe(200);
    const r = res.body.event_destination;
    expect(r.secret).toMatch(SECRET);
    expect(r.secret).not.toBe(d.secret);
    expect(r.rotated_at).toBe(t.clock.now().toISOString());
    expect((await destinations(t, token).get(d.id)).body.event_destination).not.toHaveProperty('secret');
    const row = (await findEndpointById(t.app.deps.db.prisma, d.id))!;
    expect(signingSecrets(row, t.clock.now())).toEqual([r.secret, d.secret]);
    t.clock.advance(24 * 3600 * 1000);
    expect(signingSecrets(row, t.clock.now())).toEqual([r.secret]);
  });

  test('delete answers the deleted destination; it is then 404', async () => {
    const { token } = await buildTenant(t, WRITE);
    const d = (await destinations(t, token).create(RABBIT)).body.event_destination;
    const res = await destinations(t, token).del(d.id);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ id: d.id, object: 'event_destination', deleted: true });
    expectPlatformError(await destinations(t, token).get(d.id), 404, 'resource_missing');
    expect(await findEndpointById(t.app.deps.db.prisma, d.id)).toBeNull();
  });
});

describe('GraphQL', () => {
  const FIELDS = 'id type url exchange routingKey subject stream maxLen caCertificate status enabledEvents secret createdAt';
  test('create, read, update and delete answer what REST answers, errors with the same code and parameter', async () => {
    const { token } = await buildTenant(t, WRITE);
    const created = await t.http.graphql(
      `mutation($url: String!) { createEventDestination(type: NATS, url: $url, subject: "events.{type}") { ${FIELDS} } }`,
      { url: 'tls://user:pa55@nats.example:4222' },
      { token },
    );
    expect(created.status, created.text).toBe(200);
    const d = created.body.data.createEventDestination;
    expect(d).toMatchObject({
      type: 'NATS',
      url: 'tls://user:***@nats.example:4222',
      subject: 'events.{type}',
      exchange: null,
      status: 'ENABLED',
    });
    expect(d.secret).toMatch(SECRET);
    expect(created.text).not.toContain('pa55');
    const rest = (await destinations(t, token).get(d.id)).body.event_destination;
    const one = await t.http.graphql(
      `query($id: ID!) { eventDestination(id: $id) { ${FIELDS} health { lastSuccessAt } } }`,
      { id: d.id },
      { token },
    );
    expect(one.body.data.eventDestination).toEqual({
      id: rest.id,
      type: 'NATS',
      url: rest.url,
      exchange: null,
      routingKey: null,
      subject: rest.subject,
      stream: null,
      maxLen: null,
      caCertificate: null,
      status: 'ENABLED',
      enabledEvents: [],
      secret: null,
      createdAt: rest.created_at,
      health: { lastSuccessAt: null },
    });
    const node = await t.http.graphql(`query($id: ID!) { node(id: $id) { ... on EventDestination { id type } } }`, { id: d.id }, { token });
    expect(node.body.data.node).toEqual({ id: d.id, type: 'NATS' });
    const list = await t.http.graphql(
      '{ eventDestinations(first: 5) { edges { node { id } } } webhookEndpoints(first: 5) { edges { node { id } } } }',
      {},
      { token },
    );
    expect(list.body.data.eventDestinations.edges.map((e: { node: { id: string } }) => e.node.id)).toEqual([d.id]);
    expect(list.body.data.webhookEndpoints.edges).toEqual([]);
    const bad = await t.http.graphql(
      `mutation($id: ID!) { updateEventDestination(id: $id, subject: "{oops}") { id } }`,
      { id: d.id },
      { token },
    );
    expect(expectGraphQLError(bad, 'invalid_request').extensions.param).toBe('subject');
    const updated = await t.http.graphql(
      `mutation($id: ID!) { updateEventDestination(id: $id, status: DISABLED) { status disabledReason } }`,
      { id: d.id },
      { token },
    );
    expect(updated.body.data.updateEventDestination).toEqual({ status: 'DISABLED', disabledReason: 'MANUAL' });
    const gone = await t.http.graphql(`mutation($id: ID!) { deleteEventDestination(id: $id) { id deleted } }`, { id: d.id }, { token });
    expect(gone.body.data.deleteEventDestination).toEqual({ id: d.id, deleted: true });
    expectPlatformError(await destinations(t, token).get(d.id), 404, 'resource_missing');
  });
});
