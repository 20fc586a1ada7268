import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { expect } from 'vitest';
import type { DestinationMessage, DestinationTarget, DestinationType, PublishOptions } from '../../src/domain/destination/transport.ts';
import { newId } from '../../src/domain/id.ts';
import { signatureEntry, webhookHeaders } from '../../src/domain/webhook/signature.ts';

/** Messages and targets for the transport-level tests: signed exactly as the engine signs a webhook body. */
export const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** Loopback allowed (the brokers run there), private networks not: the default of a test deployment. */
export const POLICY: PublishOptions = { allowLoopback: true, allowPrivateNetworks: false, timeoutMs: 5000 };

export function signedMessage(eventType = 'entity.updated', replayOperationId: string | null = null): DestinationMessage {
  const eventId = newId('event');
  const body = JSON.stringify({ id: eventId, type: eventType, created: new Date().toISOString(), data: { n: Math.random() } });
  return {
    eventId,
    eventType,
    body,
    headers: webhookHeaders([SECRET], eventId, Math.floor(Date.now() / 1000), body),
    replayOperationId,
  };
}

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
