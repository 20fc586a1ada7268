import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { ClientAddressPolicy } from '../config.ts';

/**
 * The one place that turns a peer into a per-address key (docs/security.md, "Per-address limits").
 *
 * - Connection shares key on the socket's own address: headers are not read yet, and a proxy in TRUSTED_PROXIES is
 *   exempt (`shareKey` answers undefined) because it limits its own clients.
 * - Request buckets (unauthenticated routes, failed-auth throttling, partner connect's per-IP bucket) key on the
 *   client: the socket's address, or, only when that peer is a trusted proxy, the right-most entry of `Forwarded`
 *   (else `X-Forwarded-For`) that is not itself a trusted proxy. Entries left of it were written by the client and
 *   prove nothing.
 * - IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is the IPv4 address; other IPv6 addresses group by their prefix
 *   (IPV6_ADDRESS_PREFIX, /64 by default), since one subscriber is usually given a whole /64.
 */
export interface ClientAddresses {
  /** The key of a connection's share; undefined for a trusted proxy (exempt) or a socket with no address. */
  shareKey(remoteAddress: string | undefined): string | undefined;
  /** The key of the client behind a request, for request buckets. */
  requestKey(req: IncomingMessage): string;
  /** Whether the address is one of TRUSTED_PROXIES. */
  isTrustedProxy(address: ipaddr.IPv4 | ipaddr.IPv6): boolean;
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;

function parse(text: string | undefined): Parsed | undefined {
  if (!text) return undefined;
  try {
    const addr = ipaddr.parse(text);
    return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
  } catch {
    return undefined;
  }
}

/** `for=192.0.2.60`, `for="[2001:db8::1]:4711"`, `for="192.0.2.43:8080"` → the address text (obfuscated and `unknown` stay as they are and fail to parse). */
function forwardedFor(header: string): string[] {
  const out: string[] = [];
  for (const element of header.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      let value = pair
        .slice(eq + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1');
      const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
      if (bracketed) value = bracketed[1]!;
      else if (/^[\d.]+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(':'));
      out.push(value);
    }
  }
  return out;
}

function xForwardedFor(header: string): string[] {
  return header.split(',').map((v) => v.trim());
}

export function clientAddresses(policy: ClientAddressPolicy): ClientAddresses {
  const proxies = policy.trustedProxies.map((cidr) => {
    if (cidr.includes('/')) return ipaddr.parseCIDR(cidr);
    const addr = ipaddr.parse(cidr);
    return [addr, addr.kind() === 'ipv4' ? 32 : 128] as [Parsed, number];
  });
  const isTrustedProxy = (addr: Parsed) =>
    proxies.some(([range, bits]) => {
      if (range.kind() === addr.kind()) return addr.match(range, bits);
      // A v4 range also covers its v4-mapped form and the other way round; `parse` already unmapped `addr`.
      if (range.kind() === 'ipv6' && (range as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
        return addr.kind() === 'ipv4' && addr.match((range as ipaddr.IPv6).toIPv4Address(), bits - 96);
      }
      return false;
    });
  const key = (addr: Parsed): string => {
    if (addr.kind() === 'ipv4') return addr.toString();
    const bits = policy.ipv6PrefixLength;
    if (bits >= 128) return addr.toNormalizedString();
    const prefix = ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/${bits}`);
    return `${prefix.toString()}/${bits}`;
  };

  /** The right-most forwarded entry that is not a trusted proxy; the left-most entry when every one is trusted. */
  const throughProxies = (req: IncomingMessage, peer: Parsed): Parsed => {
    const forwarded = req.headers.forwarded;
    const xff = req.headers['x-forwarded-for'];
    const chain = forwarded ? forwardedFor(forwarded) : typeof xff === 'string' ? xForwardedFor(xff) : [];
    let client = peer;
    for (let i = chain.length - 1; i >= 0; i--) {
      const hop = parse(chain[i]);
      if (!hop) return client; // a garbled entry ends the chain we can believe: the last trusted hop is the client
      client = hop;
      if (!isTrustedProxy(hop)) return hop;
    }
    return client;
  };

  return {
    isTrustedProxy,
    shareKey(remoteAddress) {
      const addr = parse(remoteAddress);
      if (!addr || isTrustedProxy(addr)) return undefined;
      return key(addr);
    },
    requestKey(req) {
      const peer = parse(req.socket.remoteAddress);
      if (!peer) return 'unknown';
      return key(isTrustedProxy(peer) ? throughProxies(req, peer) : peer);
    },
  };
}
