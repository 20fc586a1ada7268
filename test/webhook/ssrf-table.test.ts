import { afterAll, describe, expect } from 'vitest';
import { AddressRefused, checkAddress } from '../../src/domain/webhook/address-guard.ts';
import { appTest, buildTenant, emitEvent, expectPlatformError, type TestApp } from '../support/kit.ts';
import { WE } from './webhook-endpoints-helpers.ts';
import { createEndpoint, listDeliveries, settle, startReceiver, webhookConfig, type Receiver } from './receiver.ts';
import { updateEndpoint } from '../../src/domain/webhook/store.ts';

const test = appTest({ config: webhookConfig({ retryScheduleMs: [0], allowLoopback: false, allowPrivateNetworks: false }) });

/**
 * Finding 7 of issue #12: only globally routable unicast addresses are
 * delivery destinations, whatever form the address takes.
 */
const STRICT = { allowPrivateNetworks: false, allowLoopback: false };
const OPEN = { allowPrivateNetworks: true, allowLoopback: true };

/** Addresses no policy admits from a hostname's DNS answer (embedded or not, they are never a private network). */
const ALWAYS_REFUSED = [
  // IPv4 special-purpose ranges
  '0.0.0.0',
  '0.1.2.3',
  '127.0.0.1',
  '127.0.0.2',
  '127.255.255.254',
  '192.0.0.1',
  '192.0.0.170',
  '192.0.2.1',
  '192.88.99.1',
  '198.18.0.1',
  '198.19.255.255',
  '198.51.100.7',
  '203.0.113.9',
  '224.0.0.1',
  '239.255.255.250',
  '240.0.0.1',
  '255.255.255.255',
  // IPv6 special-purpose ranges
  '::',
  '::1',
  'ff02::1',
  'ff05::1:3',
  '2001:db8::1',
  '3fff::1',
  '100::1',
  '2001:2::1',
  '2001:10::1',
  '5f00::1',
  '4000::1',
  '1::1',
  'e000::1',
  // IPv4-compatible (::/96, deprecated): 169.254.169.254, 10.0.0.1, 127.0.0.1, 192.168.1.1, ::2
  '::a9fe:a9fe',
  '::a00:1',
  '::7f00:1',
  '::c0a8:101',
  '::2',
  '::8.8.8.8',
  // IPv4-mapped and translated forms of special IPv4
  '::ffff:127.0.0.1',
  '::ffff:0.0.0.0',
  '::ffff:224.0.0.1',
  '::ffff:0:a9fe:a9fe',
  '::ffff:0:808:808',
  // NAT64 to special IPv4, and NAT64 local-use prefixes
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::7f00:1',
  '64:ff9b::a00:1',
  '64:ff9b::c0a8:101',
  '64:ff9b:1::808:808',
  // 6to4 embedding special IPv4
  '2002:a9fe:a9fe::1',
  '2002:7f00:1::',
  '2002:a00:1::1',
  '2002:c0a8:101::1',
  '2002:6440:1::1',
  // Teredo with a special server (10.0.0.1) or client (~0xf5fffffe = 10.0.0.1) address
  '2001:0:a00:1::f7f7:f7f7',
  '2001:0:4136:e378:8000:63bf:f5ff:fffe',
];
/** Private networks: refused unless WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
const PRIVATE = [
  '10.0.0.1',
  '10.255.255.255',
  '172.16.0.1',
  '172.31.255.255',
  '192.168.0.1',
  '100.64.0.1',
  '100.127.255.254',
  '169.254.169.254',
  '169.254.0.1',
  'fe80::1',
  'fe80::a9fe:a9fe',
  'fec0::1',
  'fc00::1',
  'fd00:ec2::254',
  '::ffff:10.0.0.1',
  '::ffff:169.254.169.254',
  '::ffff:100.64.0.1',
  '::ffff:a9fe:a9fe',
];
const PUBLIC = [
  '8.8.8.8',
  '93.184.215.14',
  '1.1.1.1',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
];

describe('checkAddress: globally routable unicast only', () => {
  test('holds a table of at least 60 hostile addresses', () => {
    expect(new Set([...ALWAYS_REFUSED, ...PRIVATE]).size).toBeGreaterThanOrEqual(60);
  });

  test.each([...ALWAYS_REFUSED, ...PRIVATE])('refuses %s reached through a hostname', (address) => {
    expect(() => checkAddress(STRICT, 'hooks.attacker.example', address)).toThrow(AddressRefused);
  });

  test.each(ALWAYS_REFUSED)('refuses %s even with private networks and loopback allowed', (address) => {
    expect(() => checkAddress(OPEN, 'hooks.attacker.example', address)).toThrow(AddressRefused);
  });

  test.each(PRIVATE)('admits %s only with private networks allowed', (address) => {
    expect(() => checkAddress({ ...STRICT, allowPrivateNetworks: true }, 'hooks.internal.example', address)).not.toThrow();
  });

  test.each(PUBLIC)('admits the public address %s', (address) => {
    expect(() => checkAddress(STRICT, 'hooks.example.com', address)).not.toThrow();
  });

  test('admits loopback only when allowed and the URL itself names a loopback host', () => {
    for (const host of ['localhost', '127.0.0.1', '[::1]', '127.0.0.2', '[::ffff:7f00:1]', 'localhost.', 'api.localhost']) {
      expect(() => checkAddress({ ...STRICT, allowLoopback: true }, host, '127.0.0.1'), host).not.toThrow();
      expect(() => checkAddress(STRICT, host, '127.0.0.1'), host).toThrow(AddressRefused);
    }
    // A name that only resolves to loopback (DNS rebinding) is refused whatever the policy.
    for (const host of ['vm', 'localhost.attacker.example', '127.0.0.1.nip.io'])
      expect(() => checkAddress(OPEN, host, '127.0.0.1'), host).toThrow(/loopback/);
    // `localhost` resolving elsewhere is judged by the address it resolves to.
    expect(() => checkAddress({ ...STRICT, allowLoopback: true }, 'localhost', '10.0.0.1')).toThrow(/private/);
  });

  test('does not reveal what a hostname resolved to', () => {
    expect(() => checkAddress(STRICT, 'db.internal', '10.1.2.3')).toThrow(
      /^destination_refused: db\.internal resolves to a private address$/,
    );
    expect(() => checkAddress(STRICT, '10.1.2.3', '10.1.2.3')).toThrow(/^destination_refused: 10\.1\.2\.3 is a private address$/);
  });
});

/** URL forms of loopback, metadata and private destinations: each must be refused when the endpoint is created. */
const HOSTILE_URLS = [
  'https://2852039166/latest/meta-data', // 169.254.169.254 in decimal
  'https://0xa9.0xfe.0xa9.0xfe/', // hex
  'https://0251.0376.0251.0376/', // octal
  'https://169.254.169.254./', // trailing dot
  'https://[::a9fe:a9fe]/', // IPv4-compatible
  'https://[::ffff:a9fe:a9fe]/', // IPv4-mapped
  'https://[64:ff9b::a9fe:a9fe]/', // NAT64
  'https://[2002:a9fe:a9fe::]/', // 6to4
  'https://[fd00:ec2::254]/', // the IPv6 metadata address
  'https://10.0.0.1:8443/',
  'https://0.0.0.0/',
  'https://0/',
  'https://[::]/',
  'https://0x7f000001/',
  'https://0177.0.0.1/',
  'https://127.1/',
  'https://127.0.0.1:22/',
  'https://①②⑦.0.0.1/', // IDNA maps to 127.0.0.1
  'https://ｌｏｃａｌｈｏｓｔ/', // fullwidth
  'https://%6c%6fcalhost/',
  'https://LOCALHOST:6379/',
  'https://[::7f00:1]/',
  'https://user@10.0.0.1/',
  'http://169.254.169.254/', // plain http to anything but the named loopback hosts
];

