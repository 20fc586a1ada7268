import { expect } from 'vitest';
import { appTest, buildOrg, expectErrorResponse } from '../support/kit.ts';

/** The operator names a brand by id or as <organization slug>.<brand slug> (a brand slug is unique only within its organization). */
const test = appTest();

test('wallet routes take a brand id or <org slug>.<brand slug>; a bare slug, an unknown pair or another shape is 404', async ({
  app: t,
}) => {
  const org = await buildOrg(t);
  const op = { token: t.operatorToken };
  const [first, second] = org.brands;
  const pair = `${org.slug}.${second!.slug}`;
  const topped = await t.http.post(`/operator/brands/${pair}/wallet/top_up`, { amount: 700 }, op);
  expect(topped.status, topped.text).toBe(200);
  expect(topped.body).toMatchObject({ object: 'wallet', brand: second!.id, balance: 700 });
  expect((await t.http.get(`/operator/brands/${second!.id}/wallet`, op)).body.balance).toBe(700);
  expect((await t.http.get(`/operator/brands/${org.slug}.${first!.slug}/wallet`, op)).body).toMatchObject({ brand: first!.id, balance: 0 });

  for (const ref of [second!.slug, `${org.slug}.nope`, `nope.${second!.slug}`, `${org.slug}.${second!.slug}.x`, 'brand_nope']) {
    const res = await t.http.get(`/operator/brands/${ref}/wallet`, op);
    expectErrorResponse(res, 404, 'resource_missing');
    expect(res.body.message).toContain('<organization slug>.<brand slug>');
  }
  // Nothing was credited by the refusals.
  expect((await t.http.get(`/operator/brands/${pair}/wallet`, op)).body.balance).toBe(700);
});
