/**
 * Event destinations (issue 34, item 7), at the transport level: the
 * transports (src/domain/destination/transports) against the brokers the
 * tests use (test/support/brokers.ts: RabbitMQ, NATS with JetStream, Redis
 * with `appendfsync always`, started here on loopback in temporary
 * directories and stopped after).
 *
 * 1. Deliveries per second per type: the transport, `IN_FLIGHT` publishes in
 *    flight (a destination's `max_in_flight`), against a baseline that
 *    publishes the same signed bodies with the same durability (confirm,
 *    PubAck or XADD reply awaited) on one connection of the same client with
 *    the same in-flight, in interleaved slices (bench/measure.ts's rotation,
 *    bench/stats.ts), reported as the median of per-round ratios (target ≥ 0.5).
 * 2. Publish-to-consume latency at 1,000 events/s through the transport: a
 *    consumer of each type (a queue consumer, a JetStream ordered consumer,
 *    XREAD BLOCK) timestamps each message; p50 and p99.
 *
 * 3. Deliveries per second per type through the delivery engine: an API
 *    started as bench/run.ts starts one (bench/tenant.ts), a destination of
 *    the type with `policy.max_in_flight` = `IN_FLIGHT`, events appended in
 *    bulk while the worker is stopped, then the rate from the worker's start
 *    to the consumer's last arrival (fan-out, lease, sign, publish, record),
 *    interleaved with the same baseline as 1 (target ≥ 0.5). On PostgreSQL a
 *    third side in the same rotation, the durable floor (`floorBatch`): the
 *    least a delivery row and an attempt log cost on this database.
 * 4. Append-to-consume latency at 1,000 events/s through the engine: events
 *    appended at a steady rate (a transaction per 10 ms tick), the consumer
 *    timestamps each arrival; p50 and p99 of arrival − commit.
 *
 * The engine parts run on PostgreSQL with `--database-url` (an empty database;
 * bench/run.ts creates one in `--pg-url`'s cluster), else on PGlite in memory;
 * `--no-engine` leaves them out.
 *
 *   npm run bench:destinations                       # every installed broker type
 *   npm run bench:destinations -- --only redis,nats --rounds 4 --duration 2 --in-flight 16
 *   npm run bench:destinations -- --database-url postgres://postgres@127.0.0.1:55432/bench_destinations
 *
 * Prints one JSON report on stdout (progress on stderr); `npm run bench`
 * runs it as scenario 10 (bench/run.ts).
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import amqp from 'amqplib';
import { Redis } from 'ioredis';
import { connect, DeliverPolicy, headers as natsHeaders } from 'nats';
import pg from 'pg';
import type { DestinationMessage, DestinationTarget, DestinationType, Transport } from '../src/domain/destination/transport.ts';
import { createTransports } from '../src/domain/destination/transports/index.ts';
import { buildApp, type App } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { appendEvent } from '../src/domain/event/event.ts';
import { BENCH_OPERATOR, benchEnv, benchTenant } from './tenant.ts';
import { signedMessage } from '../test/destination/signed-message.ts';
import { installedBrokers, startBrokers } from '../test/support/brokers.ts';
import { mainThreadCpuMs } from './measure.ts';
import { meets, pairRatios, quantile, round, schedule, spread } from './stats.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const TYPES = (flag('--only')?.split(',') ?? installedBrokers()) as DestinationType[];
const ROUNDS = Number(flag('--rounds') ?? 6);
const SLICE_S = Number(flag('--duration') ?? 2);
const IN_FLIGHT = Number(flag('--in-flight') ?? 16);
const RATE = Number(flag('--rate') ?? 1000);
const LATENCY_S = Number(flag('--latency-seconds') ?? 5);
const ENGINE = !args.includes('--no-engine');
const DATABASE_URL = flag('--database-url') ?? '';
const TARGET = { min: 0.5 };
/** How many deliveries the durable floor keeps leased per free slot (1: it leases when a slot frees, as the engine). */
const FLOOR_PREFETCH = Number(flag('--floor-prefetch') ?? 1);
const log = (...a: unknown[]) => console.error('[bench:destinations]', ...a);
const POLICY = { allowLoopback: true, allowPrivateNetworks: false, timeoutMs: 10_000 };

