import { expect } from 'vitest';
import type { HttpResponse, TestApp } from '../support/kit.ts';
import { countEndpoints } from '../../src/domain/webhook/store.ts';

/** Webhook-endpoint helpers shared by the REST, GraphQL and idempotency suites. */
export const WE = '/v1/platform/webhook_endpoints';
export const WRITE = ['webhooks:read', 'webhooks:write'];

export const key = (k: string) => ({ 'Idempotency-Key': k });

/** REST calls as one token. */
export function rest(t: TestApp, token: string) {
  return {
    create: (body: unknown, headers: Record<string, string> = {}) => t.http.post(WE, body, { token, headers }),
    list: (qs = '', headers: Record<string, string> = {}) => t.http.get(`${WE}${qs}`, { token, headers }),
    get: (id: string) => t.http.get(`${WE}/${id}`, { token }),
    update: (id: string, body: unknown, headers: Record<string, string> = {}) => t.http.post(`${WE}/${id}`, body, { token, headers }),
    rotate: (id: string, headers: Record<string, string> = {}) => t.http.post(`${WE}/${id}/rotate_secret`, undefined, { token, headers }),
    del: (id: string, headers: Record<string, string> = {}) => t.http.request('DELETE', `${WE}/${id}`, undefined, { token, headers }),
  };
}

/** Creates an endpoint and returns it (with its secret). */
export async function createEndpoint(t: TestApp, token: string, body: Record<string, unknown> = {}) {
  const res = await rest(t, token).create({ url: 'https://hooks.example.com/in', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.webhook_endpoint;
}

/** The policy of an endpoint that sets none: every setting is the deployment's. */
export const DEFAULT_POLICY = { timeout_ms: null, retry_schedule: null, max_in_flight: null, rate_limit_per_second: null };
const NO_ATTEMPTS = { attempts: 0, succeeded: 0, success_rate: null, p50_ms: null, p99_ms: null };

/** A retrieved endpoint never delivered to, without its health summary (checked empty): what create and update answered. */
export function retrieved(res: HttpResponse) {
  expect(Object.keys(res.body), res.text).toEqual(['webhook_endpoint']);
  const { health, ...endpoint } = res.body.webhook_endpoint;
  expect(health).toEqual({ last_hour: NO_ATTEMPTS, last_day: NO_ATTEMPTS, last_success_at: null, last_failure: null });
  return endpoint;
}

/** The error body without the per-request id, to compare two errors. */
export const errorShape = (res: HttpResponse) => ({
  status: res.status,
  code: res.body.error.code,
  param: res.body.error.param,
  message: res.body.error.message,
});

export async function endpointCount(t: TestApp, organizationId: string) {
  return countEndpoints(t.app.deps.db.prisma, organizationId);
}

export const ENDPOINT_FIELDS = `id url description enabledEvents status secret rotatedAt livemode createdAt updatedAt`;

export const GQL = {
  create: `mutation($url: String!, $description: String, $enabledEvents: [String!], $idempotencyKey: String) {
    createWebhookEndpoint(url: $url, description: $description, enabledEvents: $enabledEvents, idempotencyKey: $idempotencyKey) { ${ENDPOINT_FIELDS} } }`,
  list: `query($first: Int, $after: String) { webhookEndpoints(first: $first, after: $after) {
    edges { cursor node { ${ENDPOINT_FIELDS} } } pageInfo { hasNextPage endCursor } } }`,
  get: `query($id: ID!) { webhookEndpoint(id: $id) { ${ENDPOINT_FIELDS} } }`,
  update: `mutation($id: ID!, $url: String, $description: String, $enabledEvents: [String!], $status: WebhookEndpointStatus, $idempotencyKey: String) {
    updateWebhookEndpoint(id: $id, url: $url, description: $description, enabledEvents: $enabledEvents, status: $status, idempotencyKey: $idempotencyKey) { ${ENDPOINT_FIELDS} } }`,
  rotate: `mutation($id: ID!, $idempotencyKey: String) { rotateWebhookEndpointSecret(id: $id, idempotencyKey: $idempotencyKey) { ${ENDPOINT_FIELDS} } }`,
  del: `mutation($id: ID!, $idempotencyKey: String) { deleteWebhookEndpoint(id: $id, idempotencyKey: $idempotencyKey) { id deleted } }`,
};

/** The REST endpoint object in the GraphQL spelling (what the GraphQL type exposes). */
export function camel(e: Record<string, any>) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    enabledEvents: e.enabled_events,
    status: e.status.toUpperCase(),
    secret: e.secret ?? null,
    rotatedAt: e.rotated_at,
    livemode: e.livemode,
    createdAt: e.created_at,
    updatedAt: e.updated_at,
  };
}

/** The single GraphQL error of a response: its code (and the data field is null). */
export function gqlCode(res: HttpResponse) {
  expect(res.body.errors, res.text).toHaveLength(1);
  return res.body.errors![0].extensions.code as string;
}
