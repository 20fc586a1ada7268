import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard for webhook deliveries, applied at connect time: the address the
 * socket will connect to is the one checked (a hostname is resolved here and
 * the checked address is the one used, so a DNS answer cannot change between
 * check and connect). Only public unicast addresses pass. Loopback passes only
 * when the URL names a loopback host literally (`localhost`, `127.0.0.1`,
 * `[::1]`, which the endpoint URL rule admits over http) and loopback is
 * allowed; everything private, link-local (169.254.0.0/16, the cloud metadata
 * address), CGNAT, multicast or reserved is refused unless private networks
 * are allowed.
 */
export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  allowLoopback: boolean;
}

export const LOOPBACK_URL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED';
  constructor(host: string, address: string, range: string) {
    super(`refused to connect to ${host === address ? address : `${host} (${address})`}: ${range} address`);
  }
}

/** ipaddr.js's range name for `address` (`unicast` for public addresses), with IPv4-mapped IPv6 unwrapped. */
export function addressRange(address: string): string {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range();
}

export function checkAddress(policy: AddressPolicy, urlHost: string, address: string): void {
  const range = addressRange(address);
  if (range === 'unicast') return;
  if (range === 'loopback' && policy.allowLoopback && LOOPBACK_URL_HOSTS.has(urlHost)) return;
  if (policy.allowPrivateNetworks && range !== 'unspecified' && range !== 'multicast' && range !== 'broadcast') return;
  throw new AddressRefused(urlHost, address, range);
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type LookupFn = (hostname: string, options: { all?: boolean; family?: number }, cb: LookupCallback) => void;

/**
 * A `lookup` for node:http(s) requests: resolves like the system resolver,
 * then refuses the answer unless every address it would use passes the policy.
 * `resolve` is injectable so tests can make a name resolve to a metadata address.
 */
export function guardedLookup(policy: AddressPolicy, urlHost: string, resolve: LookupFn = dnsLookup as unknown as LookupFn): LookupFn {
  return (hostname, options, cb) => {
    resolve(hostname, { ...options, all: true }, (err, result) => {
      if (err) return cb(err, options.all ? [] : '', 0);
      const addresses = result as LookupAddress[];
      try {
        if (addresses.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
        for (const a of addresses) checkAddress(policy, urlHost, a.address);
      } catch (e) {
        return cb(e as NodeJS.ErrnoException, options.all ? [] : '', 0);
      }
      if (options.all) cb(null, addresses);
      else cb(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Literal IP hosts never reach a lookup hook, so they are checked before connecting. */
export function checkLiteralHost(policy: AddressPolicy, urlHost: string): void {
  const bare = urlHost.startsWith('[') ? urlHost.slice(1, -1) : urlHost;
  if (isIP(bare)) checkAddress(policy, urlHost, bare);
}
