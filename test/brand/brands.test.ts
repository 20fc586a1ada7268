import { describe, expect } from 'vitest';
import { appTest, buildTenant, expectGraphQLError, expectPlatformError, type TestApp } from '../support/kit.ts';

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const P = '/v1/platform';

describe('brands', () => {
  test('list oldest first, the oldest marked default, paged forward; retrieve one', async () => {
    const { token, org } = await buildTenant(t, ['org:read'], { brands: ['main', 'second', 'third'] });
    const all = await t.http.get(`${P}/brands`, { token });
    expect(all.status, all.text).toBe(200);
    expect(all.body).toMatchObject({ object: 'list', has_more: false });
    expect(all.body.data.map((b: any) => [b.slug, b.default])).toEqual([
      ['main', true],
      ['second', false],
      ['third', false],
    ]);
    expect(all.body.data[0]).toEqual({
      id: org.brands[0]!.id,
      object: 'brand',
      organization: org.id,
      slug: 'main',
      name: 'MAIN',
      default: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const first = await t.http.get(`${P}/brands?limit=1`, { token });
    expect(first.body.data.map((b: any) => b.slug)).toEqual(['main']);
    expect(first.body.has_more).toBe(true);
    const next = await t.http.get(`${P}/brands?limit=1&starting_after=${first.body.data[0].id}`, { token });
    expect(next.body.data.map((b: any) => [b.slug, b.default])).toEqual([['second', false]]);
    expect(next.body.has_more).toBe(true);
    const last = await t.http.get(`${P}/brands?limit=5&starting_after=${next.body.data[0].id}`, { token });
    expect(last.body.data.map((b: any) => b.slug)).toEqual(['third']);
    expect(last.body.has_more).toBe(false);
    const one = await t.http.get(`${P}/brands/${org.brands[1]!.id}`, { token });
    expect(one.status, one.text).toBe(200);
    expect(one.body).toEqual({ ...all.body.data[1] });
    // The selected brand does not change what the list says is the default.
    const selected = await t.http.get(`${P}/brands`, { token, headers: { 'service-brand': 'second' } });
    expect(selected.body.data.map((b: any) => b.default)).toEqual([true, false, false]);
  });

  test("another organization's brand, unknown and malformed ids are 404; bad paging is 400; org:read is needed", async () => {
    const { token } = await buildTenant(t, ['org:read']);
    const other = await buildTenant(t, ['org:read']);
    const foreign = other.org.brands[0]!.id;
    expectPlatformError(await t.http.get(`${P}/brands/${foreign}`, { token }), 404, 'resource_missing');
    expectPlatformError(await t.http.get(`${P}/brands/brand_nope`, { token }), 404, 'resource_missing');
    expectPlatformError(await t.http.get(`${P}/brands?starting_after=${foreign}`, { token }), 404, 'resource_missing', 'starting_after');
    expectPlatformError(await t.http.get(`${P}/brands?limit=0`, { token }), 400, 'invalid_request', 'limit');
    expectPlatformError(await t.http.get(`${P}/brands?limit=abc`, { token }), 400, 'invalid_request', 'limit');
    expectPlatformError(await t.http.get(`${P}/brands?starting_after=a%00b`, { token }), 400, 'invalid_request', 'starting_after');
    expectPlatformError(await t.http.get(`${P}/brands?colour=red`, { token }), 400, 'invalid_request');
    const { token: none } = await buildTenant(t, ['programs:read']);
    expectPlatformError(await t.http.get(`${P}/brands`, { token: none }), 403, 'missing_scope');
    const g = await t.http.graphql(`{ brand(id: "${foreign}") { id } }`, {}, { token });
    expectGraphQLError(g, 'resource_missing');
    const n = await t.http.graphql(`{ node(id: "${foreign}") { id } }`, {}, { token });
    expect(n.body.data.node).toBeNull();
  });

  test('GraphQL: brands connection, brand(id:), node(id:) and the viewer answer the same brands', async () => {
    const { token, org } = await buildTenant(t, ['org:read']);
    const fields = 'id organization slug name default createdAt';
    const g = await t.http.graphql(
      `{ brands(first: 1) { edges { node { ${fields} } } pageInfo { hasNextPage endCursor } }
         brand(id: "${org.brands[1]!.id}") { ${fields} }
         node(id: "${org.brands[0]!.id}") { ... on Brand { slug default } }
         viewer { brand { slug default } brands { slug default } } }`,
      {},
      { token, headers: { 'service-brand': 'second' } },
    );
    expect(g.body.errors, g.text).toBeUndefined();
    const d = g.body.data;
    expect(d.brands.edges.map((e: any) => [e.node.slug, e.node.default])).toEqual([['main', true]]);
    expect(d.brands.pageInfo.hasNextPage).toBe(true);
    expect(d.brand).toMatchObject({ id: org.brands[1]!.id, organization: org.id, slug: 'second', name: 'SECOND', default: false });
    expect(d.node).toEqual({ slug: 'main', default: true });
    expect(d.viewer.brand).toEqual({ slug: 'second', default: false });
    expect(d.viewer.brands).toEqual([
      { slug: 'main', default: true },
      { slug: 'second', default: false },
    ]);
    const after = await t.http.graphql(`{ brands(after: "${d.brands.pageInfo.endCursor}") { edges { node { slug } } } }`, {}, { token });
    expect(after.body.data.brands.edges.map((e: any) => e.node.slug)).toEqual(['second']);
  });
});
