import { describe, expect } from 'vitest';
import { createUnit } from '../support/surface-a-helpers.ts';
import { auditRows, unitCount } from '../support/db-access.ts';
import { appTest, type TestApp, buildTenant, expectErrorResponse } from '../support/kit.ts';

const test = appTest();

const ALL = ['org:read', 'units:read', 'units:create', 'units:delete', 'units:publish'];
const ROUTES = ['/api/scopes_exec', '/api/smoke', '/api/units/list', '/api/units/create', '/api/units/delete'];

/** Per route: bodies with wrong types or unknown fields. */
const INVALID: Record<string, Record<string, unknown>[]> = {
  '/api/scopes_exec': [
    { scope: 5 },
    { scope: '' },
    { scope: 'units:create', data: 'x' },
    { scope: 'units:create', data: [1] },
    { scope: 'units:create', data: null },
    { scope: 'units:create', data: { type: 'video', caption: 5 } },
    { scope: 'units:create', data: { type: 'video', caption: 'c', colour: 'red' } },
    { scope: 'units:read', data: { page: 'x' } },
    { scope: 'units:read', data: { page: 2 ** 53 } },
    { scope: 'units:delete', data: { unit_id: 5 } },
    { scope: 'units:publish', data: {} },
    { scope: 'org:read', data: { anything: true } },
    { scope: 'org:read', unexpected: 1 },
  ],
  '/api/smoke': [{ unexpected: 1 }, { token: ['x'] }],
  '/api/units/list': [{ page: 'x' }, { per_page: '10' }, { page: null }, { page: 1.5 }, { page: 2 ** 53 }, { per_page: 10, sort: 'asc' }],
  '/api/units/create': [
    { type: 'video', caption: 5 },
    { type: 5, caption: 'c' },
    { type: 'video' },
    { caption: 'c' },
    { type: '   ', caption: 'c' },
    { type: 'x'.repeat(65), caption: 'c' },
    { type: 'video', caption: 'x'.repeat(10_001) },
    { type: 'video', caption: 'c', production_id: 7 },
    { type: 'video', caption: 'c', production_id: '' },
    { type: 'video', caption: 'c', status: 'published' },
    { type: 'video', caption: 'c', id: 'unit_0' },
    { type: 'video', caption: 'c', idempotency_key: { a: 1 } },
  ],
  '/api/units/delete': [{}, { unit_id: 5 }, { unit_id: '' }, { unit_id: null }, { unit_id: 'unit_x', force: true }],
};

const RAW: { name: string; raw: string; type?: string; status: number; error: string }[] = [
  { name: 'malformed JSON', raw: '{"type": "video",', status: 400, error: 'invalid_request' },
  { name: 'trailing garbage', raw: '{"type": "video"} x', status: 400, error: 'invalid_request' },
  { name: 'JSON array', raw: '[{"type":"video","caption":"c"}]', status: 400, error: 'invalid_request' },
  { name: 'empty array', raw: '[]', status: 400, error: 'invalid_request' },
  { name: 'JSON string', raw: '"video"', status: 400, error: 'invalid_request' },
  { name: 'JSON number', raw: '42', status: 400, error: 'invalid_request' },
  { name: 'JSON null', raw: 'null', status: 400, error: 'invalid_request' },
  {
    name: 'form body',
    raw: 'type=video&caption=c',
    type: 'application/x-www-form-urlencoded',
    status: 415,
    error: 'unsupported_media_type',
  },
  { name: 'text body', raw: '{"type":"video","caption":"c"}', type: 'text/plain', status: 415, error: 'unsupported_media_type' },
  { name: 'multipart', raw: '--x\r\n\r\n--x--', type: 'multipart/form-data; boundary=x', status: 415, error: 'unsupported_media_type' },
];

async function expectNothingHappened(t: TestApp, org: { id: string }, before: number) {
  expect(await unitCount(t, org.id)).toBe(before);
}

