import { describe, expect } from 'vitest';
import { appTest, buildTenant } from '../support/kit.ts';

const test = appTest();

describe('foundation', () => {
  test('healthz answers while the process is up and readyz checks the database', async ({ app: t }) => {
    expect((await t.http.get('/healthz')).body).toEqual({ ok: true });
    const ready = await t.http.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.ok).toBe(true);
  });

  test('every response carries a Request-Id', async ({ app: t }) => {
    const res = await t.http.get('/api/scopes');
    expect(res.headers.get('request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });

  test('smoke answers the organization and the token scopes', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['units:read']);
    const res = await t.http.post('/api/smoke', undefined, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, org_id: org.id, org_slug: org.slug });
    expect(res.body.scopes).toEqual(['operations:read', 'units:read']);
  });
});
