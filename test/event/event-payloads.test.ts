import { randomUUID } from 'node:crypto';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect } from 'vitest';
import { appendEvent } from '../../src/domain/event/event.ts';
import { EVENT_TYPE_DEFINITIONS, eventDataJsonSchema } from '../../src/domain/event/payload.ts';
import { PUBLIC_EVENT_TYPES, type PublicEventType } from '../../src/domain/event/types.ts';
import { activeEnrollment, api, setup } from '../assertion/helpers.ts';
import { ALL_SCOPES, deployments, drain, launch, operationsConfig, sandbox, settled, tenant, topUp, verb } from '../operation/helpers.ts';
import { activeIn, nextDay, paidProgram, payoutTenant } from '../payout/helpers.ts';
import { appTest, buildTenant, emitEvent, feedEvents } from '../support/kit.ts';

/**
 * The payload schemas (src/domain/event/payload.ts) are checked twice: appendEvent and insertEvents refuse data that
 * breaks its type's zod schema in every suite (a producer bug fails the write that made it; hand-made test events,
 * `test: true`, are exempt), and this file drives every producer through real routes and validates what the feed
 * serves against the catalogue's JSON Schema with a validator independent of zod.
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

  test('every public type is emitted by real routes, and what the feed serves validates against its catalogued JSON Schema', async ({
    app: t,
  }) => {
    const who = await tenant(t, [...ALL_SCOPES, 'relationships:write']);
    await topUp(t, who.brand, 100_000);
    const drained = async (res: { status: number; text: string }) => {
      expect(res.status, res.text).toBe(202);
      await drain(t);
    };
    // A launch (reserve, provision, live), pause, resume, cancel (teardown, release).
    const { distribution } = await launch(t, who, { budget: 5000, deployments: [sandbox({ spend: 1200 }), sandbox()] });
    await drain(t);
    for (const name of ['pause', 'resume', 'cancel'] as const) await drained(await verb(t, who, distribution.id, name));
    // Completion, failure, drift then a failed teardown.
    await launch(t, who, { budget: 1000, deployments: [sandbox({ complete: true })] });
    await launch(t, who, { budget: 1000, deployments: [sandbox({ outcome: 'fail' })] });
    const drifting = await launch(t, who, { budget: 1000, deployments: [sandbox({ drift: true, cleanup: 'fail' })] });
    await drain(t);
    await drained(await verb(t, who, drifting.distribution.id, 'cancel'));
    // Under review: one rejected by the provider, the other superseded when the launch is canceled.
    const reviewed = await launch(t, who, { budget: 1000, deployments: [sandbox({ outcome: 'review' }), sandbox({ outcome: 'review' })] });
    await drain(t);
    const [rejected] = await deployments(t, who, reviewed.distribution.id);
    const review = { decision: 'reject' };
    expect((await t.http.post(`/operator/sandbox/deployments/${rejected.id}/review`, review, { token: t.operatorToken })).status).toBe(200);
    await drain(t);
    await drained(await verb(t, who, reviewed.distribution.id, 'cancel'));
    // A wallet too short for the launch, then its cancel.
    const poor = await tenant(t);
    const waiting = await launch(t, poor, { budget: 1000, deployments: [sandbox()] });
    await drain(t);
    await drained(await verb(t, poor, waiting.distribution.id, 'cancel'));
    // A relationship's whole lifecycle.
    const rel = await t.http.post('/v1/platform/relationships', { external_user_id: randomUUID(), issuer: 'acme' }, { token: who.token });
    expect(rel.status, rel.text).toBe(201);
    for (const move of ['activate', 'pause', 'resume', 'end'])
      expect((await t.http.post(`/v1/platform/relationships/${rel.body.id}/${move}`, undefined, { token: who.token })).status).toBe(200);
    // Enrollments (one rejected), assertions and standing.
    const { token } = await setup(t);
    const a = api(t, token);
    const { entity, program } = await activeEnrollment(a, { subject: { external_user_id: randomUUID(), issuer: 'https://idp.example' } });
    expect((await a.assert({ entity, key: 'verified' })).status).toBe(201);
    expect((await a.revoke({ entity, key: 'verified' })).status).toBe(201);
    const other = (await a.enroll({ program: program.id, external_user_id: randomUUID(), issuer: 'acme' })).body;
    expect((await a.move(other.id, 'reject')).status).toBe(200);

    // Payouts: a run over a closed day, one payout settled and one failed by the sandbox provider.
    const payee = await payoutTenant(t);
    const paid = await paidProgram(t, payee.api, payee.token, 1000);
    const [kept, refused] = [await activeIn(payee.api, paid.id, 'kept'), await activeIn(payee.api, paid.id, 'refused')];
    const occurred_at = t.clock.now().toISOString();
    const measured = await payee.api.measure([kept, refused].map((e) => ({ entity: e.entity, metric: 'sales', value: 100, occurred_at })));
    expect(measured.status, measured.text).toBe(201);
    await nextDay(t);
    await topUp(t, payee.brand, 1000);
    const config = t.app.deps.config.payouts;
    t.app.deps.config.payouts = { ...config, sandbox: { failEntities: [refused.entity] } };
    try {
      const run = await payee.run({ program: paid.id, period_end: t.clock.now().toISOString() });
      expect(run.status, run.text).toBe(202);
      await drain(t);
      expect(await settled(t, { token: payee.token } as never, run.body.id)).toMatchObject({ status: 'partial' });
    } finally {
      t.app.deps.config.payouts = config;
    }

    const emitted = [who, poor, { token }, payee].map((x) => feedEvents(t, x.token));
    const all = (await Promise.all(emitted)).flat();
    expect(all.map((e) => validate(e.type, e.data)).filter(Boolean)).toEqual([]);
    const produced = new Set(all.map((e) => e.type));
    expect(PUBLIC_EVENT_TYPES.filter((type) => !produced.has(type))).toEqual([]);
  });
});
