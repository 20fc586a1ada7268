import { describe, expect } from 'vitest';
import { appTest, expectPlatformError, type TestApp } from '../support/kit.ts';
import { drain, launch, operationsConfig, sandbox, tenant } from './helpers.ts';

const test = appTest({ config: operationsConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('bad input: a 4xx envelope and nothing changed', () => {
  test('create: every malformed body is refused before anything is written', async () => {
    const who = await tenant(t);
    const cases: [unknown, string][] = [
      [{ budget: 1, deployments: [sandbox()] }, 'name'],
      [{ name: 'x', budget: -1, deployments: [sandbox()] }, 'budget'],
      [{ name: 'x', budget: 1.5, deployments: [sandbox()] }, 'budget'],
      [{ name: 'x', budget: '100', deployments: [sandbox()] }, 'budget'],
      [{ name: 'x', budget: 1, deployments: [] }, 'deployments'],
      [{ name: 'x', budget: 1, deployments: [{ provider: 'acme' }] }, 'deployments.0.provider'],
      [{ name: 'x', budget: 1, deployments: [sandbox({ outcome: 'maybe' })] }, 'deployments.0.config.outcome'],
      [{ name: 'x', budget: 1, deployments: [sandbox({ colour: 'red' })] }, 'deployments.0.config.colour'],
      [{ name: 'x', budget: 10, deployments: [sandbox({ spend: 11 })] }, 'budget'],
      [{ name: 'x', budget: 1, deployments: [sandbox()], extra: true }, 'extra'],
    ];
    for (const [body, param] of cases)
      expectPlatformError(await t.http.post('/v1/platform/distributions', body, { token: who.token }), 400, 'invalid_request', param);
    expectPlatformError(
      await t.http.post('/v1/platform/distributions', undefined, { token: who.token, raw: '{"name":' }),
      400,
      'invalid_request',
    );
    for (const list of ['/v1/platform/distributions', '/v1/platform/operations']) {
      const res = await t.http.get(list, { token: who.token });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data, list).toEqual([]);
    }
  });

  test('operations list: invalid_status, limit bounds, cursors, subject ids (prefixed or bare uuid)', async () => {
    const who = await tenant(t);
    const { operation, distribution } = await launch(t, who, { deployments: [sandbox()] });
    await drain(t);
    const get = (q: string) => t.http.get(`/v1/platform/operations${q}`, { token: who.token });
    expectPlatformError(await get('?status=finished'), 400, 'invalid_status', 'status');
    expectPlatformError(await get('?limit=0'), 400, 'invalid_request', 'limit');
    expectPlatformError(await get('?limit=101'), 400, 'invalid_request', 'limit');
    expectPlatformError(await get('?starting_after=evt_123'), 404, 'resource_missing', 'starting_after');
    expectPlatformError(await get('?bogus=1'), 400, 'invalid_request', 'bogus');
    expectPlatformError(await get(`/${distribution.id}`), 404, 'resource_missing');
    const hex = distribution.id.slice('dist_'.length);
    const dashed = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    for (const id of [distribution.id, hex, dashed]) {
      const res = await get(`?subject_id=${id}&status=succeeded`);
      expect(
        res.body.data.map((o: any) => o.id),
        id,
      ).toEqual([operation.id]);
    }
    const page1 = await get('?limit=1');
    expect(page1.body).toMatchObject({ object: 'list', has_more: true });
    const page2 = await get(`?limit=100&startingAfter=${page1.body.data[0].id}`);
    expect(page2.body.data.map((o: any) => o.id)).not.toContain(page1.body.data[0].id);
    expect(page2.body.has_more).toBe(false);
  });

  test('verbs on unknown or foreign distributions are 404 and scopes are enforced per verb', async () => {
    const who = await tenant(t);
    const other = await tenant(t);
    const { distribution } = await launch(t, other, { deployments: [sandbox()] });
    for (const v of ['pause', 'resume', 'cancel', 'launch']) {
      expectPlatformError(
        await t.http.post(`/v1/platform/distributions/${distribution.id}/${v}`, undefined, { token: who.token }),
        404,
        'resource_missing',
      );
    }
    expectPlatformError(await t.http.get(`/v1/platform/distributions/${distribution.id}`, { token: who.token }), 404, 'resource_missing');
    const readOnly = await tenant(t, ['distributions:read']);
    expectPlatformError(
      await t.http.post(`/v1/platform/distributions/${distribution.id}/cancel`, undefined, { token: readOnly.token }),
      403,
      'missing_scope',
    );
    expectPlatformError(await t.http.get('/v1/platform/deployments', { token: readOnly.token }), 403, 'missing_scope');
    const writer = await tenant(t, ['distributions:write']);
    expectPlatformError(
      await t.http.post(`/v1/platform/distributions/${distribution.id}/launch`, undefined, { token: writer.token }),
      403,
      'missing_scope',
    );
    // operations:read is implicit on every token.
    expect((await t.http.get('/v1/platform/operations', { token: readOnly.token })).status).toBe(200);
    // Operator routes answer in the operator surface's envelope ({ error: code, message }).
    const operator = async (path: string, body: unknown, token: string, status: number, code: string) => {
      const res = await t.http.post(path, body, { token });
      expect([res.status, res.body.error], res.text).toEqual([status, code]);
    };
    await operator(`/operator/brands/${who.brand}/wallet/top_up`, { amount: 0 }, t.operatorToken, 400, 'invalid_request');
    await operator(`/operator/brands/${who.brand}/wallet/top_up`, { amount: 1.5 }, t.operatorToken, 400, 'invalid_request');
    await operator(`/operator/brands/${who.brand}/wallet/top_up`, { amount: 10 }, who.token, 401, 'invalid_token');
    await operator('/operator/brands/brand_nope/wallet/top_up', { amount: 10 }, t.operatorToken, 404, 'resource_missing');
    const wallet = await t.http.get(`/operator/brands/${who.brand}/wallet`, { token: t.operatorToken });
    expect(wallet.body.balance).toBe(0);
  });
});
