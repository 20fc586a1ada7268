import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { DestinationType } from '../../src/domain/destination/transport.ts';
import { createTransports } from '../../src/domain/destination/transports/index.ts';
import type { Resolve } from '../../src/domain/destination/transports/broker-address.ts';
import { freePort, ownBroker, type OwnBroker } from '../support/brokers.ts';
import { expectSignedAsSent, POLICY, signedMessage, target } from './transport-helpers.ts';

/**
 * What a transport refuses or fails on, each an attempt with a reason and never the URL's credentials: the network
 * policy at connect and at every reconnect, wrong credentials, a broker that never answers (the attempt's deadline),
 * and TLS verified against the destination's CA, refused without it.
 */
const brokers = inject('brokers');
const all = createTransports();
const closing: { close(): Promise<void> }[] = Object.values(all);
afterAll(() => Promise.all(closing.map((t) => t.close())));

/** Resolves `names` as given and everything else like the system (IPv4 only: the test brokers listen on 127.0.0.1). */
function resolver(names: Record<string, string>, calls: string[] = []): Resolve {
  return (hostname, options, cb) => {
    calls.push(hostname);
    const address = names[hostname];
    if (address) return cb(null, [{ address, family: 4 }]);
    lookup(hostname, { ...options, all: true, family: 4 }, cb as never);
  };
}

const CASES: [DestinationType, string, string][] = [
  ['rabbitmq', 'amqp', 'amqps'],
  ['nats', 'nats', 'tls'],
  ['redis', 'redis', 'rediss'],
];

describe('the network policy at connect', () => {
  it.each(CASES)(
    '%s: a non-TLS scheme only for a loopback host; a TLS one is still checked on the address it resolves to',
    async (type, plain, tls) => {
      const refused = await all[type].publish(target(type, `${plain}://user:pw-s3cret@203.0.113.7:1234`, 'x'), signedMessage(), POLICY);
      expect(refused).toMatchObject({
        ok: false,
        statusCode: null,
        error: `destination_refused: ${plain}:// is accepted only for loopback hosts (use TLS)`,
      });
      // `vm` resolves to 127.0.0.1 through /etc/hosts: loopback reached by DNS, not named by the URL.
      const byDns = await all[type].publish(target(type, `${tls}://vm:1234`, 'x'), signedMessage(), POLICY);
      expect(byDns.error).toBe('destination_refused: vm resolves to a loopback address');
      const metadata = await all[type].publish(target(type, `${tls}://169.254.169.254:1234`, 'x'), signedMessage(), POLICY);
      expect(metadata.error).toBe('destination_refused: 169.254.169.254 is a linkLocal address');
    },
  );

  it.each(CASES)('%s: a host resolving to a private address is refused, whatever it resolved to before', async (type, _plain, tls) => {
    const t = createTransports({ resolve: resolver({ 'broker.internal.example': '10.0.0.5' }) });
    closing.push(...Object.values(t));
    const out = await t[type].publish(target(type, `${tls}://broker.internal.example:1234`, 'x'), signedMessage(), POLICY);
    expect(out).toMatchObject({ ok: false, error: 'destination_refused: broker.internal.example resolves to a private address' });
  });

  it.each(CASES)('%s: loopback is refused when the deployment does not allow it', async (type, plain) => {
    const out = await all[type].publish(target(type, `${plain}://127.0.0.1:1234`, 'x'), signedMessage(), {
      ...POLICY,
      allowLoopback: false,
    });
    expect(out.error).toBe('destination_refused: 127.0.0.1 is a loopback address');
  });

  it.skipIf(!brokers.redis)(
    'the address is resolved and checked again at every reconnect, never reused from the first connect',
    async () => {
      const names: Record<string, string> = { localhost: '127.0.0.1' };
      const calls: string[] = [];
      const t = createTransports({ resolve: resolver(names, calls) });
      closing.push(...Object.values(t));
      const dest = target('redis', `redis://localhost:${new URL(brokers.redis!).port}`, 'dest:reconnect');
      expect(await t.redis.publish(dest, signedMessage(), POLICY)).toMatchObject({ ok: true });
      expect(await t.redis.publish(dest, signedMessage(), POLICY)).toMatchObject({ ok: true });
      expect(calls).toEqual(['localhost']); // one connection, reused
      // The broker drops the connection; meanwhile the name now leads to a private address.
      const admin = new Redis(brokers.redis!, { maxRetriesPerRequest: 0 });
      await admin.client('KILL', 'LADDR', 'x:0').catch(() => {});
      const list = String(await admin.client('LIST'));
      const ids = list
        .split('\n')
        .filter((l) => l.includes('name=platform-api-event-destinations'))
        .map((l) => /id=(\d+)/.exec(l)![1]!);
      for (const id of ids) await admin.client('KILL', 'ID', id);
      admin.disconnect();
      names.localhost = '10.0.0.5';
      let out = await t.redis.publish(dest, signedMessage(), POLICY);
      // The publish may meet the dropped socket first (closed under it); the one after it reconnects.
      if (!out.error?.startsWith('destination_refused')) out = await t.redis.publish(dest, signedMessage(), POLICY);
      expect(out).toMatchObject({ ok: false, error: 'destination_refused: localhost resolves to a private address' });
      expect(calls.length).toBeGreaterThanOrEqual(2);
    },
  );
});

