import { describe, expect } from 'vitest';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';

const test = appTest({ config: { bodyLimitBytes: 2048 } });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** The same body reader as REST (src/http/request-body.ts), answered in the GraphQL envelope. */
describe('GraphQL POST bodies', () => {
  test('a body over the limit is 413 payload_too_large in the GraphQL envelope, before auth', async () => {
    const res = await t.http.post('/graphql', { query: `{ viewer { organization { id } } } #${'x'.repeat(4096)}` });
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions.code).toBe('payload_too_large');
    expect(res.body.errors[0].message).toBe('Request body exceeds 2048 bytes');
    expect(res.body.errors[0].extensions.request_id).toBe(res.headers.get('request-id'));
  });

  test('a body under the limit is read and run', async () => {
    const { token } = await buildTenant(t, ['events:read']);
    const res = await t.http.post('/graphql', { query: `{ events(first: 1) { edges { node { id } } } } #${'x'.repeat(1500)}` }, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  test('a body that is not JSON is 415 unsupported_media_type', async () => {
    const res = await fetch(`${t.origin}/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{ __typename }' });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe(
      'unsupported_media_type',
    );
  });
});
