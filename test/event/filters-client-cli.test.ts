import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, vi } from 'vitest';
import { PlatformClient, PlatformError } from '../../packages/client/src/index.ts';
import { streamEvents, type WireEvent } from '../../packages/client/src/cli/event-stream.ts';
import { appTest, buildOrg, buildToken, type TestApp, type TestOrg } from '../support/kit.ts';
import { waitUntil } from '../support/stream-client.ts';
import { createEndpoint, settle, startReceiver, webhookConfig, type Receiver } from '../webhook/receiver.ts';

/** The filters and the brand field through the client library, the CLI's stream, the `platform` binary and webhook deliveries. */
vi.setConfig({ testTimeout: 120_000 });

const test = appTest({ config: webhookConfig() });
/** The file's app, for the tests and helpers below. */
let t: TestApp;
let rx: Receiver;
let org: TestOrg;
let token: string;
test.beforeAll(async ({ app }) => {
  t = app;
  rx = await startReceiver();
  org = await buildOrg(t, { brands: ['alpha', 'beta'] });
  token = (await buildToken(t, org, ['events:read', 'webhooks:read', 'webhooks:write'])).secret;
});
afterAll(async () => {
  await rx?.close();
});

/** An operator test event (real HTTP), sequenced on return. */
async function emit(brand: string | undefined, subject: [string, string], type = 'payout.created'): Promise<string> {
  const res = await t.http.post(
    '/operator/events',
    { organization_id: org.id, type, subject: { type: subject[0], id: subject[1] }, brand },
    { token: t.operatorToken },
  );
  expect(res.status, res.text).toBe(201);
  await t.app.sequencer.flush();
  return res.body.id;
}

describe('client library', () => {
  test('events.list sends brands and subject types as one comma-separated parameter and returns brand', async () => {
    const a = await emit('alpha', ['payout', 'po_c1']);
    await emit('beta', ['payout', 'po_c2']);
    const b = await emit('beta', ['distribution', 'dist_c1']);
    await emit(undefined, ['distribution', 'dist_c2']);
    const client = new PlatformClient({ apiKey: token, origin: t.origin });
    const page = await client.events.list({ brands: ['alpha', org.brands[1]!.id], subjectTypes: ['payout', 'distribution'], limit: 100 });
    const ids = page.data.map((e) => e.id);
    expect(ids).toContain(a);
    expect(ids).toContain(b);
    expect(page.data.every((e) => e.brand === org.brands[0]!.id || e.brand === org.brands[1]!.id)).toBe(true);
    const one = await client.events.list({ subjectId: 'dist_c1' });
    expect(one.data.map((e) => [e.id, e.brand])).toEqual([[b, org.brands[1]!.id]]);
    const err = await client.events.list({ brands: ['nowhere'] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PlatformError);
    expect(err).toMatchObject({ code: 'brand_not_found', param: 'brands' });
  });
});

describe('CLI', () => {
  test('streamEvents passes brands, subject types and subject id; events carry brand', async () => {
    const got: WireEvent[] = [];
    const stream = streamEvents({ origin: t.origin, apiKey: token, brands: ['beta'], subjectTypes: ['payout'] }, (e) => void got.push(e));
    try {
      await waitUntil(() => t.app.stream.subscriberCount === 1, 'the CLI stream listener');
      await emit('alpha', ['payout', 'po_s1']);
      await emit('beta', ['distribution', 'dist_s1']);
      await emit(undefined, ['payout', 'po_s2']);
      const want = await emit('beta', ['payout', 'po_s3']);
      await waitUntil(() => got.length > 0, 'the matching event');
      expect(got.map((e) => [e.id, e.brand])).toEqual([[want, org.brands[1]!.id]]);
    } finally {
      stream.close();
      await stream.done;
      await waitUntil(() => t.app.stream.subscriberCount === 0, 'the CLI stream listener released');
    }
  });

  test('platform events tail --brand --subject-type --subject-id prints only matching events', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'platform-cli-'));
    const bin = resolve(import.meta.dirname, '../../bin/platform.mjs');
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PLATFORM_')));
    const child = spawn(
      process.execPath,
      [
        bin,
        '--json',
        'events',
        'tail',
        '--brand',
        'alpha',
        '--brand',
        org.brands[1]!.id,
        '--subject-type',
        'payout',
        '--subject-id',
        'po_t1',
      ],
      {
        cwd,
        env: { ...env, PLATFORM_ORIGIN: t.origin, PLATFORM_CREDENTIALS: join(cwd, 'none.json'), PLATFORM_API_KEY: token },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitUntil(
        () => t.app.stream.subscriberCount === 1 || child.exitCode !== null,
        () => `the tail to subscribe (stderr: ${stderr}, stdout: ${stdout}, exit ${child.exitCode}, count ${t.app.stream.subscriberCount})`,
        30_000,
      );
      await emit('alpha', ['payout', 'po_other']);
      await emit(undefined, ['payout', 'po_t1']);
      await emit('alpha', ['distribution', 'po_t1']);
      const a = await emit('alpha', ['payout', 'po_t1']);
      const b = await emit('beta', ['payout', 'po_t1']);
      await waitUntil(
        () => stdout.includes(b),
        () => `the matching events (stdout: ${stdout}, stderr: ${stderr})`,
      );
      const lines = stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines.map((e) => [e.id, e.brand])).toEqual([
        [a, org.brands[0]!.id],
        [b, org.brands[1]!.id],
      ]);
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

describe('webhooks', () => {
  test('a delivery carries the event’s brand exactly as the feed shows it', async () => {
    await createEndpoint(t, token, { url: rx.url('/brand') });
    t.clock.advance(1);
    const id = await emit('beta', ['payout', 'po_w1'], 'payout.settled');
    await settle(t);
    const [received] = await rx.waitFor(1, '/brand');
    const body = JSON.parse(received!.body);
    expect(body.brand).toBe(org.brands[1]!.id);
    const feed = await t.http.get('/v1/platform/events?subject_id=po_w1', { token });
    expect(feed.body.data).toEqual([body]);
    expect(body.id).toBe(id);
  });
});
