import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { connect, StringCodec, type NatsConnection } from 'nats';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, inject } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { appTest, buildTenant, type TestApp } from '../support/kit.ts';
import { WRITE, destinations } from './helpers.ts';

/**
 * End to end through the real transports against the run's real brokers (test/support/brokers.ts): a destination of
 * each type receives the organization's events as signed messages a consumer verifies with a Standard Webhooks
 * verifier, in order per subject, filtered, replayed by seq range; disabling stops it at once; wrong credentials
 * are an attempt in the log that names the broker's reason and never the credentials.
 */
const brokers = inject('brokers');
const test = appTest({
  config: { webhook: { ...loadConfig({}).webhook, allowLoopback: true, retryScheduleMs: [0, 200, 400, 800], pollMs: 50 } },
});
let t: TestApp;
test.beforeAll(({ app }) => void (t = app));

/** A received message as the consumer reads it: the three Standard Webhooks values and the body. */
interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A broker-side consumer of one destination's messages, and the destination body that publishes to it. */
interface Consumer {
  destination: Record<string, unknown>;
  /** Waits until `n` messages arrived (or fails after `ms`); answers all of them so far. */
  take(n: number, ms?: number): Promise<Received[]>;
  close(): Promise<void>;
}

function collector() {
  const got: Received[] = [];
  let wake = () => {};
  return {
    got,
    push(r: Received) {
      got.push(r);
      wake();
    },
    async take(n: number, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (got.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} messages, got ${got.length}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 200);
        });
      }
      return [...got];
    },
  };
}

const unique = () => Math.random().toString(36).slice(2, 10);

async function rabbitConsumer(): Promise<Consumer> {
  const conn = await amqp.connect(brokers.rabbitmq!);
  const ch = await conn.createChannel();
  const exchange = `ex_${unique()}`;
  await ch.assertExchange(exchange, 'topic', { durable: false, autoDelete: true });
  const { queue } = await ch.assertQueue('', { exclusive: true });
  await ch.bindQueue(queue, exchange, '#');
  const c = collector();
  await ch.consume(
    queue,
    (m) => {
      if (!m) return;
      const h = Object.fromEntries(Object.entries(m.properties.headers ?? {}).map(([k, v]) => [k, String(v)]));
      c.push({ headers: h, body: m.content.toString() });
    },
    { noAck: true },
  );
  return {
    destination: { type: 'rabbitmq', url: brokers.rabbitmq!, exchange, routing_key: '{type}' },
    take: c.take,
    close: async () => {
      await conn.close();
    },
  };
}

async function natsConsumer(): Promise<Consumer> {
  const nc: NatsConnection = await connect({ servers: brokers.nats! });
  const jsm = await nc.jetstreamManager();
  const prefix = `d${unique()}`;
  const stream = prefix.toUpperCase();
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`] });
  const js = nc.jetstream();
  const consumer = await js.consumers.get(stream);
  const c = collector();
  const sc = StringCodec();
  const messages = await consumer.consume();
  void (async () => {
    for await (const m of messages) {
      const h: Record<string, string> = {};
      for (const k of m.headers?.keys() ?? []) h[k.toLowerCase()] = m.headers!.get(k);
      c.push({ headers: h, body: sc.decode(m.data) });
      m.ack();
    }
  })();
  return {
    destination: { type: 'nats', url: brokers.nats!, subject: `${prefix}.{type}` },
    take: c.take,
    close: async () => {
      await messages.close();
      await jsm.streams.delete(stream);
      await nc.close();
    },
  };
}

async function redisConsumer(): Promise<Consumer> {
  const redis = new Redis(brokers.redis!, { maxRetriesPerRequest: 1 });
  const stream = `events:${unique()}`;
  const read = async (): Promise<Received[]> => {
    const entries = await redis.xrange(stream, '-', '+');
    return entries.map(([, fields]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
      const { body, ...rest } = f;
      return { headers: rest, body: body! };
    });
  };
  return {
    destination: { type: 'redis', url: brokers.redis!, stream },
    take: async (n, ms = 15_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const got = await read();
        if (got.length >= n) return got;
        if (Date.now() > deadline) throw new Error(`expected ${n} entries, got ${got.length}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    close: async () => {
      await redis.del(stream);
      redis.disconnect();
    },
  };
}

const CONSUMERS = { rabbitmq: rabbitConsumer, nats: natsConsumer, redis: redisConsumer } as const;

