import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tracing } from '../../src/tracing.ts';
import { createEndpoint, settle, startReceiver, webhookConfig } from '../webhook/receiver.ts';
import { drain, launch, op, sandbox, tenant, topUp } from '../operation/helpers.ts';
import { appTest, buildTenant, emitEvent } from '../support/kit.ts';

/**
 * OpenTelemetry traces (docs/operating/observability.md): with an OTLP
 * endpoint configured, the app posts OTLP/HTTP JSON to it. A loopback
 * receiver collects the spans; `tracing.flush()` returns once they are
 * posted, so no test waits on a timer.
 */
interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status?: { code?: number };
}
const SERVER = 2;
const CLIENT = 3;

const spans: ReceivedSpan[] = [];
const posts: string[] = [];
const collector = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    posts.push(`${req.url} ${req.headers['content-type']}`);
    const body = JSON.parse(Buffer.concat(chunks).toString());
    for (const rs of body.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          const attributes = Object.fromEntries(
            (s.attributes ?? []).map((a: { key: string; value: Record<string, unknown> }) => [a.key, Object.values(a.value)[0]]),
          );
          spans.push({ ...s, parentSpanId: s.parentSpanId || undefined, attributes });
        }
      }
    }
    res.setHeader('content-type', 'application/json');
    res.end('{}');
  });
});
await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
collector.unref(); // open until the process ends: the app, stopped after the last hook, flushes to it
const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;

const test = appTest({ config: { tracesEndpoint: endpoint, ...webhookConfig() } });

const childrenOf = (parent: ReceivedSpan) => spans.filter((s) => s.traceId === parent.traceId && s.parentSpanId === parent.spanId);
/** Span names never carry ids: route templates, operation types and names, statement names, operation kinds. */
const ID = /\b(evt|org|brand|we|msg|op|dist|dep|tok|req)_[0-9a-z]{8,}/;

test('a REST request is a server span named by its route template, a child of the incoming traceparent, with its SQL statements as children', async ({
  app: t,
}) => {
  const who = await buildTenant(t, ['events:read']);
  await emitEvent(t, who.org.id);
  const traceId = randomBytes(16).toString('hex');
  const parentId = randomBytes(8).toString('hex');
  const res = await t.http.get('/v1/platform/events?limit=5', {
    token: who.token,
    headers: { traceparent: `00-${traceId}-${parentId}-01` },
  });
  expect(res.status).toBe(200);
  await tracing.flush();
  expect(posts.length).toBeGreaterThan(0);
  expect(posts.every((p) => p.startsWith('/v1/traces application/json'))).toBe(true);

  const server = spans.find((s) => s.traceId === traceId && s.kind === SERVER);
  expect(server, JSON.stringify(spans.map((s) => s.name))).toBeDefined();
  expect(server!.name).toBe('GET /v1/platform/events');
  expect(server!.parentSpanId).toBe(parentId);
  expect(server!.attributes).toMatchObject({
    'http.request.method': 'GET',
    'http.route': '/v1/platform/events',
    'http.response.status_code': 200,
    'platform.request_id': res.headers.get('request-id'),
    'platform.organization_id': who.org.id,
  });
  const db = childrenOf(server!).find((s) => s.name.startsWith('db event_feed'));
  expect(db, JSON.stringify(childrenOf(server!).map((s) => s.name))).toBeDefined();
  expect(db!.kind).toBe(CLIENT);
  expect(db!.attributes['db.query.text']).toMatch(/^SELECT .* FROM event WHERE organization_id = \$1/);
  expect(JSON.stringify(db!.attributes)).not.toContain(who.org.id); // statement text, never its values

  // An id in the path stays out of the name: the template names the span.
  const missing = await t.http.get(`/v1/platform/events/evt_${'0'.repeat(32)}`, { token: who.token });
  expect(missing.status).toBe(404);
  await tracing.flush();
  const byId = spans.find((s) => s.attributes['platform.request_id'] === missing.headers.get('request-id'));
  expect(byId?.name).toBe('GET /v1/platform/events/:id');
  expect(byId?.attributes['platform.error_code']).toBe('resource_missing');
});

test('a GraphQL operation is a span named by its type and name, a child of the POST /graphql span', async ({ app: t }) => {
  const who = await buildTenant(t, ['events:read']);
  const res = await t.http.request(
    'POST',
    '/graphql',
    { query: 'query Feed { events(first: 2) { edges { node { id } } } }' },
    { token: who.token },
  );
  expect(res.status, res.text).toBe(200);
  await tracing.flush();
  const server = spans.find((s) => s.attributes['platform.request_id'] === res.headers.get('request-id'));
  expect(server?.name).toBe('POST /graphql');
  const operation = childrenOf(server!).find((s) => s.name === 'query Feed');
  expect(operation, JSON.stringify(childrenOf(server!).map((s) => s.name))).toBeDefined();
  expect(operation!.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'Feed' });
  expect(childrenOf(operation!).some((s) => s.name.startsWith('db event_feed'))).toBe(true);
});

test('webhook delivery attempts and operation steps are spans, with their ids as attributes only', async ({ app: t }) => {
  const rx = await startReceiver();
  let hook: { id: string };
  try {
    const who = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    hook = await createEndpoint(t, who.token, { url: rx.url('/hook') });
    await emitEvent(t, who.org.id);
    await settle(t);
    await rx.waitFor(1, '/hook');
  } finally {
    await rx.close();
  }
  const buyer = await tenant(t);
  await topUp(t, buyer.brand, 10_000);
  const { operation } = await launch(t, buyer, { budget: 1000, deployments: [sandbox()] });
  await drain(t);
  const until = Date.now() + 15_000;
  while ((await op(t, buyer, operation.id)).status !== 'succeeded' && Date.now() < until)
    await t.app.operations.nextChange(operation.id, 500);
  await tracing.flush();

  const attempt = spans.find((s) => s.name === 'webhook.attempt' && s.attributes['webhook.endpoint_id'] === hook.id);
  expect(attempt?.kind).toBe(CLIENT);
  expect(attempt?.attributes).toMatchObject({ 'http.response.status_code': 200, 'webhook.outcome': 'success', 'webhook.attempt': 1 });
  const steps = spans.filter((s) => s.attributes['operation.id'] === operation.id);
  expect(steps.length).toBeGreaterThan(0);
  expect(steps.every((s) => s.name === 'operation.step distribution.launch')).toBe(true);
  expect(steps.at(-1)?.attributes['operation.outcome']).toBeDefined();

  expect(spans.filter((s) => ID.test(s.name)).map((s) => s.name)).toEqual([]);
});

describe('tracing off', () => {
  it('no module but src/tracing-otel.ts imports OpenTelemetry, and only src/tracing.ts loads it (dynamically, when configured)', () => {
    const root = resolve(import.meta.dirname, '../..');
    const sources = ['src', 'rest'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.includes('generated'))
        .map((f) => join(dir, f)),
    );
    const importing = sources.filter((f) => /from '@opentelemetry\//.test(readFileSync(join(root, f), 'utf8')));
    const loading = sources.filter((f) => /tracing-otel/.test(readFileSync(join(root, f), 'utf8')));
    expect(importing.map((f) => relative(root, join(root, f)))).toEqual(['src/tracing-otel.ts']);
    expect(loading).toEqual(['src/tracing.ts']);
    expect(readFileSync(join(root, 'src/tracing.ts'), 'utf8')).toContain("await import('./tracing-otel.ts')");
  });
});
