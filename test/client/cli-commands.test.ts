import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, vi } from 'vitest';
import { startReceiver, webhookConfig, type Receiver } from '../webhook/receiver.ts';
import { cliRunner } from '../support/cli.ts';
import { appTest, buildOrg, buildToken, type TestApp, type TestOrg } from '../support/kit.ts';
import { onPostgres } from '../support/database.ts';

/**
 * The CLI is a client of the HTTP API: what these commands prove is client behaviour, and every API rule they touch is
 * proven on both databases by the API suites, so they run in the PGlite pass only (each command is a process: minutes).
 */
const clientSideOnly = onPostgres();

/** The resource commands of the `platform` CLI, as processes against a real server (each command about a second). */
vi.setConfig({ testTimeout: 180_000 });

const test = appTest({ config: webhookConfig() });
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { cwd, run } = cliRunner(() => t.origin);
let org: TestOrg;
let env: Record<string, string>;
let receiver: Receiver;
test.beforeAll(async ({ app }) => {
  org = await buildOrg(app);
  const token = await buildToken(app, org, [
    'webhooks:read',
    'webhooks:write',
    'events:read',
    'assertions:read',
    'assertions:write',
    'distributions:read',
    'distributions:write',
    'distributions:launch',
  ]);
  env = { PLATFORM_API_KEY: token.secret, PLATFORM_OPERATOR_TOKEN: app.operatorToken };
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

const json = async (args: string[]) => {
  const out = await run(['--json', ...args], env);
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout);
};

describe.skipIf(clientSideOnly)('platform --version and completion', () => {
  test('--version prints the package version; the bash completion completes commands and options', async () => {
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);

    const script = await run(['completion', 'bash']);
    expect(script.code).toBe(0);
    writeFileSync(join(cwd, 'completion.bash'), script.stdout);
    const complete = (...words: string[]) =>
      execFileSync(
        'bash',
        [
          '-c',
          `source completion.bash; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _platform_complete; echo "\${COMPREPLY[*]}"`,
        ],
        { cwd, encoding: 'utf8' },
      ).trim();
    expect(complete('platform', 'web')).toBe('webhooks');
    expect(complete('platform', 'webhooks', '').split(' ')).toEqual(
      expect.arrayContaining(['create', 'list', 'get', 'update', 'rotate', 'delete', 'deliveries', 'resend']),
    );
    expect(complete('platform', 'webhooks', 'create', '--ur')).toBe('--url');
    expect((await run(['completion', 'fish'])).code).toBe(2);
  });
});

