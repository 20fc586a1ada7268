import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { PlatformClient } from '../../packages/client/src/index.ts';
import { cliRunner } from '../support/cli.ts';
import { appTest, type TestApp, buildOrg, buildToken, emitEvent, type TestOrg } from '../support/kit.ts';
import { onPostgres } from '../support/database.ts';

/**
 * The CLI is a client of the HTTP API: what these commands prove is client behaviour, and every API rule they touch is
 * proven on both databases by the API suites, so they run in the PGlite pass only (each command is a process: minutes).
 */
const clientSideOnly = onPostgres();

/** The `platform` CLI, spawned as a process (through its bin launcher) against a real server. */
// Every command is a fresh Node process (about a second each, more on a loaded machine).
vi.setConfig({ testTimeout: 120_000 });

const test = appTest({
  config: { operations: { worker: true, pollMs: 50, leaseMs: 30_000, recheckMs: 500, retryBaseMs: 100, retryMaxMs: 1000, maxAttempts: 3 } },
});
/** The file's app, for the helpers below. */
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));
const { cwd, start, run } = cliRunner(() => t.origin);
let org: TestOrg;
let apiKey: string;
test.beforeAll(async ({ app: t }) => {
  org = await buildOrg(t);
  apiKey = (await buildToken(t, org, ['events:read', 'distributions:read', 'distributions:write', 'distributions:launch'])).secret;
});

async function until(cond: () => boolean, what: string, ms = 15_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function stop(child: ChildProcess) {
  if (child.exitCode === null) child.kill('SIGKILL');
}

describe.skipIf(clientSideOnly)('platform tokens', () => {
  test('list, create, rotate and revoke with the user token from the environment', async ({ app: t }) => {
    const ut = { PLATFORM_USER_TOKEN: org.userToken };
    const created = await run(['--json', 'tokens', 'create', '--name', 'cli', '--scope', 'units:read', 'org:read'], ut);
    expect(created.code, created.stderr).toBe(0);
    const { token, secret } = JSON.parse(created.stdout);
    expect(secret).toMatch(/^sk_platform_live_/);
    expect(token.scopes).toEqual(['units:read', 'org:read']);

    const list = await run(['tokens', 'list'], ut);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+STATUS/);
    expect(list.stdout).toContain(token.id);
    expect(list.stdout).not.toContain(secret);

    const rotated = await run(['tokens', 'rotate', token.id], ut);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/Secret \(shown once\): sk_platform_live_/);
    const listed = JSON.parse((await run(['--json', 'tokens', 'list'], ut)).stdout) as { id: string; status: string }[];
    expect(listed.find((x) => x.id === token.id)?.status).toBe('revoked');
    const replacement = listed.find((x) => x.status === 'active' && x.id !== token.id && x.id.startsWith('tok_'))!;
    expect((await run(['tokens', 'revoke', replacement.id], ut)).code).toBe(0);
  });

  test('an API error prints code, message and request id and exits 1; --json prints it as JSON', async ({ app: t }) => {
    const bad = await run(['tokens', 'list', '--user-token', 'ut_nope']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid_token: .+ \(request req_[0-9a-f]+\)\n$/);
    const json = await run(['--json', 'tokens', 'create', '--name', 'x', '--scope', 'units:teleport'], {
      PLATFORM_USER_TOKEN: org.userToken,
    });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'unknown_scope', param: 'scopes', status: 400 });
  });

  test('missing credentials exit 2, an unreachable server exits 3', async ({ app: t }) => {
    const none = await run(['tokens', 'list']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('PLATFORM_USER_TOKEN');
    const down = await run(['kill-switch', 'status', '--origin', 'http://127.0.0.1:9', '--operator-token', 'x'], { PLATFORM_ORIGIN: '' });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('connection_error');
  });

  test('credentials fall back to the dev credentials file', async ({ app: t }) => {
    const file = join(cwd, 'dev-credentials.json');
    writeFileSync(
      file,
      JSON.stringify({
        api_origin: t.origin,
        user_token: org.userToken,
        operator_token: t.operatorToken,
        brands: org.brands,
        platform_token: { secret: apiKey },
      }),
    );
    const list = await run(['--json', 'tokens', 'list'], { PLATFORM_CREDENTIALS: file, PLATFORM_ORIGIN: '' });
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).length).toBeGreaterThan(0);
    const topUp = await run(['--json', 'wallet', 'top-up', org.brands[0]!.slug, '250'], { PLATFORM_CREDENTIALS: file });
    expect(topUp.code, topUp.stderr).toBe(0);
    expect(JSON.parse(topUp.stdout)).toMatchObject({ object: 'wallet', brand: org.brands[0]!.id, balance: 250 });
  });
});

