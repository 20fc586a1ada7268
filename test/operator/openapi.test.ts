import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect } from 'vitest';
import { appTest, type TestApp } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let doc: any;
test.beforeAll(async ({ app }) => {
  t = app;
  const res = await t.http.get('/api/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});

const SURFACE_A = [
  ['get', '/scopes'],
  ['post', '/scopes_exec'],
  ['post', '/smoke'],
  ['post', '/units/list'],
  ['post', '/units/create'],
  ['post', '/units/delete'],
] as const;

describe('openapi', () => {
  test('GET /api/openapi.json is a valid OpenAPI 3.1 document for spec version 0.3.3', async () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.version).toBe('0.3.3');
    expect(doc.servers).toEqual([{ url: `${t.origin}/api`, 'x-internal': true }]);
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  test('lists every Surface A route with its request schema', () => {
    for (const [method, path] of SURFACE_A) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.operationId).toEqual(expect.any(String));
      expect(op.responses['200']?.content?.['application/json']?.schema, `${method} ${path}`).toBeDefined();
      if (method === 'post') {
        const schema = op.requestBody?.content?.['application/json']?.schema;
        expect(schema?.type, `${method} ${path} request schema`).toBe('object');
      }
    }
    const exec = doc.paths['/scopes_exec'].post;
    expect(exec.requestBody.required).toBe(true);
    const execBody = exec.requestBody.content['application/json'].schema;
    expect(execBody.required).toContain('scope');
    expect(execBody.properties.token).toMatchObject({ type: 'string', deprecated: true });
    expect(execBody.properties.idempotency_key).toMatchObject({ type: 'string', deprecated: true });
    expect(exec.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
    const create = doc.paths['/units/create'].post;
    expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['type', 'caption', 'production_id']),
    );
    expect(create.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header' })]));
    const list = doc.paths['/units/list'].post.requestBody.content['application/json'].schema;
    expect(list.properties.per_page).toMatchObject({ type: 'integer', maximum: 100 });
    expect(doc.paths['/units/delete'].post.requestBody.content['application/json'].schema.required).toEqual(['unit_id']);
  });

  test('protected routes declare the platform-token bearer scheme and their required scope; /scopes needs none', () => {
    expect(doc.components.securitySchemes.platformToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/scopes'].get.security).toEqual([]);
    for (const [method, path] of SURFACE_A.slice(1)) expect(doc.paths[path][method].security).toEqual([{ platformToken: [] }]);
    expect(doc.paths['/units/list'].post['x-required-scope']).toBe('units:read');
    expect(doc.paths['/units/create'].post['x-required-scope']).toBe('units:create');
    expect(doc.paths['/units/delete'].post['x-required-scope']).toBe('units:delete');
  });

  test('error responses reference the ErrorResponse schema', () => {
    const err = doc.components.schemas.Error;
    expect(err.type).toBe('object');
    expect(Object.keys(err.properties)).toEqual(expect.arrayContaining(['error', 'message', 'request_id']));
    expect(doc.paths['/units/create'].post.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
    expect(doc.components.responses.Unauthorized.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.responses.Unauthorized.headers['Request-Id']).toEqual({ $ref: '#/components/headers/RequestId' });
  });
});

describe('dashboard and operations document', () => {
  test('GET /openapi.json is a valid OpenAPI 3.1 document for token management, the operator interface, health and the documents', async () => {
    const res = await t.http.get('/openapi.json');
    expect(res.status).toBe(200);
    await expect(SwaggerParser.validate(structuredClone(res.body))).resolves.toBeTruthy();
    expect(res.body.servers).toEqual([{ url: t.origin, 'x-internal': true }]);
    const ops = operations(res.body).map(([method, path, op]) => `${method} ${path} ${JSON.stringify(op.security)}`);
    expect(ops.sort()).toEqual(
      [
        'GET /platform/tokens [{"userToken":[]}]',
        'POST /platform/tokens/create [{"userToken":[]}]',
        'POST /platform/tokens/revoke [{"userToken":[]}]',
        'POST /platform/tokens/rotate [{"userToken":[]}]',
        'POST /operator/organizations [{"operatorToken":[]}]',
        'GET /operator/organizations [{"operatorToken":[]}]',
        'GET /operator/organizations/{id} [{"operatorToken":[]}]',
        'GET /operator/kill_switch [{"operatorToken":[]}]',
        'POST /operator/kill_switch [{"operatorToken":[]}]',
        'POST /operator/events [{"operatorToken":[]}]',
        'GET /operator/brands/{brand}/wallet [{"operatorToken":[]}]',
        'POST /operator/brands/{brand}/wallet/top_up [{"operatorToken":[]}]',
        ...['review', 'cleanup'].map((n) => `POST /operator/sandbox/deployments/{id}/${n} [{"operatorToken":[]}]`),
        'GET /operator/webhook_endpoints/{id}/health_events [{"operatorToken":[]}]',
        'GET /healthz []',
        'GET /readyz []',
        'GET /openapi.json []',
        'GET /api/openapi.json []',
        'GET /v1/platform/openapi.json []',
      ].sort(),
    );
    const ready = res.body.paths['/readyz'].get.responses;
    expect(ready['503'].content['application/json'].schema.properties).toHaveProperty('database');
    const create = res.body.paths['/platform/tokens/create'].post;
    expect(create.requestBody.content['application/json'].schema.properties).toHaveProperty('scopes');
    expect(create.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
    // The operator routes have no bucket: their error answers carry no RateLimit-*.
    const operator = res.body.paths['/operator/kill_switch'].get.responses['401'];
    expect(operator).toEqual({ $ref: '#/components/responses/UnauthorizedUnmetered' });
    expect(Object.keys(res.body.components.responses.UnauthorizedUnmetered.headers)).toEqual(['Request-Id']);
  });

  test('every route the server mounts is in exactly one OpenAPI document, under that document’s server URL', async () => {
    const documented: string[] = [];
    for (const path of ['/openapi.json', '/api/openapi.json', '/v1/platform/openapi.json']) {
      const doc = (await t.http.get(path)).body;
      const base = new URL(doc.servers[0].url).pathname.replace(/\/$/, '');
      for (const [method, p] of operations(doc)) documented.push(`${method} ${base}${p.replace(/\{(\w+)\}/g, ':$1')}`);
    }
    expect(new Set(documented).size, 'a route documented twice').toBe(documented.length);
    const mounted = mountedRoutes(t);
    expect(mounted.length).toBeGreaterThan(50);
    expect(documented.sort()).toEqual(mounted.sort());
  });
});

function operations(doc: any): [string, string, any][] {
  return Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => [method.toUpperCase(), path, op] as [string, string, any]),
  );
}

/** `METHOD /path` for every route on the app's Koa routers (not the 405 and 404 fallbacks, nor HEAD twins of GET). */
function mountedRoutes(t: TestApp): string[] {
  const out: string[] = [];
  for (const mw of t.app.koa.middleware as { router?: { stack: { path: string; methods: string[] }[] } }[]) {
    for (const layer of mw.router?.stack ?? []) {
      const methods = layer.methods.filter((m) => m !== 'HEAD');
      if (methods.length !== 1) continue; // router.use middleware (none) or a router.all fallback (every method)
      out.push(`${methods[0]} ${layer.path}`);
    }
  }
  return out;
}
