import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

/**
 * The one tenant builder: a fresh organization per test, made through the
 * operator and dashboard routes (never Prisma), with a platform token holding
 * the given scopes.
 */
export interface TestOrg {
  id: string;
  slug: string;
  brands: { id: string; slug: string; name: string }[];
  userToken: string;
}

/** What the builders need of a server: the file's app, or a spawned process reached over HTTP. */
export type Server = Pick<TestApp, 'http' | 'operatorToken'>;

export interface Tenant {
  org: TestOrg;
  /** The platform token's secret (`sk_platform_live_…`). */
  token: string;
  tokenId: string;
}

/** An organization (brands `main` and `second` unless given) and its dashboard user token. */
export async function buildOrg(t: Server, overrides: { brands?: string[] } = {}): Promise<TestOrg> {
  const slug = `org-${randomBytes(5).toString('hex')}`;
  const brands = (overrides.brands ?? ['main', 'second']).map((s) => ({ slug: s, name: s.toUpperCase() }));
  const res = await t.http.post('/operator/organizations', { name: `Org ${slug}`, slug, brands }, { token: t.operatorToken });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.organization.id, slug, brands: res.body.brands, userToken: res.body.user_token };
}

/** A platform token of `org` holding `scopes`; `extra` is passed to /platform/tokens/create (e.g. `brand_id`, `expires_at`). */
export async function buildToken(
  t: Server,
  org: TestOrg,
  scopes: string[],
  extra: Record<string, unknown> = {},
): Promise<{ id: string; secret: string; token: any }> {
  const res = await t.http.post('/platform/tokens/create', { name: 'test', scopes, ...extra }, { token: org.userToken });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.token.id, secret: res.body.secret, token: res.body.token };
}

/** An organization plus one platform token holding `scopes`. */
export async function buildTenant(
  t: Server,
  scopes: string[],
  opts: { brands?: string[]; token?: Record<string, unknown> } = {},
): Promise<Tenant> {
  const org = await buildOrg(t, { brands: opts.brands });
  const token = await buildToken(t, org, scopes, opts.token);
  return { org, token: token.secret, tokenId: token.id };
}

/** Test-mode keys: every prefix answers 400 `test_mode_not_yet_available` until test mode ships. */
export const TEST_MODE_KEYS = ['sk_test_abc', 'pk_test_abc', 'sk_platform_test_abc'] as const;
