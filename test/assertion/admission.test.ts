import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, vi } from 'vitest';
import {
  appTest,
  buildOrg,
  buildToken,
  expectPlatformError,
  onPostgres,
  secondAppOnPostgres,
  type TestApp,
  type TestOrg,
} from '../support/kit.ts';
import { HttpClient } from '../support/http.ts';
import { api, expectStatus } from './helpers.ts';

/**
 * The assertion write is admitted from the credential cache and its
 * freshness round trip runs beside the first batch (request-auth.ts
 * `authorizeProvisionally`); the admission is confirmed before the commit.
 * A credential change that lands before the commit refuses the write as the
 * pipeline would have (401 revoked, 503 kill switch) and changes nothing:
 * no entity, no claim, no event.
 */
const test = appTest();
/** The file's app, for the tests and helpers below. */
let t: TestApp;
const second = secondAppOnPostgres(test);
test.beforeAll(({ app }) => void (t = app));
afterEach(() => vi.restoreAllMocks());

async function tenant() {
  const org = await buildOrg(t);
  const writer = await buildToken(t, org, ['assertions:write', 'assertions:read']);
  const reader = await buildToken(t, org, ['assertions:read', 'events:read']);
  return { org, writer, reader: api(t, reader.secret), write: api(t, writer.secret) };
}

/**
 * Runs `change` after the request was admitted and before its transaction's first batch. Only the write's
 * transaction triggers it (opened by the keyed runner, runIdempotentBatched, on the caller's stack): a background
 * loop's transaction on the same port (the sequencer's, the fan-out's, the operations worker's) may come first on
 * a loaded machine, and injecting the change there would let the write race it.
 */
async function beforeTheWrite(change: () => Promise<void>) {
  await t.app.sequencer.flush();
  await t.app.webhooks.drain();
  const sql = t.app.deps.db.sql;
  const transaction = sql.transaction.bind(sql);
  let once = false;
  vi.spyOn(sql, 'transaction').mockImplementation(async (fn) => {
    if (!once && new Error().stack?.includes('runIdempotentBatched')) {
      once = true;
      await change();
    }
    return transaction(fn);
  });
}

async function expectNothingWritten(reader: ReturnType<typeof api>, subject: Record<string, string>) {
  expect(expectStatus(await reader.list(subject), 200).data).toEqual([]);
  await t.app.sequencer.flush();
  const events = await reader.events();
  expect(events.filter((e) => JSON.stringify(e).includes(subject.external_user_id!))).toEqual([]);
}

const revoke = (org: TestOrg, id: string, http = t.http) =>
  http.post('/platform/tokens/revoke', { token_id: id }, { token: org.userToken });
const killSwitch = (engaged: boolean) => t.http.post('/operator/kill_switch', { engaged }, { token: t.operatorToken });

describe('assertion writes confirm their admission before the commit', () => {
  test('a token revoked after admission and before the write commits nothing: 401', async () => {
    const { org, writer, reader, write } = await tenant();
    expectStatus(await write.assert({ external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'warm' }), 201);
    const subject = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example' };
    await beforeTheWrite(async () => expect((await revoke(org, writer.id)).status).toBe(200));
    expectPlatformError(await write.assert({ ...subject, key: 'verified' }), 401, 'invalid_token');
    vi.restoreAllMocks();
    await expectNothingWritten(reader, subject);
    expectPlatformError(await write.assert({ ...subject, key: 'verified' }), 401, 'invalid_token');
  });

  test('the kill switch engaged after admission and before the write commits nothing: 503', async () => {
    const { reader, write } = await tenant();
    expectStatus(await write.assert({ external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'warm' }), 201);
    const subject = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example' };
    await beforeTheWrite(async () => expect((await killSwitch(true)).status).toBe(200));
    try {
      expectPlatformError(await write.assert({ ...subject, key: 'verified' }), 503, 'developer_access_paused');
    } finally {
      expect((await killSwitch(false)).status).toBe(200);
    }
    vi.restoreAllMocks();
    await expectNothingWritten(reader, subject);
    expectStatus(await write.assert({ ...subject, key: 'verified' }), 201);
  });

  test('a refusal wins over what the route would have answered (an unknown entity is 401, not 404)', async () => {
    const { org, writer, write } = await tenant();
    expectStatus(await write.assert({ external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'warm' }), 201);
    await beforeTheWrite(async () => expect((await revoke(org, writer.id)).status).toBe(200));
    expectPlatformError(await write.assert({ entity: `ent_${'0'.repeat(32)}`, key: 'verified' }), 401, 'invalid_token');
  });

  test.skipIf(!onPostgres())('a token revoked by another process just before the write commits nothing: 401', async () => {
    const { org, writer, reader, write } = await tenant();
    for (let i = 0; i < 2; i++)
      expectStatus(await write.assert({ external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'warm' }), 201);
    const subject = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example' };
    // Committed on process B: this process learns of it only through its LISTEN connection.
    expect((await revoke(org, writer.id, new HttpClient(second()!.origin))).status).toBe(200);
    expectPlatformError(await write.assert({ ...subject, key: 'verified' }), 401, 'invalid_token');
    await expectNothingWritten(reader, subject);
  });
});
