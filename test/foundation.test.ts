import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.ts';
import { buildOrgWithToken } from './support/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.stop());

describe('foundation', () => {
  it('healthz answers while the process is up and readyz checks the database', async () => {
    expect((await t.http.get('/healthz')).body).toEqual({ ok: true });
    const ready = await t.http.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.ok).toBe(true);
  });

  it('every response carries a Request-Id', async () => {
    const res = await t.http.get('/api/scopes');
    expect(res.headers.get('request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });

  it('smoke answers the organization and the token scopes', async () => {
    const { org, token } = await buildOrgWithToken(t, ['units:read']);
    const res = await t.http.post('/api/smoke', undefined, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, org_id: org.id, org_slug: org.slug });
    expect(res.body.scopes).toEqual(['operations:read', 'units:read']);
  });
});