describe('credentials never leak', () => {
  let natsAuth: OwnBroker | undefined;
  let redisAuth: OwnBroker | undefined;
  beforeAll(async () => {
    if (brokers.nats) natsAuth = await ownBroker('nats', ['--user', 'dest', '--pass', 'right-pass']);
    if (brokers.redis) redisAuth = await ownBroker('redis', ['--requirepass', 'right-pass']);
  });
  afterAll(() => Promise.all([natsAuth?.remove(), redisAuth?.remove()]));

  const withPassword = (url: string, user: string, password: string) => {
    const u = new URL(url);
    u.username = user;
    u.password = password;
    return u.href;
  };

  it.skipIf(!brokers.rabbitmq)(
    'rabbitmq: wrong credentials are a failed attempt with the broker reason, without the password',
    async () => {
      const out = await all.rabbitmq.publish(
        target('rabbitmq', withPassword(brokers.rabbitmq!, 'guest', 'wrong-s3cret'), 'x', { exchange: 'amq.topic' }),
        signedMessage(),
        POLICY,
      );
      expect(out).toMatchObject({ ok: false, statusCode: null });
      expect(out.error).toMatch(/^connection_failed: .*ACCESS_REFUSED/);
      expect(out.error).not.toContain('wrong-s3cret');
    },
  );

  it.skipIf(!brokers.nats)('nats: wrong credentials are refused (Authorization Violation); the right ones deliver', async () => {
    const wrong = await all.nats.publish(
      target('nats', withPassword(natsAuth!.url, 'dest', 'wrong-s3cret'), 'auth.x'),
      signedMessage(),
      POLICY,
    );
    expect(wrong.error).toMatch(/^connection_failed: .*Authorization Violation/i);
    expect(wrong.error).not.toContain('wrong-s3cret');
    const admin = await connect({ servers: natsAuth!.url, user: 'dest', pass: 'right-pass' });
    await (await admin.jetstreamManager()).streams.add({ name: 'AUTH', subjects: ['auth.>'] });
    await admin.close();
    const right = await all.nats.publish(
      target('nats', withPassword(natsAuth!.url, 'dest', 'right-pass'), 'auth.x'),
      signedMessage(),
      POLICY,
    );
    expect(right).toMatchObject({ ok: true, error: null });
  });

  it.skipIf(!brokers.redis)(
    'redis: a wrong password is a failed attempt (WRONGPASS), without the password; the right one delivers',
    async () => {
      const out = await all.redis.publish(
        target('redis', withPassword(redisAuth!.url, 'default', 'wrong-s3cret'), 'x'),
        signedMessage(),
        POLICY,
      );
      expect(out).toMatchObject({ ok: false, statusCode: null });
      expect(out.error).toMatch(/^connection_failed: WRONGPASS/);
      expect(out.error).not.toContain('wrong-s3cret');
      const right = await all.redis.publish(
        target('redis', withPassword(redisAuth!.url, 'default', 'right-pass'), 'x'),
        signedMessage(),
        POLICY,
      );
      expect(right).toMatchObject({ ok: true, error: null });
    },
  );

  it.each(CASES)('%s: a refused connection names the address, never the credentials', async (type, plain) => {
    const port = await freePort();
    const out = await all[type].publish(target(type, `${plain}://someone:hunter2-pw@127.0.0.1:${port}`, 'x'), signedMessage(), POLICY);
    expect(out).toMatchObject({ ok: false, statusCode: null });
    expect(out.error).toMatch(/^connection_failed: .*(ECONNREFUSED|CONNECTION_REFUSED)/);
    expect(out.error).not.toMatch(/hunter2|someone/);
  });
});

