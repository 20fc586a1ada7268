import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { connect, StringCodec } from 'nats';
import { describe, expect, inject, it } from 'vitest';

/**
 * The brokers the destination tests deliver to are real servers this run started (test/support/brokers.ts): each
 * takes a message the way a destination will publish it (RabbitMQ on a confirm channel with `mandatory`, NATS
 * JetStream with a message id and its PubAck, a Redis stream by XADD) and hands it to a consumer. A broker whose
 * package is not installed is skipped here, never in CI (REQUIRE_BROKERS=1).
 */
const brokers = inject('brokers');

describe("the test run's brokers", () => {
  it.skipIf(!brokers.rabbitmq)(
    'RabbitMQ confirms a persistent mandatory publish and a consumer receives it; an unroutable one is returned',
    async () => {
      const conn = await amqp.connect(brokers.rabbitmq!);
      try {
        const ch = await conn.createConfirmChannel();
        await ch.assertExchange('harness', 'direct', { durable: false, autoDelete: true });
        const { queue } = await ch.assertQueue('', { exclusive: true });
        await ch.bindQueue(queue, 'harness', 'bound');
        const got = new Promise<string>((resolve) => void ch.consume(queue, (m) => m && resolve(m.content.toString()), { noAck: true }));
        const returned = new Promise<string>((resolve) => ch.once('return', (m: amqp.Message) => resolve(m.fields.routingKey)));
        await new Promise<void>((resolve, reject) =>
          ch.publish('harness', 'bound', Buffer.from('hello'), { persistent: true, mandatory: true }, (err) =>
            err ? reject(err) : resolve(),
          ),
        );
        expect(await got).toBe('hello');
        ch.publish('harness', 'nowhere', Buffer.from('lost'), { mandatory: true });
        expect(await returned).toBe('nowhere');
        await ch.close();
      } finally {
        await conn.close();
      }
    },
  );

  it.skipIf(!brokers.nats)('NATS JetStream acknowledges a publish, and the same message id again as a duplicate', async () => {
    const nc = await connect({ servers: brokers.nats! });
    try {
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: 'HARNESS', subjects: ['harness.>'] });
      const js = nc.jetstream();
      const sc = StringCodec();
      const first = await js.publish('harness.one', sc.encode('hello'), { msgID: 'ed_1:evt_1' });
      const again = await js.publish('harness.one', sc.encode('hello'), { msgID: 'ed_1:evt_1' });
      expect(first).toMatchObject({ stream: 'HARNESS', duplicate: false });
      expect(again).toMatchObject({ stream: 'HARNESS', seq: first.seq, duplicate: true });
      const stored = await jsm.streams.getMessage('HARNESS', { seq: first.seq });
      expect(sc.decode(stored.data)).toBe('hello');
      await expect(js.publish('unbound.subject', sc.encode('x'))).rejects.toThrow(/503|no responders/i);
    } finally {
      await nc.close();
    }
  });

  it.skipIf(!brokers.redis)('Redis appends to a stream by XADD and a reader gets the entry back', async () => {
    const redis = new Redis(brokers.redis!, { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
    try {
      const id = await redis.xadd('harness', 'MAXLEN', '~', '1000', '*', 'event_id', 'evt_1', 'body', '{"ok":true}');
      expect(id).toMatch(/^\d+-\d+$/);
      const entries = await redis.xrange('harness', '-', '+');
      expect(entries).toEqual([[id, ['event_id', 'evt_1', 'body', '{"ok":true}']]]);
      expect(await redis.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
    } finally {
      redis.disconnect();
    }
  });
});
