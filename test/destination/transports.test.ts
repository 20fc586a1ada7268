import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTransports } from '../../src/domain/destination/transports/index.ts';
import { expectSignedAsSent, POLICY, signedMessage, target } from './transport-helpers.ts';

/**
 * The transports against the run's real brokers (test/support/brokers.ts), called directly as the delivery engine
 * calls them: a consumer of each type reads what was published and verifies it, and each broker's own refusals
 * (unroutable, missing exchange, no stream, a cluster redirect) are failed attempts with their reason.
 */
const brokers = inject('brokers');
const transports = createTransports();
afterAll(() => Promise.all(Object.values(transports).map((t) => t.close())));

describe.skipIf(!brokers.rabbitmq)('rabbitmq transport', () => {
  let conn: amqp.ChannelModel;
  let ch: amqp.Channel;
  beforeAll(async () => {
    conn = await amqp.connect(brokers.rabbitmq!);
    ch = await conn.createChannel();
    await ch.assertExchange('dest-events', 'topic', { durable: true });
  });
  afterAll(() => conn?.close());

  async function queueFor(pattern: string): Promise<string> {
    const { queue } = await ch.assertQueue('', { exclusive: true, durable: false });
    await ch.bindQueue(queue, 'dest-events', pattern);
    return queue;
  }

  it('publishes a persistent message a consumer receives with the exact body, the signed headers and the event id', async () => {
    const queue = await queueFor('entity.#');
    const t = target('rabbitmq', brokers.rabbitmq!, '{type}', { exchange: 'dest-events' });
    const sent = [signedMessage(), signedMessage('entity.updated', 'op_replay1')];
    for (const m of sent)
      expect(await transports.rabbitmq.publish(t, m, POLICY)).toMatchObject({ ok: true, statusCode: null, error: null });
    for (const m of sent) {
      const got = await ch.get(queue, { noAck: true });
      if (!got) throw new Error('nothing in the queue');
      expect(got.fields).toMatchObject({ exchange: 'dest-events', routingKey: 'entity.updated' });
      expect(got.properties).toMatchObject({ messageId: m.eventId, contentType: 'application/json', deliveryMode: 2 });
      expectSignedAsSent({ body: got.content.toString(), values: got.properties.headers as Record<string, string> }, m);
    }
  });

  it('an unroutable message (basic.return) is a failed attempt, and so is a missing exchange; the channel is opened again', async () => {
    const t = target('rabbitmq', brokers.rabbitmq!, 'nobody.{type}', { exchange: 'dest-events' });
    const unroutable = await transports.rabbitmq.publish(t, signedMessage(), POLICY);
    expect(unroutable).toMatchObject({ ok: false, statusCode: null });
    expect(unroutable.error).toMatch(/^unroutable: NO_ROUTE \(312\): exchange 'dest-events', routing key 'nobody\.entity\.updated'$/);

    const missing = target('rabbitmq', brokers.rabbitmq!, '{type}', { exchange: 'dest-missing' });
    const first = await transports.rabbitmq.publish(missing, signedMessage(), POLICY);
    expect(first.ok).toBe(false);
    expect(first.error).toMatch(/^exchange_not_found: no exchange 'dest-missing' in vhost '\/'/);
    // Once the exchange exists, the destination's next publish goes through on a new channel.
    await ch.assertExchange('dest-missing', 'fanout', { durable: false, autoDelete: false });
    const queue = await queueFor('#');
    await ch.bindQueue(queue, 'dest-missing', '');
    const m = signedMessage();
    expect(await transports.rabbitmq.publish(missing, m, POLICY)).toMatchObject({ ok: true });
    expect(((await ch.get(queue, { noAck: true })) || null)?.properties.messageId).toBe(m.eventId);
    await ch.deleteExchange('dest-missing');
  });
});