describe('hostile URL forms end to end (loopback and private networks disabled)', () => {
  let t: TestApp;
  let rx: Receiver;
  test.beforeAll(async ({ app }) => {
    t = app;
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
  });

  test.each(HOSTILE_URLS)('create refuses %s with 400 invalid_request on url', async (url) => {
    const { token } = await buildTenant(t, ['webhooks:write']);
    expectPlatformError(await t.http.post(WE, { url }, { token }), 400, 'invalid_request', 'url');
  });

  test('an endpoint stored with a hostile URL gets a refused attempt and never a connection', async () => {
    const { org, token } = await buildTenant(t, ['webhooks:read', 'webhooks:write']);
    const { port } = new URL(rx.url());
    const stored = [
      `http://127.0.0.1:${port}/a`,
      `http://localhost:${port}/b`,
      `https://2130706433:${port}/c`,
      `https://[::ffff:7f00:1]:${port}/d`,
      `https://[::7f00:1]:${port}/e`,
      // `vm` resolves to 127.0.0.1 through /etc/hosts: loopback reached by DNS.
      `https://vm:${port}/f`,
      'https://169.254.169.254/latest/meta-data',
      'https://[::a9fe:a9fe]/',
      'https://[64:ff9b::a9fe:a9fe]/',
      'https://10.0.0.1/',
    ];
    const ids: string[] = [];
    for (const url of stored) {
      // Created with a public URL, then moved there behind the API's back (as if stored before this policy).
      const ep = await createEndpoint(t, token, { url: 'https://hooks.example.com/in' });
      await updateEndpoint(t.app.deps.db.prisma, ep.id, { url });
      ids.push(ep.id);
    }
    await emitEvent(t, org.id);
    await settle(t);
    for (const [i, id] of ids.entries()) {
      const [d] = await listDeliveries(t, token, id);
      expect(d, stored[i]).toMatchObject({ status: 'exhausted', last_status_code: null });
      expect(d.attempt_log[0], stored[i]).toMatchObject({
        status_code: null,
        response_excerpt: null,
        error: expect.stringMatching(/^destination_refused: /),
      });
    }
    expect(rx.connections()).toBe(0);
  });
});
