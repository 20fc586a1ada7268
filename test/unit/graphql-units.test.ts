import { describe, expect } from 'vitest';
import { allUnits, createUnit } from '../support/surface-a-helpers.ts';
import { auditRows, unitCount } from '../support/db-access.ts';
import { appTest, buildTenant, expectGraphQLError } from '../support/kit.ts';

// A small create budget keeps the shared-limit test quick; the default 150 is proven in create-rate-limit.test.ts.
const LIMIT = 5;
const test = appTest({ config: { createRateLimit: LIMIT } });

const ALL = ['units:read', 'units:create', 'units:delete', 'units:publish'];
const UNIT_FIELDS = 'id type caption productionId status publishedAt livemode createdAt updatedAt';
const CREATE = `mutation($type: String!, $caption: String!, $productionId: String, $key: String) {
  createUnit(type: $type, caption: $caption, productionId: $productionId, idempotencyKey: $key) { duplicate unit { ${UNIT_FIELDS} } }
}`;
const LIST = `query($page: Int, $perPage: Int) { units(page: $page, perPage: $perPage) { page perPage hasMore units { ${UNIT_FIELDS} } } }`;
const PUBLISH = `mutation($id: ID!) { publishUnit(unitId: $id) { ${UNIT_FIELDS} } }`;
const DELETE = `mutation($id: ID!) { deleteUnit(unitId: $id) }`;

/** The REST unit in the GraphQL spelling. */
const asGraphQL = (u: any) => ({
  id: u.id,
  type: u.type,
  caption: u.caption,
  productionId: u.production_id,
  status: u.status.toUpperCase(),
  publishedAt: u.published_at,
  livemode: u.livemode,
  createdAt: u.created_at,
  updatedAt: u.updated_at,
});

