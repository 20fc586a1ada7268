import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { expectErrorResponse } from '../support/ops-assert.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ operatorToken: undefined });
});
afterAll(() => t?.stop());

describe('operator routes without an operator token', () => {
  it('with no operator token configured every operator route answers 404, whatever credential is sent', async () => {
    const body = { name: 'Acme', slug: 'acme', brands: [{ slug: 'main', name: 'Main' }] };
    for (const token of [undefined, 'anything', t.operatorToken]) {
      expectErrorResponse(await t.http.post('/operator/organizations', body, { token }), 404, 'route_not_found');
      expectErrorResponse(await t.http.get('/operator/kill_switch', { token }), 404, 'route_not_found');
      expectErrorResponse(await t.http.post('/operator/kill_switch', { engaged: true }, { token }), 404, 'route_not_found');
    }
  });
});