describe.skipIf(clientSideOnly)('platform kill-switch', () => {
  test('status, on and off with the operator token', async ({ app: t }) => {
    const op = { PLATFORM_OPERATOR_TOKEN: t.operatorToken };
    const status = await run(['kill-switch', 'status'], op);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^Kill switch released/);
    expect(JSON.parse((await run(['--json', 'kill-switch', 'on'], op)).stdout)).toMatchObject({ engaged: true });
    expect((await run(['kill-switch', 'status'], op)).stdout).toMatch(/^Kill switch ENGAGED/);
    expect(JSON.parse((await run(['--json', 'kill-switch', 'off'], op)).stdout)).toMatchObject({ engaged: false });
    expect((await run(['kill-switch', 'sideways'], op)).code).toBe(2);
  });
});

describe.skipIf(clientSideOnly)('platform events tail', () => {
  test('prints a live event, then exits 0 on SIGINT', async ({ app: t }) => {
    const first = await emitEvent(t, org.id, 'assertion.created', { key: 'before' });
    const tail = start(['events', 'tail', '--type', 'assertion.created', '--starting-after', first], { PLATFORM_API_KEY: apiKey });
    try {
      await until(() => tail.out.stderr.includes('Tailing events'), 'the tail to connect');
      const second = await emitEvent(t, org.id, 'assertion.created', { key: 'live_one' });
      await emitEvent(t, org.id, 'assertion.revoked', { key: 'filtered_out' });
      await until(() => tail.out.stdout.includes(second), 'the live event on stdout');
      expect(tail.out.stdout).not.toContain(first);
      expect(tail.out.stdout).toMatch(/#\d+\s+\S+\s+assertion\.created\s+evt_\w+\s+entity\/ent_1\s+\{"key":"live_one","test":true\}/);
      tail.child.kill('SIGINT');
      expect(await tail.exited).toBe(0);
      expect(tail.out.stdout).not.toContain('filtered_out');
    } finally {
      stop(tail.child);
    }
  });

  test('--json prints one camelCased event per line', async ({ app: t }) => {
    const first = await emitEvent(t, org.id, 'enrollment.qualified', { previous_status: 'grace' });
    const tail = start(['--json', 'events', 'tail', '--type', 'enrollment.qualified', '--starting-after', first], {
      PLATFORM_API_KEY: apiKey,
    });
    try {
      await new Promise((r) => setTimeout(r, 1500)); // --json prints no banner
      const id = await emitEvent(t, org.id, 'enrollment.qualified', { previous_status: 'grace' });
      await until(() => tail.out.stdout.includes(id), 'the event as JSON');
      const event = JSON.parse(tail.out.stdout.trim().split('\n').at(-1)!);
      expect(event).toMatchObject({ id, object: 'event', type: 'enrollment.qualified', data: { previousStatus: 'grace' } });
      expect(event.createdAt).toBeTruthy();
      expect(tail.out.stdout).not.toContain(first);
      tail.child.kill('SIGINT');
      expect(await tail.exited).toBe(0);
    } finally {
      stop(tail.child);
    }
  });
});

describe.skipIf(clientSideOnly)('platform listen', () => {
  let receiver: Server;
  const received: { headers: Record<string, string>; body: string }[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push({ headers: req.headers as Record<string, string>, body });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => receiver.close(() => r())));

  test('forwards live events signed with the printed session secret (standardwebhooks verifies them)', async ({ app: t }) => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
    const listen = start(['listen', '--forward-to', url, '--events', 'payout.settled'], { PLATFORM_API_KEY: apiKey });
    try {
      await until(() => /Session signing secret: whsec_\S+/.test(listen.out.stderr), 'the session secret');
      const secret = /Session signing secret: (whsec_\S+)/.exec(listen.out.stderr)![1]!;
      await new Promise((r) => setTimeout(r, 1000)); // let the subscription start before the event
      const id = await emitEvent(t, org.id, 'payout.settled', { payout_id: 'po_1' });
      await until(() => received.length > 0, 'a forwarded delivery');
      const delivery = received[0]!;
      expect(new Webhook(secret).verify(delivery.body, delivery.headers)).toMatchObject({
        id,
        type: 'payout.settled',
        data: { payout_id: 'po_1' },
        created_at: expect.any(String),
      });
      expect(delivery.headers['webhook-id']).toBe(id);
      await until(() => listen.out.stdout.includes('-> 200'), 'the forward log line');
      listen.child.kill('SIGINT');
      expect(await listen.exited).toBe(0);
    } finally {
      stop(listen.child);
    }
  });
});