/** Appends a test event about `subject` and waits until it is sequenced; answers its id. */
async function emit(organizationId: string, type: string, subject = 'ent_1', data: Record<string, unknown> = {}) {
  const res = await t.http.post(
    '/operator/events',
    { organization_id: organizationId, type, subject: { type: 'entity', id: subject }, data },
    { token: t.operatorToken },
  );
  expect(res.status, res.text).toBe(201);
  await t.app.sequencer.flush();
  return res.body.id as string;
}

const verified = (secret: string, m: Received) =>
  new Webhook(secret).verify(m.body, m.headers) as { id: string; type: string; seq: number };

describe('delivery through the real transports', () => {
  const open: Consumer[] = [];
  afterAll(async () => {
    for (const c of open) await c.close();
  });

  for (const type of ['rabbitmq', 'nats', 'redis'] as const) {
    describe.skipIf(!brokers[type])(type, () => {
      test('every subscribed event arrives signed, in order per subject, filtered; a replay re-sends a seq range', async () => {
        const consumer = await CONSUMERS[type]();
        open.push(consumer);
        const { org, token } = await buildTenant(t, WRITE);
        const res = await destinations(t, token).create({
          ...consumer.destination,
          enabled_events: ['assertion.created', 'assertion.revoked'],
          ordering: 'subject',
        });
        expect(res.status, res.text).toBe(201);
        const d = res.body.event_destination;
        const ids: string[] = [];
        for (let i = 0; i < 6; i++) ids.push(await emit(org.id, i % 2 ? 'assertion.revoked' : 'assertion.created', `ent_${i % 2}`, { i }));
        await emit(org.id, 'payout.created'); // not subscribed
        const got = (await consumer.take(6)).map((m) => verified(d.secret, m));
        expect(got.map((e) => e.id).sort()).toEqual([...ids].sort());
        for (const subject of [0, 1]) {
          const seqs = got.filter((_, i) => i % 2 === subject).map((e) => e.seq);
          expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        }
        const log = await destinations(t, token).deliveries(d.id);
        expect(log.body.data).toHaveLength(6);
        expect(log.body.data.every((x: { status: string }) => x.status === 'succeeded')).toBe(true);

        // Replay the first two events' seq range: they arrive again, with the same ids and valid signatures.
        const first = got.find((e) => e.id === ids[0])!.seq;
        const op = await destinations(t, token).replay(d.id, { starting_after: first - 1, until: first + 1 });
        expect(op.status, op.text).toBe(202);
        const again = (await consumer.take(8)).slice(6).map((m) => verified(d.secret, m));
        expect(again.map((e) => e.id).sort()).toEqual([ids[0], ids[1]].sort());
      });

      test('a rotated secret signs with both for the overlap; disabling stops delivery at once', async () => {
        const consumer = await CONSUMERS[type]();
        open.push(consumer);
        const { org, token } = await buildTenant(t, WRITE);
        const d = (await destinations(t, token).create(consumer.destination)).body.event_destination;
        const rotated = (await destinations(t, token).rotate(d.id)).body.event_destination;
        await emit(org.id, 'assertion.created');
        const [m] = await consumer.take(1);
        expect(verified(d.secret, m!)).toBeTruthy();
        expect(verified(rotated.secret, m!)).toBeTruthy();
        expect((await destinations(t, token).update(d.id, { status: 'disabled' })).status).toBe(200);
        await emit(org.id, 'assertion.created');
        await t.app.webhooks.drain();
        expect(await consumer.take(1)).toHaveLength(1);
      });
    });
  }

  describe.skipIf(!brokers.rabbitmq)('wrong credentials', () => {
    test('the attempt is recorded with the broker reason and health shows it; the password never leaks', async () => {
      const { org, token } = await buildTenant(t, WRITE);
      const url = brokers.rabbitmq!.replace('guest:guest', 'guest:wr0ng-pa55');
      const d = (await destinations(t, token).create({ type: 'rabbitmq', url, exchange: 'amq.topic' })).body.event_destination;
      await emit(org.id, 'assertion.created');
      await t.app.webhooks.drain();
      const log = await destinations(t, token).deliveries(d.id);
      const attempt = log.body.data[0].attempt_log[0];
      expect(attempt.error).toBeTruthy();
      expect(attempt.status_code).toBeNull();
      const health = (await destinations(t, token).get(d.id)).body.event_destination.health;
      expect(health.last_failure.error).toBe(attempt.error);
      expect(JSON.stringify([log.body, health])).not.toContain('wr0ng-pa55');
    });
  });
});
