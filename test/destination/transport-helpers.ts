import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
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

/** A durable topic exchange `name` on the RabbitMQ at `url`, and a durable queue `<name>-q` bound to all of it. */
export async function durableQueue(url: string, name: string): Promise<string> {
  const admin = await amqp.connect(url);
  const ch = await admin.createChannel();
  await ch.assertExchange(name, 'topic', { durable: true });
  await ch.assertQueue(`${name}-q`, { durable: true });
  await ch.bindQueue(`${name}-q`, name, '#');
  await admin.close();
  return `${name}-q`;
}

/** Takes every message off `queue` (they are gone from it after). */
export async function takeAll(url: string, queue: string): Promise<amqp.GetMessage[]> {
  const conn = await amqp.connect(url);
  try {
    const ch = await conn.createChannel();
    const out: amqp.GetMessage[] = [];
    for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true })) out.push(m);
    return out;
  } finally {
    await conn.close();
  }
}