describe.skipIf(clientSideOnly)('platform operations wait', () => {
  test('waits for a launch to succeed (exit 0) and reports progress', async ({ app: t }) => {
    const client = new PlatformClient({ apiKey, origin: t.origin });
    const { operation } = await client.distributions.create({ name: 'CLI', budget: 0, deployments: [{ provider: 'sandbox', config: {} }] });
    const res = await run(['--json', 'operations', 'wait', operation.id, '--interval-ms', '100'], { PLATFORM_API_KEY: apiKey });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ id: operation.id, status: 'succeeded' });

    const failing = await client.distributions.create({
      name: 'CLI fail',
      budget: 0,
      deployments: [{ provider: 'sandbox', config: { outcome: 'fail' } }],
    });
    const failed = await run(['operations', 'wait', failing.operation.id, '--interval-ms', '100'], { PLATFORM_API_KEY: apiKey });
    expect(failed.code).toBe(5);
    expect(failed.stderr).toContain(`${failing.operation.id} distribution.launch`);
    expect(failed.stdout).toContain('failed');
  });

  test('exits 4 when the wait times out', async ({ app: t }) => {
    const client = new PlatformClient({ apiKey, origin: t.origin });
    const { operation } = await client.distributions.create({
      name: 'CLI unfunded',
      budget: 10_000_000,
      deployments: [{ provider: 'sandbox', config: {} }],
    });
    const res = await run(['operations', 'wait', operation.id, '--timeout-ms', '500', '--interval-ms', '100'], {
      PLATFORM_API_KEY: apiKey,
    });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain('operation_wait_timeout');
    expect(res.stderr).toContain('funding_required');
  });
});

// Always an embedded database (a fresh one migrated from nothing: a minute on a loaded machine), whatever the run's.
describe.skipIf(clientSideOnly)('platform migrate and bootstrap', () => {
  test('migrate applies the migrations to an embedded database; bootstrap writes the credentials file', async ({ app: t }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-cli-data-'));
    const server = { DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent', PORT: '4999' };
    // bootstrap then finds the directory migrated and does not boot the schema engine again.
    const migrated = await run(['--json', 'migrate'], server);
    expect(migrated.code, migrated.stderr).toBe(0);
    const m = JSON.parse(migrated.stdout);
    expect(m.database).toContain('PGlite');
    expect(m.applied.length).toBeGreaterThan(0);

    const boot = await run(['bootstrap'], server);
    expect(boot.code, boot.stderr).toBe(0);
    expect(boot.stdout).toContain(`credentials written to ${join(dataDir, 'dev-credentials.json')}`);
    // The CLI reads the file it wrote: the tokens in it are real.
    const creds = JSON.parse(await import('node:fs/promises').then((fs) => fs.readFile(join(dataDir, 'dev-credentials.json'), 'utf8')));
    expect(creds).toMatchObject({ api_origin: 'http://127.0.0.1:4999', organization: { slug: 'dev' } });
    expect(creds.platform_token.secret).toMatch(/^sk_platform_live_/);
  }, 240_000);
});
