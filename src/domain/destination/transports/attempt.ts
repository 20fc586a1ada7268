import type { AttemptOutcome } from '../../webhook/send.ts';
import { REPLAY_HEADER } from '../../webhook/signature.ts';
import type { DestinationMessage } from '../transport.ts';
import { DESTINATION_REFUSED } from '../../webhook/address-guard.ts';
import { BrokerRefused, parseBrokerUrl, type BrokerUrl } from './broker-address.ts';
import { ConnectFailure } from './connection-pool.ts';

/**
 * One publish attempt as the engine records it: never throws, bounded by
 * `timeoutMs` (connect, publish and the broker's acknowledgement together),
 * `statusCode` always null (brokers answer no HTTP status), and an `error`
 * that starts with a stable reason and never carries the URL's credentials.
 */
const ERROR_MAX = 200;

/** A failure the transport recognised, recorded as `<reason>: <broker's words>`. */
export class PublishFailure extends Error {
  constructor(
    readonly reason: string,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

export interface Accepted {
  excerpt: string | null;
}

/** Parses `url` (one of `schemes`) and runs `publish` on it within `timeoutMs`, recording what it answers or throws. */
export async function attempt(
  url: string,
  schemes: readonly string[],
  timeoutMs: number,
  publish: (broker: BrokerUrl, deadline: number) => Promise<Accepted>,
): Promise<AttemptOutcome> {
  const started = performance.now();
  let broker: BrokerUrl | null = null;
  const done = (ok: boolean, error: string | null, excerpt: string | null): AttemptOutcome => ({
    ok,
    statusCode: null,
    error: error === null ? null : redact(error, broker).slice(0, ERROR_MAX),
    excerpt,
    durationMs: Math.round(performance.now() - started),
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<AttemptOutcome>((resolve) => {
    timer = setTimeout(() => resolve(done(false, `timeout after ${timeoutMs} ms`, null)), timeoutMs);
  });
  const work = (async () => {
    try {
      broker = parseBrokerUrl(url, schemes);
    } catch (e) {
      // The URL is not echoed: a malformed one may still hold a password.
      throw e instanceof BrokerRefused ? e : new PublishFailure('invalid_url', 'malformed broker URL');
    }
    return publish(broker, Date.now() + timeoutMs);
  })().then(
    (accepted) => done(true, null, accepted.excerpt),
    (e: unknown) => done(false, describe(e), null),
  );
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(e: unknown): string {
  if (e instanceof PublishFailure || e instanceof BrokerRefused) return e.message;
  const err = (e instanceof ConnectFailure ? e.cause : e) as NodeJS.ErrnoException;
  const message = String(err?.message || err?.code || err || 'unknown error');
  if (message.startsWith(`${DESTINATION_REFUSED}:`)) return message;
  const withCode = typeof err?.code === 'string' && !message.includes(err.code) ? `${err.code}: ${message}` : message;
  return e instanceof ConnectFailure || err?.syscall ? `connection_failed: ${withCode}` : `publish_failed: ${withCode}`;
}

/**
 * Removes the URL's user name and password (raw and decoded) from a broker's message, whatever the library put there.
 * The stable reason in front (`connection_failed: …`) is kept as is: a short user name may occur inside it.
 */
export function redact(message: string, broker: BrokerUrl | null): string {
  if (!broker) return message;
  const secrets = [broker.url.href, broker.url.password, broker.password, broker.url.username, broker.username]
    .filter((s) => s.length > 0)
    .sort((a, b) => b.length - a.length);
  const reason = /^[a-z_]+: /.exec(message)?.[0] ?? '';
  let out = message.slice(reason.length);
  for (const s of secrets) out = out.split(s).join('***');
  return reason + out;
}

/** The Standard Webhooks values every message carries, as headers (AMQP, NATS) or fields (Redis), in this order. */
export function signedFields(message: DestinationMessage): [string, string][] {
  const h = message.headers;
  return [
    ['webhook-id', h['webhook-id']],
    ['webhook-timestamp', h['webhook-timestamp']],
    ['webhook-signature', h['webhook-signature']],
    ...(message.replayOperationId ? [[REPLAY_HEADER, message.replayOperationId] as [string, string]] : []),
  ];
}
