import { describe, expect } from 'vitest';
import { unitCount } from '../support/db-access.ts';
import { appTest, buildTenant, expectErrorResponse } from '../support/kit.ts';

const test = appTest({ config: { bodyLimitBytes: 2048 } });

const ROUTES = ['/api/scopes_exec', '/api/smoke', '/api/units/list', '/api/units/create', '/api/units/delete'];

describe('body size limit', () => {
  test('a body larger than the limit is 413 payload_too_large on every route and creates nothing', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read', 'units:read', 'units:create', 'units:delete']);
    const caption = 'x'.repeat(4096);
    for (const path of ROUTES) {
      const body = path === '/api/scopes_exec' ? { scope: 'units:create', data: { type: 'video', caption } } : { type: 'video', caption };
      expectErrorResponse(await t.http.post(path, body, { token }), 413, 'payload_too_large');
    }
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('a body just under the limit is accepted', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['units:create']);
    const body = { type: 'video', caption: '' };
    body.caption = 'x'.repeat(2048 - JSON.stringify(body).length);
    expect(JSON.stringify(body).length).toBe(2048);
    const res = await t.http.post('/api/units/create', body, { token });
    expect(res.status, res.text).toBe(200);
    expect(await unitCount(t, org.id)).toBe(1);
  });

  test('a body token inside an oversized body does not matter: 413 before auth', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['units:create']);
    const res = await t.http.post('/api/units/create', { token, type: 'video', caption: 'x'.repeat(4096) });
    expectErrorResponse(res, 413, 'payload_too_large');
  });
});