const signed = (eventType?: string) => signedMessage(eventType);

/** One side of a comparison: publishes one message and resolves once the broker accepted it. */
type Publish = (m: DestinationMessage) => Promise<void>;

/** Closed loop: `inFlight` publishers for `seconds`; completed publishes per second. */
async function closedLoop(publish: Publish, inFlight: number, seconds: number): Promise<number> {
  const until = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < until) {
        await publish(signed());
        done++;
      }
    }),
  );
  return done / seconds;
}

interface Sides {
  transport: Publish;
  baseline: Publish;
  /** Starts a consumer calling `got(eventId)` per message; resolves to its stop. */
  consume(got: (body: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

const ok = (t: Transport, target: DestinationTarget) => async (m: DestinationMessage) => {
  const out = await t.publish(target, m, POLICY);
  if (!out.ok) throw new Error(`publish failed: ${out.error}`);
};

async function rabbitmqSides(url: string, transports: Record<DestinationType, Transport>): Promise<Sides> {
  const admin = await amqp.connect(url);
  const ach = await admin.createChannel();
  await ach.assertExchange('bench', 'topic', { durable: true });
  await ach.assertQueue('bench-q', { durable: true });
  await ach.bindQueue('bench-q', 'bench', '#');
  // The queue is drained by a consumer all along, so it never grows between slices.
  await ach.consume('bench-q', () => {}, { noAck: true });
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  const target: DestinationTarget = { id: 'ed_bench', type: 'rabbitmq', url, caCertificate: null, exchange: 'bench', template: '{type}' };
  return {
    transport: ok(transports.rabbitmq, target),
    baseline: (m) =>
      new Promise((resolve, reject) =>
        ch.publish(
          'bench',
          m.eventType,
          Buffer.from(m.body),
          { persistent: true, mandatory: true, messageId: m.eventId, contentType: 'application/json', headers: { ...m.headers } },
          (err) => (err ? reject(err) : resolve()),
        ),
      ),
    async consume(got) {
      await ach.assertQueue('bench-latency', { durable: true });
      await ach.purgeQueue('bench-latency');
      await ach.bindQueue('bench-latency', 'bench', 'latency.#');
      const { consumerTag } = await ach.consume('bench-latency', (msg) => msg && got(msg.content.toString()), { noAck: true });
      return async () => void (await ach.cancel(consumerTag));
    },
    close: async () => {
      await conn.close();
      await admin.close();
    },
  };
}

async function natsSides(url: string, transports: Record<DestinationType, Transport>): Promise<Sides> {
  const nc = await connect({ servers: url });
  const jsm = await nc.jetstreamManager();
  // A bounded stream: the bench appends hundreds of thousands of messages.
  await jsm.streams.add({ name: 'BENCH', subjects: ['bench.>'], max_msgs: 100_000 });
  const js = nc.jetstream();
  const target: DestinationTarget = { id: 'ed_bench', type: 'nats', url, caCertificate: null, template: 'bench.{type}' };
  return {
    transport: ok(transports.nats, target),
    baseline: async (m) => {
      const h = natsHeaders();
      for (const [k, v] of Object.entries(m.headers)) h.set(k, v);
      await js.publish(`bench.${m.eventType}`, Buffer.from(m.body), { msgID: `ed_base:${m.eventId}`, headers: h });
    },
    async consume(got) {
      // One subject as a string: nats-server 2.9 (Debian's) has no multi-subject filter.
      const consumer = await js.consumers.get('BENCH', { filterSubjects: 'bench.latency.>', deliver_policy: DeliverPolicy.New });
      const messages = await consumer.consume();
      void (async () => {
        for await (const m of messages) got(new TextDecoder().decode(m.data));
      })();
      return async () => void (await messages.close());
    },
    close: () => nc.close(),
  };
}

async function redisSides(url: string, transports: Record<DestinationType, Transport>): Promise<Sides> {
  const redis = new Redis(url, { maxRetriesPerRequest: 0 });
  const target: DestinationTarget = { id: 'ed_bench', type: 'redis', url, caCertificate: null, template: 'bench:{type}', maxLen: 10_000 };
  return {
    transport: ok(transports.redis, target),
    baseline: async (m) => {
      await redis.xadd(
        `bench:${m.eventType}`,
        'MAXLEN',
        '~',
        '10000',
        '*',
        'event_id',
        m.eventId,
        ...Object.entries(m.headers).flat(),
        'body',
        m.body,
      );
    },
    async consume(got) {
      const reader = new Redis(url, { maxRetriesPerRequest: 0 });
      let stopped = false;
      // The latency stream starts empty (an earlier part's entries removed): read it from its start.
      await reader.del('bench:latency.tick');
      let last = '0-0';
      const loop = (async () => {
        while (!stopped) {
          const res = await reader.xread('COUNT', 1000, 'BLOCK', 200, 'STREAMS', 'bench:latency.tick', last);
          for (const [, entries] of res ?? [])
            for (const [id, flat] of entries) {
              last = id;
              got(flat[flat.indexOf('body') + 1]!);
            }
        }
      })();
      return async () => {
        stopped = true;
        await loop;
        reader.disconnect();
      };
    },
    close: async () => void redis.disconnect(),
  };
}

const SIDES = { rabbitmq: rabbitmqSides, nats: natsSides, redis: redisSides };

async function throughput(type: DestinationType, sides: Sides) {
  // Warm-up: connections and channels opened, JIT warm.
  await closedLoop(sides.transport, IN_FLIGHT, 0.5);
  await closedLoop(sides.baseline, IN_FLIGHT, 0.5);
  const perSide: [number[], number[]] = [[], []];
  const load: number[] = [os.loadavg()[0]!];
  for (const order of schedule(2, ROUNDS))
    for (const side of order) perSide[side]!.push(await closedLoop(side === 0 ? sides.baseline : sides.transport, IN_FLIGHT, SLICE_S));
  load.push(os.loadavg()[0]!);
  const ratios = pairRatios(perSide[1], perSide[0]);
  const r = spread(ratios);
  const row = {
    type,
    subject: `transport (${IN_FLIGHT} in flight)`,
    baseline: `one ${type} connection, same bodies and acknowledgement, ${IN_FLIGHT} in flight`,
    ratio: round(r.median),
    spread: { q1: round(r.q1), q3: round(r.q3), min: round(r.min), max: round(r.max) },
    perRound: ratios.map((x) => round(x)),
    deliveriesPerSecond: { transport: round(spread(perSide[1]).median, 0), baseline: round(spread(perSide[0]).median, 0) },
    target: '≥ 0.5',
    met: meets(r.median, TARGET),
    loadavg: load.map((x) => round(x)),
  };
  log(
    `${type}: ${row.deliveriesPerSecond.transport}/s vs ${row.deliveriesPerSecond.baseline}/s, ratio ${row.ratio} (IQR ${row.spread.q1}–${row.spread.q3}), ${row.met ? 'met' : 'missed'}, load ${row.loadavg.join('→')}`,
  );
  return row;
}

/** Open loop at RATE events/s for LATENCY_S seconds through the transport; publish-to-consume per message. */
async function latency(type: DestinationType, sides: Sides, transport: Transport, url: string) {
  const started = new Map<string, number>();
  const latencies: number[] = [];
  let resolveAll: () => void = () => {};
  const all = new Promise<void>((r) => (resolveAll = r));
  const total = RATE * LATENCY_S;
  const stop = await sides.consume((body) => {
    const id = (JSON.parse(body) as { id: string }).id;
    const t0 = started.get(id);
    if (t0 === undefined) return;
    started.delete(id);
    latencies.push(performance.now() - t0);
    if (latencies.length === total) resolveAll();
  });
  const target: DestinationTarget = {
    id: 'ed_latency',
    type,
    url,
    caCertificate: null,
    exchange: 'bench',
    template: type === 'redis' ? 'bench:{type}' : type === 'nats' ? 'bench.{type}' : '{type}',
  };
  const load: number[] = [os.loadavg()[0]!];
  let failed = 0;
  const t0 = performance.now();
  // Ticks of 10 ms (RATE/100 events each), scheduled against the start so a late tick catches up.
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * RATE) + 1);
    for (; sent < due; sent++) {
      const m = signed('latency.tick');
      started.set(m.eventId, performance.now());
      void transport.publish(target, m, POLICY).then((o) => void (o.ok || failed++));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.race([all, new Promise((r) => setTimeout(r, 10_000))]);
  await stop();
  load.push(os.loadavg()[0]!);
  const row = {
    type,
    rate: RATE,
    seconds: LATENCY_S,
    received: latencies.length,
    sent: total,
    failed,
    p50ms: round(quantile(latencies, 0.5)),
    p99ms: round(quantile(latencies, 0.99)),
    maxms: round(Math.max(...latencies)),
    loadavg: load.map((x) => round(x)),
  };
  log(`${type}: publish-to-consume at ${RATE}/s: p50 ${row.p50ms} ms, p99 ${row.p99ms} ms, received ${row.received}/${total}`);
  return row;
}

/** The API whose delivery engine parts 3 and 4 measure, an organization, and a token that manages its destinations. */
interface Engine {
  app: App;
  orgId: string;
  post: (path: string, body: unknown, token: string) => Promise<any>;
  secret: string;
  origin: string;
}

async function startEngine(): Promise<Engine> {
  const config = loadConfig({
    ...benchEnv('memory://', DATABASE_URL),
    // The brokers are on loopback (off by default on PostgreSQL); their URLs hold credentials (RabbitMQ's guest).
    WEBHOOK_ALLOW_LOOPBACK: '1',
    ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
  });
  const app = await buildApp(config);
  await app.start();
  const origin = app.urls.api_origin;
  const { post, created, secret } = await benchTenant(origin, BENCH_OPERATOR, ['webhooks:read', 'webhooks:write']);
  return { app, orgId: created.organization.id, post, secret, origin };
}

/** A destination of `type` publishing where `Sides.consume` reads (the latency routing key, subject or stream). */
function destinationBody(type: DestinationType, url: string) {
  const settings = {
    rabbitmq: { exchange: 'bench', routing_key: 'latency.{type}' },
    nats: { subject: 'bench.latency.{type}' },
    redis: { stream: 'bench:latency.tick', max_len: 10_000 },
  }[type];
  return { type, url, ...settings, enabled_events: ['assertion.created'], policy: { max_in_flight: IN_FLIGHT } };
}

/** Appends `n` test events in transactions of `per`; answers their ids and each one's commit time. */
async function appendEvents(e: Engine, n: number, per: number): Promise<[string, number][]> {
  const { deps } = e.app;
  const ids = await deps.db.transaction(async (tx) => {
    const out: string[] = [];
    for (let i = 0; i < Math.min(n, per); i++)
      out.push(
        await appendEvent(deps, tx, {
          test: true,
          organizationId: e.orgId,
          type: 'assertion.created',
          subject: { type: 'entity', id: `ent_${i % 16}` },
          data: { i },
        }),
      );
    return out;
  });
  const at = performance.now();
  const rest = n > per ? await appendEvents(e, n - per, per) : [];
  return [...ids.map((id): [string, number] => [id, at]), ...rest];
}

/** Calls `arrived(id, at)` for each event the consumer receives, until the returned stop. */
const consumeIds = (sides: Sides, arrived: (id: string, at: number) => void) =>
  sides.consume((body) => arrived((JSON.parse(body) as { id: string }).id, performance.now()));

/**
 * One engine slice: `n` events appended (8 writers) while the worker is stopped, then the worker started;
 * deliveries per second from its start to the last of them consumed.
 */
async function engineBatch(e: Engine, sides: Sides, n: number, cpu: number[] = []): Promise<number> {
  await e.app.webhooks.stop();
  const chunks = Array.from({ length: 8 }, (_, i) => Math.floor(n / 8) + (i < n % 8 ? 1 : 0));
  const ids = (await Promise.all(chunks.map((c) => appendEvents(e, c, 50)))).flat().map(([id]) => id);
  await e.app.sequencer.flush();
  const arrived = await arrivals(sides, ids);
  const start = performance.now();
  const cpu0 = mainThreadCpuMs();
  e.app.webhooks.start();
  const last = await arrived.last('engine');
  cpu.push((mainThreadCpuMs() - cpu0) / ids.length);
  return ids.length / ((last - start) / 1000);
}

/** Consumes until every one of `ids` arrived; `last` resolves to the last arrival's time (at most 120 s on). */
async function arrivals(sides: Sides, ids: string[]): Promise<{ last(what: string): Promise<number> }> {
  const pending = new Set(ids);
  let last = 0;
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  const stop = await consumeIds(sides, (id, at) => {
    if (!pending.delete(id)) return;
    last = at;
    if (pending.size === 0) done();
  });
  return {
    last: async (what) => {
      await Promise.race([all, new Promise((r) => setTimeout(r, 120_000))]);
      await stop();
      if (pending.size) throw new Error(`${what}: ${pending.size} of ${ids.length} events not consumed within 120 s`);
      return last;
    },
  };
}

/**
 * The physical floor of a durable delivery on this database (PostgreSQL only): the least an engine that keeps a
 * delivery row and an attempt log can do, with none of the product's code. Three tables of its own; per slice `n`
 * events stored, then, timed: one fan-out statement, leases of as many deliveries as there are free slots
 * (`FOR UPDATE SKIP LOCKED`, the payload joined in), each published by the baseline's client on its one connection,
 * and the finished ones recorded in batches (state and attempt row in one statement, one batch at a time), as the
 * engine batches its own. What it leaves out (organizations, fairness, ordering, policies, signing per attempt,
 * health, retries) is what the engine's ratio to it pays for.
 */
const FLOOR_SCHEMA = `
  CREATE TABLE IF NOT EXISTS bench_floor_event (id text PRIMARY KEY, body text NOT NULL);
  CREATE TABLE IF NOT EXISTS bench_floor_delivery (id bigserial PRIMARY KEY, event_id text NOT NULL, status text NOT NULL DEFAULT 'pending',
    lease_until timestamptz, attempts int NOT NULL DEFAULT 0);
  CREATE INDEX IF NOT EXISTS bench_floor_due ON bench_floor_delivery (id) WHERE status = 'pending';
  CREATE TABLE IF NOT EXISTS bench_floor_attempt (id bigserial PRIMARY KEY, delivery_id bigint NOT NULL, ok boolean NOT NULL,
    at timestamptz NOT NULL DEFAULT now())`;
const FLOOR_LEASE = `UPDATE bench_floor_delivery d SET lease_until = now() + interval '30 seconds' FROM bench_floor_event e
  WHERE e.id = d.event_id AND d.id IN (SELECT id FROM bench_floor_delivery WHERE status = 'pending' AND lease_until IS NULL
    ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
  RETURNING d.id, d.event_id, e.body`;
const FLOOR_RECORD = `WITH done AS (UPDATE bench_floor_delivery SET status = 'succeeded', attempts = attempts + 1, lease_until = NULL
    WHERE id = ANY($1::bigint[]) RETURNING id)
  INSERT INTO bench_floor_attempt (delivery_id, ok) SELECT id, true FROM done`;

async function floorBatch(pool: pg.Pool, sides: Sides, n: number): Promise<number> {
  const messages = new Map(Array.from({ length: n }, () => signed('latency.tick')).map((m) => [m.eventId, m]));
  await pool.query('TRUNCATE bench_floor_event, bench_floor_delivery, bench_floor_attempt');
  await pool.query('INSERT INTO bench_floor_event (id, body) SELECT * FROM unnest($1::text[], $2::text[])', [
    [...messages.keys()],
    [...messages.values()].map((m) => m.body),
  ]);
  const arrived = await arrivals(sides, [...messages.keys()]);
  const start = performance.now();
  await pool.query('INSERT INTO bench_floor_delivery (event_id) SELECT id FROM bench_floor_event');
  await new Promise<void>((resolve, reject) => {
    let inFlight = 0;
    let leasing = false;
    let leasedAll = false;
    // Leased ahead of a free slot (--floor-prefetch above 1).
    const queued: { id: string; event_id: string; body: string }[] = [];
    let finished: string[] = [];
    let recording = false;
    const settled = () => leasedAll && inFlight === 0 && !queued.length && !finished.length && !recording && resolve();
    const send = () => {
      while (inFlight < IN_FLIGHT && queued.length) {
        const row = queued.shift()!;
        inFlight++;
        sides.baseline({ ...messages.get(row.event_id)!, body: row.body }).then(() => {
          inFlight--;
          finished.push(row.id);
          record();
          send();
          lease();
        }, reject);
      }
    };
    const record = () => {
      if (recording || !finished.length) return;
      recording = true;
      const batch = finished;
      finished = [];
      pool.query(FLOOR_RECORD, [batch]).then(() => {
        recording = false;
        record();
        settled();
      }, reject);
    };
    const lease = () => {
      const room = IN_FLIGHT * FLOOR_PREFETCH - inFlight - queued.length;
      if (leasing || leasedAll || room <= 0) return;
      leasing = true;
      pool.query(FLOOR_LEASE, [room]).then(({ rows }) => {
        leasing = false;
        if (!rows.length) leasedAll = true;
        queued.push(...(rows as { id: string; event_id: string; body: string }[]));
        send();
        lease();
        settled();
      }, reject);
    };
    lease();
  });
  return n / (((await arrived.last('durable floor')) - start) / 1000);
}

async function engineThroughput(type: DestinationType, sides: Sides, e: Engine) {
  // Warm-up: the engine's connection and the consumer; its rate sizes the slices to about SLICE_S seconds.
  const warm = await engineBatch(e, sides, 400);
  await closedLoop(sides.baseline, IN_FLIGHT, 0.5);
  const n = Math.max(400, Math.min(20_000, Math.round(warm * SLICE_S)));
  const floor = DATABASE_URL ? new pg.Pool({ connectionString: DATABASE_URL, max: 2 }) : undefined;
  if (floor) {
    await floor.query(FLOOR_SCHEMA);
    await floorBatch(floor, sides, 400);
  }
  const perSide: [number[], number[], number[]] = [[], [], []];
  const cpu: number[] = [];
  const load: number[] = [os.loadavg()[0]!];
  try {
    for (const order of schedule(floor ? 3 : 2, ROUNDS))
      for (const side of order)
        perSide[side]!.push(
          side === 0
            ? await closedLoop(sides.baseline, IN_FLIGHT, SLICE_S)
            : side === 1
              ? await engineBatch(e, sides, n, cpu)
              : await floorBatch(floor!, sides, n),
        );
  } finally {
    await floor?.end();
  }
  load.push(os.loadavg()[0]!);
  const ratios = pairRatios(perSide[1], perSide[0]);
  const r = spread(ratios);
  const ofFloor = floor ? spread(pairRatios(perSide[2], perSide[0])) : undefined;
  const toFloor = floor ? spread(pairRatios(perSide[1], perSide[2])) : undefined;
  const row = {
    type,
    database: e.app.deps.db.kind,
    subject: `delivery engine (max_in_flight ${IN_FLIGHT}, ${n} events per slice)`,
    baseline: `one ${type} connection, same bodies and acknowledgement, ${IN_FLIGHT} in flight`,
    ratio: round(r.median),
    spread: { q1: round(r.q1), q3: round(r.q3), min: round(r.min), max: round(r.max) },
    perRound: ratios.map((x) => round(x)),
    deliveriesPerSecond: {
      engine: round(spread(perSide[1]).median, 0),
      baseline: round(spread(perSide[0]).median, 0),
      ...(floor ? { durableFloor: round(spread(perSide[2]).median, 0) } : {}),
    },
    /** The durable floor (floorBatch) over the baseline, and the engine over the floor, round by round (medians, IQR). */
    ...(ofFloor && toFloor
      ? {
          durableFloor: {
            ofBaseline: { median: round(ofFloor.median), q1: round(ofFloor.q1), q3: round(ofFloor.q3) },
            engineOfFloor: { median: round(toFloor.median), q1: round(toFloor.q1), q3: round(toFloor.q3) },
          },
        }
      : {}),
    /** This process's main thread (the engine, the consumer) per delivery; PostgreSQL's and the broker's CPU are not in it. */
    cpuMsPerDelivery: round(spread(cpu).median, 3),
    target: '≥ 0.5',
    met: meets(r.median, TARGET),
    loadavg: load.map((x) => round(x)),
  };
  log(
    `${type} engine (${row.database}): ${row.deliveriesPerSecond.engine}/s vs ${row.deliveriesPerSecond.baseline}/s, ratio ${row.ratio} (IQR ${row.spread.q1}–${row.spread.q3}), ${row.cpuMsPerDelivery} ms CPU per delivery, ${row.met ? 'met' : 'missed'}, load ${row.loadavg.join('→')}` +
      (row.durableFloor
        ? `; durable floor ${row.deliveriesPerSecond.durableFloor}/s (${row.durableFloor.ofBaseline.median} of the baseline), engine ${row.durableFloor.engineOfFloor.median} of the floor`
        : ''),
  );
  return row;
}

/** RATE events/s appended for LATENCY_S seconds (a transaction per 10 ms tick) with the worker running; arrival − commit. */
async function engineLatency(type: DestinationType, sides: Sides, e: Engine) {
  const appended = new Map<string, number>();
  const early = new Map<string, number>();
  const latencies: number[] = [];
  const total = RATE * LATENCY_S;
  let done: () => void = () => {};
  const all = new Promise<void>((r) => (done = r));
  const record = (id: string, committed: number, at: number) => {
    latencies.push(at - committed);
    if (latencies.length === total) done();
  };
  const stop = await consumeIds(sides, (id, at) => {
    const committed = appended.get(id);
    // A delivery can arrive before its append's transaction call has returned here: kept until it has.
    if (committed === undefined) early.set(id, at);
    else record(id, committed, at);
  });
  const load: number[] = [os.loadavg()[0]!];
  const writes: Promise<void>[] = [];
  const t0 = performance.now();
  for (let sent = 0; sent < total; ) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * RATE) + 1);
    if (due > sent) {
      writes.push(
        appendEvents(e, due - sent, due - sent).then((rows) => {
          for (const [id, at] of rows) {
            appended.set(id, at);
            const arrived = early.get(id);
            if (arrived !== undefined) record(id, at, arrived);
          }
        }),
      );
      sent = due;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  const appendSeconds = (performance.now() - t0) / 1000;
  await Promise.all(writes);
  await Promise.race([all, new Promise((r) => setTimeout(r, 30_000))]);
  await stop();
  load.push(os.loadavg()[0]!);
  const row = {
    type,
    database: e.app.deps.db.kind,
    rate: RATE,
    achievedRate: round(total / appendSeconds, 0),
    seconds: LATENCY_S,
    received: latencies.length,
    sent: total,
    p50ms: round(quantile(latencies, 0.5)),
    p99ms: round(quantile(latencies, 0.99)),
    maxms: round(Math.max(...latencies)),
    loadavg: load.map((x) => round(x)),
  };
  log(
    `${type} engine (${row.database}): append-to-consume at ${RATE}/s: p50 ${row.p50ms} ms, p99 ${row.p99ms} ms, received ${row.received}/${total}`,
  );
  return row;
}

export interface DestinationsReport {
  date: string;
  machine: Record<string, unknown>;
  throughput: Awaited<ReturnType<typeof throughput>>[];
  latency: Awaited<ReturnType<typeof latency>>[];
  engine: Awaited<ReturnType<typeof engineThroughput>>[];
  engineLatency: Awaited<ReturnType<typeof engineLatency>>[];
}

const { urls, stop } = await startBrokers(TYPES);
// The brokers run in process groups of their own: an interrupted bench stops them too.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop().finally(() => process.exit(130)));
const report: DestinationsReport = {
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, node: process.version, loadavgBefore: os.loadavg().map((x) => round(x)) },
  throughput: [],
  latency: [],
  engine: [],
  engineLatency: [],
};
const engine = ENGINE ? await startEngine() : undefined;
try {
  for (const type of TYPES) {
    const transports = createTransports();
    const sides = await SIDES[type](urls[type]!, transports);
    try {
      report.throughput.push(await throughput(type, sides));
      report.latency.push(await latency(type, sides, transports[type], urls[type]!));
      if (engine) {
        const d = (await engine.post('/v1/platform/event_destinations', destinationBody(type, urls[type]!), engine.secret))
          .event_destination;
        try {
          report.engine.push(await engineThroughput(type, sides, engine));
          report.engineLatency.push(await engineLatency(type, sides, engine));
        } finally {
          // The next type's events are not this destination's.
          await fetch(`${engine.origin}/v1/platform/event_destinations/${d.id}`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${engine.secret}` },
          });
        }
      }
    } finally {
      await sides.close();
      await Promise.all(Object.values(transports).map((t) => t.close()));
    }
  }
} finally {
  await engine?.app.stop();
  await stop();
}
report.machine.loadavgAfter = os.loadavg().map((x) => round(x));
console.log(JSON.stringify(report, null, 2));
process.exit(0);
