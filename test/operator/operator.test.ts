import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { appTest, expectErrorResponse, type TestApp } from '../support/kit.ts';

const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const slug = () => `org-${randomBytes(5).toString('hex')}`;
const createOrg = (body: unknown, token?: string | null) =>
  t.http.post('/operator/organizations', body, { token: token === undefined ? t.operatorToken : (token ?? undefined) });

describe('operator: organizations', () => {
  test('POST /operator/organizations is 201 with the organization, the brands in the given order and a working user token', async () => {
    const s = slug();
    const res = await createOrg({
      name: 'Acme',
      slug: s,
      brands: [
        { slug: 'zeta', name: 'Zeta' },
        { slug: 'alpha', name: 'Alpha' },
        { slug: 'mid', name: 'Mid' },
      ],
    });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['brands', 'organization', 'user_token']);
    expect(res.body.organization).toMatchObject({ id: expect.stringMatching(/^org_/), slug: s, name: 'Acme' });
    expect(res.body.brands.map((b: any) => b.slug)).toEqual(['zeta', 'alpha', 'mid']);
    const times = res.body.brands.map((b: any) => Date.parse(b.created_at));
    expect([...times].sort((a, b) => a - b)).toEqual(times); // the first is the oldest
    expect(res.body.user_token).toMatch(/^ut_/);
    const tokens = await t.http.get('/platform/tokens', { token: res.body.user_token });
    expect(tokens.status, tokens.text).toBe(200);
    expect(tokens.body.tokens).toEqual([]);
  });

  test('a duplicate organization slug is 409 on slug and creates nothing', async () => {
    const s = slug();
    expect((await createOrg({ name: 'One', slug: s, brands: [{ slug: 'main', name: 'Main' }] })).status).toBe(201);
    const dup = await createOrg({ name: 'Two', slug: s, brands: [{ slug: 'other', name: 'Other' }] });
    expectErrorResponse(dup, 409, 'resource_conflict');
    expect(dup.body.param).toBe('slug');
  });

  test('bad input is 400 naming the parameter', async () => {
    const ok = { name: 'Acme', slug: slug(), brands: [{ slug: 'main', name: 'Main' }] };
    const cases: [unknown, string][] = [
      [{ ...ok, name: '' }, 'name'],
      [{ ...ok, name: 42 }, 'name'],
      [{ ...ok, slug: 'Not A Slug' }, 'slug'],
      [{ ...ok, slug: undefined }, 'slug'],
      [{ ...ok, brands: [] }, 'brands'],
      [{ ...ok, brands: 'main' }, 'brands'],
      [
        {
          ...ok,
          brands: [
            { slug: 'a', name: 'A' },
            { slug: 'a', name: 'B' },
          ],
        },
        'brands',
      ],
      [{ ...ok, brands: [{ slug: 'BAD', name: 'A' }] }, 'brands.0.slug'],
      [{ ...ok, brands: [{ slug: 'a', name: 'A', color: 'red' }] }, 'brands.0.color'],
      [{ ...ok, plan: 'gold' }, 'plan'],
    ];
    for (const [body, param] of cases) {
      const res = await createOrg(body);
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param, JSON.stringify(body)).toBe(param);
    }
    // None of them created the organization.
    expect((await createOrg(ok)).status).toBe(201);
  });

  test('a wrong or missing operator token is 401 and creates nothing', async () => {
    const body = { name: 'Acme', slug: slug(), brands: [{ slug: 'main', name: 'Main' }] };
    expectErrorResponse(await createOrg(body, null), 401, 'operator_token_required');
    expectErrorResponse(await createOrg(body, `${t.operatorToken}x`), 401, 'invalid_token');
    expectErrorResponse(await createOrg(body, 'garbage'), 401, 'invalid_token');
    const org = await createOrg(body);
    expectErrorResponse(await t.http.post('/operator/organizations', body, { token: org.body.user_token }), 401, 'invalid_token');
    expect(org.status, org.text).toBe(201); // the slug was still free
  });
});

describe('operator: kill switch', () => {
  test('GET/POST /operator/kill_switch round-trip', async () => {
    const initial = await t.http.get('/operator/kill_switch', { token: t.operatorToken });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ engaged: false, updated_at: null });
    const on = await t.http.post('/operator/kill_switch', { engaged: true }, { token: t.operatorToken });
    expect(on.status, on.text).toBe(200);
    expect(on.body).toEqual({ engaged: true, updated_at: t.clock.now().toISOString() });
    expect((await t.http.get('/operator/kill_switch', { token: t.operatorToken })).body).toEqual(on.body);
    t.clock.advance(1000);
    const off = await t.http.post('/operator/kill_switch', { engaged: false }, { token: t.operatorToken });
    expect(off.body).toEqual({ engaged: false, updated_at: t.clock.now().toISOString() });
    expect((await t.http.get('/operator/kill_switch', { token: t.operatorToken })).body).toEqual(off.body);
  });

  test('the kill switch needs the operator token and a boolean', async () => {
    expectErrorResponse(await t.http.get('/operator/kill_switch'), 401, 'operator_token_required');
    expectErrorResponse(await t.http.post('/operator/kill_switch', { engaged: true }, { token: 'nope' }), 401, 'invalid_token');
    for (const body of [{ engaged: 'yes' }, { engaged: 1 }, {}, { engaged: true, extra: 1 }]) {
      expectErrorResponse(await t.http.post('/operator/kill_switch', body, { token: t.operatorToken }), 400, 'invalid_request');
    }
    expect((await t.http.get('/operator/kill_switch', { token: t.operatorToken })).body.engaged).toBe(false);
  });
});
