import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { describe, expect, vi } from 'vitest';
import { cliRunner } from '../support/cli.ts';
import { appTest, buildTenant, emitEvent, onPostgres, type TestApp } from '../support/kit.ts';

/** `platform login` and saved profiles, spawned as processes against a real server; the profiles live in the runner's XDG_CONFIG_HOME. */
vi.setConfig({ testTimeout: 120_000 }); // each command is a Node process: about a second, more on a loaded machine

const test = appTest();
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { run, profilesFile } = cliRunner(() => t.origin);
const mode = (path: string) => statSync(path).mode & 0o777;
const saved = () => JSON.parse(readFileSync(profilesFile, 'utf8'));

// The CLI's profiles are the client's, whatever the server's database: the PGlite pass proves them, as test/client/cli*.
describe.skipIf(onPostgres())('platform login and profiles', () => {
  test('login checks the key with /smoke, then saves it with the origin as the default profile, mode 0600, which later commands use', async ({
    app,
  }) => {
    const { org, token } = await buildTenant(app, ['events:read']);
    const refused = await run(['login', '--api-key', 'sk_platform_live_nope']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: invalid_token: /);
    expect(existsSync(profilesFile)).toBe(false); // nothing saved for a key the server refused

    // The key piped on standard input (typed without echo on a terminal); its scopes as /smoke names them (operations:read is implicit).
    const login = await run(['login'], {}, `${token}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toBe(
      `Logged in to ${app.origin} as organization ${org.slug} (2 scopes).\nSaved profile 'default' (the default) in ${profilesFile} (mode 0600).\n`,
    );
    expect(mode(profilesFile)).toBe(0o600);
    expect(mode(dirname(profilesFile))).toBe(0o700);
    expect(saved()).toEqual({
      default_profile: 'default',
      profiles: { default: { origin: app.origin, api_key: token, org_slug: org.slug } },
    });

    // No flag, no variable: the default profile's key and origin.
    const event = await emitEvent(app, org.id, 'payout.created');
    const listed = await run(['events', 'list', '--limit', '1'], { PLATFORM_ORIGIN: '' });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(event);
    const profiles = await run(['profiles']);
    expect(profiles.stdout).toMatch(
      new RegExp(`^PROFILE\\s+ORIGIN\\s+ORGANIZATION\\s+KEY\\ndefault \\*\\s+${app.origin}\\s+${org.slug}\\s+sk_…`),
    );
    expect(profiles.stdout).not.toContain(token.slice(0, 24));
  });

  test('a profiles file its group or others can read is refused with the fix, before any key is read or sent', async ({ app }) => {
    const { token } = await buildTenant(app, ['events:read']);
    expect((await run(['login', '--api-key', token])).code).toBe(0);
    chmodSync(profilesFile, 0o644);
    try {
      for (const args of [
        ['events', 'list'],
        ['login', '--api-key', token],
      ]) {
        const refused = await run(args);
        expect(refused.code, args.join(' ')).toBe(2);
        expect(refused.stderr).toBe(
          `error: ${profilesFile} holds API keys but its mode is 0644 (group or others have access): run \`chmod 600 ${profilesFile}\`, or delete it and log in again\n`,
        );
      }
      chmodSync(profilesFile, 0o640);
      expect((await run(['events', 'list'])).code).toBe(2);
    } finally {
      chmodSync(profilesFile, 0o600);
    }
    expect((await run(['events', 'list'])).code).toBe(0);
  });

  test('precedence: --api-key and --profile over the environment, the environment over the default profile', async ({ app }) => {
    const [first, second, third] = [
      await buildTenant(app, ['events:read']),
      await buildTenant(app, ['events:read']),
      await buildTenant(app, ['events:read']),
    ];
    expect((await run(['login', '--api-key', first.token, '--default'])).code).toBe(0);
    const login = await run(['login', '--profile', 'second', '--api-key', second.token]);
    expect(login.stdout).toContain(`Saved profile 'second' in ${profilesFile}`); // the first profile stays the default
    expect(saved().default_profile).toBe('default');

    const whoami = async (args: string[], env: Record<string, string> = {}) => {
      const r = await run(['--json', ...args, 'whoami'], env);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { orgSlug: string; profile: string | null };
      return `${out.orgSlug}${out.profile ? ` (${out.profile})` : ''}`;
    };
    const env = { PLATFORM_API_KEY: third.token };
    expect(await whoami([])).toBe(`${first.org.slug} (default)`);
    expect(await whoami([], env)).toBe(`${third.org.slug} (default)`); // the environment over the default profile
    expect(await whoami(['--profile', 'second'], env)).toBe(`${second.org.slug} (second)`); // --profile over the environment
    expect(await whoami(['--profile', 'second', '--api-key', first.token], env)).toBe(`${first.org.slug} (second)`); // --api-key over all
    expect(await whoami([], { PLATFORM_PROFILE: 'second' })).toBe(`${second.org.slug} (second)`);
    expect(await whoami([], { ...env, PLATFORM_PROFILE: 'second' })).toBe(`${third.org.slug} (second)`); // a variable names a profile below the others

    const unknown = await run(['--profile', 'staging', 'events', 'list']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      "error: No profile 'staging' (--profile): saved profiles are default, second; `platform login --profile staging` saves it\n",
    );
    const out = await run(['--profile', 'second', 'logout']);
    expect(out.code, out.stderr).toBe(0);
    expect(Object.keys(saved().profiles)).toEqual(['default']);
  });
});