describe('GraphQL units parity with REST', () => {
  test('createUnit creates a draft, as /units/create does', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    const res = await t.http.graphql(CREATE, { type: 'video', caption: 'hi', productionId: 'prod_9' }, { token });
    expect(res.body.errors, res.text).toBeUndefined();
    const gql = res.body.data.createUnit;
    expect(gql.duplicate).toBe(false);
    expect(gql.unit).toMatchObject({
      type: 'video',
      caption: 'hi',
      productionId: 'prod_9',
      status: 'DRAFT',
      publishedAt: null,
      livemode: true,
    });
    const rest = await allUnits(t, token);
    expect(rest.map(asGraphQL)).toEqual([gql.unit]);
    expect((await auditRows(t, org.id)).map((r) => [r.scope, r.outcome])).toEqual([
      ['units:create', 'allowed'],
      ['units:read', 'allowed'],
    ]);
  });

  test('units lists the same page as /units/list, newest first, with the same limits', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    for (let i = 0; i < 3; i++) await createUnit(t, token, { type: 'post', caption: `n${i}` });
    const rest = await t.http.post('/api/units/list', { page: 1, per_page: 2 }, { token });
    const gql = await t.http.graphql(LIST, { page: 1, perPage: 2 }, { token });
    expect(gql.body.errors, gql.text).toBeUndefined();
    expect(gql.body.data.units).toEqual({ page: 1, perPage: 2, hasMore: true, units: rest.body.units.map(asGraphQL) });
    const defaults = await t.http.graphql(LIST, {}, { token });
    expect(defaults.body.data.units).toMatchObject({ page: 1, perPage: 25, hasMore: false });
    expect(defaults.body.data.units.units.map((u: any) => u.caption)).toEqual(['n2', 'n1', 'n0']);

    const tooMany = await t.http.graphql(LIST, { perPage: 101 }, { token });
    expectGraphQLError(tooMany, 'invalid_request');
    expect(tooMany.body.errors![0]!.extensions.param).toBe('per_page');
    const restTooMany = await t.http.post('/api/units/list', { per_page: 101 }, { token });
    expect([restTooMany.body.error, restTooMany.body.param]).toEqual(['invalid_request', 'per_page']);
  });

  test('publishUnit publishes a draft; deleteUnit on it is unit_not_draft and the unit stays', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    const unit = await createUnit(t, token);
    t.clock.advance(1000);
    const pub = await t.http.graphql(PUBLISH, { id: unit.id }, { token });
    expect(pub.body.errors, pub.text).toBeUndefined();
    expect(pub.body.data.publishUnit).toMatchObject({ id: unit.id, status: 'PUBLISHED', publishedAt: t.clock.now().toISOString() });
    const del = await t.http.graphql(DELETE, { id: unit.id }, { token });
    expectGraphQLError(del, 'unit_not_draft');
    expect(del.body.errors![0]!.extensions.param).toBe('unit_id');
    const rest = await t.http.post('/api/units/delete', { unit_id: unit.id }, { token });
    expect(rest.body.error).toBe('unit_not_draft');
    expect((await allUnits(t, token)).map(asGraphQL)).toEqual([pub.body.data.publishUnit]);
  });

  test('deleteUnit deletes a draft; foreign and malformed ids are resource_missing', async ({ app: t }) => {
    const a = await buildTenant(t, ALL);
    const b = await buildTenant(t, ALL);
    const mine = await createUnit(t, a.token);
    const theirs = await createUnit(t, b.token);
    for (const id of [theirs.id, 'nope', `unit_${'0'.repeat(32)}`]) {
      const gql = await t.http.graphql(DELETE, { id }, { token: a.token });
      expectGraphQLError(gql, 'resource_missing');
      expect((await t.http.post('/api/units/delete', { unit_id: id }, { token: a.token })).body.error).toBe('resource_missing');
      expectGraphQLError(await t.http.graphql(PUBLISH, { id }, { token: a.token }), 'resource_missing');
    }
    expect(await allUnits(t, b.token)).toEqual([theirs]);
    const del = await t.http.graphql(DELETE, { id: mine.id }, { token: a.token });
    expect(del.body).toEqual({ data: { deleteUnit: true } });
    expect(await unitCount(t, a.org.id)).toBe(0);
  });

  test('a token without the scope gets missing_scope with required_scope', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read']);
    for (const [query, vars, scope] of [
      [CREATE, { type: 'video', caption: 'c' }, 'units:create'],
      [LIST, {}, 'units:read'],
      [PUBLISH, { id: 'unit_x' }, 'units:publish'],
      [DELETE, { id: 'unit_x' }, 'units:delete'],
    ] as const) {
      const res = await t.http.graphql(query, vars, { token });
      expect(res.body.errors![0]!.extensions).toMatchObject({ code: 'missing_scope', required_scope: scope });
      expect(res.body.errors![0]!.message).toBe(`missing_scope:${scope}`);
    }
    expect(await unitCount(t, org.id)).toBe(0);
    expect((await auditRows(t, org.id)).map((r) => r.outcome)).toEqual(Array(4).fill('refused'));
  });

  test('idempotency: argument or header key replays with duplicate:true; another body is idempotency_key_reused', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    const vars = { type: 'video', caption: 'once', key: 'gql-1' };
    const first = await t.http.graphql(CREATE, vars, { token });
    const again = await t.http.graphql(CREATE, vars, { token });
    expect(again.body.data.createUnit).toEqual({ ...first.body.data.createUnit, duplicate: true });
    // The REST route shares the key space (same body, same key → the same unit).
    const rest = await t.http.post(
      '/api/units/create',
      { type: 'video', caption: 'once' },
      { token, headers: { 'Idempotency-Key': 'gql-1' } },
    );
    expect(rest.body.duplicate).toBe(true);
    expect(rest.body.unit.id).toBe(first.body.data.createUnit.unit.id);
    const reused = await t.http.graphql(CREATE, { ...vars, caption: 'twice' }, { token });
    expectGraphQLError(reused, 'idempotency_key_reused');

    const viaHeader = await t.http.graphql(CREATE, { type: 'video', caption: 'h' }, { token, headers: { 'Idempotency-Key': 'gql-h' } });
    const viaHeader2 = await t.http.graphql(CREATE, { type: 'video', caption: 'h' }, { token, headers: { 'Idempotency-Key': 'gql-h' } });
    expect(viaHeader2.body.data.createUnit.duplicate).toBe(true);
    expect(viaHeader2.body.data.createUnit.unit.id).toBe(viaHeader.body.data.createUnit.unit.id);
    expect(await unitCount(t, org.id)).toBe(2);

    const bad = await t.http.graphql(CREATE, { type: 'video', caption: 'c', key: 'has space' }, { token });
    expectGraphQLError(bad, 'invalid_request');
    expect(await unitCount(t, org.id)).toBe(2);
  });

  test('bad input is invalid_request, as on REST', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    for (const vars of [
      { type: '', caption: 'c' },
      { type: 'video', caption: 'a\u0000b' },
      { type: 'video', caption: 'c', productionId: '' },
    ]) {
      const res = await t.http.graphql(CREATE, vars, { token });
      expectGraphQLError(res, 'invalid_request');
    }
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('the create rate limit is shared between GraphQL and REST', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    for (let i = 0; i < LIMIT - 1; i++) await createUnit(t, token, { type: 'post', caption: `r${i}` });
    const last = await t.http.graphql(CREATE, { type: 'post', caption: 'g' }, { token });
    expect(last.body.errors, last.text).toBeUndefined();
    const over = await t.http.graphql(CREATE, { type: 'post', caption: 'g2' }, { token });
    expectGraphQLError(over, 'create_rate_limit_exceeded');
    expect((await t.http.post('/api/units/create', { type: 'post', caption: 'r' }, { token })).body.error).toBe(
      'create_rate_limit_exceeded',
    );
    expect(await unitCount(t, org.id)).toBe(LIMIT);
    t.clock.advance(3600_000);
    const later = await t.http.graphql(CREATE, { type: 'post', caption: 'g3' }, { token });
    expect(later.body.errors, later.text).toBeUndefined();
  });

  test('an unauthenticated or revoked caller gets no units', async ({ app: t }) => {
    const res = await t.http.graphql(LIST, {});
    expectGraphQLError(res, 'platform_token_required');
    const bad = await t.http.graphql(LIST, {}, { token: 'sk_platform_live_nope' });
    expectGraphQLError(bad, 'invalid_token');
    expect(bad.body.data ?? null).toBeNull();
  });
});
