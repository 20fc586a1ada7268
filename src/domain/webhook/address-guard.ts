import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * SSRF guard for webhook deliveries, applied at connect time: the address the
 * socket will connect to is the one checked (a hostname is resolved here and
 * the checked address is the one used, so a DNS answer cannot change between
 * check and connect).
 *
 * An allow-list: only globally routable unicast passes. For IPv6 that is
 * 2000::/3 outside ipaddr.js's special ranges; an IPv6 form that carries an
 * IPv4 address (IPv4-mapped, NAT64 well-known prefix, 6to4, Teredo) passes
 * only if every IPv4 address it carries does. IPv4-compatible (::/96),
 * SIIT-translated and NAT64 local-use addresses are refused outright.
 *
 * Two operator switches widen it, each for its own ranges only: loopback,
 * when the URL names a loopback host itself (`localhost`, `*.localhost`, a
 * loopback literal), never a name that merely resolves there (DNS
 * rebinding); private networks (RFC 1918, link-local including the metadata
 * address, CGNAT, ULA, site-local). Multicast, broadcast, unspecified,
 * documentation, benchmarking and reserved ranges are refused whatever the
 * configuration.
 */
export interface AddressPolicy {
  allowPrivateNetworks: boolean;
  allowLoopback: boolean;
}

const PRIVATE_RANGES = new Set(['private', 'linkLocal', 'carrierGradeNat', 'uniqueLocal', 'deprecatedSiteLocal']);
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/** The stable prefix of every refusal, as recorded in an attempt's `error`. */
export const DESTINATION_REFUSED = 'destination_refused';

export class AddressRefused extends Error {
  readonly code = 'EADDRREFUSED';
  /** The refusal in words, without the prefix (what create and update answer). */
  readonly reason: string;
  constructor(urlHost: string, range: string) {
    // The resolved address of a hostname is not echoed: it would tell a tenant what internal names resolve to.
    const reason = `${urlHost} ${isIP(bareHost(urlHost)) ? 'is' : 'resolves to'} a ${range} address`;
    super(`${DESTINATION_REFUSED}: ${reason}`);
    this.reason = reason;
  }
}

const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);

/** The range of an IPv4 address carried inside an IPv6 one decides, if it is special; otherwise the carrier's own range. */
const carried = (carrier: string, inner: ipaddr.IPv4[]) => (inner.every((a) => a.range() === 'unicast') ? 'unicast' : carrier);

/** ipaddr.js's range name for `address`, `unicast` meaning globally routable unicast (see above). */
export function addressRange(address: string): string {
  // ipaddr.js reads `::a.b.c.d` (IPv4-compatible) as `::ffff:a.b.c.d`; the URL parser writes the tail in hex exactly.
  const canonical = isIP(address) === 6 && address.includes('.') ? new URL(`http://[${address}]`).hostname.slice(1, -1) : address;
  const parsed = ipaddr.parse(canonical);
  if (parsed.kind() === 'ipv4') return parsed.range();
  const a = parsed as ipaddr.IPv6;
  const p = a.parts;
  const range = a.range();
  switch (range) {
    // A socket to ::ffff:a.b.c.d reaches a.b.c.d itself: it is that address.
    case 'ipv4Mapped':
      return a.toIPv4Address().range();
    case 'rfc6052':
      return a.match(NAT64_WELL_KNOWN) ? carried(range, [v4(p[6]!, p[7]!)]) : range;
    case '6to4':
      return carried(range, [v4(p[1]!, p[2]!)]);
    // Teredo carries its server's address, and its client's with every bit inverted.
    case 'teredo':
      return carried(range, [v4(p[2]!, p[3]!), v4(~p[6]! & 0xffff, ~p[7]! & 0xffff)]);
    case 'unicast':
      if (a.match(GLOBAL_UNICAST_V6)) return range;
      return p.slice(0, 6).every((x) => x === 0) ? 'ipv4Compatible' : 'reserved';
    default:
      return range;
  }
}

const bareHost = (urlHost: string) => (urlHost.startsWith('[') ? urlHost.slice(1, -1) : urlHost);

/**
 * Whether a URL's hostname (as `new URL()` normalizes it) names the local
 * machine: a loopback literal in any form the URL parser accepts, or a
 * `localhost` name (RFC 6761 reserves `localhost.` and everything under it).
 */
export function namesLoopback(urlHost: string): boolean {
  const bare = bareHost(urlHost);
  if (isIP(bare)) return addressRange(bare) === 'loopback';
  const name = bare.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

export function checkAddress(policy: AddressPolicy, urlHost: string, address: string): void {
  const range = addressRange(address);
  if (range === 'unicast') return;
  if (range === 'loopback' && policy.allowLoopback && namesLoopback(urlHost)) return;
  if (PRIVATE_RANGES.has(range) && policy.allowPrivateNetworks) return;
  throw new AddressRefused(urlHost, range);
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
  const bare = bareHost(urlHost);
  if (isIP(bare)) checkAddress(policy, urlHost, bare);
}

/**
 * What can be refused from the URL alone, when an endpoint is created or its
 * URL changed: a literal address the guard would refuse, or a loopback name
 * while loopback delivery is off. Names are resolved only at delivery (DNS
 * answers change). Returns the reason, or null.
 */
export function refusedDestination(policy: AddressPolicy, url: URL): string | null {
  if (!policy.allowLoopback && namesLoopback(url.hostname)) return 'this server does not deliver to loopback hosts';
  try {
    checkLiteralHost(policy, url.hostname);
    return null;
  } catch (e) {
    if (e instanceof AddressRefused) return e.reason;
    throw e;
  }
}
