import { describe, expect } from 'vitest';
import { createUnit } from '../support/surface-a-helpers.ts';
import { auditRows } from '../support/db-access.ts';
import { appTest, buildTenant, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

describe('GET /api/scopes', () => {
  test('needs no auth and lists every executable scope with scope, category and description', async ({ app: t }) => {
    const res = await t.http.get('/api/scopes');
    expect(res.status).toBe(200);
    const scopes = res.body.scopes as { scope: string; category: string; description: string }[];
    for (const s of ['org:read', 'units:read', 'units:create', 'units:delete', 'units:publish']) {
      expect(scopes.map((e) => e.scope)).toContain(s);
    }
    for (const e of scopes) {
      expect(e.scope).toMatch(/^[a-z_]+:[a-z_]+$/);
      expect(e.category).toEqual(expect.any(String));
      expect(e.category.length).toBeGreaterThan(0);
      expect(e.description.length).toBeGreaterThan(0);
    }
  });

  test('every listed scope is executable: a token holding it never gets unknown_scope', async ({ app: t }) => {
    const scopes = ((await t.http.get('/api/scopes')).body.scopes as { scope: string }[]).map((e) => e.scope);
    const { token } = await buildTenant(t, scopes);
    for (const scope of scopes) {
      const res = await t.http.post('/api/scopes_exec', { scope, data: {} }, { token });
      expect(res.body.error, `${scope}: ${res.text}`).not.toBe('unknown_scope');
      expect(res.status, `${scope}: ${res.text}`).toBeLessThan(500);
    }
  });

  test('ignores a bad Authorization header (no auth needed)', async ({ app: t }) => {
    const res = await t.http.get('/api/scopes', { token: 'garbage' });
    expect(res.status).toBe(200);
  });
});

describe('POST /api/scopes_exec', () => {
  test('unknown scope is 400 unknown_scope and is audited as refused', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read']);
    const res = await t.http.post('/api/scopes_exec', { scope: 'nope:nothing', data: {} }, { token });
    expectErrorResponse(res, 400, 'unknown_scope');
    const rows = await auditRows(t, org.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ scope: 'nope:nothing', outcome: 'refused', reason: 'unknown_scope', requestId: res.body.request_id });
  });

  test('a catalogue scope without an executor is unknown_scope, not missing_scope', async ({ app: t }) => {
    const { token } = await buildTenant(t, ['events:read']);
    const res = await t.http.post('/api/scopes_exec', { scope: 'events:read' }, { token });
    expectErrorResponse(res, 400, 'unknown_scope');
  });

  test('token lacking the scope is 403 missing_scope with required_scope, audited as refused', async ({ app: t }) => {
    const { org, token, tokenId } = await buildTenant(t, ['units:read']);
    const res = await t.http.post('/api/scopes_exec', { scope: 'org:read' }, { token });
    expectErrorResponse(res, 403, 'missing_scope');
    expect(res.body).toMatchObject({ message: 'missing_scope:org:read', required_scope: 'org:read' });
    const rows = await auditRows(t, org.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tokenId, scope: 'org:read', outcome: 'refused', reason: 'missing_scope' });
  });

  test('success is 200 {ok, scope, mode, object, token_id} and is audited as allowed', async ({ app: t }) => {
    const { org, token, tokenId } = await buildTenant(t, ['org:read']);
    const res = await t.http.post('/api/scopes_exec', { scope: 'org:read' }, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      ok: true,
      scope: { scope: 'org:read', category: 'org', description: expect.any(String) },
      mode: 'read',
      token_id: tokenId,
    });
    expect(res.body.object.organization).toMatchObject({ id: org.id, slug: org.slug, object: 'organization' });
    const rows = await auditRows(t, org.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      tokenId,
      scope: 'org:read',
      outcome: 'allowed',
      reason: null,
      requestId: res.body.request_id ?? res.headers.get('request-id'),
    });
  });

  test('every call writes exactly one audit row, allowed and refused alike', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read', 'units:create', 'units:read']);
    const calls = [
      { scope: 'org:read' },
      { scope: 'units:read', data: { per_page: 5 } },
      { scope: 'units:create', data: { type: 'video', caption: 'a' } },
      { scope: 'units:delete', data: { unit_id: 'unit_x' } }, // missing scope
      { scope: 'units:read', data: { per_page: 500 } }, // invalid input
      { scope: 'what:ever' }, // unknown
    ];
    const statuses: number[] = [];
    for (const c of calls) statuses.push((await t.http.post('/api/scopes_exec', c, { token })).status);
    expect(statuses).toEqual([200, 200, 200, 403, 400, 400]);
    const rows = await auditRows(t, org.id);
    expect(rows.map((r) => [r.scope, r.outcome])).toEqual([
      ['org:read', 'allowed'],
      ['units:read', 'allowed'],
      ['units:create', 'allowed'],
      ['units:delete', 'refused'],
      ['units:read', 'refused'],
      ['what:ever', 'refused'],
    ]);
  });

  test('units:publish publishes a draft; a published unit can no longer be deleted', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['units:create', 'units:publish', 'units:delete', 'units:read']);
    const unit = await createUnit(t, token);
    expect(unit.status).toBe('draft');
    t.clock.advance(1000);
    const res = await t.http.post('/api/scopes_exec', { scope: 'units:publish', data: { unit_id: unit.id } }, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ ok: true, mode: 'update', scope: { scope: 'units:publish' } });
    expect(res.body.object.unit).toMatchObject({ id: unit.id, status: 'published', published_at: t.clock.now().toISOString() });
    const list = await t.http.post('/api/units/list', {}, { token });
    expect(list.body.units[0]).toMatchObject({ id: unit.id, status: 'published' });
    const del = await t.http.post('/api/units/delete', { unit_id: unit.id }, { token });
    expectErrorResponse(del, 400, 'unit_not_draft');
    expect((await auditRows(t, org.id)).map((r) => r.outcome)).toEqual(['allowed', 'allowed', 'allowed', 'refused']);
  });

  test("units:publish on another organization's unit is 404 resource_missing and publishes nothing", async ({ app: t }) => {
    const a = await buildTenant(t, ['units:create', 'units:read']);
    const unit = await createUnit(t, a.token);
    const b = await buildTenant(t, ['units:publish']);
    const res = await t.http.post('/api/scopes_exec', { scope: 'units:publish', data: { unit_id: unit.id } }, { token: b.token });
    expectErrorResponse(res, 404, 'resource_missing');
    const list = await t.http.post('/api/units/list', {}, { token: a.token });
    expect(list.body.units[0]).toMatchObject({ id: unit.id, status: 'draft' });
  });

  test('data must be an object and scope a string', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ['org:read']);
    for (const body of [
      { scope: 'org:read', data: [] },
      { scope: 5 },
      {},
      { scope: 'org:read', data: { x: 1 } },
      { scope: 'org:read', extra: 1 },
    ]) {
      const res = await t.http.post('/api/scopes_exec', body, { token });
      expectErrorResponse(res, 400, 'invalid_request');
    }
    expect((await auditRows(t, org.id)).map((r) => r.outcome)).toEqual(Array(5).fill('refused'));
  });
});