describe('bad input on every Surface A route', () => {
  for (const c of RAW) {
    test(`${c.name} is ${c.status} ${c.error} on every route and creates nothing`, async ({ app: t }) => {
      const { org, token } = await buildTenant(t, ALL);
      for (const path of ROUTES) {
        const headers = c.type ? { 'content-type': c.type } : undefined;
        const res = await t.http.post(path, undefined, { token, raw: c.raw, headers });
        expectErrorResponse(res, c.status, c.error);
      }
      await expectNothingHappened(t, org, 0);
    });
  }

  test('a wrong content type is refused even with a deprecated body token', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    const res = await t.http.post('/api/units/create', undefined, {
      raw: JSON.stringify({ type: 'video', caption: 'c', token }),
      headers: { 'content-type': 'text/plain' },
    });
    expectErrorResponse(res, 415, 'unsupported_media_type');
  });

  test('wrong types and unknown fields are 400 invalid_request naming the param; nothing is created', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    const existing = await createUnit(t, token);
    for (const [path, bodies] of Object.entries(INVALID)) {
      for (const body of bodies) {
        const res = await t.http.post(path, body, { token });
        expect(res.status, `${path} ${JSON.stringify(body).slice(0, 80)}: ${res.text}`).toBe(400);
        expectErrorResponse(res, 400, 'invalid_request');
      }
    }
    await expectNothingHappened(t, org, 1);
    const units = await t.http.post('/api/units/list', {}, { token });
    expect(units.body.units).toEqual([existing]);
  });

  test('unknown fields are named in the message and param', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    const res = await t.http.post('/api/units/create', { type: 'video', caption: 'c', captoin: 'typo' }, { token });
    expectErrorResponse(res, 400, 'invalid_request');
    expect(res.body.param).toBe('captoin');
    expect(res.body.message).toContain('captoin');
    const nested = await t.http.post(
      '/api/scopes_exec',
      { scope: 'units:create', data: { type: 'video', caption: 'c', captoin: 1 } },
      { token },
    );
    expectErrorResponse(nested, 400, 'invalid_request');
    expect(nested.body.message).toContain('captoin');
  });

  test('text the database cannot store (NUL, unpaired surrogates) is 400 invalid_request naming the field, not 500', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    for (const [path, body, param] of [
      ['/api/units/create', { type: 'video', caption: 'a\u0000b' }, 'caption'],
      ['/api/units/create', { type: 'vi\u0000deo', caption: 'c' }, 'type'],
      ['/api/units/create', { type: 'video', caption: 'c', production_id: '\u0000' }, 'production_id'],
      ['/api/units/create', { type: 'video', caption: 'a\ud800b' }, 'caption'],
      ['/api/units/delete', { unit_id: 'unit_\u0000' }, 'unit_id'],
      ['/api/scopes_exec', { scope: 'units:\u0000create', data: {} }, 'scope'],
      ['/api/scopes_exec', { scope: 'units:create', data: { type: 'video', caption: '\udc00' } }, 'data.caption'],
    ] as const) {
      const res = await t.http.post(path, body, { token });
      expectErrorResponse(res, 400, 'invalid_request');
      expect(res.body.param).toBe(param);
    }
    await expectNothingHappened(t, org, 0);
  });

  test('refused calls through the executor are audited', async ({ app: t }) => {
    const { org, token } = await buildTenant(t, ALL);
    await t.http.post('/api/units/create', { type: 'video', caption: 5 }, { token });
    await t.http.post('/api/scopes_exec', { scope: 5 }, { token });
    expect((await auditRows(t, org.id)).map((r) => [r.scope, r.outcome, r.reason])).toEqual([
      ['units:create', 'refused', 'invalid_request'],
      ['', 'refused', 'invalid_request'],
    ]);
  });

  test('unknown paths and wrong methods answer an ErrorResponse', async ({ app: t }) => {
    const { token } = await buildTenant(t, ALL);
    expectErrorResponse(await t.http.post('/api/units/update', {}, { token }), 404, 'route_not_found');
    const wrong = await t.http.get('/api/units/create', { token });
    expectErrorResponse(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('POST');
    expectErrorResponse(await t.http.post('/api/scopes', {}), 405, 'method_not_allowed');
  });
});
