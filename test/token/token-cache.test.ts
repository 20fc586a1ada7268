import { afterAll, describe, expect } from 'vitest';
import { appTest, buildOrg, buildToken, onPostgres, startSecondApp, type TestApp, type TestOrg } from '../support/kit.ts';
import { HttpClient } from '../support/http.ts';

/**
 * Authenticated tokens are cached per process (no database round trip per
 * request); a revoked, rotated or expired token must still fail on the very
 * next request, here and, on PostgreSQL, on a second process sharing the
 * database.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let b: Awaited<ReturnType<typeof startSecondApp>> | undefined;
let onB: HttpClient | undefined;
test.beforeAll(async ({ app }) => {
  t = app;
  if (onPostgres()) {
    b = await startSecondApp(t);
    onB = new HttpClient(b.origin);
  }
});
afterAll(async () => {
  await b?.stop();
});

const feed = (http: HttpClient, secret: string) => http.get('/v1/platform/events', { token: secret });
const revoke = (org: TestOrg, id: string) => t.http.post('/platform/tokens/revoke', { token_id: id }, { token: org.userToken });
const rotate = (org: TestOrg, id: string) => t.http.post('/platform/tokens/rotate', { token_id: id }, { token: org.userToken });

/** Two requests each, so the token is certainly in the cache of the process. */
async function warm(http: HttpClient, secret: string) {
  for (let i = 0; i < 2; i++) expect((await feed(http, secret)).status).toBe(200);
}

describe('token cache', () => {
  test('a revoked token answers 401 on the very next request of the process that cached it', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(t.http, tok.secret);
    expect((await revoke(org, tok.id)).status).toBe(200);
    const res = await feed(t.http, tok.secret);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
  });

  test('a rotated token answers 401 on the very next request; its replacement works at once', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(t.http, tok.secret);
    const rotated = await rotate(org, tok.id);
    expect(rotated.status, rotated.text).toBe(200);
    expect((await feed(t.http, tok.secret)).status).toBe(401);
    expect((await feed(t.http, rotated.body.secret)).status).toBe(200);
  });

  test('a cached token past its expires_at (by the injected clock) answers 401', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read'], { expires_at: new Date(t.clock.now().getTime() + 3_600_000).toISOString() });
    await warm(t.http, tok.secret);
    t.clock.advance(3_600_000);
    expect((await feed(t.http, tok.secret)).status).toBe(401);
  });

  test('a cached token still records last_used_at, at most once a minute', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(t.http, tok.secret);
    const lastUsed = async () => {
      const list = await t.http.get('/platform/tokens', { token: org.userToken });
      return (list.body.data ?? list.body.tokens ?? list.body).find((x: { id: string }) => x.id === tok.id).last_used_at;
    };
    const first = await lastUsed();
    expect(first).toBe(t.clock.now().toISOString());
    t.clock.advance(30_000);
    await feed(t.http, tok.secret);
    expect(await lastUsed()).toBe(first);
    t.clock.advance(31_000);
    await feed(t.http, tok.secret);
    expect(await lastUsed()).toBe(t.clock.now().toISOString());
  });

  test.skipIf(!onPostgres())('revoked through process A, the token answers 401 on the very next request to process B', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(onB!, tok.secret);
    await warm(t.http, tok.secret);
    expect((await revoke(org, tok.id)).status).toBe(200);
    const res = await feed(onB!, tok.secret);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('invalid_token');
  });

  test.skipIf(!onPostgres())('rotated through process A, the old token answers 401 on the very next request to process B', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(onB!, tok.secret);
    const rotated = await rotate(org, tok.id);
    expect(rotated.status, rotated.text).toBe(200);
    expect((await feed(onB!, tok.secret)).status).toBe(401);
    expect((await feed(onB!, rotated.body.secret)).status).toBe(200);
  });

  test.skipIf(!onPostgres())('the kill switch engaged through process A pauses process B on its very next request', async () => {
    const org = await buildOrg(t);
    const tok = await buildToken(t, org, ['events:read']);
    await warm(onB!, tok.secret);
    const set = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });
    expect((await set(true)).status).toBe(200);
    try {
      expect((await feed(onB!, tok.secret)).status).toBe(503);
    } finally {
      expect((await set(false)).status).toBe(200);
    }
    expect((await feed(onB!, tok.secret)).status).toBe(200);
  });
});
