import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { buildOrgWithToken } from '../support/factories.ts';

/** Fixtures for the operations engine tests: a tenant with distribution scopes, launches, the worker, money. */
export const ALL_SCOPES = ['distributions:read', 'distributions:write', 'distributions:launch', 'deployments:read', 'events:read'];

export interface Tenant {
  token: string;
  brand: string;
  orgId: string;
}

export async function tenant(t: TestApp, scopes = ALL_SCOPES): Promise<Tenant> {
  const { org, token } = await buildOrgWithToken(t, scopes);
  return { token, brand: org.brands[0]!.id, orgId: org.id };
}

export const sandbox = (config: Record<string, unknown> = {}) => ({ provider: 'sandbox', config });

export async function topUp(t: TestApp, brand: string, amount: number) {
  const res = await t.http.post(`/operator/brands/${brand}/wallet/top_up`, { amount }, { token: t.operatorToken });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** POST /distributions; asserts 202 and returns { operation, distribution }. */
export async function launch(
  t: TestApp,
  who: Tenant,
  body: { name?: string; budget?: number; deployments: unknown[] },
  key = randomUUID(),
) {
  const res = await t.http.post(
    '/v1/platform/distributions',
    { name: 'Spring', budget: 0, ...body },
    { token: who.token, headers: { 'idempotency-key': key } },
  );
  expect(res.status, res.text).toBe(202);
  return res.body as { operation: any; distribution: any };
}

export async function verb(t: TestApp, who: Tenant, id: string, name: 'launch' | 'pause' | 'resume' | 'cancel', key = randomUUID()) {
  return t.http.post(`/v1/platform/distributions/${id}/${name}`, undefined, { token: who.token, headers: { 'idempotency-key': key } });
}

export async function op(t: TestApp, who: Tenant, id: string) {
  const res = await t.http.get(`/v1/platform/operations/${id}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return res.body.operation;
}

export async function dist(t: TestApp, who: Tenant, id: string) {
  const res = await t.http.get(`/v1/platform/distributions/${id}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return res.body.distribution;
}

export async function deployments(t: TestApp, who: Tenant, distribution: string) {
  const res = await t.http.get(`/v1/platform/deployments?distribution=${distribution}`, { token: who.token });
  expect(res.status, res.text).toBe(200);
  return (res.body.data as any[]).slice().reverse();
}

/** Every event of the tenant's feed, after sequencing. */
export async function events(t: TestApp, who: Tenant): Promise<any[]> {
  await t.app.sequencer.flush();
  const out: any[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await t.http.get(`/v1/platform/events?limit=100${after ? `&starting_after=${after}` : ''}`, { token: who.token });
    expect(res.status, res.text).toBe(200);
    out.push(...res.body.data);
    if (!res.body.has_more) return out;
    after = String(res.body.data.at(-1).seq);
  }
}

export const typesOf = (evts: any[], subjectId?: string) => evts.filter((e) => !subjectId || e.subject.id === subjectId).map((e) => e.type);

export const drain = (t: TestApp) => t.app.operations.drain();
