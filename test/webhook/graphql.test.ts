import { afterAll, expect } from 'vitest';
import { appTest, buildTenant, emitEvent, type TestApp } from '../support/kit.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

const test = appTest({ config: webhookConfig({ retryScheduleMs: [0] }) });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
});
afterAll(async () => {
  await rx?.close();
});

const ENDPOINT = `query($id: ID!) { webhookEndpoint(id: $id) {
  webhookDelivery { pending failing succeeded exhausted }
  deliveries(first: 10) { edges { node { id eventId eventType status attempts nextAttemptAt lastStatusCode lastError attemptLog { number statusCode error responseExcerpt durationMs } } } }
} }`;
const RETRY = `mutation($endpointId: ID!, $id: ID!, $key: String) { retryWebhookDelivery(endpointId: $endpointId, id: $id, idempotencyKey: $key) { id status nextAttemptAt } }`;

test('GraphQL shows the delivery status summary and deliveries of an endpoint, and retries like REST', async () => {
  const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  const other = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
  rx.on('/gql-down', (_req, res) => {
    res.statusCode = 500;
    res.end('nope');
  });
  const ok = await createEndpoint(t, token, { url: rx.url('/gql-ok') });
  const down = await createEndpoint(t, token, { url: rx.url('/gql-down') });
  await emitEvent(t, org.id);
  await emitEvent(t, org.id);
  await settle(t);

  const a = await t.http.graphql(ENDPOINT, { id: ok.id }, { token });
  expect(a.body.errors).toBeUndefined();
  expect(a.body.data.webhookEndpoint.webhookDelivery).toEqual({ pending: 0, failing: 0, succeeded: 2, exhausted: 0 });
  const b = await t.http.graphql(ENDPOINT, { id: down.id }, { token });
  expect(b.body.data.webhookEndpoint.webhookDelivery).toEqual({ pending: 0, failing: 0, succeeded: 0, exhausted: 2 });
  const nodes = b.body.data.webhookEndpoint.deliveries.edges.map((e: { node: unknown }) => e.node);
  const rest = await listDeliveries(t, token, down.id);
  expect(nodes.map((n: { id: string }) => n.id)).toEqual(rest.map((d) => d.id)); // same order as REST
  expect(nodes[0]).toMatchObject({
    status: 'EXHAUSTED',
    attempts: 1,
    lastStatusCode: 500,
    attemptLog: [{ number: 1, statusCode: 500, error: 'HTTP 500', responseExcerpt: 'nope' }],
  });

  const r = await t.http.graphql(RETRY, { endpointId: down.id, id: nodes[0].id, key: 'gql-retry' }, { token });
  expect(r.body.errors).toBeUndefined();
  expect(r.body.data.retryWebhookDelivery).toMatchObject({ id: nodes[0].id, status: 'FAILING' });
  // The same key through REST replays the GraphQL mutation's stored response.
  const replay = await t.http.post(
    `/v1/platform/webhook_endpoints/${down.id}/deliveries/${nodes[0].id}/retry`,
    {},
    { token, headers: { 'idempotency-key': 'gql-retry' } },
  );
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  await settle(t);
  expect(rx.for('/gql-down')).toHaveLength(3);

  const cross = await t.http.graphql(RETRY, { endpointId: down.id, id: nodes[0].id }, { token: other.token });
  expect(cross.body.errors[0].extensions.code).toBe('resource_missing');
});
