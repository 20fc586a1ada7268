import { expect } from 'vitest';
import { appTest, buildTenant } from '../support/kit.ts';

/** Own file: the kill switch is process-wide state. */
const test = appTest();

test('an engaged kill switch answers 503 developer_access_paused on every Surface B route and GraphQL operation, before auth', async ({
  app: t,
}) => {
  const { token } = await buildTenant(t, ['events:read', 'webhooks:write']);
  const set = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });
  expect((await set(true)).status).toBe(200);
  try {
    const requests = [
      t.http.get('/v1/platform/events', { token }),
      t.http.post('/v1/platform/webhook_endpoints', { url: 'https://example.com' }, { token }),
      t.http.get('/v1/platform/webhook_endpoints/we_00000000000000000000000000000000'),
      t.http.get('/v1/platform/events', { token: 'sk_test_abc' }),
      t.http.get('/v1/platform/no_such_route'),
    ];
    for (const res of await Promise.all(requests)) {
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('developer_access_paused');
    }
    const gql = await t.http.graphql('{ viewer { scopes } }', {}, { token });
    expect(gql.status).toBe(503);
    expect(gql.body.errors[0].extensions.code).toBe('developer_access_paused');
    // Surface A is not Surface B: it keeps working.
    expect((await t.http.get('/api/scopes')).status).toBe(200);
  } finally {
    await set(false);
  }
  expect((await t.http.get('/v1/platform/events', { token })).status).toBe(200);
});
