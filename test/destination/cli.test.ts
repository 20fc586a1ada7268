import { describe, expect, vi } from 'vitest';
import { cliRunner } from '../support/cli.ts';
import { onPostgres } from '../support/database.ts';
import { appTest, buildOrg, buildToken, type TestApp } from '../support/kit.ts';
import { WRITE } from './helpers.ts';

/**
 * `platform destinations create|list|retrieve|delete` as processes against a real server: the CLI is a client of the
 * API, whose rules the destination suites prove on both databases, so this runs in the PGlite pass only (as the
 * other CLI suites). Creating publishes nothing, so no broker is needed.
 */
vi.setConfig({ testTimeout: 120_000 });
const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { run } = cliRunner(() => t.origin);

describe.skipIf(onPostgres())('platform destinations', () => {
  test('create prints the secret once and masks the credentials; list, retrieve and delete find it; a bad template is refused', async () => {
    const org = await buildOrg(t);
    const env = { PLATFORM_API_KEY: (await buildToken(t, org, WRITE)).secret };
    const json = async (args: string[]) => {
      const out = await run(['--json', ...args], env);
      expect(out.code, out.stderr).toBe(0);
      return JSON.parse(out.stdout);
    };
    const url = 'redis://bench:cli-pa55word@127.0.0.1:6390/2';

    const created = await json([
      'destinations',
      'create',
      '--type',
      'redis',
      '--url',
      url,
      '--stream',
      'events:{type}',
      '--max-len',
      '500',
    ]);
    expect(created).toMatchObject({ type: 'redis', stream: 'events:{type}', maxLen: 500, status: 'enabled' });
    expect(created.id).toMatch(/^ed_/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.url).not.toContain('cli-pa55word');

    const listed = await run(['destinations', 'list'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(created.id);
    expect(listed.stdout).not.toContain('cli-pa55word');

    const retrieved = await json(['destinations', 'retrieve', created.id]);
    expect(retrieved).toMatchObject({ id: created.id, type: 'redis', url: created.url, stream: 'events:{type}' });
    expect(retrieved.secret ?? null).toBeNull();

    const refused = await run(['destinations', 'create', '--type', 'nats', '--url', 'nats://127.0.0.1:4222', '--subject', 'x.{nope}'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/invalid_request/);
    expect(refused.stderr).toMatch(/subject/);

    expect((await run(['destinations', 'delete', created.id], env)).code).toBe(0);
    const gone = await run(['destinations', 'retrieve', created.id], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/resource_missing/);
  });
});
