import { randomUUID } from 'node:crypto';
import { describe, expect } from 'vitest';
import { ALL_SCOPES } from '../../src/domain/scope/catalogue.ts';
import { appTest, buildOrg, buildToken, feedEvents, type TestApp } from '../support/kit.ts';

/**
 * Events carry the brand the causing request selected (Service-Brand by slug
 * or id, else the oldest brand), through every append path a request starts:
 * the request's own transaction (distribution, enrollment), the operations
 * engine (deployment, operation, distribution.live), the standing
 * re-evaluation (enrollment.qualified); assertion.* are organization-level.
 */
const test = appTest();
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('event brand', () => {
  test('is the selected brand on events of brand-owned resources, through requests, operations and standing; null on organization-level events', async ({
    app: t,
  }) => {
    const org = await buildOrg(t);
    const [main, second] = org.brands;
    const { secret: token } = await buildToken(t, org, [...ALL_SCOPES]);
    const post = async (path: string, body: unknown, brand: string | undefined, status: number) => {
      const headers: Record<string, string> = { 'idempotency-key': randomUUID() };
      if (brand) headers['Service-Brand'] = brand;
      const res = await t.http.post(path, body, { token, headers });
      expect(res.status, res.text).toBe(status);
      return res.body;
    };
    // Default brand (no header), second by id; the assertion is organization-level.
    const distMain = await post(
      '/v1/platform/distributions',
      { name: 'Main', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] },
      undefined,
      202,
    );
    const distSecond = await post(
      '/v1/platform/distributions',
      { name: 'Second', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] },
      second!.id,
      202,
    );
    const assertion = await post(
      '/v1/platform/assertions',
      { external_user_id: 'u-1', issuer: 'https://idp.example', key: 'verified', value: true },
      second!.slug,
      201,
    );
    const program = await post('/v1/platform/programs', { name: 'P', grace_period_seconds: 0 }, second!.slug, 201);
    await post(`/v1/platform/programs/${program.id}/requirements`, { metric: 'assert:verified', operator: 'exists' }, second!.slug, 201);
    const enrollment = await post('/v1/platform/enrollments', { program: program.id, entity: assertion.entity }, second!.slug, 201);
    await post(`/v1/platform/enrollments/${enrollment.id}/approve`, {}, second!.slug, 200);
    await post(`/v1/platform/enrollments/${enrollment.id}/activate`, {}, second!.slug, 200);
    await t.app.operations.drain();
    await t.app.sequencer.flush();

    const events = await feedEvents(t, token);
    const brandOf = (pred: (e: any) => boolean) => [...new Set(events.filter(pred).map((e) => e.brand))];
    const about = (id: string) => (e: any) => e.subject.id === id || e.data?.object?.distribution === id || e.data?.distribution === id;
    expect(brandOf(about(distMain.distribution.id))).toEqual([main!.id]);
    expect(brandOf(about(distSecond.distribution.id))).toEqual([second!.id]);
    expect(events.filter((e) => e.type.startsWith('deployment.')).length).toBeGreaterThanOrEqual(2);
    expect(brandOf((e) => e.type.startsWith('deployment.') && e.data.object.distribution === distSecond.distribution.id)).toEqual([
      second!.id,
    ]);
    expect(brandOf((e) => e.type.startsWith('operation.') && e.subject.id === distMain.distribution.id)).toEqual([main!.id]);
    expect(brandOf((e) => e.type.startsWith('assertion.'))).toEqual([null]);
    const enrollmentEvents = events.filter((e) => e.subject.id === enrollment.id).map((e) => [e.type, e.brand]);
    expect(enrollmentEvents).toEqual(
      expect.arrayContaining([
        ['enrollment.created', second!.id],
        ['enrollment.activated', second!.id],
        ['enrollment.qualified', second!.id],
      ]),
    );

    // The GraphQL Event type and the single-event read show the same brand.
    const gql = await t.http.graphql(`{ events(first: 100) { edges { node { id brand } } } }`, {}, { token });
    expect(gql.body.errors).toBeUndefined();
    const byId = new Map(events.map((e) => [e.id, e.brand]));
    for (const { node } of gql.body.data.events.edges) expect(node.brand).toBe(byId.get(node.id));
  });

  test('an operator test event takes an optional brand of its organization; anything else is brand_not_found', async ({ app: t }) => {
    const org = await buildOrg(t);
    const other = await buildOrg(t, { brands: ['elsewhere'] });
    const { secret: token } = await buildToken(t, org, ['events:read']);
    const emit = (brand?: string) =>
      t.http.post(
        '/operator/events',
        { organization_id: org.id, type: 'payout.created', subject: { type: 'payout', id: 'po_1' }, brand },
        { token: t.operatorToken },
      );
    expect((await emit(org.brands[1]!.slug)).status).toBe(201);
    expect((await emit()).status).toBe(201);
    for (const bad of [other.brands[0]!.id, other.brands[0]!.slug, 'brand_nowhere']) {
      const res = await emit(bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('brand_not_found');
      expect(res.body.param).toBe('brand');
    }
    await t.app.sequencer.flush();
    expect((await feedEvents(t, token)).map((e) => e.brand)).toEqual([org.brands[1]!.id, null]);
  });
});
