import { PlatformError } from './error.ts';
import { toCamelCase } from './key-case.ts';
import type { TypedEvent } from './resources/types.ts';

/**
 * Standard Webhooks verification (the scheme DESIGN.md fixes for deliveries):
 * headers `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature`, a space-separated list of `v1,<base64 HMAC-SHA256>`
 * entries over `{id}.{timestamp}.{body}`, keyed by the base64-decoded secret
 * after `whsec_`. During the 24 h after a rotation a delivery carries two
 * entries (current, previous): either may match the secret you hold.
 *
 * Web Crypto only, so it runs in Node 20 and in browsers; `crypto.subtle.verify`
 * compares in constant time. The timestamp must be within the tolerance
 * (default 5 minutes) in either direction, which bounds replays.
 */

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** Default 300 s. */
  toleranceSeconds?: number;
  /** For tests: the current time. */
  now?: Date;
}

export interface SignOptions {
  /** The message id sent as `webhook-id` (deliveries use the event id); default: the payload's `id`. */
  id?: string;
  /** Default: now. */
  timestamp?: Date;
}

const DEFAULT_TOLERANCE_SECONDS = 300;
const encoder = new TextEncoder();

/**
 * Verifies a delivery and returns its event, camelCased exactly like the
 * feed's (`createdAt`, and `data` keys too). Pass the raw body, not a
 * re-serialized object: the signature covers its exact bytes.
 */
export async function verify(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
  opts: VerifyOptions = {},
): Promise<TypedEvent> {
  // Called from JavaScript, the types are only a hope: refuse what cannot be verified with a hint, never a raw TypeError.
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    throw verifyError(
      'webhook_payload_invalid',
      `The payload must be the raw request body as received (a string or bytes), not ${payload === null ? 'null' : typeof payload === 'object' ? 'a parsed object' : `a ${typeof payload}`}: the signature covers its exact bytes (e.g. express.raw({ type: 'application/json' }) or await request.text())`,
    );
  }
  if (typeof secret !== 'string' || !secret)
    throw verifyError('webhook_secret_invalid', "The secret must be the endpoint's whsec_... string");
  if (!headers || typeof headers !== 'object') {
    throw verifyError('webhook_headers_missing', 'Missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw verifyError('webhook_headers_missing', 'Missing webhook-id, webhook-timestamp or webhook-signature header');
  }
  assertFresh(timestamp, opts);
  const key = await hmacKey(secret, 'verify');
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  for (const entry of signatures.split(' ')) {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || !signature) continue;
    const bytes = base64Decode(signature);
    if (bytes && (await globalThis.crypto.subtle.verify('HMAC', key, bytes, signed))) return parseEvent(body);
  }
  throw verifyError('webhook_signature_invalid', 'No v1 signature in webhook-signature matches the secret');
}

/**
 * Signs a payload like a real delivery and returns the three headers, for
 * tests of a webhook receiver (and for `platform listen`).
 */
export async function sign(
  payload: string,
  secret: string,
  opts: SignOptions = {},
): Promise<Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string>> {
  const id = opts.id ?? messageIdOf(payload);
  const timestamp = String(Math.floor((opts.timestamp ?? new Date()).getTime() / 1000));
  const key = await hmacKey(secret, 'sign');
  const mac = await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(`${id}.${timestamp}.${payload}`));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${base64Encode(new Uint8Array(mac))}` };
}

/** A fresh `whsec_` secret (32 random bytes), e.g. for a `platform listen` session. */
export function generateSecret(): string {
  return `whsec_${base64Encode(globalThis.crypto.getRandomValues(new Uint8Array(32)))}`;
}

function assertFresh(timestamp: string, opts: VerifyOptions) {
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const seconds = /^\d+$/.test(timestamp) ? Number(timestamp) : NaN;
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (!Number.isFinite(seconds)) throw verifyError('webhook_timestamp_out_of_tolerance', 'webhook-timestamp is not unix seconds');
  if (Math.abs(now - seconds) > tolerance) {
    throw verifyError(
      'webhook_timestamp_out_of_tolerance',
      `webhook-timestamp is ${now - seconds} s from now; the tolerance is ${tolerance} s`,
    );
  }
}

async function hmacKey(secret: string, usage: 'sign' | 'verify'): Promise<CryptoKey> {
  const raw = base64Decode(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  if (!raw || raw.length === 0) throw verifyError('webhook_secret_invalid', 'The secret is not whsec_ followed by base64');
  return globalThis.crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);
}

function parseEvent(body: string): TypedEvent {
  try {
    return toCamelCase<TypedEvent>(JSON.parse(body));
  } catch {
    throw verifyError('webhook_payload_invalid', 'The signed payload is not JSON');
  }
}

function messageIdOf(payload: string): string {
  try {
    const id = (JSON.parse(payload) as { id?: unknown }).id;
    if (typeof id === 'string') return id;
  } catch {
    // fall through: not JSON or no id
  }
  return `msg_${globalThis.crypto.randomUUID().replace(/-/g, '')}`;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const found = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = found === undefined ? undefined : record[found];
  return Array.isArray(value) ? value.join(' ') : value;
}

function verifyError(code: string, message: string): PlatformError {
  return new PlatformError({ code, message });
}

function base64Decode(s: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  try {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return undefined;
  }
}

function base64Encode(bytes: Uint8Array): string {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export const webhooks = { verify, sign, generateSecret };