describe.skipIf(!brokers.nats)('nats transport', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: brokers.nats! });
    await (await nc.jetstreamManager()).streams.add({ name: 'DEST', subjects: ['dest.>'] });
  });
  afterAll(() => nc?.close());

  const stored = async (seq: number) => (await nc.jetstreamManager()).streams.getMessage('DEST', { seq });
  const seqOf = (excerpt: string | null) => Number(/seq=(\d+)/.exec(excerpt ?? '')?.[1]);

  it('publishes to JetStream with the message id <ed>:<evt>; the stored message carries the exact body and the signed headers', async () => {
    const t = target('nats', brokers.nats!, 'dest.{type}');
    const m = signedMessage();
    const out = await transports.nats.publish(t, m, POLICY);
    expect(out).toMatchObject({ ok: true, statusCode: null, error: null });
    expect(out.excerpt).toMatch(/^stream=DEST seq=\d+$/);
    const msg = await stored(seqOf(out.excerpt));
    expect(msg.subject).toBe('dest.entity.updated');
    expect(msg.header.get('Nats-Msg-Id')).toBe(`${t.id}:${m.eventId}`);
    const values = Object.fromEntries([...msg.header.keys()].map((k) => [k, msg.header.get(k)]));
    expectSignedAsSent({ body: new TextDecoder().decode(msg.data), values: { ...values, 'webhook-replay': undefined } }, m);
  });

  it('a PubAck marked duplicate counts as delivered and says so; a replay adds its operation id and is stored again', async () => {
    const t = target('nats', brokers.nats!, 'dest.{type}');
    const m = signedMessage();
    const first = await transports.nats.publish(t, m, POLICY);
    const again = await transports.nats.publish(t, m, POLICY);
    expect(again).toMatchObject({ ok: true, error: null });
    expect(again.excerpt).toBe(`duplicate ${first.excerpt}`);
    const replay = await transports.nats.publish(t, { ...m, replayOperationId: 'op_1' }, POLICY);
    expect(replay.excerpt).toMatch(/^stream=DEST seq=\d+$/);
    const msg = await stored(seqOf(replay.excerpt));
    expect(msg.header.get('Nats-Msg-Id')).toBe(`${t.id}:${m.eventId}:op_1`);
    expect(msg.header.get('webhook-replay')).toBe('op_1');
  });

  it('no stream bound to the subject is a failed attempt (no responders); no stream is created', async () => {
    const t = target('nats', brokers.nats!, 'unbound.{type}');
    const out = await transports.nats.publish(t, signedMessage(), POLICY);
    expect(out).toMatchObject({
      ok: false,
      statusCode: null,
      error: "no_stream: no stream is bound to subject 'unbound.entity.updated' (no responders)",
    });
    const names: string[] = [];
    for await (const s of (await nc.jetstreamManager()).streams.list()) names.push(s.config.name);
    expect(names).toEqual(['DEST']);
  });
});

describe.skipIf(!brokers.redis)('redis transport', () => {
  let redis: Redis;
  beforeAll(() => {
    redis = new Redis(brokers.redis!, { maxRetriesPerRequest: 0 });
  });
  afterAll(() => redis?.disconnect());

  it('XADDs event_id, the signed fields and the exact body; the reply (entry id) is the excerpt', async () => {
    const t = target('redis', brokers.redis!, 'dest:{type}');
    const sent = [signedMessage(), signedMessage('entity.updated', 'op_replay1')];
    const ids: (string | null)[] = [];
    for (const m of sent) {
      const out = await transports.redis.publish(t, m, POLICY);
      expect(out).toMatchObject({ ok: true, statusCode: null, error: null });
      ids.push(out.excerpt);
    }
    const entries = await redis.xrange('dest:entity.updated', '-', '+');
    for (const [i, m] of sent.entries()) {
      const [id, flat] = entries.find(([id]) => id === ids[i])!;
      expect(id).toMatch(/^\d+-\d+$/);
      const names = flat.filter((_, j) => j % 2 === 0);
      expect(names).toEqual([
        'event_id',
        'webhook-id',
        'webhook-timestamp',
        'webhook-signature',
        ...(m.replayOperationId ? ['webhook-replay'] : []),
        'body',
      ]);
      const fields = Object.fromEntries(names.map((n, j) => [n, flat[2 * j + 1]]));
      expect(fields.event_id).toBe(m.eventId);
      expectSignedAsSent({ body: fields.body!, values: fields }, m);
    }
  });

  it('trims with MAXLEN ~ when the destination sets a maximum length', async () => {
    const t = target('redis', brokers.redis!, 'dest:trimmed', { maxLen: 10 });
    for (let i = 0; i < 300; i++) {
      const out = await transports.redis.publish(t, signedMessage(), POLICY);
      expect(out.ok, `publish ${i}: ${JSON.stringify(out)}`).toBe(true);
    }
    // `~` lets Redis trim by whole nodes (100 entries by default): fewer than all, at least the maximum.
    const len = await redis.xlen('dest:trimmed');
    expect(len).toBeGreaterThanOrEqual(10);
    expect(len).toBeLessThan(300);
  });

  it('one connection per URL whatever the destinations; closed once idle, opened again on the next publish', async () => {
    const t = createTransports({ idleMs: 200 });
    const ours = async () =>
      String(await redis.client('LIST'))
        .split('\n')
        .filter((l) => l.includes('name=platform-api-event-destinations')).length;
    const before = await ours();
    await Promise.all(
      ['a', 'b', 'c'].map((k) => t.redis.publish(target('redis', brokers.redis!, `dest:shared:${k}`), signedMessage(), POLICY)),
    );
    expect(await ours()).toBe(before + 1);
    await expect.poll(ours, { timeout: 5000, interval: 50 }).toBe(before);
    expect(await t.redis.publish(target('redis', brokers.redis!, 'dest:shared:a'), signedMessage(), POLICY)).toMatchObject({ ok: true });
    expect(await ours()).toBe(before + 1);
    await t.redis.close();
    await expect.poll(ours, { timeout: 5000, interval: 50 }).toBe(before);
  });

  it('a wrong type at the key is a failed attempt with the reply', async () => {
    await redis.set('dest:not-a-stream', 'x');
    const out = await transports.redis.publish(target('redis', brokers.redis!, 'dest:not-a-stream'), signedMessage(), POLICY);
    expect(out).toMatchObject({ ok: false, statusCode: null });
    expect(out.error).toMatch(/^publish_failed: WRONGTYPE/);
  });
});
