import { afterEach, describe, expect, vi } from 'vitest';
import { appTest, buildOrg, buildToken, expectPlatformError, feedEvents, type TestApp, type TestOrg } from '../support/kit.ts';

/**
 * A read (the feed here) is admitted from the credential cache and runs
 * beside the cache's freshness round trip instead of after it
 * (src/domain/action/action.ts `confirmingAdmission`); its page is answered
 * only once the admission is confirmed. A credential change that lands while
 * the read runs answers what the pipeline would have answered before it:
 * 401 for a revoked token, 503 for the kill switch, never the page.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(async ({ app }) => {
  t = app;
});
afterEach(() => vi.restoreAllMocks());

const feed = (secret: string) => t.http.get('/v1/platform/events?limit=5', { token: secret });
const revoke = (org: TestOrg, id: string) => t.http.post('/platform/tokens/revoke', { token_id: id }, { token: org.userToken });
const killSwitch = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });

/** Runs `change` after the feed request was admitted, just before its page statement. */
function beforeThePage(change: () => Promise<void>) {
  const sql = t.app.deps.db.sql;
  const rows = sql.rows.bind(sql);
  let once = false;
  vi.spyOn(sql, 'rows').mockImplementation(async (s, params) => {
    if (!once && s.name.startsWith('event_feed_page')) {
      once = true;
      await change();
    }
    return rows(s, params);
  });
}

async function reader() {
  const org = await buildOrg(t);
  const token = await buildToken(t, org, ['events:read']);
  // Twice, so the token and the brand are certainly in the cache.
  for (let i = 0; i < 2; i++) expect((await feed(token.secret)).status).toBe(200);
  return { org, token };
}

describe('a read answers only once its admission is confirmed', () => {
  test('a token revoked while its feed page is read answers 401, not the page', async () => {
    const { org, token } = await reader();
    beforeThePage(async () => expect((await revoke(org, token.id)).status).toBe(200));
    expectPlatformError(await feed(token.secret), 401, 'invalid_token');
    vi.restoreAllMocks();
    expectPlatformError(await feed(token.secret), 401, 'invalid_token');
  });

  test('the kill switch engaged while a feed page is read answers 503, not the page', async () => {
    const { token } = await reader();
    beforeThePage(async () => expect((await killSwitch(true)).status).toBe(200));
    try {
      expectPlatformError(await feed(token.secret), 503, 'developer_access_paused');
    } finally {
      expect((await killSwitch(false)).status).toBe(200);
    }
    vi.restoreAllMocks();
    expect(await feedEvents(t, token.secret)).toEqual([]);
  });

  test('a credential change elsewhere while a page is read still answers the page (read again after confirming)', async () => {
    const { token } = await reader();
    const other = await buildOrg(t);
    const otherToken = await buildToken(t, other, ['events:read']);
    beforeThePage(async () => expect((await revoke(other, otherToken.id)).status).toBe(200));
    const res = await feed(token.secret);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', data: [], has_more: false });
  });
});
