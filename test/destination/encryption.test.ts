import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect } from 'vitest';
import { parseEncryptionKeys } from '../../src/config.ts';
import { decryptSecret } from '../../src/domain/encryption.ts';
import { findEndpointById } from '../../src/domain/webhook/store.ts';
import { TEST_ENCRYPTION_KEYS } from '../support/app.ts';
import { cliRunner } from '../support/cli.ts';
import { appTest, buildTenant, createPersistentDatabase, expectPlatformError, startAppOn, type TestApp } from '../support/kit.ts';
import { WRITE, destinations } from './helpers.ts';

/**
 * A destination's broker URL is stored encrypted (AES-256-GCM, ENCRYPTION_KEYS): the column holds a ciphertext that
 * names its key, answers show the URL masked, a server without a key refuses credentials, and after a key rotation
 * the old key (listed second) still decrypts until `platform reencrypt-credentials` has moved everything to the new one.
 */
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

const URL_WITH_CREDENTIALS = 'amqps://publisher:hunter2@broker.example:5671/prod';
const body = { type: 'rabbitmq', url: URL_WITH_CREDENTIALS, exchange: 'events' };
const newKey = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('at rest', () => {
  test('the stored URL is a ciphertext naming the current key, bound to its row; the url column holds the masked form', async () => {
    const { token } = await buildTenant(t, WRITE);
    const d = (await destinations(t, token).create(body)).body.event_destination;
    const row = (await findEndpointById(t.app.deps.db.prisma, d.id))!;
    expect(row.url).toBe('amqps://publisher:***@broker.example:5671/prod');
    expect(row.urlCiphertext).toMatch(/^v1\.test1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(row.urlCiphertext).not.toContain('hunter2');
    const keys = parseEncryptionKeys(TEST_ENCRYPTION_KEYS);
    expect(decryptSecret(keys, row.urlCiphertext!, d.id)).toBe(URL_WITH_CREDENTIALS);
    // Bound to its row: the same ciphertext does not open as another destination's.
    expect(() => decryptSecret(keys, row.urlCiphertext!, 'ed_00000000000000000000000000000000')).toThrow(/does not decrypt/);
    // A URL without credentials has nothing to hide and is stored as it is.
    const plain = (await destinations(t, token).create({ ...body, url: 'amqps://broker.example' })).body.event_destination;
    expect((await findEndpointById(t.app.deps.db.prisma, plain.id))!.urlCiphertext).toBeNull();
  });

  test('without a key, credentials are 400 encryption_key_not_configured on create and update; a URL without them is accepted', async () => {
    const { token } = await buildTenant(t, WRITE);
    const config = t.app.deps.config;
    const keys = config.encryptionKeys;
    config.encryptionKeys = [];
    try {
      expectPlatformError(await destinations(t, token).create(body), 400, 'encryption_key_not_configured', 'url');
      const plain = await destinations(t, token).create({ ...body, url: 'amqps://broker.example' });
      expect(plain.status, plain.text).toBe(201);
      const id = plain.body.event_destination.id;
      expectPlatformError(
        await destinations(t, token).update(id, { url: URL_WITH_CREDENTIALS }),
        400,
        'encryption_key_not_configured',
        'url',
      );
      const gql = await t.http.graphql(
        'mutation($url: String!) { createEventDestination(type: RABBITMQ, url: $url, exchange: "e") { id } }',
        { url: URL_WITH_CREDENTIALS },
        { token },
      );
      expect(gql.body.errors[0].extensions).toMatchObject({ code: 'encryption_key_not_configured', param: 'url' });
    } finally {
      config.encryptionKeys = keys;
    }
  });
});

describe('key rotation', () => {
  const cli = cliRunner(() => 'http://127.0.0.1:9');
  const held: { drop(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const h of held) await h.drop();
  });

  test('the old key listed second still decrypts; reencrypt-credentials moves every ciphertext to the first key', async () => {
    const db = await createPersistentDatabase();
    held.push(db);
    const [k1, k2, k3] = [newKey('k1'), newKey('k2'), newKey('k3')];
    const operatorToken = `op_test_${randomBytes(16).toString('hex')}`;
    const serve = (keys: string) => startAppOn(db, { operatorToken, encryptionKeys: parseEncryptionKeys(keys) });

    let app = await serve(k1);
    const { token } = await buildTenant({ http: app.http, operatorToken }, WRITE);
    const d = (await destinations(app, token).create(body)).body.event_destination;
    const stored = async () => (await findEndpointById(app.app.deps.db.prisma, d.id))!.urlCiphertext!;
    expect(await stored()).toMatch(/^v1\.k1\./);
    await app.stop();

    // The new key first, the old one second: a server still reads what the old key encrypted, and the command moves it.
    const server = { DATABASE_URL: db.databaseUrl ?? '', DATA_DIR: db.dataDir, LOG_LEVEL: 'silent' };
    const moved = await cli.run(['--json', 'reencrypt-credentials'], { ...server, ENCRYPTION_KEYS: `${k2},${k1}` });
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({ key: 'k2', reencrypted: 1, current: 0, undecryptable: [] });
    // A key that opens none of them: the command names what it could not read and exits 1.
    const lost = await cli.run(['--json', 'reencrypt-credentials'], { ...server, ENCRYPTION_KEYS: k3 });
    expect(lost.code).toBe(1);
    expect(JSON.parse(lost.stdout)).toEqual({ key: 'k3', reencrypted: 0, current: 0, undecryptable: [d.id] });

    app = await serve(k2); // the old key is gone: everything is under k2
    expect(await stored()).toMatch(/^v1\.k2\./);
    expect(decryptSecret(parseEncryptionKeys(k2), await stored(), d.id)).toBe(URL_WITH_CREDENTIALS);
    const again = await destinations(app, token).get(d.id);
    expect(again.body.event_destination.url).toBe('amqps://publisher:***@broker.example:5671/prod');
    await app.stop();
  }, 240_000);
});
