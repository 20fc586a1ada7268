import { describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { Metrics } from '../../src/metrics.ts';
import { createEndpoint, settle, startReceiver, webhookConfig } from '../webhook/receiver.ts';
import { drain, launch, op, sandbox, tenant, topUp } from '../operation/helpers.ts';
import { appTest, buildTenant, emitEvent, expectErrorResponse, onPostgres, type TestApp } from '../support/kit.ts';
import { subscribeLive, wsClient } from '../support/stream-client.ts';

/** Everything the app logs, one parsed JSON object per line. */
const logged: Record<string, any>[] = [];
let rawLog = '';
const log = createLogger('info', {
  write(line: string) {
    rawLog += line;
    logged.push(JSON.parse(line));
  },
});

const test = appTest({
  config: { metricsListen: { host: '127.0.0.1', port: 0 }, ...webhookConfig({ retryScheduleMs: [0, 60_000] }) },
  log,
});

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of one metric in a text exposition. */
function samples(text: string, name: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1]!, x[2]!]));
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of a metric's samples whose labels include `labels`. */
const metricValue = (text: string, name: string, labels: Record<string, string> = {}) =>
  samples(text, name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

async function scrape(t: TestApp): Promise<string> {
  const res = await t.http.get('/metrics', { token: t.operatorToken });
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text;
}

describe('GET /metrics', () => {
  test('refuses a missing or wrong operator token in the operator envelope, and other methods', async ({ app: t }) => {
    expectErrorResponse(await t.http.get('/metrics'), 401, 'operator_token_required');
    expectErrorResponse(await t.http.get('/metrics', { token: 'op_wrong_0123456789abcdef' }), 401, 'invalid_token');
    const user = (await buildTenant(t, ['events:read'])).token;
    expectErrorResponse(await t.http.get('/metrics', { token: user }), 401, 'invalid_token');
    const post = await t.http.post('/metrics', {}, { token: t.operatorToken });
    expectErrorResponse(post, 405, 'method_not_allowed');
    expect(post.headers.get('allow')).toBe('GET');
  });

  test('REST requests are counted by route template and status, never by raw path; the request log carries org, token id, code and route', async ({
    app: t,
  }) => {
    const tenant = await buildTenant(t, ['webhooks:read']);
    const before = await scrape(t);
    const route = '/v1/platform/webhook_endpoints/:id';
    const counted = (text: string) => metricValue(text, 'platform_http_requests_total', { method: 'GET', route, status: '404' });
    const missing = await t.http.get('/v1/platform/webhook_endpoints/we_x', { token: tenant.token });
    expect(missing.status).toBe(404);
    await t.http.get('/v1/platform/webhook_endpoints/we_y', { token: tenant.token });
    const unknown = await t.http.get('/v1/platform/no_such_thing/abc', { token: tenant.token });
    expect(unknown.status).toBe(404);
    const ok = await t.http.get('/v1/platform/webhook_endpoints', { token: tenant.token });
    expect(ok.status).toBe(200);

    const after = await scrape(t);
    expect(counted(after) - counted(before)).toBe(2);
    expect(
      metricValue(after, 'platform_http_request_duration_seconds_count', { method: 'GET', route, status: '404' }),
    ).toBeGreaterThanOrEqual(2);
    expect(
      metricValue(after, 'platform_http_requests_total', { route: '/v1/platform/webhook_endpoints', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(after, 'platform_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    // No label carries an id or a raw path.
    const routes = new Set(samples(after, 'platform_http_requests_total').map((s) => s.labels.route));
    for (const r of routes) expect(r).not.toMatch(/we_x|we_y|no_such_thing|org_|tok_/);
    expect(routes).toContain('/operator/organizations'); // the tenant was made through the operator route
    await t.http.get('/docs/swagger-ui.css');
    const docs = await scrape(t);
    expect(metricValue(docs, 'platform_http_requests_total', { route: '/docs/:asset', status: '200' })).toBe(1);

    const line = logged.find((l) => l.msg === 'request' && l.request_id === missing.headers.get('request-id'));
    expect(line).toMatchObject({
      level: 30,
      method: 'GET',
      path: '/v1/platform/webhook_endpoints/we_x',
      route,
      status: 404,
      organization_id: tenant.org.id,
      token_id: tenant.tokenId,
      error: 'resource_missing',
    });
    const good = logged.find((l) => l.msg === 'request' && l.request_id === ok.headers.get('request-id'));
    expect(good).toMatchObject({ organization_id: tenant.org.id, token_id: tenant.tokenId, status: 200 });
    expect(good).not.toHaveProperty('error');
    expect(rawLog).not.toContain(tenant.token);
    expect(rawLog).not.toContain(t.operatorToken);
  });

  test('GraphQL is counted by operation type, on the /graphql route; its log line carries the caller', async ({ app: t }) => {
    const tenant = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const before = await scrape(t);
    const query = await t.http.graphql('{ webhookEndpoints(first: 1) { edges { cursor } } }', {}, { token: tenant.token });
    expect(query.status, query.text).toBe(200);
    expect(query.body.errors).toBeUndefined();
    const mutation = await t.http.graphql(
      'mutation($url: String!) { createWebhookEndpoint(url: $url) { id } }',
      { url: 'https://example.com/hook' },
      { token: tenant.token },
    );
    expect(mutation.body.errors, mutation.text).toBeUndefined();
    const refused = await t.http.graphql('{ webhookEndpoints(first: 1) { edges { cursor } } }', {}, { token: 'sk_platform_live_nope' });
    expect(refused.status).toBe(401);
    const after = await scrape(t);
    const delta = (labels: Record<string, string>, name = 'platform_graphql_operations_total') =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(delta({ operation_type: 'query' })).toBe(1);
    expect(delta({ operation_type: 'mutation' })).toBe(1);
    expect(delta({ method: 'POST', route: '/graphql', status: '200' }, 'platform_http_requests_total')).toBe(2);
    expect(delta({ method: 'POST', route: '/graphql', status: '401' }, 'platform_http_requests_total')).toBe(1);
    const line = logged.find((l) => l.msg === 'request' && l.request_id === query.headers.get('request-id'));
    expect(line).toMatchObject({ route: '/graphql', organization_id: tenant.org.id, token_id: tenant.tokenId });
    const refusedLine = logged.find((l) => l.msg === 'request' && l.request_id === refused.headers.get('request-id'));
    expect(refusedLine).toMatchObject({ route: '/graphql', status: 401, error: 'invalid_token' });
  });

  test('webhook attempts by outcome, events appended and sequencing lag move; a failed attempt is logged at warn without secrets', async ({
    app: t,
  }) => {
    const rx = await startReceiver();
    try {
      rx.on('/fail', (_req, res) => {
        res.statusCode = 500;
        res.end('no');
      });
      const tenant = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
      const okEndpoint = await createEndpoint(t, tenant.token, { url: rx.url('/ok') });
      const failing = await createEndpoint(t, tenant.token, { url: rx.url('/fail') });
      const before = await scrape(t);
      const eventId = await emitEvent(t, tenant.org.id);
      await settle(t);
      await rx.waitFor(1, '/fail');
      const after = await scrape(t);
      const delta = (name: string, labels: Record<string, string> = {}) =>
        metricValue(after, name, labels) - metricValue(before, name, labels);
      expect(delta('platform_events_appended_total')).toBeGreaterThanOrEqual(1);
      expect(delta('platform_event_sequencing_lag_seconds_count')).toBeGreaterThanOrEqual(1);
      expect(delta('platform_webhook_attempts_total', { outcome: 'success' })).toBe(1);
      expect(delta('platform_webhook_attempts_total', { outcome: 'http_error' })).toBe(1);
      expect(delta('platform_webhook_attempt_duration_seconds_count', { outcome: 'http_error' })).toBe(1);
      // The failed delivery waits for its retry (a minute away on the test clock): the backlog counts it.
      expect(metricValue(after, 'platform_webhook_delivery_backlog')).toBeGreaterThanOrEqual(1);

      const warn = logged.find((l) => l.msg === 'webhook attempt failed; retrying later' && l.endpoint_id === failing.id);
      expect(warn).toMatchObject({
        level: 40,
        event_id: eventId,
        delivery_id: expect.stringMatching(/^(msg|whd|dlv|delivery)_/),
        status_code: 500,
        error: 'HTTP 500',
        attempt: 1,
        next_attempt_at: expect.any(String),
      });
      expect(logged.some((l) => l.endpoint_id === okEndpoint.id && l.level >= 40)).toBe(false);
      expect(rawLog).not.toContain(failing.secret);
      expect(rawLog).not.toContain(okEndpoint.secret);

      // The last scheduled attempt fails: exhausted, logged at error and counted.
      t.clock.advance(70_000);
      await settle(t);
      await rx.waitFor(2, '/fail');
      const exhausted = logged.find((l) => l.msg.startsWith('webhook delivery exhausted') && l.endpoint_id === failing.id);
      expect(exhausted).toMatchObject({ level: 50, attempt: 2, status_code: 500, event_id: eventId });
      expect(metricValue(await scrape(t), 'platform_webhook_deliveries_exhausted_total')).toBeGreaterThanOrEqual(1);
    } finally {
      await rx.close();
    }
  });

  test('live subscribers, operations by status, the database and the process are on the scrape', async ({ app: t }) => {
    const tenant = await buildTenant(t, ['events:read']);
    const client = wsClient(t, `Bearer ${tenant.token}`);
    const sub = await subscribeLive(t, client);
    try {
      const text = await scrape(t);
      expect(metricValue(text, 'platform_live_subscribers')).toBeGreaterThanOrEqual(1);
      for (const status of ['pending', 'running', 'waiting'])
        expect(samples(text, 'platform_operations').map((s) => s.labels.status)).toContain(status);
      if (onPostgres()) {
        expect(
          samples(text, 'platform_db_pool_connections')
            .map((s) => s.labels.state)
            .sort(),
        ).toEqual(['idle', 'in_use']);
        expect(samples(text, 'platform_db_pool_waiting')).toHaveLength(1);
      } else expect(samples(text, 'platform_db_queue_depth')).toHaveLength(1);
      expect(samples(text, 'process_cpu_user_seconds_total')).toHaveLength(1);
      expect(samples(text, 'nodejs_eventloop_lag_seconds')).toHaveLength(1);
    } finally {
      sub.dispose();
      await client.dispose();
    }
  });

  test('concurrent assertion writes are counted as they share transactions: groups by outcome, the writes they carried', async ({
    app: t,
  }) => {
    const tenant = await buildTenant(t, ['assertions:write']);
    const count = (text: string, name: string, outcome?: string) => metricValue(text, name, outcome ? { outcome } : {});
    const before = await scrape(t);
    const writes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        t.http.post(
          '/v1/platform/assertions',
          { external_user_id: `g-${i}-${Math.random()}`, issuer: 'https://idp.example', key: 'verified' },
          { token: tenant.token },
        ),
      ),
    );
    for (const w of writes) expect(w.status, w.text).toBe(201);
    const after = await scrape(t);
    const groups =
      count(after, 'platform_group_commit_groups_total', 'committed') - count(before, 'platform_group_commit_groups_total', 'committed');
    const members = count(after, 'platform_group_commit_members_total') - count(before, 'platform_group_commit_members_total');
    // Distinct subjects: nothing collides, nothing rolls back; every write was carried once, alone or with others.
    expect(members).toBe(12);
    expect(groups).toBeGreaterThanOrEqual(1);
    expect(groups).toBeLessThanOrEqual(12);
    expect(count(after, 'platform_group_commit_groups_total', 'rolled_back')).toBe(
      count(before, 'platform_group_commit_groups_total', 'rolled_back'),
    );
    expect(count(after, 'platform_group_commit_reruns_total')).toBe(count(before, 'platform_group_commit_reruns_total'));
  });

  test('operation transitions are counted by kind and resulting status, and logged at info', async ({ app: t }) => {
    const who = await tenant(t);
    await topUp(t, who.brand, 10_000);
    const before = await scrape(t);
    const { operation } = await launch(t, who, { budget: 1000, deployments: [sandbox()] });
    await drain(t);
    // The worker runs (this app's default config): wait for the run to settle, woken by its changes.
    const until = Date.now() + 15_000;
    while ((await op(t, who, operation.id)).status !== 'succeeded' && Date.now() < until)
      await t.app.operations.nextChange(operation.id, 500);
    expect((await op(t, who, operation.id)).status).toBe('succeeded');
    const after = await scrape(t);
    const labels = { kind: 'distribution.launch', status: 'succeeded' };
    const name = 'platform_operation_transitions_total';
    expect(metricValue(after, name, labels) - metricValue(before, name, labels)).toBe(1);
    const mine = logged.filter((l) => l.msg === 'operation transition' && l.operation_id === operation.id);
    expect(mine[0]).toMatchObject({ level: 30, kind: 'distribution.launch', to: expect.stringMatching(/^(pending|running)$/) });
    expect(mine[0]).not.toHaveProperty('from'); // enqueued
    // A launch waits for its deployments (child operations) and settles once they have.
    expect(mine.map((l) => l.to)).toContain('waiting');
    expect(mine.at(-1)).toMatchObject({
      level: 30,
      kind: 'distribution.launch',
      from: expect.stringMatching(/^(running|waiting)$/),
      to: 'succeeded',
      attempt: expect.any(Number),
    });
  });

  test('METRICS_LISTEN is host:port (IPv6 in brackets); anything else names the variable', () => {
    expect(loadConfig({ METRICS_LISTEN: '127.0.0.1:9464' }).metricsListen).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(loadConfig({ METRICS_LISTEN: '[::1]:9464' }).metricsListen).toEqual({ host: '::1', port: 9464 });
    expect(loadConfig({}).metricsListen).toBeUndefined();
    for (const bad of ['9464', 'localhost', '127.0.0.1:99999', 'a b:1'])
      expect(() => loadConfig({ METRICS_LISTEN: bad })).toThrow(/METRICS_LISTEN/);
  });

  test('METRICS_LISTEN: a separate listener serves only GET /metrics, without credentials', async ({ app: t }) => {
    const url = t.app.metricsUrl!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(samples(await res.text(), 'platform_http_requests_total').length).toBeGreaterThan(0);
    expect((await fetch(url.replace(/\/metrics$/, '/healthz'))).status).toBe(404);
    expect((await fetch(url, { method: 'POST' })).status).toBe(404);
  });

  test('each app has its own registry: several in one process do not collide', () => {
    const a = new Metrics();
    const b = new Metrics();
    a.httpRequests.labels('GET', '/x', '200').inc();
    expect(a.registry).not.toBe(b.registry);
    expect(b.httpRequests.labels('GET', '/x', '200')).toBeDefined();
  });
});
