import { describe, expect } from 'vitest';
import { allUnits } from '../support/surface-a-helpers.ts';
import { auditRows, unitCount } from '../support/db-access.ts';
import { appTest, buildOrg, buildTenant, buildToken, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

const SCOPES = ['units:read', 'units:create'];
const body = { type: 'video', caption: 'teaser', production_id: 'prod_1' };
const key = (h: string) => ({ 'Idempotency-Key': h });

describe('idempotent creates', () => {
  test('a replay returns the original unit with duplicate:true and creates nothing', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const first = await t.http.post('/api/units/create', body, { token, headers: key('k-1') });
    expect(first.status, first.text).toBe(200);
    expect(first.body.duplicate).toBe(false);
    t.clock.advance(60_000);
    const again = await t.http.post(
      '/api/units/create',
      { caption: 'teaser', production_id: 'prod_1', type: 'video' },
      { token, headers: key('k-1') },
    );
    expect(again.status, again.text).toBe(200);
    expect(again.body).toEqual({ unit: first.body.unit, duplicate: true });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await unitCount(t, org.id)).toBe(1);
    expect((await auditRows(t, org.id)).map((r) => r.outcome)).toEqual(['allowed', 'replayed']);
  });

  test('POST /api/scopes_exec and GraphQL createUnit replay with Idempotent-Replayed: true, like every keyed mutation', async ({
    app: t,
  }) => {
    const { token } = await buildTenant(t, SCOPES);
    const exec = { scope: 'units:create', data: body };
    const first = await t.http.post('/api/scopes_exec', exec, { token, headers: key('x-1') });
    const again = await t.http.post('/api/scopes_exec', exec, { token, headers: key('x-1') });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.object).toEqual({ unit: first.body.object.unit, duplicate: true });
    const gql = 'mutation { createUnit(type: "video", caption: "g") { duplicate unit { id } } }';
    const g1 = await t.http.graphql(gql, {}, { token, headers: key('g-1') });
    const g2 = await t.http.graphql(gql, {}, { token, headers: key('g-1') });
    expect(g1.headers.get('idempotent-replayed')).toBeNull();
    expect(g2.headers.get('idempotent-replayed')).toBe('true');
    expect(g2.body.data.createUnit).toEqual({ duplicate: true, unit: g1.body.data.createUnit.unit });
  });

  test('without a key, identical requests create distinct units', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    await t.http.post('/api/units/create', body, { token });
    await t.http.post('/api/units/create', body, { token });
    expect(await unitCount(t, org.id)).toBe(2);
  });

  test('the deprecated body idempotency_key works, and the header wins over it', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const a = await t.http.post('/api/units/create', { ...body, idempotency_key: 'body-1' }, { token });
    const b = await t.http.post('/api/units/create', { ...body, idempotency_key: 'body-1' }, { token });
    expect(b.body).toEqual({ unit: a.body.unit, duplicate: true });
    // The body key of an earlier create is ignored when a header is present: the header names a fresh key.
    const c = await t.http.post('/api/units/create', { ...body, idempotency_key: 'body-1' }, { token, headers: key('hdr-1') });
    expect(c.body.duplicate).toBe(false);
    expect(c.body.unit.id).not.toBe(a.body.unit.id);
    // ... and the header key replays even with a different body key.
    const d = await t.http.post('/api/units/create', { ...body, idempotency_key: 'other' }, { token, headers: key('hdr-1') });
    expect(d.body).toEqual({ unit: c.body.unit, duplicate: true });
    expect(await unitCount(t, org.id)).toBe(2);
  });

  test('the same key with a different body is 400 idempotency_key_reused and creates nothing', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    await t.http.post('/api/units/create', body, { token, headers: key('k-2') });
    for (const other of [
      { ...body, caption: 'different' },
      { type: 'video', caption: 'teaser' },
    ]) {
      const res = await t.http.post('/api/units/create', other, { token, headers: key('k-2') });
      expectErrorResponse(res, 400, 'idempotency_key_reused');
    }
    const viaExec = await t.http.post(
      '/api/scopes_exec',
      { scope: 'units:create', data: { ...body, caption: 'x' } },
      { token, headers: key('k-2') },
    );
    expectErrorResponse(viaExec, 400, 'idempotency_key_reused');
    expect(await unitCount(t, org.id)).toBe(1);
  });

  test('keys are per organization: the same key in another organization is independent', async ({ app: t }) => {
    const a = await buildTenant(t, SCOPES);
    const b = await buildTenant(t, SCOPES);
    const ra = await t.http.post('/api/units/create', body, { token: a.token, headers: key('shared') });
    const rb = await t.http.post('/api/units/create', { ...body, caption: 'other' }, { token: b.token, headers: key('shared') });
    expect(rb.status, rb.text).toBe(200);
    expect(rb.body.duplicate).toBe(false);
    expect(rb.body.unit.id).not.toBe(ra.body.unit.id);
  });

  test('an invalid key is 400 invalid_request', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    for (const bad of ['x'.repeat(256), 'has space']) {
      expectErrorResponse(await t.http.post('/api/units/create', body, { token, headers: key(bad) }), 400, 'invalid_request');
    }
    expectErrorResponse(await t.http.post('/api/units/create', { ...body, idempotency_key: 5 }, { token }), 400, 'invalid_request');
    expectErrorResponse(await t.http.post('/api/units/create', { ...body, idempotency_key: '' }, { token }), 400, 'invalid_request');
    expect(await unitCount(t, org.id)).toBe(0);
  });

  test('a failed create does not burn the key', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const bad = await t.http.post('/api/units/create', { type: '', caption: 'x' }, { token, headers: key('k-retry') });
    expectErrorResponse(bad, 400, 'invalid_request');
    const ok = await t.http.post('/api/units/create', body, { token, headers: key('k-retry') });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.duplicate).toBe(false);
    expect(await unitCount(t, org.id)).toBe(1);
  });

  test('10 concurrent identical requests with one key create exactly one unit', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, SCOPES);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => t.http.post('/api/units/create', body, { token, headers: key('burst') })),
    );
    for (const r of results) expect(r.status, r.text).toBe(200);
    expect(new Set(results.map((r) => r.body.unit.id)).size).toBe(1);
    expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
    expect(await allUnits(t, token)).toHaveLength(1);
    expect(await unitCount(t, org.id)).toBe(1);
  });

  describe('via /scopes_exec units:create', () => {
    test('a replay returns the original unit with duplicate:true', async ({ app: t }) => {
      const { org, token } = await buildTenant(t, SCOPES);
      const first = await t.http.post('/api/scopes_exec', { scope: 'units:create', data: body }, { token, headers: key('e-1') });
      expect(first.status, first.text).toBe(200);
      expect(first.body).toMatchObject({ ok: true, mode: 'create', object: { duplicate: false } });
      const again = await t.http.post('/api/scopes_exec', { scope: 'units:create', data: body }, { token, headers: key('e-1') });
      expect(again.body.object).toEqual({ unit: first.body.object.unit, duplicate: true });
      const bodyKey = await t.http.post('/api/scopes_exec', { scope: 'units:create', data: body, idempotency_key: 'e-1' }, { token });
      expect(bodyKey.body.object).toEqual({ unit: first.body.object.unit, duplicate: true });
      expect(await unitCount(t, org.id)).toBe(1);
    });

    test('a key first used on /units/create replays through /scopes_exec with the same body', async ({ app: t }) => {
      const { org, token } = await buildTenant(t, SCOPES);
      const first = await t.http.post('/api/units/create', body, { token, headers: key('x-1') });
      const again = await t.http.post('/api/scopes_exec', { scope: 'units:create', data: body }, { token, headers: key('x-1') });
      expect(again.body.object).toEqual({ unit: first.body.unit, duplicate: true });
      expect(await unitCount(t, org.id)).toBe(1);
    });

    test('10 concurrent identical requests with one key create exactly one unit', async ({ app: t }) => {
      const { org, token } = await buildTenant(t, SCOPES);
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          t.http.post('/api/scopes_exec', { scope: 'units:create', data: body }, { token, headers: key('burst-exec') }),
        ),
      );
      for (const r of results) expect(r.status, r.text).toBe(200);
      expect(new Set(results.map((r) => r.body.object.unit.id)).size).toBe(1);
      expect(await allUnits(t, token)).toHaveLength(1);
      expect(await unitCount(t, org.id)).toBe(1);
    });
  });

  test('keys are shared by the tokens of one organization', async ({ app: t }) => {
    const org = await buildOrg(t);
    const one = await buildToken(t, org, SCOPES);
    const two = await buildToken(t, org, SCOPES);
    const a = await t.http.post('/api/units/create', body, { token: one.secret, headers: key('org-wide') });
    const b = await t.http.post('/api/units/create', body, { token: two.secret, headers: key('org-wide') });
    expect(b.body).toEqual({ unit: a.body.unit, duplicate: true });
  });
});
