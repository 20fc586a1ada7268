import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { checkServerIdentity, type ConnectionOptions } from 'node:tls';
import { DESTINATION_REFUSED, checkLiteralHost, guardedLookup, namesLoopback, type AddressPolicy } from '../../webhook/address-guard.ts';

/**
 * The network policy on a broker connection (issue 34, item 4), applied by
 * the transports at every connect and every reconnect, since broker clients
 * are never left to reconnect, or to follow another address, by themselves:
 * a non-TLS scheme only for a URL that names a loopback host, then the
 * webhook SSRF guard on the address the host resolves to, and the socket is
 * opened to that checked address (the TLS server name stays the URL's host,
 * so the certificate is verified against the name, never skipped).
 */
export type Resolve = Parameters<typeof guardedLookup>[2];

export interface BrokerUrl {
  url: URL;
  tls: boolean;
  /** The URL's host without IPv6 brackets. */
  host: string;
  port: number;
  username: string;
  password: string;
}

const SCHEMES: Record<string, { tls: boolean; port: number }> = {
  'amqp:': { tls: false, port: 5672 },
  'amqps:': { tls: true, port: 5671 },
  'nats:': { tls: false, port: 4222 },
  'tls:': { tls: true, port: 4222 },
  'redis:': { tls: false, port: 6379 },
  'rediss:': { tls: true, port: 6379 },
};

export class BrokerRefused extends Error {}

export function parseBrokerUrl(raw: string, schemes: readonly string[]): BrokerUrl {
  const url = new URL(raw);
  const scheme = SCHEMES[url.protocol];
  if (!scheme || !schemes.includes(url.protocol)) throw new BrokerRefused(`invalid_url: unsupported scheme ${url.protocol}//`);
  return {
    url,
    tls: scheme.tls,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : scheme.port,
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

/**
 * The address to open a socket to, checked under the policy: resolved here,
 * on every (re)connect, so a DNS answer cannot change between check and
 * connect, and a name that once resolved to a public address cannot later
 * lead to a private one.
 */
export async function checkedAddress(broker: BrokerUrl, policy: AddressPolicy, resolve?: Resolve): Promise<string> {
  if (!broker.tls && !namesLoopback(broker.url.hostname))
    throw new BrokerRefused(`${DESTINATION_REFUSED}: ${broker.url.protocol}// is accepted only for loopback hosts (use TLS)`);
  if (isIP(broker.host)) {
    checkLiteralHost(policy, broker.url.hostname);
    return broker.host;
  }
  const lookup = guardedLookup(policy, broker.url.hostname, resolve);
  return new Promise((ok, fail) =>
    lookup(broker.host, { all: true }, (err, addresses) => (err ? fail(err) : ok((addresses as LookupAddress[])[0]!.address))),
  );
}

/**
 * TLS options for a socket opened to the checked address: verification on, against the given CA (else Node's
 * default CAs) and the URL's host, named explicitly because the socket's own host is the resolved address and a
 * client library may pass a server name of its own (nats.js falls back to `localhost` for an address).
 */
export function tlsOptions(broker: BrokerUrl, caCertificate: string | null): ConnectionOptions {
  return {
    rejectUnauthorized: true,
    checkServerIdentity: (_name, cert) => checkServerIdentity(broker.host, cert),
    // SNI carries names only; an IP-literal URL is verified against the address itself.
    ...(isIP(broker.host) ? {} : { servername: broker.host }),
    ...(caCertificate ? { ca: caCertificate } : {}),
  };
}

/** The key connections are shared under: one per URL (credentials included) and CA. Never logged. */
export const connectionKey = (url: string, caCertificate: string | null) => `${url}\n${caCertificate ?? ''}`;