describe.skipIf(clientSideOnly)('platform webhooks, events, trigger and verify', () => {
  test('an endpoint through its life; a triggered event is listed, fetched, delivered, verified from the saved request and resent', async () => {
    const created = await run(
      ['webhooks', 'create', '--url', receiver.url('/cli'), '--events', 'assertion.created', '--description', 'cli'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.match(/we_[0-9a-f]+/)![0];
    const secret = created.stdout.match(/whsec_\S+/)![0];
    expect((await json(['webhooks', 'list'])).map((e: { id: string }) => e.id)).toContain(id);
    expect(await json(['webhooks', 'get', id])).toMatchObject({ id, url: receiver.url('/cli'), enabledEvents: ['assertion.created'] });
    expect((await run(['webhooks', 'update', id], env)).code).toBe(2); // nothing to change

    const trigger = await json(['trigger', 'assertion.created', '--data', '{"note":"from the cli"}']);
    expect(trigger.id).toMatch(/^evt_/);
    await t.app.sequencer.flush();
    const listed = await json(['events', 'list', '--type', 'assertion.created']);
    expect(listed.map((e: { id: string }) => e.id)).toContain(trigger.id);
    const event = await json(['events', 'get', trigger.id]);
    expect(event).toMatchObject({ id: trigger.id, type: 'assertion.created', data: { note: 'from the cli', test: true } });
    expect((await run(['events', 'get', 'evt_nope'], env)).code).toBe(1);

    const [delivered] = await receiver.waitFor(1, '/cli');
    writeFileSync(join(cwd, 'body.json'), delivered!.body);
    const h = (name: string) => `${name}:${delivered!.headers[name]}`;
    const headerArgs = ['--header', h('webhook-id'), h('webhook-timestamp'), h('webhook-signature')];
    const verified = await run(['verify', '--secret', secret, '--body', 'body.json', ...headerArgs], env);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain(`Verified ${trigger.id}`);
    const fromStdin = await run(['verify', '--secret', secret, '--body', '-', ...headerArgs], env, delivered!.body);
    expect(fromStdin.code, fromStdin.stderr).toBe(0);
    writeFileSync(join(cwd, 'tampered.json'), delivered!.body.replace('from the cli', 'from elsewhere'));
    const tampered = await run(['verify', '--secret', secret, '--body', 'tampered.json', ...headerArgs], env);
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toContain('webhook_signature_invalid');

    const deliveries = await json(['webhooks', 'deliveries', id]);
    expect(deliveries[0]).toMatchObject({ eventId: trigger.id, status: 'succeeded' });
    const resend = await run(['webhooks', 'resend', id, deliveries[0].id], env);
    expect(resend.code).toBe(1); // only a failing or exhausted delivery is re-queued
    expect(resend.stderr).toMatch(/^error: \w+: /);

    const disabled = await json(['webhooks', 'update', id, '--disable']);
    expect(disabled.status).toBe('disabled');
    const rotated = await run(['webhooks', 'rotate', id], env);
    expect(rotated.stdout).toMatch(/New signing secret \(shown once\): whsec_/);
    expect((await run(['webhooks', 'delete', id], env)).code).toBe(0);
    expect((await run(['webhooks', 'get', id], env)).code).toBe(1);
  });

  test('bad options are usage errors (exit 2) before anything is sent', async () => {
    for (const args of [
      ['webhooks', 'list', '--limit', '0'],
      ['trigger', 'assertion.created', '--data', '[1]'],
      ['verify', '--secret', 'whsec_x', '--body', 'body.json', '--header', 'nocolon'],
      ['assertions', 'create', '--key', 'k'],
      ['distributions', 'create', '--name', 'x', '--budget', '-1', '--deployment', '{}'],
      ['listen', '--forward-to', 'not a url'],
      ['listen', '--forward-to', 'ftp://127.0.0.1/x'],
    ]) {
      const out = await run(args, env);
      expect(out.code, `${args.join(' ')}: ${out.stderr}`).toBe(2);
    }
  });
});

describe.skipIf(clientSideOnly)('platform listen', () => {
  test('a failed forward says why and is retried; --json and text carry the same camelCase data', async () => {
    receiver.on('/flaky', (_req, res) => {
      res.statusCode = 500;
      res.end('receiver exploded');
    });
    const { start } = cliRunner(() => t.origin);
    const listen = start(['listen', '--forward-to', receiver.url('/flaky'), '--retries', '1', '--events', 'assertion.created'], env);
    const until = async (cond: () => boolean) => {
      const deadline = Date.now() + 30_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`listen printed: ${listen.out.stdout}${listen.out.stderr}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until(() => listen.out.stderr.includes('Session signing secret'));
    // The stream is open once the subscription is acknowledged; send until a line comes back.
    for (let i = 0; !listen.out.stdout && i < 20; i++) {
      await json(['trigger', 'assertion.created', '--data', '{"someKey":"v","snake_key":1}']);
      await t.app.sequencer.flush();
      await until(() => listen.out.stdout.length > 0 || receiver.for('/flaky').length > 0).catch(() => {});
    }
    await until(() => listen.out.stdout.includes('\n'));
    listen.child.kill('SIGINT');
    expect(await listen.exited).toBe(0);
    const line = listen.out.stdout.split('\n')[0]!;
    expect(line).toContain('failed: HTTP 500: receiver exploded');
    expect(line).toContain('2 attempts');
    expect(line).toContain('"snakeKey":1'); // the client library's camelCase, as --json prints it
    expect(receiver.for('/flaky').length).toBeGreaterThanOrEqual(2);
  });
});

describe.skipIf(clientSideOnly)('platform assertions and distributions', () => {
  test('create, list and revoke a claim; create, list and get a distribution', async () => {
    const made = await json(['assertions', 'create', '--external-user-id', 'u-1', '--issuer', 'cli', '--key', 'verified']);
    expect(made).toMatchObject({ key: 'verified', value: 1 });
    const claims = await json(['assertions', 'list', '--entity', made.entity]);
    expect(claims.map((c: { key: string }) => c.key)).toEqual(['verified']);
    const revoked = await run(['assertions', 'revoke', '--entity', made.entity, '--key', 'verified'], env);
    expect(revoked.stdout).toMatch(/^Revoked verified/);

    const dist = await json([
      'distributions',
      'create',
      '--name',
      'CLI',
      '--budget',
      '0',
      '--deployment',
      '{"provider":"sandbox","config":{}}',
    ]);
    expect(dist.operation.id).toMatch(/^op_/);
    expect((await json(['distributions', 'list'])).map((d: { id: string }) => d.id)).toContain(dist.distribution.id);
    expect(await json(['distributions', 'get', dist.distribution.id])).toMatchObject({ id: dist.distribution.id, name: 'CLI' });
  });
});