describe('deadlines', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts and never answers: a broker that hangs in its handshake.
    silent = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it.each(CASES)('%s: a broker that never answers costs the attempt its timeout, no more', async (type, plain) => {
    const port = (silent.address() as { port: number }).port;
    const started = performance.now();
    const out = await all[type].publish(target(type, `${plain}://127.0.0.1:${port}`, 'x'), signedMessage(), { ...POLICY, timeoutMs: 300 });
    const took = performance.now() - started;
    expect(out).toMatchObject({ ok: false, statusCode: null, error: 'timeout after 300 ms' });
    expect(out.durationMs).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2000);
  });
});

describe.skipIf(!brokers.nats)('TLS', () => {
  let broker: OwnBroker;
  let ca: string;
  let dir: string;
  beforeAll(async () => {
    // A CA and a server certificate for localhost, made for this run.
    dir = mkdtempSync(join(tmpdir(), 'platform-test-tls-'));
    const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=destinations test CA');
    ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost\n');
    ssl(
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'server.pem',
      '-days',
      '1',
      '-extfile',
      'san.ext',
    );
    ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
    broker = await ownBroker('nats', ['--tls', '--tlscert', join(dir, 'server.pem'), '--tlskey', join(dir, 'server.key')]);
    const admin = await connect({ servers: broker.url, tls: { ca } as never });
    await (await admin.jetstreamManager()).streams.add({ name: 'SECURE', subjects: ['secure.>'] });
    await admin.close();
  });
  afterAll(async () => {
    await broker?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it("delivers over TLS verified against the destination's CA and the URL's host name; refuses without it", async () => {
    const t = createTransports({ resolve: resolver({}) });
    closing.push(...Object.values(t));
    const url = `tls://localhost:${new URL(broker.url).port}`;
    const m = signedMessage();
    const ok = await t.nats.publish(target('nats', url, 'secure.{type}', { caCertificate: ca }), m, POLICY);
    expect(ok).toMatchObject({ ok: true, error: null });
    const admin = await connect({ servers: broker.url, tls: { ca } as never });
    const stored = await (await admin.jetstreamManager()).streams.getMessage('SECURE', { seq: Number(/seq=(\d+)/.exec(ok.excerpt!)![1]) });
    await admin.close();
    const values = Object.fromEntries([...stored.header.keys()].map((k) => [k, stored.header.get(k)]));
    expectSignedAsSent({ body: new TextDecoder().decode(stored.data), values: { ...values, 'webhook-replay': undefined } }, m);

    const unverified = await t.nats.publish(target('nats', url, 'secure.{type}'), signedMessage(), POLICY);
    expect(unverified).toMatchObject({ ok: false, statusCode: null });
    expect(unverified.error).toMatch(/^connection_failed: .*(self[- ]signed|unable to verify|certificate)/i);
    // The certificate names localhost, not 127.0.0.1: the name is verified, not only the chain.
    const wrongName = await t.nats.publish(target('nats', broker.url, 'secure.{type}', { caCertificate: ca }), signedMessage(), POLICY);
    expect(wrongName.error).toMatch(/^connection_failed: .*(IP: 127\.0\.0\.1 is not in the cert's list|ERR_TLS_CERT_ALTNAME_INVALID)/);
  });
});
