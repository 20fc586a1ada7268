import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect } from 'vitest';
import { PUBLIC_EVENT_TYPES } from '../../src/domain/event/types.ts';
import { appTest, buildTenant, expectPlatformError } from '../support/kit.ts';

/** GET /v1/platform/event_types: the catalogue of public event types (src/domain/event/catalogue.ts). */
const test = appTest();

describe('event-type catalogue', () => {
  test('lists every public type once, ordered by type, each with a description, a JSON Schema and an example that validates against it', async ({
    app: t,
  }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const res = await t.http.get('/v1/platform/event_types', { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false });
    const types = res.body.data.map((e: any) => e.type);
    expect(types).toEqual([...PUBLIC_EVENT_TYPES].sort());
    const ajv = new Ajv2020({ allErrors: true });
    for (const entry of res.body.data) {
      expect(Object.keys(entry).sort()).toEqual(['description', 'example', 'object', 'schema', 'type']);
      expect(entry.object).toBe('event_type');
      expect(entry.description.length, entry.type).toBeGreaterThan(10);
      expect(entry.schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      const validate = ajv.compile(entry.schema);
      expect(validate(entry.example), `${entry.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    // A schema refuses what its type never carries (top-level keys are closed).
    const live = res.body.data.find((e: any) => e.type === 'distribution.live');
    expect(ajv.compile(live.schema)({ ...live.example, surprise: 1 })).toBe(false);
  });

  test('retrieves one type; a legacy program_member.* spelling answers its canonical relationship.* type; an unknown type is resource_missing', async ({
    app: t,
  }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const one = await t.http.get('/v1/platform/event_types/enrollment.qualified', { token });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toMatchObject({ object: 'event_type', type: 'enrollment.qualified' });
    expect(one.body.schema.required).toEqual(expect.arrayContaining(['previous_status', 'trigger']));
    const legacy = await t.http.get('/v1/platform/event_types/program_member.created', { token });
    expect(legacy.status, legacy.text).toBe(200);
    expect(legacy.body.type).toBe('relationship.created');
    expectPlatformError(await t.http.get('/v1/platform/event_types/payout.lost', { token }), 404, 'resource_missing');
    expectPlatformError(await t.http.get('/v1/platform/event_types/webhook_endpoint.disabled', { token }), 404, 'resource_missing');
  });

  test('the catalogue is one whole list: paging parameters are refused as unknown (400)', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    expectPlatformError(await t.http.get('/v1/platform/event_types?limit=5', { token }), 400, 'invalid_request');
  });

  test('global, but not public: a token without events:read is missing_scope, no token is 401, on both fronts', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['webhooks:read']);
    expectPlatformError(await t.http.get('/v1/platform/event_types', { token }), 403, 'missing_scope');
    expectPlatformError(await t.http.get('/v1/platform/event_types/assertion.created', { token }), 403, 'missing_scope');
    expect((await t.http.get('/v1/platform/event_types')).status).toBe(401);
    const g = await t.http.graphql('{ eventTypes { type } }', {}, { token });
    expect(g.body.errors[0].extensions.code).toBe('missing_scope');
  });

  test('GraphQL serves the same entries, schema and example as JSON', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const g = await t.http.graphql(
      '{ eventTypes { type description schema example } eventType(type: "program_member.ended") { type schema } }',
      {},
      { token },
    );
    expect(g.body.errors, g.text).toBeUndefined();
    const rest = (await t.http.get('/v1/platform/event_types', { token })).body.data;
    expect(g.body.data.eventTypes).toEqual(rest.map(({ object: _, ...e }: any) => e));
    expect(g.body.data.eventType.type).toBe('relationship.ended');
  });
});
