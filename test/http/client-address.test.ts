import type { IncomingMessage } from 'node:http';
import { describe, expect, test } from 'vitest';
import { clientAddresses } from '../../src/http/client-address.ts';

const req = (remoteAddress: string, headers: Record<string, string> = {}) =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe('one module computes every per-address key', () => {
  const plain = clientAddresses({ trustedProxies: [], ipv6PrefixLength: 64 });
  const proxied = clientAddresses({ trustedProxies: ['10.0.0.0/8', '::1'], ipv6PrefixLength: 64 });

  test('IPv4-mapped IPv6 is the IPv4 address; IPv6 groups per /64', () => {
    expect(plain.shareKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(plain.shareKey('2001:db8:1:2:aaaa::1')).toBe(plain.shareKey('2001:db8:1:2:bbbb::9'));
    expect(plain.shareKey('2001:db8:1:2::1')).not.toBe(plain.shareKey('2001:db8:1:3::1'));
    expect(clientAddresses({ trustedProxies: [], ipv6PrefixLength: 128 }).shareKey('2001:db8::1')).not.toBe(
      clientAddresses({ trustedProxies: [], ipv6PrefixLength: 128 }).shareKey('2001:db8::2'),
    );
  });

  test('a trusted proxy is exempt from the connection share', () => {
    expect(proxied.shareKey('10.1.2.3')).toBeUndefined();
    expect(proxied.shareKey('::1')).toBeUndefined();
    expect(proxied.shareKey('192.0.2.1')).toBe('192.0.2.1');
  });

  test('forwarding headers count only when the peer is a trusted proxy', () => {
    expect(plain.requestKey(req('192.0.2.1', { 'x-forwarded-for': '198.51.100.9' }))).toBe('192.0.2.1');
    expect(proxied.requestKey(req('192.0.2.1', { forwarded: 'for=198.51.100.9' }))).toBe('192.0.2.1');
  });

  test('the client is the right-most untrusted entry; what the client wrote to its left is ignored', () => {
    const r = req('10.0.0.1', { 'x-forwarded-for': '1.2.3.4, 198.51.100.9, 10.0.0.2' });
    expect(proxied.requestKey(r)).toBe('198.51.100.9');
    expect(proxied.requestKey(req('10.0.0.1', { forwarded: 'for=1.2.3.4, for="[2001:db8::1]:4711";proto=https, for=10.0.0.7' }))).toBe(
      '2001:db8::/64',
    );
    expect(proxied.requestKey(req('10.0.0.1', { forwarded: 'for="192.0.2.43:8080"' }))).toBe('192.0.2.43');
  });

  test('a garbled entry stops the chain at the last trusted hop', () => {
    expect(proxied.requestKey(req('10.0.0.1', { 'x-forwarded-for': '198.51.100.9, garbage' }))).toBe('10.0.0.1');
    expect(proxied.requestKey(req('10.0.0.1', { forwarded: 'for=unknown' }))).toBe('10.0.0.1');
  });
});
