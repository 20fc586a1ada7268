import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the key is the
 * base64-decoded secret after `whsec_`, the signed content is
 * `{webhook-id}.{webhook-timestamp}.{body}`, and the header carries one
 * `v1,<base64 HMAC-SHA256>` entry per secret, space-separated, current first.
 */
export function signatureEntry(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function webhookHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): WebhookHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signatureEntry(s, id, timestamp, body)).join(' '),
  };
}

/** Marks a delivery sent by a replay (issue 16): the value is the replay operation's id. Not part of the signed content. */
export const REPLAY_HEADER = 'webhook-replay';
