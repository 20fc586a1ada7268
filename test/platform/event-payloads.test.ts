import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { EVENT_TYPE_DEFINITIONS, eventDataJsonSchema } from '../../src/domain/event/payload.ts';
import { PUBLIC_EVENT_TYPES, type PublicEventType } from '../../src/domain/event/types.ts';
import { activeEnrollment, api, setup } from '../assertions/helpers.ts';
import { drain, launch, operationsConfig, sandbox, tenant, topUp, verb } from '../operations/helpers.ts';
import { appTest, buildTenant, emitEvent, feedEvents } from '../support/kit.ts';

/**
 * The payload schemas (src/domain/event/payload.ts) are checked twice: appendEvent and insertEvents refuse data that
 * breaks its type's zod schema in every suite (a producer bug fails the write that made it; hand-made test events,
 * `test: true`, are exempt), and this file drives the producers through real routes and validates what the feed
 * serves against the catalogue's JSON Schema (the other types' producers are exercised by their own suites, under
 * the same append check).
 */
const ajv = new Ajv2020({ allErrors: true });
const validate = (type: string, data: unknown) => {
  const check = ajv.compile(eventDataJsonSchema(type as PublicEventType));
  return check(data) ? null : `${type}: ${ajv.errorsText(check.errors)}`;
};
const test = appTest({ config: operationsConfig() });

describe('event payload schemas', () => {
  test('every public type has a schema, and nothing else has one', () => {
    expect(Object.keys(EVENT_TYPE_DEFINITIONS).sort()).toEqual([...PUBLIC_EVENT_TYPES].sort());
  });

  test('a producer whose payload breaks its type’s schema fails the append loudly (a missing key, an undeclared key)', async ({
    app: t,
  }) => {
    const { org } = await buildTenant(t, ['events:read']);
    const append = (data: Record<string, unknown>) =>
      t.app.deps.db.transaction((tx) =>
        appendEvent(t.app.deps, tx, {
          organizationId: org.id,
          type: 'budget.reserved',
          subject: { type: 'distribution', id: 'dist_1' },
          data,
        }),
      );
    await expect(append({ amount: 10, brand: 'brand_1' })).rejects.toThrow(
      /budget\.reserved data does not match its schema[\s\S]*distribution/,
    );
    await expect(append({ amount: 10, brand: 'brand_1', distribution: 'dist_1', extra: 1 })).rejects.toThrow(/extra/);
    await expect(append({ amount: 10, brand: 'brand_1', distribution: 'dist_1' })).resolves.toMatch(/^evt_/);
    // Internal types have no public schema; operator test events carry whatever the operator gave.
    await t.app.deps.db.transaction((tx) =>
      appendEvent(t.app.deps, tx, { organizationId: org.id, type: 'internal.audit', subject: { type: 'x', id: 'y' }, data: { any: 1 } }),
    );
    await emitEvent(t, org.id, 'distribution.live', { anything: true });
  });

  test('the events real routes emit validate against their catalogued JSON Schema', async ({ app: t }) => {
    // Distributions: launch (reserve, provision, live), pause, resume, cancel (teardown, release).
    const who = await tenant(t);
    await topUp(t, who.brand, 100_000);
    const { distribution } = await launch(t, who, { budget: 5000, deployments: [sandbox({ spend: 1200 }), sandbox()] });
    await drain(t);
    for (const name of ['pause', 'resume', 'cancel'] as const) {
      const res = await verb(t, who, distribution.id, name);
      expect(res.status, res.text).toBe(202);
      await drain(t);
    }
    // Relationships, enrollments, assertions and standing.
    const { token } = await setup(t);
    const a = api(t, token);
    const { entity } = await activeEnrollment(a, { subject: { external_user_id: randomUUID(), issuer: 'https://idp.example' } });
    expect((await a.assert({ entity, key: 'verified' })).status).toBe(201);
    expect((await a.revoke({ entity, key: 'verified' })).status).toBe(201);
    const emitted = [...(await feedEvents(t, who.token)), ...(await feedEvents(t, token))];
    expect(emitted.map((e) => validate(e.type, e.data)).filter(Boolean)).toEqual([]);
    const produced = new Set(emitted.map((e) => e.type));
    for (const type of [
      'distribution.launching',
      'distribution.live',
      'distribution.paused',
      'distribution.resumed',
      'distribution.canceled',
      'deployment.created',
      'deployment.activated',
      'deployment.paused',
      'deployment.cancel_requested',
      'deployment.canceled',
      'budget.reserved',
      'budget.released',
      'operation.succeeded',
      'enrollment.created',
      'enrollment.approved',
      'enrollment.activated',
      'enrollment.qualified',
      'enrollment.disqualified',
      'assertion.created',
      'assertion.revoked',
    ])
      expect(produced.has(type), type).toBe(true);
  });
});
