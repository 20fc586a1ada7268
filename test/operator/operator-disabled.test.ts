import { describe } from 'vitest';
import { appTest, expectErrorResponse, type TestApp } from '../support/kit.ts';

const test = appTest({ config: { operatorToken: undefined } });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

describe('operator routes without an operator token', () => {
  test('with no operator token configured every operator route answers 404, whatever credential is sent', async () => {
    const body = { name: 'Acme', slug: 'acme', brands: [{ slug: 'main', name: 'Main' }] };
    for (const token of [undefined, 'anything', t.operatorToken]) {
      expectErrorResponse(await t.http.post('/operator/organizations', body, { token }), 404, 'route_not_found');
      expectErrorResponse(await t.http.get('/operator/kill_switch', { token }), 404, 'route_not_found');
      expectErrorResponse(await t.http.post('/operator/kill_switch', { engaged: true }, { token }), 404, 'route_not_found');
    }
  });
});
