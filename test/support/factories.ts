import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/** Fresh tenants per test, created through the operator and dashboard routes. */
export interface TestOrg {
  id: string;
  slug: string;
  brands: { id: string; slug: string; name: string }[];
  userToken: string;
}

export async function buildOrg(t: TestApp, overrides: { brands?: string[] } = {}): Promise<TestOrg> {
  const slug = `org-${randomBytes(5).toString('hex')}`;
  const brands = (overrides.brands ?? ['main', 'second']).map((s) => ({ slug: s, name: s.toUpperCase() }));
  const res = await t.http.post('/operator/organizations', { name: `Org ${slug}`, slug, brands }, { token: t.operatorToken });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.organization.id, slug, brands: res.body.brands, userToken: res.body.user_token };
}

export async function buildToken(
  t: TestApp,
  org: TestOrg,
  scopes: string[],
  extra: Record<string, unknown> = {},
): Promise<{ id: string; secret: string; token: any }> {
  const res = await t.http.post('/platform/tokens/create', { name: 'test', scopes, ...extra }, { token: org.userToken });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.token.id, secret: res.body.secret, token: res.body.token };
}

/** An organization plus one token holding `scopes`. */
export async function buildOrgWithToken(t: TestApp, scopes: string[]) {
  const org = await buildOrg(t);
  const token = await buildToken(t, org, scopes);
  return { org, token: token.secret, tokenId: token.id };
}
