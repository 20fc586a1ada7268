import { describe, expect } from 'vitest';
import { allUnits, createUnit } from '../support/surface-a-helpers.ts';
import { unitCount } from '../support/db-access.ts';
import { appTest, buildTenant, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

const UNIT_SCOPES = ['units:read', 'units:create', 'units:delete', 'units:publish'];

describe('units', () => {
  test('a unit is created as a draft with the request fields', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    const res = await t.http.post('/api/units/create', { type: 'video', caption: 'Launch teaser', production_id: 'prod_42' }, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      duplicate: false,
      unit: {
        id: expect.stringMatching(/^unit_[0-9a-f]{32}$/),
        object: 'unit',
        type: 'video',
        caption: 'Launch teaser',
        production_id: 'prod_42',
        status: 'draft',
        published_at: null,
        livemode: true,
        created_at: t.clock.now().toISOString(),
        updated_at: t.clock.now().toISOString(),
      },
    });
    const noProd = await createUnit(t, token, { type: 'image', caption: '' });
    expect(noProd).toMatchObject({ production_id: null, caption: '', status: 'draft' });
  });

  test('list pages newest first with page/per_page defaults 1/25 and has_more', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) ids.push((await createUnit(t, token, { type: 'post', caption: `n${i}` })).id);
    const newestFirst = [...ids].reverse();

    const first = await t.http.post('/api/units/list', undefined, { token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, per_page: 25, has_more: true });
    expect(first.body.units.map((u: any) => u.id)).toEqual(newestFirst.slice(0, 25));

    const second = await t.http.post('/api/units/list', { page: 2 }, { token });
    expect(second.body).toMatchObject({ page: 2, per_page: 25, has_more: false });
    expect(second.body.units.map((u: any) => u.id)).toEqual(newestFirst.slice(25));

    const small = await t.http.post('/api/units/list', { page: 3, per_page: 9 }, { token });
    expect(small.body).toMatchObject({ page: 3, per_page: 9, has_more: false });
    expect(small.body.units.map((u: any) => u.id)).toEqual(newestFirst.slice(18, 27));

    const exact = await t.http.post('/api/units/list', { page: 1, per_page: 27 }, { token });
    expect(exact.body.has_more).toBe(false);
    const beyond = await t.http.post('/api/units/list', { page: 9 }, { token });
    expect(beyond.body).toMatchObject({ units: [], has_more: false });

    const far = await t.http.post('/api/units/list', { page: 2 ** 52, per_page: 100 }, { token });
    expect(far.status, far.text).toBe(200);
    expect(far.body).toMatchObject({ units: [], has_more: false });

    const max = await t.http.post('/api/units/list', { per_page: 100 }, { token });
    expect(max.status).toBe(200);
    expect(max.body.units).toHaveLength(27);
  });

  test('per_page above 100 or below 1, and page below 1, are 400 invalid_request naming the param', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    for (const [body, param] of [
      [{ per_page: 101 }, 'per_page'],
      [{ per_page: 0 }, 'per_page'],
      [{ per_page: 2.5 }, 'per_page'],
      [{ page: 0 }, 'page'],
      [{ page: -1 }, 'page'],
    ] as const) {
      const res = await t.http.post('/api/units/list', body, { token });
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param).toBe(param);
    }
  });

  test('list only shows the caller organization units', async ({ app: t }) => {
    const a = await buildTenant(t, UNIT_SCOPES);
    const b = await buildTenant(t, UNIT_SCOPES);
    const ua = await createUnit(t, a.token);
    await createUnit(t, b.token);
    expect((await allUnits(t, a.token)).map((u) => u.id)).toEqual([ua.id]);
  });

  test('delete removes a draft unit', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, UNIT_SCOPES);
    const keep = await createUnit(t, token);
    const unit = await createUnit(t, token);
    const res = await t.http.post('/api/units/delete', { unit_id: unit.id }, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ok: true, success: true });
    expect((await allUnits(t, token)).map((u) => u.id)).toEqual([keep.id]);
    expect(await unitCount(t, org.id)).toBe(1);
    // Deleting again: it is gone.
    expectErrorResponse(await t.http.post('/api/units/delete', { unit_id: unit.id }, { token }), 404, 'resource_missing');
  });

  test('deleting a published unit is 400 unit_not_draft and the unit still exists', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    const unit = await createUnit(t, token);
    const pub = await t.http.post('/api/scopes_exec', { scope: 'units:publish', data: { unit_id: unit.id } }, { token });
    expect(pub.status, pub.text).toBe(200);
    const res = await t.http.post('/api/units/delete', { unit_id: unit.id }, { token });
    expectErrorResponse(res, 400, 'unit_not_draft');
    expect(res.body.param).toBe('unit_id');
    const units = await allUnits(t, token);
    expect(units).toHaveLength(1);
    expect(units[0]).toMatchObject({ id: unit.id, status: 'published' });
    // Same through the executor.
    const viaExec = await t.http.post('/api/scopes_exec', { scope: 'units:delete', data: { unit_id: unit.id } }, { token });
    expectErrorResponse(viaExec, 400, 'unit_not_draft');
    expect(await allUnits(t, token)).toHaveLength(1);
  });

  test("another organization's unit id is 404 resource_missing and nothing changes", async ({ app: t }) => {
    const a = await buildTenant(t, UNIT_SCOPES);
    const b = await buildTenant(t, UNIT_SCOPES);
    const unit = await createUnit(t, a.token);
    const nowhere = `unit_${'0'.repeat(32)}`;
    const foreign = await t.http.post('/api/units/delete', { unit_id: unit.id }, { token: b.token });
    const absent = await t.http.post('/api/units/delete', { unit_id: nowhere }, { token: b.token });
    expectErrorResponse(foreign, 404, 'resource_missing');
    expectErrorResponse(absent, 404, 'resource_missing');
    // No existence leak: same body apart from the id itself and the request id.
    expect(foreign.body.message.replace(unit.id, 'X')).toBe(absent.body.message.replace(nowhere, 'X'));
    expect(foreign.body.param).toBe(absent.body.param);
    expect(await allUnits(t, a.token)).toEqual([unit]);
  });

  test('a malformed unit id is 404 resource_missing', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    const unit = await createUnit(t, token);
    for (const id of ['nope', 'unit_', 'unit_XYZ', unit.id.toUpperCase(), `${unit.id}0`, `'; DROP TABLE unit; --`]) {
      expectErrorResponse(await t.http.post('/api/units/delete', { unit_id: id }, { token }), 404, 'resource_missing');
    }
    expect(await allUnits(t, token)).toEqual([unit]);
  });

  test('publishing twice is a no-op that keeps the first published_at', async ({ app: t }) => {
    const { token } = await buildTenant(t, UNIT_SCOPES);
    const unit = await createUnit(t, token);
    const first = await t.http.post('/api/scopes_exec', { scope: 'units:publish', data: { unit_id: unit.id } }, { token });
    t.clock.advance(5000);
    const second = await t.http.post('/api/scopes_exec', { scope: 'units:publish', data: { unit_id: unit.id } }, { token });
    expect(second.status).toBe(200);
    expect(second.body.object.unit.published_at).toBe(first.body.object.unit.published_at);
  });
});
