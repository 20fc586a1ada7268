import type { LookupAddress } from 'node:dns';
import { afterAll, describe, expect } from 'vitest';
import { checkAddress, guardedLookup } from '../../src/domain/webhook/address-guard.ts';
import { appTest, buildTenant, emitEvent, expectPlatformError, type TestApp } from '../support/kit.ts';
import { WE } from './webhook-endpoints-helpers.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';

const test = appTest({ config: webhookConfig({ retryScheduleMs: [0] }) });

const STRICT = { allowPrivateNetworks: false, allowLoopback: true };

describe('SSRF guard over HTTP (private networks not allowed)', () => {
  let t: TestApp;
  let rx: Receiver;
  test.beforeAll(async ({ app }) => {
    t = app;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  test('refuses private and metadata literals at create, loopback reached by DNS at delivery; literal loopback URLs are delivered', async () => {
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const { port } = new URL(rx.url());
    for (const url of ['https://10.0.0.1/hook', 'https://169.254.169.254/latest/meta-data']) {
      expectPlatformError(await t.http.post(WE, { url }, { token }), 400, 'invalid_request', 'url');
    }
    // `vm` resolves to 127.0.0.1 through /etc/hosts: a loopback address reached by DNS, not named in the URL.
    const byDns = await createEndpoint(t, token, { url: `https://vm:${port}/hook` });
    const loopback = await createEndpoint(t, token, { url: rx.url('/local') });
    await emitEvent(t, org.id);
    await settle(t);
    const [d] = await listDeliveries(t, token, byDns.id);
    expect(d).toMatchObject({ status: 'exhausted', last_status_code: null });
    expect(d.attempt_log[0].error).toBe('destination_refused: vm resolves to a loopback address');
    expect(rx.received.filter((r) => r.path === '/hook')).toEqual([]);
    expect((await listDeliveries(t, token, loopback.id))[0]).toMatchObject({ status: 'succeeded' });
  });

  test('never follows a redirect, to another host or its own', async () => {
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    for (const [path, location] of [
      ['/moved-away', 'http://169.254.169.254/latest/meta-data'],
      ['/moved-here', rx.url('/target')],
    ]) {
      rx.on(path!, (_req, res) => {
        res.writeHead(307, { location });
        res.end();
      });
    }
    const away = await createEndpoint(t, token, { url: rx.url('/moved-away') });
    const here = await createEndpoint(t, token, { url: rx.url('/moved-here') });
    await emitEvent(t, org.id);
    await settle(t);
    for (const ep of [away, here]) {
      const [d] = await listDeliveries(t, token, ep.id);
      expect(d).toMatchObject({ status: 'exhausted', last_status_code: 307, last_error: 'redirect not followed' });
    }
    expect(rx.for('/target')).toEqual([]);
  });
});

describe('SSRF guard at connect time', () => {
  const resolvingTo = (address: string) => (_h: string, _o: unknown, cb: (e: null, a: LookupAddress[]) => void) =>
    cb(null, [{ address, family: 4 }]);
  const lookup = (policy: typeof STRICT, host: string, address: string) =>
    new Promise<string>((resolve, reject) =>
      guardedLookup(policy, host, resolvingTo(address) as never)(host, {}, (err, a) => (err ? reject(err) : resolve(a as string))),
    );

  test('refuses a hostname resolving to the metadata address unless private networks are allowed', async () => {
    await expect(lookup(STRICT, 'metadata.attacker.example', '169.254.169.254')).rejects.toThrow(/linkLocal address/);
    await expect(lookup({ ...STRICT, allowPrivateNetworks: true }, 'metadata.attacker.example', '169.254.169.254')).resolves.toBe(
      '169.254.169.254',
    );
    await expect(lookup(STRICT, 'hooks.example.com', '93.184.215.14')).resolves.toBe('93.184.215.14');
  });

  test('classifies addresses with ipaddr.js ranges, IPv4-mapped IPv6 included', () => {
    for (const a of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', '::ffff:10.0.0.1', 'fd00::1', 'fe80::1', '0.0.0.0']) {
      expect(() => checkAddress(STRICT, 'h', a), a).toThrow(/refused/);
    }
    expect(() => checkAddress(STRICT, 'h', '127.0.0.1')).toThrow(/loopback/);
    expect(() => checkAddress(STRICT, 'localhost', '127.0.0.1')).not.toThrow();
    expect(() => checkAddress({ ...STRICT, allowLoopback: false }, 'localhost', '127.0.0.1')).toThrow(/loopback/);
    expect(() => checkAddress(STRICT, 'h', '8.8.8.8')).not.toThrow();
  });
});
