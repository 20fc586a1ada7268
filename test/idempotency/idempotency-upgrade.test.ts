import { randomBytes, randomUUID } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { fingerprint } from '../../src/domain/idempotency/idempotency.ts';
import { buildOrg, buildToken, createPersistentDatabase, startAppOn, type PersistentDatabase, type RunningApp } from '../support/kit.ts';

/**
 * One idempotency record format (docs/adr/0011-idempotency-record-format.md):
 * records written before the upgrade, a REST response with its status (the
 * versions before the action seam) or an action's bare value (the seam's
 * first format), are converted by the migration and replay after the upgrade
 * exactly as the first request was answered, without running the effect
 * again. The database is taken back to the state before the migration (its
 * column restored, its row in `_prisma_migrations` removed), given records in
 * the old formats, and the app's start applies the migration as a deploy
 * would.
 */
const MIGRATION = '20261127200000_idempotency_one_format';
const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
let database: PersistentDatabase | undefined;
let app: RunningApp | undefined;
afterAll(async () => {
  await app?.stop();
  await database?.drop();
});

/** SQL on the database while no app runs on it. */
async function onDatabase(db: PersistentDatabase, statements: { text: string; values?: unknown[] }[]) {
  if (db.databaseUrl) {
    const client = new pg.Client({ connectionString: db.databaseUrl });
    await client.connect();
    try {
      for (const s of statements) await client.query(s.text, s.values);
    } finally {
      await client.end();
    }
  } else {
    const pglite = new PGlite(db.dataDir);
    await pglite.waitReady;
    try {
      for (const s of statements) await pglite.query(s.text, s.values);
    } finally {
      await pglite.close();
    }
  }
}

const hex = () => randomBytes(16).toString('hex');
const endpointValue = () => ({
  id: `we_${hex()}`,
  object: 'webhook_endpoint',
  url: 'https://example.com/hook',
  enabled_events: ['*'],
  status: 'enabled',
  secret: `whsec_${randomBytes(32).toString('base64')}`,
  created_at: '2026-11-25T10:00:00.000Z',
});

describe('idempotency records written before the upgrade', () => {
  test('replay after the migration as they first answered, and run nothing again', { timeout: 120_000 }, async () => {
    database = await createPersistentDatabase();
    app = await startAppOn(database, { operatorToken });
    const org = await buildOrg({ http: app.http, operatorToken });
    const { secret } = await buildToken({ http: app.http, operatorToken }, org, ['assertions:write', 'assertions:read', 'webhooks:write']);
    const now = app.clock.now().getTime();
    await app.stop();
    app = undefined;

    const assertionInput = { external_user_id: `u-${randomUUID()}`, issuer: 'https://idp.example', key: 'verified' };
    const legacyAssertion = {
      id: `asrt_${hex()}`,
      object: 'assertion',
      entity: `ent_${hex()}`,
      key: 'verified',
      action: 'asserted',
      value: null,
      created_at: '2026-11-25T10:00:00.000Z',
    };
    const legacyEndpoint = endpointValue();
    const seamEndpoint = endpointValue();
    const endpointInput = (n: number) => ({ url: `https://example.com/hook/${n}` });
    const record = (key: string, print: string, body: unknown, status: number | null) => ({
      text: `INSERT INTO idempotency_record (namespace, key, fingerprint, state, response_status, response_body, created_at, expires_at)
             VALUES ($1, $2, $3, 'complete', $4, $5::json, $6::timestamptz, $7::timestamptz)`,
      values: [`b:${org.id}`, key, print, status, JSON.stringify(body), new Date(now), new Date(now + 3_600_000)],
    });
    await onDatabase(database, [
      { text: 'ALTER TABLE idempotency_record ADD COLUMN response_status INTEGER' },
      { text: 'DELETE FROM _prisma_migrations WHERE migration_name = $1', values: [MIGRATION] },
      // A batched action's REST response (201), an enveloped one (201), and the seam's bare value (status NULL).
      record('legacy-assertion', fingerprint('assertions.create', null, assertionInput), legacyAssertion, 201),
      record('legacy-endpoint', fingerprint('webhook_endpoints.create', null, endpointInput(1)), { webhook_endpoint: legacyEndpoint }, 201),
      record('seam-endpoint', fingerprint('webhook_endpoints.create', null, endpointInput(2)), seamEndpoint, null),
    ]);

    app = await startAppOn(database, { operatorToken });
    const post = (path: string, body: unknown, key: string) =>
      app!.http.post(path, body, { token: secret, headers: { 'idempotency-key': key } });

    const asserted = await post('/v1/platform/assertions', assertionInput, 'legacy-assertion');
    expect(asserted.status, asserted.text).toBe(201);
    expect(asserted.headers.get('idempotent-replayed')).toBe('true');
    expect(asserted.body).toEqual(legacyAssertion);
    // The replay ran nothing: no assertion of that user exists.
    const listed = await app.http.get(
      `/v1/platform/assertions?external_user_id=${assertionInput.external_user_id}&issuer=${encodeURIComponent(assertionInput.issuer)}`,
      { token: secret },
    );
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.data).toEqual([]);

    const legacy = await post('/v1/platform/webhook_endpoints', endpointInput(1), 'legacy-endpoint');
    expect(legacy.status, legacy.text).toBe(201);
    expect(legacy.headers.get('idempotent-replayed')).toBe('true');
    expect(legacy.body).toEqual({ webhook_endpoint: legacyEndpoint });

    const seam = await post('/v1/platform/webhook_endpoints', endpointInput(2), 'seam-endpoint');
    expect(seam.status, seam.text).toBe(201);
    expect(seam.headers.get('idempotent-replayed')).toBe('true');
    expect(seam.body).toEqual({ webhook_endpoint: seamEndpoint });

    // A key replays only the request it was first used for, converted or not.
    const other = await post('/v1/platform/webhook_endpoints', endpointInput(3), 'legacy-endpoint');
    expect(other.status, other.text).toBe(409);
  });
});
