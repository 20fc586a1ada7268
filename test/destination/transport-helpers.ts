import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import type { DestinationMessage, DestinationTarget, DestinationType } from '../../src/domain/destination/transport.ts';
import { signatureEntry } from '../../src/domain/webhook/signature.ts';
import { POLICY, SECRET, signedMessage } from './signed-message.ts';

export { POLICY, SECRET, signedMessage };

export function target(type: DestinationType, url: string, template: string, more: Partial<DestinationTarget> = {}): DestinationTarget {
  return { id: `ed_${randomUUID().replaceAll('-', '')}`, type, url, caCertificate: null, template, ...more };
}

/** What a consumer read: the body and the Standard Webhooks values (headers or fields), checked against the message and the secret. */
export function expectSignedAsSent(received: { body: string; values: Record<string, string | undefined> }, sent: DestinationMessage): void {
  expect(received.body).toBe(sent.body);
  const v = received.values;
  expect(v['webhook-id']).toBe(sent.headers['webhook-id']);
  expect(v['webhook-timestamp']).toBe(sent.headers['webhook-timestamp']);
  expect(v['webhook-signature']).toBe(signatureEntry(SECRET, v['webhook-id']!, Number(v['webhook-timestamp']), received.body));
  expect(v['webhook-replay']).toBe(sent.replayOperationId ?? undefined);
  // And by the reference verifier a receiver would use.
  expect(() =>
    new Webhook(SECRET).verify(received.body, {
      'webhook-id': v['webhook-id']!,
      'webhook-timestamp': v['webhook-timestamp']!,
      'webhook-signature': v['webhook-signature']!,
    }),
  ).not.toThrow();
}
