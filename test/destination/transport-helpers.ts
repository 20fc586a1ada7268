import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * A durable topic exchange `name` on the RabbitMQ `broker`, and a durable queue `<name>-q` bound to all of it. A broker
 * the test owns (`dir`) also imports them at every start (test/support/brokers.ts), as a deployment provisions its
 * topology: a kill -9 moments after the declarations does not always leave them on disk.
 */
export async function durableQueue(broker: { url: string; dir?: string }, name: string): Promise<string> {
  const queue = `${name}-q`;
  const admin = await amqp.connect(broker.url);
  const ch = await admin.createChannel();
  await ch.assertExchange(name, 'topic', { durable: true });
  await ch.assertQueue(queue, { durable: true });
  await ch.bindQueue(queue, name, '#');
  await admin.close();
  if (broker.dir) {
    const vhost = '/';
    const definitions = {
      exchanges: [{ name, vhost, type: 'topic', durable: true, auto_delete: false, internal: false, arguments: {} }],
      queues: [{ name: queue, vhost, durable: true, auto_delete: false, arguments: {} }],
      bindings: [{ source: name, vhost, destination: queue, destination_type: 'queue', routing_key: '#', arguments: {} }],
    };
    writeFileSync(join(broker.dir, 'definitions.json'), JSON.stringify(definitions));
  }
  return queue;
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
