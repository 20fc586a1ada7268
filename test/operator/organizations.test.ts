import { describe, expect } from 'vitest';
import { appTest, buildOrg, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

describe('operator: list and retrieve organizations', () => {
  test('GET /operator/organizations/:id is the organization with its brands, oldest first', async ({ app: t }) => {
    const org = await buildOrg(t, { brands: ['zeta', 'alpha'] });
    const res = await t.http.get(`/operator/organizations/${org.id}`, { token: t.operatorToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: org.id,
      slug: org.slug,
      name: `Org ${org.slug}`,
      created_at: expect.any(String),
      brands: org.brands.map((b) => ({ id: b.id, slug: b.slug, name: b.name, created_at: expect.any(String) })),
    });
    expect(res.body.brands.map((b: any) => b.slug)).toEqual(['zeta', 'alpha']);
    expect(JSON.stringify(res.body)).not.toContain(org.userToken);
  });

  test('GET /operator/organizations lists newest first, paged with limit and starting_after', async ({ app: t }) => {
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await buildOrg(t, { brands: ['main'] }));
    const first = await t.http.get('/operator/organizations?limit=2', { token: t.operatorToken });
    expect(first.status, first.text).toBe(200);
    expect(first.body.object).toBe('list');
    expect(first.body.has_more).toBe(true);
    expect(first.body.data.map((o: any) => o.id)).toEqual([made[2]!.id, made[1]!.id]);
    expect(first.body.data[0].brands.map((b: any) => b.slug)).toEqual(['main']);
    const next = await t.http.get(`/operator/organizations?limit=1&starting_after=${made[1]!.id}`, { token: t.operatorToken });
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((o: any) => o.id)).toEqual([made[0]!.id]);
  });

  test('an unknown organization is 404; bad paging is 400 naming the parameter', async ({ app: t }) => {
    const missing = await t.http.get('/operator/organizations/org_00000000000000000000000000', { token: t.operatorToken });
    expectErrorResponse(missing, 404, 'resource_missing');
    const cursor = await t.http.get('/operator/organizations?starting_after=org_nope', { token: t.operatorToken });
    expectErrorResponse(cursor, 404, 'resource_missing');
    expect(cursor.body.param).toBe('starting_after');
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['plan=gold', 'plan'],
    ]) {
      const res = await t.http.get(`/operator/organizations?${query}`, { token: t.operatorToken });
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param, query).toBe(param);
    }
  });

  test('a missing or wrong operator token is 401; a user token is not an operator token', async ({ app: t }) => {
    const org = await buildOrg(t);
    for (const path of ['/operator/organizations', `/operator/organizations/${org.id}`]) {
      expectErrorResponse(await t.http.get(path), 401, 'operator_token_required');
      expectErrorResponse(await t.http.get(path, { token: 'op_wrong_0123456789abcdef' }), 401, 'invalid_token');
      expectErrorResponse(await t.http.get(path, { token: org.userToken }), 401, 'invalid_token');
    }
    const del = await t.http.delete(`/operator/organizations/${org.id}`, { token: t.operatorToken });
    expectErrorResponse(del, 405, 'method_not_allowed');
    expect(del.headers.get('allow')).toBe('GET');
  });
});
