import SwaggerParser from '@apidevtools/swagger-parser';
import { expect } from 'vitest';
import { appTest } from '../support/kit.ts';

const test = appTest();

test('GET /v1/platform/openapi.json is a valid OpenAPI 3.1 document listing every Surface B route with its scope', async ({ app: t }) => {
  const res = await t.http.get('/v1/platform/openapi.json');
  expect(res.status).toBe(200);
  await SwaggerParser.validate(structuredClone(res.body));
  expect(res.body.openapi).toBe('3.1.0');
  expect(res.body.servers[0].url).toBe(`${t.origin}/v1/platform`);
  const ops = Object.entries(res.body.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
    // A route without a scope names its security scheme instead (partner connect: publishableKey; a preflight: none).
    Object.entries(methods).map(
      ([method, op]) => `${method.toUpperCase()} ${path} ${op['x-required-scope'] ?? Object.keys(op.security?.[0] ?? { none: 1 })[0]}`,
    ),
  );
  expect(ops.sort()).toEqual(
    [
      'DELETE /webhook_endpoints/{id} webhooks:write',
      'GET /events events:read',
      'GET /events/{id} events:read',
      'GET /event_types events:read',
      'GET /event_types/{type} events:read',
      'GET /webhook_endpoints webhooks:read',
      'GET /webhook_endpoints/{id} webhooks:read',
      'POST /webhook_endpoints webhooks:write',
      'POST /webhook_endpoints/{id} webhooks:write',
      'POST /webhook_endpoints/{id}/rotate_secret webhooks:write',
      'GET /webhook_endpoints/{id}/deliveries webhooks:read',
      'POST /webhook_endpoints/{id}/deliveries/{delivery_id}/retry webhooks:write',
      'POST /webhook_endpoints/{id}/replay webhooks:write',
      'POST /webhook_endpoints/{id}/replay/cancel webhooks:write',
      'GET /events/{id}/deliveries webhooks:read',
      'POST /assertions assertions:write',
      'POST /assertions/revoke assertions:write',
      'GET /assertions assertions:read',
      'GET /assertions/{id} assertions:read',
      'POST /programs program_requirements:write',
      'GET /programs programs:read',
      'GET /programs/{id} programs:read',
      'POST /programs/{id}/requirements program_requirements:write',
      'GET /programs/{id}/requirements program_requirements:read',
      'DELETE /programs/{id}/requirements/{requirement} program_requirements:write',
      'POST /programs/{id}/tiers program_tiers:write',
      'GET /programs/{id}/tiers program_tiers:read',
      'POST /programs/{id}/tiers/{tier} program_tiers:write',
      'DELETE /programs/{id}/tiers/{tier} program_tiers:write',
      'POST /enrollments enrollments:write',
      'GET /enrollments enrollments:read',
      'GET /enrollments/{id} enrollments:read',
      'POST /enrollments/{id}/approve enrollments:write',
      'POST /enrollments/{id}/reject enrollments:write',
      'POST /enrollments/{id}/activate enrollments:write',
      'POST /enrollments/{id}/resume enrollments:write',
      'GET /operations operations:read',
      'GET /operations/{id} operations:read',
      'POST /distributions distributions:launch',
      'POST /distributions/validate distributions:write',
      'GET /distributions distributions:read',
      'GET /distributions/{id} distributions:read',
      'POST /distributions/{id}/launch distributions:launch',
      'POST /distributions/{id}/pause distributions:write',
      'POST /distributions/{id}/resume distributions:write',
      'POST /distributions/{id}/cancel distributions:write',
      'GET /deployments deployments:read',
      'GET /deployments/{id} deployments:read',
      'POST /performance/measurements performance:write',
      'GET /performance/rollups performance:read',
      'GET /brands org:read',
      'GET /brands/{id} org:read',
      'GET /entities entities:read',
      'GET /entities/{id} entities:read',
      'POST /relationships relationships:write',
      'GET /relationships relationships:read',
      'GET /relationships/{id} relationships:read',
      'POST /relationships/{id}/activate relationships:write',
      'POST /relationships/{id}/pause relationships:write',
      'POST /relationships/{id}/resume relationships:write',
      'POST /relationships/{id}/end relationships:write',
      'GET /payouts/ledger payouts:read',
      'POST /payouts/ledger/{id}/reverse payouts:write',
      'GET /payouts/exports payouts:read',
      'POST /payouts/runs payouts:write',
      'POST /payouts/runs/{id}/cancel payouts:write',
      'GET /payouts payouts:read',
      'GET /payouts/{id} payouts:read',
      'POST /connections connections:write',
      'GET /connections connections:read',
      'GET /connections/{id} connections:read',
      'POST /connections/{id}/revoke connections:write',
      'GET /connect_config connect_config:read',
      'POST /connect_config connect_config:write',
      'POST /handoff/issuers handoff:write',
      'GET /handoff/issuers handoff:read',
      'GET /handoff/issuers/{id} handoff:read',
      'POST /handoff/issuers/{id}/rotate handoff:write',
      'DELETE /handoff/issuers/{id} handoff:write',
      'POST /connect/join publishableKey',
      'GET /connect/status publishableKey',
      'POST /connect/connect publishableKey',
      'OPTIONS /connect/join none',
      'OPTIONS /connect/status none',
      'OPTIONS /connect/connect none',
    ].sort(),
  );
  const create = res.body.paths['/webhook_endpoints'].post;
  expect(Object.keys(create.requestBody.content['application/json'].schema.properties)).toEqual([
    'url',
    'description',
    'enabled_events',
    'filter',
    'policy',
    'ordering',
  ]);
  expect(create.parameters.map((p: any) => p.name)).toContain('Idempotency-Key');
});
